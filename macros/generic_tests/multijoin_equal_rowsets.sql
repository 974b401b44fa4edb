{% test multijoin_equal_rowsets(model, compare_model, columns=none) %}
  {{ return(adapter.dispatch('test_multijoin_equal_rowsets', 'dbt_multijoin')(model, compare_model, columns)) }}
{% endtest %}


{% macro default__test_multijoin_equal_rowsets(model, compare_model, columns) %}
{#- Fails with every row that one side has more often than the other (EXCEPT ALL both ways:
    duplicates count, NULLs compare equal). Without `columns`, both sides must have the same
    column names (in any order). -#}
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
with model_rows as (
    select
        {{ column_list }}
    from {{ model }}
),

compare_rows as (
    select
        {{ column_list }}
    from {{ compare_model }}
),

only_in_model as (
    select * from model_rows
    except all
    select * from compare_rows
),

only_in_compare as (
    select * from compare_rows
    except all
    select * from model_rows
)

select
    'only in model' as side,
    {{ dbt_multijoin._mj_column_list(columns, 'only_in_model', indent=4) }}
from only_in_model
union all
select
    'only in compare_model' as side,
    {{ dbt_multijoin._mj_column_list(columns, 'only_in_compare', indent=4) }}
from only_in_compare
{%- endif -%}
{%- endif -%}
{%- endmacro %}
