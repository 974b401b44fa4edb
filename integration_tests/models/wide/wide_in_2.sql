{{ config(materialized='view') }}

-- keys 20..79 step 2: overlapping ranges, every key present in 1 to 6 inputs
select
    id as device_id,
    cast(id * 2 as double) as f2,
    id % 5 as `order`
from range(20, 80, 2)
