{{ config(materialized='view') }}

-- keys 30..89 step 3: overlapping ranges, every key present in 1 to 6 inputs
select
    id as device_id,
    cast(id * 3 as double) as f3
from range(30, 90, 3)
