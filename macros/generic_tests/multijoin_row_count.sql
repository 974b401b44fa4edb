{% test multijoin_row_count(model, inputs, key) %}
  {{ return(adapter.dispatch('test_multijoin_row_count', 'dbt_multijoin')(model, inputs, key)) }}
{% endtest %}


{% macro default__test_multijoin_row_count(model, inputs, key) %}
{#- Fails when the output's row count differs from what the inputs imply for a FULL multi-join:
    for every non-null key, the product over the inputs of its row count there (1 where absent),
    plus one row per input row with a NULL key component. Computed from the inputs alone, with
    aggregates (no join), so it does not share a plan with the model it checks; each input is
    read once: its rows counted per key, NULL components included, and the groups with a NULL
    component kept apart by input (null_key_input), so that they add up rather than multiply. -#}
{%- set keys = dbt_multijoin._mj_as_list(key) -%}
with key_counts as (
{%- for input in inputs %}
    select
        {{ dbt_multijoin._mj_column_list(keys, indent=8) }},
        case when{{ dbt_multijoin._mj_key_predicate(keys, '{k} is null', 'or', 12) }} then {{ loop.index }} end as null_key_input,
        count(*) as n
    from {{ input }}
    group by {{ dbt_multijoin._mj_column_list(keys) }}
{%- if not loop.last %}
    union all
{%- endif %}
{%- endfor %}
),

rows_per_key as (
    select aggregate(collect_list(n), cast(1 as bigint), (acc, x) -> acc * x) as n
    from key_counts
    group by {{ dbt_multijoin._mj_column_list(keys) }}, null_key_input
),

expected as (
    select coalesce(sum(rows_per_key.n), 0) as n
    from rows_per_key
),

actual as (
    select count(*) as n
    from {{ model }}
)

select
    expected.n as expected_rows,
    actual.n as actual_rows
from expected
cross join actual
where expected.n != actual.n
{%- endmacro %}
