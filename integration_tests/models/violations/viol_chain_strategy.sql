-- Wrong on purpose for a MultiJoin check: a multi-join built with the chain strategy, which runs
-- Spark's vanilla joins (the materialization records 'vanilla').
{{ config(materialized='multijoin', strategy='chain') }}

{{ dbt_multijoin.multi_join(
    [ref('worked_r2'), ref('worked_r3')],
    key='device_id',
    join_type='full'
) }}
