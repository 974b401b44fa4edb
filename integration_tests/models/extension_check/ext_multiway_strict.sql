{{ config(materialized='multijoin', strategy='multiway') }}

-- On a target without the extension: fails, saying how to load the jar on that target.
{{ dbt_multijoin.multi_join(
    [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
    key='device_id'
) }}
