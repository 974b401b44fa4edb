{% test multijoin_equal_rowsets(model, compare_model, columns=none) %}
  {{ return(adapter.dispatch('test_multijoin_equal_rowsets', 'dbt_multijoin')(model, compare_model, columns)) }}
{% endtest %}


{% macro default__test_multijoin_equal_rowsets(model, compare_model, columns) %}
{#- Fails with every row that one side has more often than the other, as many times as it has it
    more often (EXCEPT ALL both ways: duplicates count, NULLs compare equal). Without `columns`,
    both sides must have the same column names (in any order). Each side is read once: its rows
    counted per distinct row in one aggregate over both, where EXCEPT ALL both ways would read
    each side twice. -#}
{%- if not execute -%}
    select 1 as placeholder
{%- else -%}
{#- The relations themselves: a --empty run renders them as subqueries, which DESCRIBE cannot read. -#}
{%- set model_columns = adapter.get_columns_in_relation(dbt_multijoin._mj_unlimited(model)) | map(attribute='name') | list -%}
{%- set compare_columns = adapter.get_columns_in_relation(dbt_multijoin._mj_unlimited(compare_model)) | map(attribute='name') | list -%}
{%- set missing = [] -%}
{%- if columns is none -%}
    {%- set columns = model_columns -%}
    {%- if model_columns | map('lower') | sort != compare_columns | map('lower') | sort -%}
        {%- do missing.append(model ~ ' has ' ~ model_columns | join(', ') ~ ' but ' ~ compare_model ~ ' has ' ~ compare_columns | join(', ')) -%}
    {%- endif -%}
{%- else -%}
    {%- set columns = dbt_multijoin._mj_as_list(columns) -%}
    {%- for side, available in [(model, model_columns), (compare_model, compare_columns)] -%}
        {%- for column in columns if (column | lower) not in available | map('lower') | list -%}
            {%- do missing.append(column ~ ' is not a column of ' ~ side) -%}
        {%- endfor -%}
    {%- endfor -%}
{%- endif -%}
{%- if missing -%}
select {{ dbt_multijoin._mj_string_literal('column mismatch: ' ~ missing | join('; ')) }} as problem
{%- else -%}
{%- set column_list = dbt_multijoin._mj_column_list(columns, indent=8) -%}
with both_sides as (
    select
        {{ column_list }},
        1 as dbt_multijoin_in_model,
        0 as dbt_multijoin_in_compare
    from {{ model }}
    union all
    select
        {{ column_list }},
        0 as dbt_multijoin_in_model,
        1 as dbt_multijoin_in_compare
    from {{ compare_model }}
),

surpluses as (
    select
        {{ column_list }},
        sum(dbt_multijoin_in_model) - sum(dbt_multijoin_in_compare) as dbt_multijoin_surplus
    from both_sides
    group by {{ dbt_multijoin._mj_column_list(columns) }}
    having sum(dbt_multijoin_in_model) != sum(dbt_multijoin_in_compare)
)

select
    case when surpluses.dbt_multijoin_surplus > 0 then 'only in model' else 'only in compare_model' end as side,
    {{ dbt_multijoin._mj_column_list(columns, 'surpluses', indent=4) }}
from surpluses
    lateral view explode(sequence(cast(1 as bigint), abs(surpluses.dbt_multijoin_surplus))) copies as copy_number
{%- endif -%}
{%- endif -%}
{%- endmacro %}
