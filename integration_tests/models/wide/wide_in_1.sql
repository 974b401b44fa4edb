{{ config(materialized='view') }}

-- `order` is a reserved word (and also in wide_in_2: both get their input's name as prefix):
-- it needs quoting all the way through the package's SQL.
-- keys 10..69 step 1: overlapping ranges, every key present in 1 to 6 inputs
select
    id as device_id,
    cast(id * 1 as double) as f1,
    id % 3 as `order`
from range(10, 70, 1)
