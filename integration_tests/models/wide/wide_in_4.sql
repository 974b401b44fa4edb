{{ config(materialized='view') }}

-- `from`: a reserved word as an output column name.
-- keys 40..99 step 4: overlapping ranges, every key present in 1 to 6 inputs
select
    id as device_id,
    cast(id * 4 as double) as f4,
    id % 7 as `from`
from range(40, 100, 4)
