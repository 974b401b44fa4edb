{#- Private: the per-key row counts of multijoin_key_unique. (multijoin_row_count counts the groups
    with a NULL key part as well, kept apart per input, so it writes its own.) -#}

{% macro _mj_key_counts(relation, keys, indent=0) -%}
  {#- One row per non-null key of `relation`: the key columns and n, its number of rows. Every
      line after the first is indented by `indent` spaces, to sit inside a CTE. -#}
  {%- set sql -%}
select
    {{ dbt_multijoin._mj_column_list(keys, indent=4) }},
    count(*) as n
from {{ relation }}
where{{ dbt_multijoin._mj_key_predicate(keys, '{k} is not null', 'and', 4) }}
group by {{ dbt_multijoin._mj_column_list(keys) }}
  {%- endset -%}
  {{- return(sql | trim | indent(indent)) -}}
{%- endmacro %}
