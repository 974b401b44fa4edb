-- After a model that failed while Spark ran its CREATE TABLE. A failed statement ends a dbt
-- materialization (Jinja has no try/finally): on the session method, where all models share one
-- SparkSession, this model sees the failed model's confs (schema.yml asserts it, to keep the
-- limitation visible); a thrift session ends with its model, so there it sees the baseline.
{{ config(materialized='conf_probe') }}

-- Same inputs as the other conf_failure models: one dbt graph level, so dbt runs them in name order.
-- depends_on: {{ ref('worked_r1') }}, {{ ref('worked_r2') }}, {{ ref('worked_r3') }}, {{ ref('worked_r4') }}

select
    'current_timezone()' as conf_key,
    current_timezone() as conf_value
