-- The nested-coalesce form of docs/semantics.md, written by hand: the reference every
-- strategy must match row for row.
select
    coalesce(j2.device_id, c.device_id) as device_id,
    j2.clicks,
    j2.spend,
    c.country
from (
    select
        coalesce(a.device_id, b.device_id) as device_id,
        a.clicks,
        b.spend
    from {{ ref('dup_a') }} as a
    full outer join {{ ref('dup_b') }} as b
        on a.device_id = b.device_id
) as j2
full outer join {{ ref('dup_c') }} as c
    on j2.device_id = c.device_id
