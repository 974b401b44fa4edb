{{ config(materialized='conf_probe') }}
-- After the model whose conf the profile pins: the baseline again.

-- Same inputs as the other conf_failure models: one dbt graph level, so dbt runs them in name order.
-- depends_on: {{ ref('worked_r1') }}, {{ ref('worked_r2') }}, {{ ref('worked_r3') }}, {{ ref('worked_r4') }}

select
    'current_timezone()' as conf_key,
    current_timezone() as conf_value
