-- The INNER multi-join of docs/semantics.md, written by hand: every input joined on the first
-- input's key. The reference every inner strategy must match row for row.
select
    a.device_id,
    a.clicks,
    b.spend,
    c.country
from {{ ref('dup_a') }} as a
inner join {{ ref('dup_b') }} as b
    on a.device_id = b.device_id
inner join {{ ref('dup_c') }} as c
    on a.device_id = c.device_id
