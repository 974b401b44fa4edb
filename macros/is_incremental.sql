{% macro is_incremental() -%}
  {#- dbt's is_incremental() for multijoin models. dbt's own macro answers true only for
      materialized='incremental', so in a multijoin model call this one (or add the one-line
      override of docs/dbt_package.md to your project to make the bare is_incremental() work):
      true when the table exists, the model has an incremental_strategy and the run is not a
      --full-refresh. -#}
  {%- if not execute -%}
    {{- return(false) -}}
  {%- endif -%}
  {%- if model.config.materialized != 'multijoin' -%}
    {{- return(dbt.is_incremental()) -}}
  {%- endif -%}
  {%- set relation = adapter.get_relation(this.database, this.schema, this.table) -%}
  {{- return(relation is not none
      and relation.type == 'table'
      and config.get('incremental_strategy') is not none
      and not should_full_refresh()) -}}
{%- endmacro %}
