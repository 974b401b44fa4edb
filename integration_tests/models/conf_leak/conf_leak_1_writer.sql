{{ config(
    materialized='multijoin',
    strategy='multiway',
    spark_conf={
        'spark.sql.shuffle.partitions': '3',
        'spark.sql.session.timeZone': 'America/Denver',
        'spark.sql.caseSensitive': true,
        'spark.dbt_multijoin_it.marker': 'set-by-conf-leak-1-writer'
    }
) }}
-- depends_on: {{ ref('conf_leak_0_baseline') }}

-- session_time_zone shows the model's confs were in effect while Spark ran it.
select
    j.device_id,
    j.worked_r1_val,
    j.worked_r2_val,
    j.worked_r3_val,
    j.worked_r4_val,
    current_timezone() as session_time_zone
from (
    {{ dbt_multijoin.multi_join(
        [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
        key='device_id'
    ) | indent(4) }}
) as j
