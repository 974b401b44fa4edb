{% test multijoin_keys_preserved(model, inputs, key) %}
  {{ return(adapter.dispatch('test_multijoin_keys_preserved', 'dbt_multijoin')(model, inputs, key)) }}
{% endtest %}


{% macro default__test_multijoin_keys_preserved(model, inputs, key) %}
{#- Fails with every key of an input that the output lacks. Keys with a NULL component count
    too (null-safe comparison): such a row must appear once, null-padded. -#}
{%- set keys = dbt_multijoin._mj_as_list(key) -%}
with output_keys as (
    select distinct{{ dbt_multijoin._mj_select_targets(keys, none, 8) }}
    from {{ model }}
)
{% for input in inputs %}
select
    {{ loop.index }} as input_number,
    {{ dbt_multijoin._mj_column_list(keys, 'i', indent=4) }}
from {{ input }} as i
left anti join output_keys as o
    on{{ dbt_multijoin._mj_key_predicate(keys, 'i.{k} <=> o.{k}', 'and', 8) }}
{%- if not loop.last %}
union all
{%- endif %}
{% endfor %}
{%- endmacro %}
