{{ config(materialized='multijoin', strategy='multiway', allow_vanilla_fallback=true) }}

-- On a target without the extension: warns, and builds the same rows with vanilla joins.
{{ dbt_multijoin.multi_join(
    [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
    key='device_id'
) }}
