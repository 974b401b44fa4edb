{% test multijoin_key_unique(model, key) %}
  {{ return(adapter.dispatch('test_multijoin_key_unique', 'dbt_multijoin')(model, key)) }}
{% endtest %}


{% macro default__test_multijoin_key_unique(model, key) %}
{#- Fails with every (non-null) key the output holds more than once: use it when every input
    has unique keys. Rows with a NULL key component are not keys: each appears once anyway. -#}
{%- set keys = dbt_multijoin._mj_as_list(key) -%}
with key_counts as (
    {{ dbt_multijoin._mj_key_counts(model, keys, indent=4) }}
)

select
    {{ dbt_multijoin._mj_column_list(keys, indent=4) }},
    n as occurrences
from key_counts
where n > 1
{%- endmacro %}
