{{ config(
    materialized='multijoin',
    strategy='multiway',
    spark_conf={
        'spark.sql.session.timeZone': 'America/Denver',
        'spark.dbt_multijoin_it.marker': 'set-by-conf-fail-2'
    }
) }}

-- Hinted, but every input joins on R1's key (docs/semantics.md, worked example: a different query,
-- 5 rows): the operator must refuse it, and with spark.multijoin.failOnFallback=true
-- (set by the multiway strategy) planning fails instead of silently running vanilla joins.
select /*+ MULTI_JOIN */
    coalesce(r1.device_id, r2.device_id, r3.device_id, r4.device_id) as device_id,
    r1.val as r1_val,
    r2.val as r2_val,
    r3.val as r3_val,
    r4.val as r4_val
from {{ ref('worked_r1') }} as r1
full outer join {{ ref('worked_r2') }} as r2
    on r1.device_id = r2.device_id
full outer join {{ ref('worked_r3') }} as r3
    on r1.device_id = r3.device_id
full outer join {{ ref('worked_r4') }} as r4
    on r1.device_id = r4.device_id
