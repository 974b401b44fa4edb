with dbt_multijoin_delta as (
  select delta_row.* from pipelines_1.wide__dbt_mj_store as delta_row left semi join pipelines_1.wide__dbt_mj_store_parts as parts on parts.dbt_multijoin_delta_rows
  where delta_row.dbt_multijoin_seq > 0 and not (delta_row.k is null)
)
-- per key, its base row, or the delta row of a key no base row has; per input the columns of
-- the key's delta row where that touched the input
select /*+ BROADCAST(d) */ b.k, case when d.dbt_multijoin_touched_0 then d.v1 else b.v1 end as v1, case when d.dbt_multijoin_touched_0 then d.c1 else b.c1 end as c1, case when d.dbt_multijoin_touched_0 then d.dbt_multijoin_has_t1 else b.dbt_multijoin_has_t1 end as dbt_multijoin_has_t1, b.v2 as v2, b.c2 as c2, b.dbt_multijoin_has_t2 as dbt_multijoin_has_t2, b.v3 as v3, b.c3 as c3, b.dbt_multijoin_has_t3 as dbt_multijoin_has_t3, b.v4 as v4, b.c4 as c4, b.dbt_multijoin_has_t4 as dbt_multijoin_has_t4, b.v5 as v5, b.c5 as c5, b.dbt_multijoin_has_t5 as dbt_multijoin_has_t5, b.v6 as v6, b.c6 as c6, b.dbt_multijoin_has_t6 as dbt_multijoin_has_t6, b.v7 as v7, b.c7 as c7, b.dbt_multijoin_has_t7 as dbt_multijoin_has_t7, b.v8 as v8, b.c8 as c8, b.dbt_multijoin_has_t8 as dbt_multijoin_has_t8
from pipelines_1.wide__dbt_mj_store as b left outer join dbt_multijoin_delta as d on b.k = d.k
where not (b.k is null) and (b.dbt_multijoin_seq = 0 or not b.dbt_multijoin_in_base)
  and (d.k is null or coalesce(case when d.dbt_multijoin_touched_0 then d.dbt_multijoin_has_t1 else b.dbt_multijoin_has_t1 end, false) or coalesce(b.dbt_multijoin_has_t2, false) or coalesce(b.dbt_multijoin_has_t3, false) or coalesce(b.dbt_multijoin_has_t4, false) or coalesce(b.dbt_multijoin_has_t5, false) or coalesce(b.dbt_multijoin_has_t6, false) or coalesce(b.dbt_multijoin_has_t7, false) or coalesce(b.dbt_multijoin_has_t8, false))
union all
-- NULL-keyed rows, per input its latest generation: the delta rows of its latest marker, or
-- its base rows (generation 0) while no marker replaced them; one scan of the store
select k, v1, c1, dbt_multijoin_has_t1, v2, c2, dbt_multijoin_has_t2, v3, c3, dbt_multijoin_has_t3, v4, c4, dbt_multijoin_has_t4, v5, c5, dbt_multijoin_has_t5, v6, c6, dbt_multijoin_has_t6, v7, c7, dbt_multijoin_has_t7, v8, c8, dbt_multijoin_has_t8 from (
  select *, max(dbt_multijoin_seq) over (partition by dbt_multijoin_generation_of) as dbt_multijoin_latest from (
    select *, if(dbt_multijoin_seq = 0, case when dbt_multijoin_has_t1 then 0 when dbt_multijoin_has_t2 then 1 when dbt_multijoin_has_t3 then 2 when dbt_multijoin_has_t4 then 3 when dbt_multijoin_has_t5 then 4 when dbt_multijoin_has_t6 then 5 when dbt_multijoin_has_t7 then 6 when dbt_multijoin_has_t8 then 7 end, dbt_multijoin_null_group) as dbt_multijoin_generation_of
    from pipelines_1.wide__dbt_mj_store as stored left semi join pipelines_1.wide__dbt_mj_store_parts as parts on parts.dbt_multijoin_null_keyed_rows
    where ((dbt_multijoin_seq = 0 and (k is null)) or (dbt_multijoin_seq > 0 and dbt_multijoin_null_group is not null))
  ) as null_keyed
) as generations
where dbt_multijoin_seq = dbt_multijoin_latest and not coalesce(dbt_multijoin_null_marker, false)
