{% materialization multijoin, adapter='spark' %}
  {#- dbt-spark's `table` with the package's steps around its CREATE TABLE: validate the config,
      replay a failed model's ledger, check the extension, SET the model's confs, prove the plan,
      restore the confs, record the operator. The steps, one by one: docs/dbt_package.md
      ("The multijoin materialization"). -#}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set settings = dbt_multijoin._mj_model_settings() -%}

  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {#- A model of this session that failed at run time may have left its confs changed. -#}
  {%- do dbt_multijoin.restore_confs() -%}
  {%- set version = dbt_multijoin._mj_require_extension(settings) -%}
  {%- if settings['confs'] -%}
    {#- Parse and analysis errors surface here, before any conf is changed. -#}
    {%- do dbt_multijoin._mj_check_query(compiled_code) -%}
  {%- endif -%}

  {%- set saved = dbt_multijoin._mj_set_confs(settings['confs']) -%}
  {%- set operator = dbt_multijoin._mj_check_plan(compiled_code, settings, saved) -%}

  {%- if old_relation is not none -%}
    {%- set is_delta = (old_relation.is_delta and config.get('file_format', validator=validation.any[basestring]) == 'delta') -%}
    {%- set is_iceberg = (old_relation.is_iceberg and config.get('file_format', validator=validation.any[basestring]) == 'iceberg') -%}
    {%- if not is_delta and not is_iceberg -%}
      {{ adapter.drop_relation(old_relation) }}
    {%- endif -%}
  {%- endif -%}

  {%- call statement('main') -%}
    {{ create_table_as(False, target_relation, compiled_code) }}
  {%- endcall -%}

  {%- do dbt_multijoin._mj_restore_confs(saved) -%}
  {%- do dbt_multijoin._mj_record_plan(target_relation, settings, operator, version) -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}

  {% do persist_docs(target_relation, model) %}

  {% do persist_constraints(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
