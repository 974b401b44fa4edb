-- Wrong on purpose: the worked example's answer with the key1 row twice. The same distinct rows,
-- so only a comparison that counts duplicates (EXCEPT ALL) tells it from the answer.
select
    device_id,
    worked_r1_val,
    worked_r2_val,
    worked_r3_val,
    worked_r4_val
from {{ ref('expected_worked_example') }}
union all
select
    device_id,
    worked_r1_val,
    worked_r2_val,
    worked_r3_val,
    worked_r4_val
from {{ ref('expected_worked_example') }}
where device_id = 'key1'
