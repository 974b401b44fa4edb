-- Wrong on purpose: the worked example as a LEFT join on the first input. key3, which only the
-- other inputs have, is lost: 2 rows instead of 3.
select
    r1.device_id,
    r1.val as worked_r1_val,
    r2.val as worked_r2_val,
    r3.val as worked_r3_val,
    r4.val as worked_r4_val
from {{ ref('worked_r1') }} as r1
left outer join {{ ref('worked_r2') }} as r2
    on r1.device_id = r2.device_id
left outer join {{ ref('worked_r3') }} as r3
    on r1.device_id = r3.device_id
left outer join {{ ref('worked_r4') }} as r4
    on r1.device_id = r4.device_id
