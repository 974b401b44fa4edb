{#- Private: the key-recompute path of changed_keys (any changed_keys model that is not refreshed by
    partial updates): the changed keys' rows recomputed by the multi-join, and one MERGE that puts
    them in place of the table's rows of those keys.

    The changes view holds, per changed row of an input read, its key under the model's key names
    and, in a column per input tracked by a column, its changed_since value (the marks move up to
    the highest). The model's SQL is rendered again for the plan (_mj_render_model_for): the key
    table drives a LEFT multi-join of every input (the operator prunes each input with a bloom
    filter of the driver's keys before its shuffle), minus the key rows no input has any more;
    plus the rows whose key is NULL (never matched, re-derived on every run). Those rows are
    written to the rows table by the statement whose plan the materialization proved, and one
    MERGE (one atomic commit: Delta, Iceberg) replaces the table's rows of the changed keys, and
    every NULL-keyed row, by them. -#}

{% macro _mj_recompute_changes_branch(plan, input) -%}
  {#- Input `input`'s rows of the changes view: the keys its source shows as changed, and when it
      is read whole (it brings a new column), every key it holds. -#}
  {%- set keys = dbt_multijoin._mj_column_list(plan['keys']) -%}
  {%- set parts = [] -%}
  {%- if input['source_read'] -%}
    {%- set rows = dbt_multijoin._mj_source_do(input['source'], 'changed_keys', input['recorded']) -%}
    {%- do parts.append('select ' ~ ([keys] + dbt_multijoin._mj_mark_items(plan, input['index'], 'dbt_multijoin_mark')) | join(', ') ~ ' from (' ~ rows ~ ') as changed') -%}
  {%- endif -%}
  {%- if input['whole'] -%}
    {%- set spec_input = plan['spec']['inputs'][input['index']] -%}
    {%- do parts.append('select ' ~ (dbt_multijoin._mj_keys_as_model_keys(spec_input, plan['spec']) + dbt_multijoin._mj_mark_items(plan, input['index'], 'null')) | join(', ') ~ ' from ' ~ spec_input['relation']) -%}
  {%- endif -%}
  {{- return(parts | join('\n    union all\n    ')) -}}
{%- endmacro %}


{% macro _mj_recompute_rows_sql(plan) -%}
  {#- The changed keys' rows, what multi_join renders for a key-recompute run: the key table drives
      a LEFT multi-join of every input; a key that no input has any more gives no row (as in the
      FULL join). The key columns are the FULL join's coalesce of the inputs' keys, not the
      driver's, so that values such as -0.0 come out as a full build writes them. Then every row
      whose key has a NULL, by the same multi-join over those rows alone. -#}
  {%- set spec = plan['spec'] -%}
  {%- set hint = spec['strategy'] == 'multiway' -%}
  {%- set head = dbt_multijoin._mj_chain_head(spec, hint, true) -%}
  {%- set lines = head['lines'] -%}
  {%- do lines.append('from ' ~ dbt_multijoin._mj_changed_keys_table(this) ~ ' as changed') -%}
  {%- set present = [] -%}
  {%- for side in head['sides'] -%}
    {%- set conditions = [] -%}
    {%- for k in range(spec['keys'] | length) -%}
      {%- do conditions.append(dbt_multijoin._mj_column_ref('changed', spec['keys'][k]) ~ ' = ' ~ dbt_multijoin._mj_column_ref(side['alias'], side['keys'][k])) -%}
    {%- endfor -%}
    {%- do lines.append('left outer join ' ~ side['from']) -%}
    {%- do lines.append(dbt_multijoin._mj_on(conditions)) -%}
    {%- do present.append(dbt_multijoin._mj_column_ref(side['alias'], side['keys'][0]) ~ ' is not null') -%}
  {%- endfor -%}
  {%- do lines.append('where ' ~ present | join(' or ')) -%}

  {%- set null_keyed = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set restricted = {} -%}
    {%- do restricted.update(input) -%}
    {%- do restricted.update({'where': dbt_multijoin._mj_any_key_null(none, input['keys'])}) -%}
    {%- do null_keyed.append(restricted) -%}
  {%- endfor -%}
  {%- set null_spec = {} -%}
  {%- do null_spec.update(spec) -%}
  {%- do null_spec.update({'inputs': null_keyed}) -%}
  {{- return(lines | join('\n') ~ '\nunion all\n' ~ dbt_multijoin._mj_render_chain(null_spec, hint=hint)) -}}
{%- endmacro %}


{% macro _mj_target_has_null_key(relation, keys) -%}
  {#- Whether the table holds a row with a NULL in its key (the file statistics' null counts let
      the scan skip every other file). -#}
  {%- set found = run_query('select count(*) as n from (select 1 from ' ~ relation ~ ' where ' ~ dbt_multijoin._mj_any_key_null(none, keys) ~ ' limit 1) as null_keyed') -%}
  {{- return((found[0]['n'] | int) > 0) -}}
{%- endmacro %}


{% macro _mj_merge_recomputed(plan, target_relation, sql, columns, key_count) -%}
  {#- Replace, in one MERGE (statement 'main'), every target row of a changed key and every target
      row with a NULL key by the rows of `sql` (whose output columns are `columns`). The source is
      one delete marker per changed key, one marker for all NULL-keyed rows, and the new rows
      (which never match). A target row matches at most one marker: its key's, or the NULL marker
      when any of its key columns is NULL. The new rows are written to the rows table first, by
      the very statement whose plan the materialization proved: Delta materializes a MERGE source
      anyway, and over the query itself the MERGE was slower and shuffled more.
      Delta 4.x (on Spark 4.1) evaluates the MERGE condition again on the source rows its outer
      join left unmatched, with the target's columns NULL; for the NULL marker that condition is
      true there, and with deletion vectors the MERGE then fails ("Unexpected row: did not match
      any merge clause"; pipeline_tests/test_delta_merge_condition.py reproduces it). So on Delta
      the NULL marker is left out when the table holds no NULL-keyed row, which is exactly when it
      would match nothing. -#}
  {%- set existing_columns = adapter.get_columns_in_relation(target_relation) -%}
  {%- set existing = existing_columns | map(attribute='name') | map('lower') | list -%}
  {%- set keys = plan['keys'] -%}
  {%- for column in columns if (column | lower) not in existing -%}
    {%- do dbt_multijoin._mj_fail("the model's column " ~ column ~ " is not a column of " ~ target_relation ~ " (" ~ existing | join(', ') ~ "): run it with --full-refresh") -%}
  {%- endfor -%}
  {%- for k in keys if (k | lower) not in columns | map('lower') | list -%}
    {%- do dbt_multijoin._mj_fail("changed_keys needs the key column '" ~ k ~ "' in the model's output, under that name (its columns: " ~ columns | join(', ') ~ ")") -%}
  {%- endfor -%}
  {%- set key_table = dbt_multijoin._mj_changed_keys_table(target_relation) -%}
  {%- set rows_table = dbt_multijoin._mj_changed_rows_table(target_relation) -%}
  {%- do dbt_multijoin._mj_write_scratch_table(rows_table, sql, 'dbt_multijoin_changed_rows') -%}
  {#- The markers have the model's columns in its order: the keys, NULL for the rest. -#}
  {%- set marker_columns = [] -%}
  {%- set null_marker_columns = [] -%}
  {%- for column in columns -%}
    {%- set is_key = (column | lower) in keys | map('lower') | list -%}
    {%- do marker_columns.append(dbt_multijoin._mj_quote(column) if is_key else 'null as ' ~ dbt_multijoin._mj_quote(column)) -%}
    {%- do null_marker_columns.append('null') -%}
  {%- endfor -%}
  {%- set null_marker = config.get('file_format') != 'delta' or dbt_multijoin._mj_target_has_null_key(target_relation, keys) -%}
  {%- set matches = dbt_multijoin._mj_merge_key_match(keys) -%}
  {%- set column_list = dbt_multijoin._mj_column_list(columns) -%}
  {%- set target_filter = dbt_multijoin._mj_replaced_rows_filter(existing_columns, key_table, keys, key_count) -%}
  {%- call statement('main') -%}
    merge into {{ target_relation }} as target
    using (
        select true as dbt_multijoin_replaced, {{ marker_columns | join(', ') }} from {{ key_table }}
        {%- if null_marker %}
        union all
        select true, {{ null_marker_columns | join(', ') }}
        {%- endif %}
        union all
        select false, {{ column_list }} from {{ rows_table }}
    ) as source
    on source.dbt_multijoin_replaced and {{ matches | join(' and ') }}{% if target_filter %}
        and {{ target_filter }}{% endif %}
    when matched then delete
    when not matched and not source.dbt_multijoin_replaced then insert ({{ column_list }}) values ({{ dbt_multijoin._mj_column_list(columns, 'source') }})
  {%- endcall -%}
{%- endmacro %}
