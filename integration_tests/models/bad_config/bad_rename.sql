{{ config(materialized='multijoin') }}

{{ dbt_multijoin.multi_join(
    [ref('worked_r1'), ref('worked_r2')],
    key='device_id',
    rename={'worked_r1': {'val': 'v from x; drop table worked_r1'}}
) }}
