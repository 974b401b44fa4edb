{{ config(materialized='view') }}

-- keys 50..109 step 5: overlapping ranges, every key present in 1 to 6 inputs
select
    id as device_id,
    cast(id * 5 as double) as f5
from range(50, 110, 5)
