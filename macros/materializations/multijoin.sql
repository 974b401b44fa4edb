{% materialization multijoin, adapter='spark' %}
  {#- dbt-spark's `table` and `incremental` with the package's steps around the write: validate
      the config, replay a failed model's ledger, check the extension, SET the model's confs, prove
      the plan, write without losing the previous table, restore the confs, record the operator.
      The steps, one by one: docs/dbt_package.md ("The multijoin materialization"). -#}
  {%- set grant_config = config.get('grants') -%}
  {%- set settings = dbt_multijoin._mj_model_settings() -%}
  {%- set strategy = dbt_multijoin._mj_incremental_strategy() -%}
  {%- do settings['confs'].extend(dbt_multijoin._mj_incremental_confs(strategy)) -%}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {#- A model of this session that failed at run time may have left its confs changed, or its
      previous table under the backup name of an interrupted swap. -#}
  {%- do dbt_multijoin.restore_confs() -%}
  {%- do dbt_multijoin._mj_recover_swap(target_relation) -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {%- set incremental = dbt_multijoin.is_incremental() -%}
  {%- set header = dbt_multijoin._mj_changed_keys_state(compiled_code) if strategy == 'changed_keys' else none -%}
  {%- if header is not none and incremental != (header['changes'] is not none) -%}
    {#- multi_join rendered the other kind of run (e.g. no recorded marks): do what it rendered. -#}
    {%- set incremental = header['changes'] is not none -%}
  {%- endif -%}

  {%- set version = dbt_multijoin._mj_require_extension(settings) -%}
  {%- if incremental and header is not none -%}
    {%- do dbt_multijoin._mj_write_changed_keys(header, target_relation) -%}
  {%- endif -%}
  {#- Parse and analysis errors surface here, before any conf is changed. -#}
  {%- set columns = dbt_multijoin._mj_check_query(compiled_code) -%}

  {%- set saved = dbt_multijoin._mj_set_confs(settings['confs']) -%}
  {%- set partial_update = incremental and header is not none and header['path'] == 'partial_update' -%}
  {%- if partial_update -%}
    {#- No join to prove: the table keeps the operator its last full build recorded. -#}
    {%- set operator = dbt_multijoin._mj_recorded_operator(target_relation) or 'none' -%}
  {%- else -%}
    {%- set operator = dbt_multijoin._mj_check_plan(compiled_code, settings, saved) -%}
  {%- endif -%}

  {%- if not incremental -%}
    {%- do dbt_multijoin._mj_build_full(target_relation, old_relation, compiled_code) -%}
  {%- elif partial_update -%}
    {%- do dbt_multijoin._mj_merge_partial_update(header, target_relation, compiled_code) -%}
  {%- elif header is not none -%}
    {%- do dbt_multijoin._mj_merge_changed_keys(header, target_relation, compiled_code, columns) -%}
  {%- else -%}
    {%- do dbt_multijoin._mj_apply_incremental(strategy, target_relation, old_relation, compiled_code) -%}
  {%- endif -%}

  {%- do dbt_multijoin._mj_restore_confs(saved) -%}
  {%- if incremental and header is not none -%}
    {%- do dbt_multijoin._mj_drop_changed_keys_scratch(target_relation, header) -%}
  {%- endif -%}
  {%- set marks = dbt_multijoin._mj_marks_properties(header, not incremental) if header is not none else {} -%}
  {%- do dbt_multijoin._mj_record_plan(target_relation, settings, operator, version, marks) -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=(not incremental)) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}

  {% do persist_docs(target_relation, model) %}

  {%- if not incremental -%}
    {% do persist_constraints(target_relation, model) %}
  {%- endif -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
