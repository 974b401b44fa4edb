{#- Private: what every incremental strategy of the multijoin materialization shares: the
    strategy chosen and validated, on_schema_change, the confs a strategy needs, and dbt-spark's
    own strategies applied.

    append, insert_overwrite and merge are dbt-spark's own: the same validation and the same SQL
    (dbt_spark_get_incremental_sql) over a temporary view of the model's query.
    Not here: changed_keys, this package's strategy (macros/changed_keys/: its plan, sources,
    paths and run). -#}

{% macro _mj_incremental_strategy() -%}
  {#- The model's incremental_strategy, validated against its file_format; none when the model
      rebuilds the whole table on every run. -#}
  {%- set strategy = config.get('incremental_strategy') -%}
  {%- if strategy is none -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set file_format = config.get('file_format', default='parquet') -%}
  {%- if strategy == 'changed_keys' -%}
    {%- do dbt_multijoin._mj_on_schema_change() -%}
    {%- if file_format not in dbt_multijoin._mj_transactional_formats() -%}
      {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' needs file_format 'delta' or 'iceberg' (it replaces the changed keys' rows in one MERGE commit), got '" ~ file_format ~ "'") -%}
    {%- endif -%}
    {{- return(strategy) -}}
  {%- endif -%}
  {%- if strategy not in ['append', 'insert_overwrite', 'merge'] -%}
    {%- do dbt_multijoin._mj_fail("unknown incremental_strategy '" ~ strategy ~ "' (expected one of: append, insert_overwrite, merge, changed_keys)") -%}
  {%- endif -%}
  {{- return(dbt_spark_validate_get_incremental_strategy(strategy, dbt_spark_validate_get_file_format(file_format))) -}}
{%- endmacro %}


{% macro _mj_on_schema_change() -%}
  {#- The model's on_schema_change, validated (dbt's default: ignore). What changed_keys makes of
      each: changed_keys/schema_change.sql. -#}
  {{- return(incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore')) -}}
{%- endmacro %}


{% macro _mj_incremental_confs(strategy, settings) -%}
  {#- Confs an incremental strategy needs for the run, set and restored like the model's own
      (`settings`: _mj_model_settings): insert_overwrite on a partitioned table replaces only the
      partitions the query writes; changed_keys, its MERGE's (changed_keys/run.sql) and a
      merge-on-read compaction's (changed_keys/merge_on_read.sql). -#}
  {%- if strategy == 'insert_overwrite' and config.get('partition_by') -%}
    {{- return([{'key': 'spark.sql.sources.partitionOverwriteMode', 'value': 'DYNAMIC'}]) -}}
  {%- elif strategy == 'changed_keys' -%}
    {{- return(dbt_multijoin._mj_merge_friendly_confs(settings) + dbt_multijoin._mj_mor_write_confs(settings)) -}}
  {%- endif -%}
  {{- return([]) -}}
{%- endmacro %}


{% macro _mj_apply_incremental(strategy, target_relation, existing_relation, sql) -%}
  {#- dbt-spark's append / insert_overwrite / merge of `sql` into the existing table, in the
      statement 'main'. -#}
  {%- set tmp_relation = target_relation.incorporate(path={'identifier': target_relation.identifier ~ '__dbt_tmp'}).include(database=false, schema=false) -%}
  {%- call statement('create_tmp_relation') -%}
    {{ create_table_as(True, tmp_relation, sql) }}
  {%- endcall -%}
  {#- on_schema_change as dbt-spark's incremental materialization honours it: ignore, fail,
      append_new_columns (ALTER TABLE ADD COLUMNS) or sync_all_columns. -#}
  {%- do process_schema_changes(dbt_multijoin._mj_on_schema_change(), tmp_relation, existing_relation) -%}
  {%- set predicates = config.get('predicates', none) or config.get('incremental_predicates', none) -%}
  {%- call statement('main') -%}
    {{ dbt_spark_get_incremental_sql(strategy, tmp_relation, target_relation, existing_relation, config.get('unique_key', none), predicates) }}
  {%- endcall -%}
  {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ tmp_relation) -%}
{%- endmacro %}
