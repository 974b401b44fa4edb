{{ config(materialized='multijoin', strategy='chain') }}

{{ dbt_multijoin.multi_join(
    [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
    key='device_id',
    join_type='full'
) }}
