{% macro multi_join(relations, key, join_type='full', strategy=none, columns=none, rename=none, names=none) -%}
  {{- return(adapter.dispatch('multi_join', 'dbt_multijoin')(relations, key, join_type, strategy, columns, rename, names)) -}}
{%- endmacro %}


{% macro default__multi_join(relations, key, join_type, strategy, columns, rename, names) -%}
  {#- Column lists come from the database: only at execution time (dbt-utils' star() does the same). -#}
  {%- if not execute -%}
    {{- return('select 1 as multi_join_placeholder') -}}
  {%- endif -%}
  {%- set spec = dbt_multijoin._mj_spec(relations, key, join_type, strategy, columns, rename, names) -%}
  {%- if spec['strategy'] == 'balanced' -%}
    {{- return(dbt_multijoin._mj_render_balanced(spec)) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_render_chain(spec, hint=(spec['strategy'] == 'multiway'))) -}}
{%- endmacro %}
