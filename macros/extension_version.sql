{% macro extension_version() -%}
  {{- return(adapter.dispatch('extension_version', 'dbt_multijoin')()) -}}
{%- endmacro %}


{% macro default__extension_version() -%}
  {#- The loaded extension's version (multijoin_version()), or none when the session runs
      without it. Never raises: EXPLAIN reports an unresolved function as text. -#}
  {%- if not execute -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- if dbt_multijoin._mj_plan_error(dbt_multijoin._mj_explain('select multijoin_version()')) is not none -%}
    {{- return(none) -}}
  {%- endif -%}
  {{- return(run_query('select multijoin_version()').columns[0].values()[0] | string) -}}
{%- endmacro %}
