-- After two models that failed while planning under their confs: the materialization put the
-- confs back itself (no hook here).
{{ config(materialized='conf_probe') }}

-- Same inputs as the other conf_failure models: one dbt graph level, so dbt runs them in name order.
-- depends_on: {{ ref('worked_r1') }}, {{ ref('worked_r2') }}, {{ ref('worked_r3') }}, {{ ref('worked_r4') }}

select
    'current_timezone()' as conf_key,
    current_timezone() as conf_value
