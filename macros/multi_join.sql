{% macro multi_join(relations, key, join_type='full', strategy=none, columns=none, rename=none, names=none, changed_since=none) -%}
  {{- return(adapter.dispatch('multi_join', 'dbt_multijoin')(relations, key, join_type, strategy, columns, rename, names, changed_since)) -}}
{%- endmacro %}


{% macro default__multi_join(relations, key, join_type, strategy, columns, rename, names, changed_since) -%}
  {#- Column lists come from the database: only at execution time (dbt-utils' star() does the same). -#}
  {%- if not execute -%}
    {{- return('select 1 as multi_join_placeholder') -}}
  {%- endif -%}
  {%- set spec = dbt_multijoin._mj_spec(relations, key, join_type, strategy, columns, rename, names) -%}
  {%- if changed_since is not none and config.get('incremental_strategy') != 'changed_keys' -%}
    {%- do dbt_multijoin._mj_fail("changed_since applies to incremental_strategy='changed_keys' only (the model's is '" ~ config.get('incremental_strategy') ~ "')") -%}
  {%- endif -%}
  {%- if config.get('incremental_strategy') == 'changed_keys' -%}
    {#- incremental_strategy='changed_keys': the whole model, or only the changed keys' rows. -#}
    {{- return(dbt_multijoin._mj_render_changed_keys(spec, changed_since)) -}}
  {%- endif -%}
  {%- if spec['strategy'] == 'balanced' -%}
    {{- return(dbt_multijoin._mj_render_balanced(spec)) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_render_chain(spec, hint=(spec['strategy'] == 'multiway'))) -}}
{%- endmacro %}
