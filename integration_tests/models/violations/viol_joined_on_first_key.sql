-- Wrong on purpose: the worked example of docs/semantics.md with every input joined on the first
-- input's key instead of the coalesce of the keys before it. key3, absent from worked_r1, matches
-- nothing and comes out once per later input: 5 rows instead of 3, key3 three times.
select
    coalesce(r1.device_id, r2.device_id, r3.device_id, r4.device_id) as device_id,
    r1.val as worked_r1_val,
    r2.val as worked_r2_val,
    r3.val as worked_r3_val,
    r4.val as worked_r4_val
from {{ ref('worked_r1') }} as r1
full outer join {{ ref('worked_r2') }} as r2
    on r1.device_id = r2.device_id
full outer join {{ ref('worked_r3') }} as r3
    on r1.device_id = r3.device_id
full outer join {{ ref('worked_r4') }} as r4
    on r1.device_id = r4.device_id
