{% test multijoin_operator_used(model, expected='MultiJoin') %}
  {{ return(adapter.dispatch('test_multijoin_operator_used', 'dbt_multijoin')(model, expected)) }}
{% endtest %}


{% macro default__test_multijoin_operator_used(model, expected) %}
{#- Fails unless the multijoin materialization recorded `expected` ('MultiJoin' or 'vanilla') as
    the join operator of the plan that built the table (table property dbt_multijoin.operator,
    taken from EXPLAIN under the model's confs). -#}
{%- set recorded = dbt_multijoin._mj_recorded_operator(model) if execute else none -%}
select
    recorded.recorded_operator,
    recorded.expected_operator
from (
    select
        {{ dbt_multijoin._mj_string_literal(recorded if recorded is not none else 'not recorded') }} as recorded_operator,
        {{ dbt_multijoin._mj_string_literal(expected) }} as expected_operator
) as recorded
where recorded.recorded_operator != recorded.expected_operator
{%- endmacro %}
