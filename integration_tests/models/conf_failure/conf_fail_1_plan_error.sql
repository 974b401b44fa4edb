{{ config(
    materialized='multijoin',
    strategy='multiway',
    spark_conf={
        'spark.sql.shuffle.partitions': '3',
        'spark.sql.session.timeZone': 'America/Denver',
        'spark.sql.caseSensitive': true,
        'spark.dbt_multijoin_it.marker': 'set-by-conf-fail-1'
    }
) }}

-- Plans without the model's confs; with spark.sql.caseSensitive=true, DEVICE_ID does not
-- resolve: the model fails after its confs were SET, and must put them back.
select j.DEVICE_ID as upper_case_device_id  -- noqa: CP02
from (
    {{ dbt_multijoin.multi_join(
        [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
        key='device_id'
    ) | indent(4) }}
) as j
