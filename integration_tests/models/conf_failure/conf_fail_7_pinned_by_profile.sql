{{ config(
    materialized='multijoin',
    strategy='chain',
    spark_conf={
        'spark.sql.ansi.enabled': 'true',
        'spark.dbt_multijoin_it.marker': 'set-by-conf-fail-7'
    }
) }}

-- dbt-spark puts spark.sql.ansi.enabled=false into server_side_parameters. The session method
-- re-applies those before every statement, so this model's SET would be silently undone there:
-- the materialization reads its confs back and fails instead. A Thrift Server ignores plain
-- keys: there the model runs with ANSI on.
{{ dbt_multijoin.multi_join(
    [ref('worked_r1'), ref('worked_r2'), ref('worked_r3'), ref('worked_r4')],
    key='device_id'
) }}
