{% materialization multijoin, adapter='spark' %}
  {#- dbt-spark's `table` and `incremental` with the package's steps around the write: validate
      the config, replay a failed model's ledger, check the extension, plan a changed_keys run and
      read its changes, SET the model's confs, prove the plan, write without losing the previous
      table, restore the confs, record the operator. The steps, one by one:
      docs/dbt_package.md ("The multijoin materialization"). -#}
  {%- set grant_config = config.get('grants') -%}
  {%- set settings = dbt_multijoin._mj_model_settings() -%}
  {%- set strategy = dbt_multijoin._mj_incremental_strategy() -%}
  {%- do settings['confs'].extend(dbt_multijoin._mj_incremental_confs(strategy, settings)) -%}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {#- A model of this session that failed at run time may have left its confs changed, or its
      previous table under the backup name of an interrupted swap. -#}
  {%- do dbt_multijoin.restore_confs() -%}
  {%- do dbt_multijoin._mj_recover_swap(target_relation) -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {%- set incremental = dbt_multijoin.is_incremental() -%}
  {%- set version = dbt_multijoin._mj_require_extension(settings) -%}

  {#- Parse and analysis errors surface here, before any conf is changed; so do a changed_keys
      run's plan and its changes (changed_keys/run.sql). -#}
  {%- if strategy == 'changed_keys' -%}
    {%- set model_columns = dbt_multijoin._mj_query_columns(compiled_code) -%}
    {%- set columns = model_columns | map(attribute='name') | list -%}
    {%- set plan = dbt_multijoin._mj_changed_keys_plan(target_relation, old_relation, incremental, model_columns) -%}
    {%- set changes = dbt_multijoin._mj_changed_keys_read(plan, target_relation) -%}
    {%- set full_build = plan['path'] == 'full' -%}
  {%- else -%}
    {%- set columns = dbt_multijoin._mj_check_query(compiled_code) -%}
    {%- set full_build = not incremental -%}
  {%- endif -%}

  {%- set saved = dbt_multijoin._mj_set_confs(settings['confs']) -%}
  {%- if strategy == 'changed_keys' -%}
    {%- set operator = dbt_multijoin._mj_changed_keys_write(plan, changes, target_relation, old_relation, compiled_code, columns, settings, saved) -%}
  {%- else -%}
    {%- set operator = dbt_multijoin._mj_check_plan(compiled_code, settings, saved) -%}
    {%- if full_build -%}
      {%- do dbt_multijoin._mj_build_full(target_relation, old_relation, compiled_code) -%}
    {%- else -%}
      {%- do dbt_multijoin._mj_apply_incremental(strategy, target_relation, old_relation, compiled_code) -%}
    {%- endif -%}
  {%- endif -%}
  {%- do dbt_multijoin._mj_restore_confs(saved) -%}

  {%- if strategy != 'changed_keys' -%}
    {%- do dbt_multijoin._mj_record_plan(target_relation, settings, operator, version) -%}
  {%- else -%}
    {%- do dbt_multijoin._mj_drop_changed_keys_scratch(plan, target_relation) -%}
    {%- if changes['read'] -%}
      {#- Nothing read, nothing written: the table and what it records stay as they are. The
          state lives on the table, or on the store of a merge-on-read model's view. -#}
      {%- do dbt_multijoin._mj_record_plan(plan['store'], settings, operator, version, dbt_multijoin._mj_changed_keys_properties(plan, changes)) -%}
      {%- do dbt_multijoin._mj_clear_refill(plan, plan['store']) -%}
    {%- endif -%}
    {%- if plan['layout'] == 'merge_on_read' -%}
      {%- set target_relation = target_relation.incorporate(type='view') -%}
    {%- endif -%}
  {%- endif -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=full_build) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}

  {% do persist_docs(target_relation, model) %}

  {%- if full_build and target_relation.type == 'table' -%}
    {% do persist_constraints(target_relation, model) %}
  {%- endif -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
