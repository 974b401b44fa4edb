{{ config(materialized='conf_probe', pre_hook="{{ dbt_multijoin.restore_confs() }}") }}
-- The package's restore hook replays the ledger the failed model left in the session: the
-- baseline again, on both methods. (Every multijoin model runs it first by itself.)

-- Same inputs as the other conf_failure models: one dbt graph level, so dbt runs them in name order.
-- depends_on: {{ ref('worked_r1') }}, {{ ref('worked_r2') }}, {{ ref('worked_r3') }}, {{ ref('worked_r4') }}

select
    'current_timezone()' as conf_key,
    current_timezone() as conf_value
