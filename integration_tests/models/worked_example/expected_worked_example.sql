-- The worked example of docs/semantics.md, answered by hand: the nested-coalesce form gives 3 rows,
-- key3 once (joining every input on R1's key instead would give 5).
select
    device_id,
    worked_r1_val,
    worked_r2_val,
    worked_r3_val,
    worked_r4_val
from
    values
    ('key1', 'r1-key1', null, null, null),
    ('key2', 'r1-key2', null, null, null),
    ('key3', null, 'r2-key3', 'r3-key3', 'r4-key3')
        as expected (device_id, worked_r1_val, worked_r2_val, worked_r3_val, worked_r4_val)
