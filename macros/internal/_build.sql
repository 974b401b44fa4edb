{#- Private: write the whole table without ever losing the previous one.

    Delta and Iceberg replace a table atomically (CREATE OR REPLACE TABLE ... AS SELECT: readers see
    the old snapshot until the new one is committed, and a failed write commits nothing). Any other
    table (parquet, ORC, Hive...) is built completely under a staging name and only then swapped in
    by two renames; the only moment the name does not resolve is between those two metastore calls.
    A run that dies exactly there leaves the previous table under the backup name, and the next run
    puts it back before it does anything else (_mj_recover_swap).

    The staging table is created empty first (the query under LIMIT 0, which Spark answers without
    running it) and then filled by an INSERT: a run killed while it writes leaves a registered
    staging table, which the next run drops with its files. A CREATE TABLE AS SELECT killed in the
    middle would leave files no table owns, and Spark refuses to create a managed table over them. -#}

{% macro _mj_sibling(relation, suffix) -%}
  {{- return(relation.incorporate(path={'identifier': relation.identifier ~ suffix}, type='table')) -}}
{%- endmacro %}


{% macro _mj_staging_relation(relation) -%}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_staging')) -}}
{%- endmacro %}


{% macro _mj_backup_relation(relation) -%}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_backup')) -}}
{%- endmacro %}


{% macro _mj_drop_own_table(relation, delta) -%}
  {#- Drop a table this package created (staging, backup, store, scratch) with its files. `delta`:
      whether it is a Delta table, whose files go with a plain DROP (Delta refuses PURGE). Any
      other table is dropped with PURGE: Iceberg's DROP TABLE without it leaves every data and
      metadata file behind, and Iceberg's SparkSessionCatalog does the same with a non-Iceberg
      table's files, after which Spark refuses to create a table of that name again. -#}
  {%- if relation.type == 'view' -%}
    {%- do adapter.drop_relation(relation) -%}
  {%- else -%}
    {%- do dbt_multijoin._mj_exec('drop table if exists ' ~ relation ~ ('' if delta else ' purge')) -%}
    {%- do adapter.cache_dropped(relation) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_drop_own_table_if_present(relation) -%}
  {#- Drop `relation` with its files if the catalog has it, by its own format: a leftover of an
      earlier run may be in another format than the model's now. -#}
  {%- set found = load_cached_relation(relation) -%}
  {%- if found is not none -%}
    {%- do dbt_multijoin._mj_drop_own_table(found, found.is_delta) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_transactional_formats() -%}
  {#- The file formats that replace and merge a table in one commit. -#}
  {{- return(['delta', 'iceberg']) -}}
{%- endmacro %}


{% macro _mj_is_iceberg(relation) -%}
  {#- Whether an existing relation is an Iceberg table. dbt-spark reads "Provider: iceberg" from
      SHOW TABLE EXTENDED, but an Iceberg table of Spark's session catalog (SparkSessionCatalog
      over a Hive metastore) is listed there as "Provider: hive", with the Iceberg mark among its
      table properties (table_type=ICEBERG). -#}
  {{- return(relation.is_iceberg or 'table_type=iceberg' in ((relation.information or '') | lower)) -}}
{%- endmacro %}


{% macro _mj_recover_swap(relation) -%}
  {#- A previous run that died between the two renames of its swap left the old table under the
      backup name: put it back. A backup beside the table (died after the swap) is dropped. -#}
  {%- set backup = load_cached_relation(dbt_multijoin._mj_backup_relation(relation)) -%}
  {%- if backup is none -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- if load_cached_relation(relation) is none -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": a previous run stopped in the middle of its swap: restoring " ~ relation ~ " from " ~ backup, info=True) -%}
    {%- do adapter.rename_relation(backup, relation) -%}
  {%- else -%}
    {%- do dbt_multijoin._mj_drop_own_table(backup, backup.is_delta) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_replaces_atomically(old_relation, sql) -%}
  {#- True when the format replaces the table in one commit: Delta or Iceberg, and the existing
      table (if any) already is one in that format. Not an Iceberg table whose columns `sql` would
      give another type at some position (a column dropped, moved or retyped): a Hive metastore
      refuses that REPLACE ("types incompatible with the existing columns in their respective
      positions": hive.metastore.disallow.incompatible.col.type.changes, on by default), and
      Iceberg then cannot tell whether its commit happened. Such a table is built beside and
      swapped in as any other (its history starts over), and the log says why. -#}
  {%- set file_format = config.get('file_format', validator=validation.any[basestring]) -%}
  {%- if file_format not in dbt_multijoin._mj_transactional_formats() -%}
    {{- return(false) -}}
  {%- endif -%}
  {%- if old_relation is none -%}
    {{- return(true) -}}
  {%- endif -%}
  {%- if file_format == 'delta' -%}
    {{- return(old_relation.is_delta) -}}
  {%- endif -%}
  {%- if not dbt_multijoin._mj_is_iceberg(old_relation) -%}
    {{- return(false) -}}
  {%- endif -%}
  {%- set before = adapter.get_columns_in_relation(old_relation) -%}
  {%- set after = dbt_multijoin._mj_query_columns(sql) -%}
  {%- for position in range([before | length, after | length] | min) if (before[position].dtype | lower) != after[position]['dtype'] -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": column " ~ (position + 1) ~ " of " ~ old_relation ~ " changes type (" ~ (before[position].dtype | lower) ~ " " ~ before[position].name ~ " to " ~ after[position]['dtype'] ~ " " ~ after[position]['name'] ~ "), which a Hive metastore refuses in a REPLACE TABLE: the table is built beside and swapped in; its Iceberg history starts over", info=True) -%}
    {{- return(false) -}}
  {%- endfor -%}
  {{- return(true) -}}
{%- endmacro %}


{% macro _mj_create_table_as(relation, sql, layout=none) -%}
  {#- The CREATE TABLE ... AS of the model's table: dbt-spark's create_table_as (the model's file
      format, options, table properties, partitioning, location and comment), or, with `layout`
      ({partitioned_by: [columns], properties: {name: value}}), the same with the package's own
      partitioning and its properties added to the model's (the model's win): a table whose
      layout the package owns, such as a merge-on-read store. -#}
  {%- if layout is none -%}
    {{- return(create_table_as(False, relation, sql)) -}}
  {%- endif -%}
  {%- set properties = dict(layout['properties']) -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  {%- set listed = [] -%}
  {%- for name, value in properties.items() -%}
    {%- do listed.append("'" ~ name ~ "' = '" ~ value ~ "'") -%}
  {%- endfor -%}
  {{- return('create or replace table ' ~ relation ~ '\n' ~ file_format_clause() ~ '\n' ~ options_clause() ~ '\n'
      ~ ('tblproperties (' ~ listed | join(', ') ~ ')\n' if listed else '')
      ~ 'partitioned by (' ~ dbt_multijoin._mj_column_list(layout['partitioned_by']) ~ ')\n'
      ~ location_clause() ~ '\n' ~ comment_clause() ~ '\nas\n' ~ sql) -}}
{%- endmacro %}


{% macro _mj_create_empty_then_insert(relation, create_prefix, sql, statement_name, layout=none) -%}
  {#- Create `relation` empty with `sql`'s columns (the query under LIMIT 0, which Spark answers
      without running it), then fill it by an INSERT in the statement `statement_name`. A run
      killed while it writes then leaves a registered table, which the next run drops with its
      files; a CREATE TABLE AS SELECT killed in the middle would leave files no table owns, and
      Spark refuses to create a managed table over them (LOCATION_ALREADY_EXISTS).
      `create_prefix`: the CREATE ... AS to put before the empty query; none for the model's own
      (_mj_create_table_as, with `layout`). -#}
  {%- set empty = 'select * from (\n' ~ sql ~ '\n) as model limit 0' -%}
  {%- call statement(statement_name ~ '_create_empty') -%}
    {{ dbt_multijoin._mj_create_table_as(relation, empty, layout) if create_prefix is none else create_prefix ~ empty }}
  {%- endcall -%}
  {%- call statement(statement_name) -%}
    insert into {{ relation }} by name
    select * from (
{{ sql }}
    ) as model
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_build_full(target_relation, old_relation, sql, layout=none) -%}
  {#- Write the whole table from `sql` in the statement 'main' (`layout`: _mj_create_table_as). An
      Iceberg table partitioned by buckets of the key that the query's output is already grouped
      by is written with no redistribution (_write_distribution.sql). -#}
  {%- set grouped_write = dbt_multijoin._mj_grouped_write_begin(sql) -%}
  {%- do dbt_multijoin._mj_write_full(target_relation, old_relation, sql, layout) -%}
  {%- do dbt_multijoin._mj_grouped_write_end(grouped_write) -%}
{%- endmacro %}


{% macro _mj_write_full(target_relation, old_relation, sql, layout=none) -%}
  {#- The statements of _mj_build_full. -#}
  {%- if dbt_multijoin._mj_replaces_atomically(old_relation, sql) -%}
    {%- call statement('main') -%}
      {{ dbt_multijoin._mj_create_table_as(target_relation, sql, layout) }}
    {%- endcall -%}
    {%- if old_relation is not none and dbt_multijoin._mj_is_iceberg(old_relation) -%}
      {%- do dbt_multijoin._mj_forget_recorded(target_relation) -%}
    {%- endif -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- if config.get('location_root') is not none -%}
    {#- dbt-spark derives the location from the model's alias, so the staging table would be
        written into the live table's directory. -#}
    {%- do dbt_multijoin._mj_fail("location_root needs file_format 'delta' or 'iceberg' (an atomic replace): a " ~ (config.get('file_format') or 'parquet') ~ " table with an explicit location cannot be built beside the previous one") -%}
  {%- endif -%}
  {%- set staging = dbt_multijoin._mj_staging_relation(target_relation) -%}
  {%- do dbt_multijoin._mj_drop_own_table_if_present(staging) -%}
  {%- do dbt_multijoin._mj_create_empty_then_insert(staging, none, sql, 'main', layout) -%}
  {%- if old_relation is not none -%}
    {%- set backup = dbt_multijoin._mj_backup_relation(target_relation) -%}
    {%- do adapter.rename_relation(old_relation, backup) -%}
    {%- do adapter.rename_relation(staging, target_relation) -%}
    {%- do dbt_multijoin._mj_drop_own_table(backup.incorporate(type=old_relation.type), old_relation.is_delta) -%}
  {%- else -%}
    {%- do adapter.rename_relation(staging, target_relation) -%}
  {%- endif -%}
{%- endmacro %}
