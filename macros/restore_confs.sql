{% macro restore_confs() -%}
  {{- return(adapter.dispatch('restore_confs', 'dbt_multijoin')()) -}}
{%- endmacro %}


{% macro default__restore_confs() -%}
  {#- Replays the ledger a multijoin model leaves in the session while its confs are changed
      (see internal/_confs.sql and docs/dbt_package.md): a model whose CREATE TABLE failed at
      run time could not restore them itself. Renders no SQL, so it works as a pre-hook:
        models: {+pre-hook: "{{ dbt_multijoin.restore_confs() }}"} -#}
  {%- if not execute -%}
    {{- return('') -}}
  {%- endif -%}
  {%- set listing = dbt_multijoin._mj_conf_listing() -%}
  {%- set pending = listing.get(dbt_multijoin._mj_ledger_pending()) -%}
  {%- if pending -%}
    {%- set saved = [] -%}
    {%- for key in pending.split(',') if dbt_multijoin._mj_is_conf_key(key) -%}
      {%- do saved.append({'key': key, 'previous': listing.get(dbt_multijoin._mj_ledger_saved(key))}) -%}
    {%- endfor -%}
    {%- do dbt_multijoin._mj_restore_confs(saved) -%}
    {%- do log("dbt_multijoin: restored confs left changed by a failed model: " ~ saved | map(attribute='key') | join(', '), info=True) -%}
  {%- endif -%}
  {{- return('') -}}
{%- endmacro %}
