{{ config(
    materialized='multijoin',
    strategy='multiway',
    spark_conf={
        'spark.sql.shuffle.partitions': '3',
        'spark.sql.session.timeZone': 'America/Denver',
        'spark.dbt_multijoin_it.marker': 'set-by-conf-fail-4'
    }
) }}

-- Plans fine, fails while Spark runs the CREATE TABLE (raise_error on key3).
select
    j.device_id,
    if(j.device_id = 'key3', raise_error('conf_fail_4: deliberate run-time failure'), 'ok') as status
from (
    {{ dbt_multijoin.multi_join(
        [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
        key='device_id'
    ) | indent(4) }}
) as j
