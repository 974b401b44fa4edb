-- The nested-coalesce form with a composite key, written by hand: one coalesce and one
-- equality per key column.
select
    coalesce(j2.region_id, c.region_id) as region_id,
    coalesce(j2.device_id, c.device_id) as device_id,
    j2.comp_a_score,
    j2.note,
    j2.comp_b_score,
    c.score as c_score
from (
    select
        coalesce(a.region_id, b.region_id) as region_id,
        coalesce(a.device_id, b.device_id) as device_id,
        a.score as comp_a_score,
        a.note,
        b.score as comp_b_score
    from {{ ref('comp_a') }} as a
    full outer join {{ ref('comp_b') }} as b
        on
            a.region_id = b.region_id
            and a.device_id = b.device_id
) as j2
full outer join {{ ref('comp_c') }} as c
    on
        j2.region_id = c.region_id
        and j2.device_id = c.device_id
