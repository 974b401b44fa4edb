-- Wrong on purpose for a MultiJoin check: a plain table (dbt's table materialization), on which
-- the multijoin materialization recorded no operator.
{{ config(materialized='table') }}

select
    device_id,
    val
from values ('key1', 'v1') as plain (device_id, val)
