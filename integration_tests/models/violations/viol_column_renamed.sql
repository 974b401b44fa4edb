-- Wrong on purpose: the worked example's answer with one column under another name.
select
    device_id,
    worked_r1_val as r1_val,
    worked_r2_val,
    worked_r3_val,
    worked_r4_val
from {{ ref('expected_worked_example') }}
