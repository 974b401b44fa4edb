{#- Private: the changed_keys incremental strategy, the applying side: what the materialization
    does with the state and the SQL the rendering produced.

    Here, in the order the materialization calls them: the names of a run's scratch objects (the
    changes view, the key, rows and NULL-rows tables), writing and dropping them; before the
    query, what each input's changes will read logged (_mj_log_change_scans), the changed rows
    cached and the changed keys written (_mj_write_changed_keys, with a partial update's
    one-row-per-key check); the MERGE of the key-recompute path
    (_mj_merge_changed_keys) or of a partial update (_mj_merge_partial_update), and the filter that
    keeps their target side small (_mj_replaced_rows_filter); after it, the properties the run
    records (_mj_marks_properties).
    Not here: the state and the SQL (_changed_keys_render.sql, _partial_update.sql,
    _change_sources.sql), choosing and validating the strategy (_incremental.sql), writing the
    properties (_table_properties.sql). -#}

{#- The names of a run's scratch objects. -#}
{% macro _mj_temp_view(suffix) -%}
  {#- The name of a temporary view of this model's run: `<model>__dbt_mj_<suffix>`, with the
      schema in front so that models of one name in two schemas never share one. -#}
  {{- return(modules.re.sub('[^a-z0-9_]', '_', (this.schema ~ '__' ~ this.identifier ~ '__dbt_mj_' ~ suffix) | lower)) -}}
{%- endmacro %}


{% macro _mj_changes_view() -%}
  {#- The changed rows of every input: their keys and changed_since values. -#}
  {{- return(dbt_multijoin._mj_temp_view('changes')) -}}
{%- endmacro %}


{% macro _mj_changed_keys_table(relation) -%}
  {#- The distinct non-NULL keys of the changed rows: the driver of the changed keys' query. A
      table, not a view over the changes: a query that reads a Delta table's change feed
      (table_changes) and the same table itself resolves both to the change feed's snapshot
      (Delta 3.3 and 4.0), so the query must not see the changes' plan. -#}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_changed_keys')) -}}
{%- endmacro %}


{% macro _mj_changed_rows_table(relation) -%}
  {#- The changed keys' rows, as the query computed them: the MERGE's source. A parquet table:
      cached in a view, the rows cost more (CACHE TABLE plans the query more than once, a job
      per Delta input each time) and the MERGE over the view was slower. -#}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_changed_rows')) -}}
{%- endmacro %}


{% macro _mj_null_rows_table(relation) -%}
  {#- A partial update's NULL-keyed rows of the changed inputs, in the MERGE source's columns. -#}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_null_rows')) -}}
{%- endmacro %}


{#- Writing and dropping them. -#}
{% macro _mj_cache_view(view, sql, statement_name) -%}
  {#- `sql`'s rows, cached under the temporary view `view` (CACHE TABLE runs the query now; Spark
      keeps the rows in memory and spills them to disk). A failed run in this session may have
      left the view: it is dropped first. -#}
  {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ view) -%}
  {%- call statement(statement_name) -%}
    cache table {{ view }} as
{{ sql }}
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_write_scratch_table(relation, sql, statement_name) -%}
  {#- A parquet table of the package's own, dropped first if a failed run left it, created empty
      and then filled (_mj_create_empty_then_insert says why). -#}
  {%- do dbt_multijoin._mj_drop_own_table(relation, false) -%}
  {%- do dbt_multijoin._mj_create_empty_then_insert(relation, 'create table ' ~ relation ~ ' using parquet as ', sql, statement_name) -%}
{%- endmacro %}


{% macro _mj_drop_changed_keys_scratch_views(state) -%}
  {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ dbt_multijoin._mj_changes_view()) -%}
  {%- for view in state.get('changelog_views', []) -%}
    {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ view) -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _mj_drop_changed_keys_scratch(relation, state) -%}
  {#- Drop the changes view (which uncaches it), the Iceberg changelog views it read, the key
      table and the rows table of a changed_keys run. -#}
  {%- do dbt_multijoin._mj_drop_changed_keys_scratch_views(state) -%}
  {%- do dbt_multijoin._mj_drop_own_table(dbt_multijoin._mj_changed_keys_table(relation), false) -%}
  {%- do dbt_multijoin._mj_drop_own_table(dbt_multijoin._mj_changed_rows_table(relation), false) -%}
  {%- do dbt_multijoin._mj_drop_own_table(dbt_multijoin._mj_null_rows_table(relation), false) -%}
{%- endmacro %}


{#- Before the query: what the changes will read logged, the changed rows cached, the changed
    keys written. -#}
{% macro _mj_log_change_scans(state) -%}
  {#- One line per input: the files and bytes reading its changes will read, or that it reads
      nothing. The sizes come from the extension's multijoin_scan_size, which plans each input's
      part of the changes query (the state's `scans`, _mj_change_scan) without running it, after
      partition pruning and file skipping (see docs/dbt_package.md): one query for every input.
      Not the whole input's size for scale: planning a whole Delta table's scan collects every
      file of it to the driver, the cost of what did not change. Without the extension (or with
      a jar that predates the function) the run logs nothing of it. Returns the bytes of every
      input's changes, or none where that is not known (no extension, a scan sized only by the
      statistics it reports). -#}
  {%- set scans = state.get('scans') or [] -%}
  {%- if not scans or not dbt_multijoin._mj_has_function('multijoin_scan_size') -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set sizes = [] -%}
  {%- set fields = [] -%}
  {%- for i in range(scans | length) if scans[i]['sql'] is not none -%}
    {%- do sizes.append('multijoin_scan_size(' ~ dbt_multijoin._mj_string_literal(scans[i]['sql']) ~ ') as size_' ~ i) -%}
    {%- for field in ['files', 'bytes', 'estimated_scans'] -%}
      {%- do fields.append('size_' ~ i ~ '.' ~ field ~ ' as ' ~ field ~ '_' ~ i) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set found = run_query('select ' ~ fields | join(', ') ~ ' from (select ' ~ sizes | join(', ') ~ ') as sizes')[0] if sizes else none -%}
  {%- set total = {'bytes': 0, 'known': true} -%}
  {%- for i in range(scans | length) -%}
    {%- set scan = scans[i] -%}
    {%- set files = 0 if scan['sql'] is none else found['files_' ~ i] | int -%}
    {%- set bytes = 0 if scan['sql'] is none else found['bytes_' ~ i] | int -%}
    {%- set estimated = 0 if scan['sql'] is none else found['estimated_scans_' ~ i] | int -%}
    {%- set line = "dbt_multijoin: " ~ model.name ~ ": input '" ~ scan['name'] ~ "' (" ~ scan['relation'] ~ "): " -%}
    {%- if files == 0 and bytes == 0 and estimated == 0 -%}
      {%- set line = line ~ "reads nothing" -%}
    {%- else -%}
      {%- set line = line ~ "reads " ~ files ~ (" file, " if files == 1 else " files, ") ~ dbt_multijoin._mj_bytes_text(bytes) -%}
    {%- endif -%}
    {%- set line = line ~ " (" ~ scan['reads'] ~ ")" -%}
    {%- if estimated > 0 -%}
      {%- set line = line ~ "; " ~ estimated ~ " of its scans sized by the statistics they report, their files not counted" -%}
      {%- do total.update({'known': false}) -%}
    {%- endif -%}
    {%- do total.update({'bytes': total['bytes'] + bytes}) -%}
    {%- do log(line, info=True) -%}
  {%- endfor -%}
  {{- return(total['bytes'] if total['known'] else none) -}}
{%- endmacro %}


{% macro _mj_changes_in_few_partitions(sql, change_bytes) -%}
  {#- `sql` (the changes query) in a partition per 32 MiB of the change files it reads. Each change
      feed's rows are netted per key by a window, whose shuffle leaves spark.sql.shuffle.partitions
      partitions, and a cached plan keeps its partitions (AQE does not coalesce a cache's last
      stage): four feeds gave 800 partitions for a few thousand rows, and each of the five reads of
      the cache then ran 800 tasks (benchmarks/partial_update.py: 86 s of a refresh at 50,000 keys
      per input, against 17 s with one input changed). A coalesce merges partitions without a
      shuffle. Unchanged where the size is not known. -#}
  {%- if change_bytes is none -%}
    {{- return(sql) -}}
  {%- endif -%}
  {%- set partitions = [1, ((change_bytes / (32 * 1024 * 1024)) | round(0, 'ceil') | int)] | max -%}
  {{- return('select /*+ COALESCE(' ~ partitions ~ ') */ * from (\n' ~ sql ~ '\n) as changes') -}}
{%- endmacro %}


{% macro _mj_bytes_text(bytes) -%}
  {#- A size for the log: 512 B, 1.2 KiB, 3.4 MiB, ... -#}
  {%- set units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] -%}
  {%- set power = [] -%}
  {%- for p in range(units | length) if p == 0 or bytes >= 1024 ** p -%}
    {%- do power.append(p) -%}
  {%- endfor -%}
  {%- set p = power[-1] -%}
  {{- return(bytes ~ ' B' if p == 0 else '%.1f %s' | format(bytes / 1024 ** p, units[p])) -}}
{%- endmacro %}


{% macro _mj_write_changed_keys(header, relation) -%}
  {#- Read the changed rows of every input once, into a cached view; write their distinct keys to
      the key table the query drives from; and, from one query, the number of changed keys and
      each column's new mark (the highest changed_since value among the changed rows, or the
      recorded mark where there is none). Both are read from the cache, not from the inputs. -#}
  {%- set changes = dbt_multijoin._mj_changes_view() -%}
  {%- set key_table = dbt_multijoin._mj_changed_keys_table(relation) -%}
  {%- do dbt_multijoin._mj_drop_changed_keys_scratch(relation, {}) -%}
  {%- set change_bytes = dbt_multijoin._mj_log_change_scans(header) -%}
  {%- do dbt_multijoin._mj_cache_view(changes, dbt_multijoin._mj_changes_in_few_partitions(header['changes'], change_bytes), 'dbt_multijoin_changes') -%}
  {%- if header['path'] == 'partial_update' -%}
    {#- Before any table is written: a run this check fails leaves nothing behind. -#}
    {%- do dbt_multijoin._mj_check_one_row_per_key(header, changes) -%}
    {%- if header.get('null_rows') -%}
      {%- do dbt_multijoin._mj_write_scratch_table(dbt_multijoin._mj_null_rows_table(relation), header['null_rows'], 'dbt_multijoin_null_rows') -%}
    {%- endif -%}
  {%- endif -%}
  {%- set keys = dbt_multijoin._mj_column_list(header['keys']) -%}
  {%- do dbt_multijoin._mj_write_scratch_table(key_table, 'select distinct ' ~ keys ~ ' from ' ~ changes ~ ' where not (' ~ dbt_multijoin._mj_any_key_null(none, header['keys']) ~ ')', 'dbt_multijoin_changed_keys') -%}
  {%- set items = ['(select count(*) from ' ~ key_table ~ ') as changed_key_count'] -%}
  {%- for mark in header['mark_columns'].values() -%}
    {%- do items.append(dbt_multijoin._mj_highest_mark(mark['column'], mark['instant']) ~ ' as ' ~ mark['column']) -%}
  {%- endfor -%}
  {#- A global aggregate: one row, also when nothing changed. -#}
  {%- set found = run_query('select count(*) as changed_rows, ' ~ items | join(', ') ~ ' from ' ~ changes)[0] -%}
  {%- for property, mark in header['mark_columns'].items() if found[mark['column']] is not none -%}
    {%- do header['marks'].update({property: found[mark['column']] | string}) -%}
  {%- endfor -%}
  {#- The recompute path's query reads the key table, not the changes: they go now (the view
      first, as it reads the Iceberg changelog views). A partial update's MERGE source reads the
      changes view: it goes with the scratch tables. -#}
  {%- if header['path'] != 'partial_update' -%}
    {%- do dbt_multijoin._mj_drop_changed_keys_scratch_views(header) -%}
  {%- endif -%}
  {%- do header.update({'changed_key_count': found['changed_key_count'] | int}) -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ header['changed_key_count'] ~ " changed keys", info=True) -%}
{%- endmacro %}


{% macro _mj_check_one_row_per_key(state, changes) -%}
  {#- A partial update trusts one_row_per_key: two changed rows of one key in one input fail the
      run, naming the input, its relation and the key, before anything is written. (Rows that did
      not change are not read: the generic test multijoin_key_unique on each input checks them.) -#}
  {%- set keys = dbt_multijoin._mj_column_list(state['keys']) -%}
  {%- set found = run_query('select dbt_multijoin_input, ' ~ keys ~ ', count(*) as n from ' ~ changes ~ ' where not (' ~ dbt_multijoin._mj_any_key_null(none, state['keys']) ~ ') group by dbt_multijoin_input, ' ~ keys ~ ' having count(*) > 1 limit 1') -%}
  {%- if found | length > 0 -%}
    {%- set row = found[0] -%}
    {%- set input = state['inputs'][row['dbt_multijoin_input'] | int] -%}
    {%- set key = [] -%}
    {%- for k in state['keys'] -%}
      {%- do key.append(k ~ ' = ' ~ row[k]) -%}
    {%- endfor -%}
    {%- do dbt_multijoin._mj_fail("one_row_per_key: input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ") has " ~ row['n'] ~ " rows of the key " ~ key | join(', ') ~ ": drop one_row_per_key (the run then recomputes changed keys with the multi-join), or make the input unique on the key") -%}
  {%- endif -%}
{%- endmacro %}


{#- The MERGEs: the key-recompute path, the partial update, and the filter both use. -#}
{% macro _mj_merge_changed_keys(header, target_relation, sql, columns) -%}
  {#- Replace, in one MERGE (statement 'main'), every target row of a changed key and every
      target row with a NULL key by the rows of `sql` (whose output columns are `columns`). The
      source is one delete marker per changed key, one marker for all NULL-keyed rows, and the
      new rows (which never match). A target row matches at most one marker: its key, or the
      all-NULL marker when any of its key columns is NULL.
      The new rows are written to a scratch parquet table first, by the very statement whose
      plan the materialization proved (EXPLAIN), and the MERGE reads that table. Delta
      materializes a MERGE source anyway;
      over the query itself the MERGE was slower and shuffled more (k = 8, 2M keys per input, 1%
      changed: 10.2 s and 350 MiB, against 2.5 s + 6.0 s and 227 MiB).
      Because the MERGE also inserts, Delta and Iceberg join the source to the target with the
      target on the side that is not kept, which Spark cannot broadcast: the whole target would
      be shuffled to find the few rows replaced. A condition on the target alone
      (_mj_replaced_rows_filter) is pushed below that join and drops most target rows first. -#}
  {%- set existing_columns = adapter.get_columns_in_relation(target_relation) -%}
  {%- set existing = existing_columns | map(attribute='name') | list -%}
  {%- if existing | map('lower') | list != columns | map('lower') | list -%}
    {%- do dbt_multijoin._mj_fail("the model's columns (" ~ columns | join(', ') ~ ") differ from " ~ target_relation ~ "'s (" ~ existing | join(', ') ~ "): run it with --full-refresh") -%}
  {%- endif -%}
  {%- set keys = header['keys'] -%}
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
  {%- set matches = [] -%}
  {%- for k in keys -%}
    {%- do matches.append('source.' ~ dbt_multijoin._mj_quote(k) ~ ' <=> if(' ~ dbt_multijoin._mj_any_key_null('target', keys) ~ ', null, ' ~ dbt_multijoin._mj_column_ref('target', k) ~ ')') -%}
  {%- endfor -%}
  {%- set column_list = dbt_multijoin._mj_column_list(columns) -%}
  {%- set target_filter = dbt_multijoin._mj_replaced_rows_filter(existing_columns, key_table, keys, header['changed_key_count']) -%}
  {%- call statement('main') -%}
    merge into {{ target_relation }} as target
    using (
        select true as dbt_multijoin_replaced, {{ marker_columns | join(', ') }} from {{ key_table }}
        union all
        select true, {{ null_marker_columns | join(', ') }}
        union all
        select false, {{ column_list }} from {{ rows_table }}
    ) as source
    on source.dbt_multijoin_replaced and {{ matches | join(' and ') }}{% if target_filter %}
        and {{ target_filter }}{% endif %}
    when matched then delete
    when not matched and not source.dbt_multijoin_replaced then insert ({{ column_list }}) values ({{ dbt_multijoin._mj_column_list(columns, 'source') }})
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_merge_partial_update(state, target_relation, sql) -%}
  {#- Apply a partial update's MERGE source `sql` (_mj_render_partial_update) to the table in one
      MERGE (statement 'main'): a changed key's row gets each changed input's new columns (NULLs
      where the key left that input) and keeps the others'; a new key is inserted; a row no input
      holds any more is deleted; each changed input's NULL-keyed rows are replaced by its current
      ones. A target row matches at most one source row: its key's, or when its key has a NULL,
      the marker of the one input it came from. The rows are written to the scratch table first
      (as the recompute path does), and only the replaced target rows are shuffled
      (_mj_replaced_rows_filter). -#}
  {%- if not state['bare'] -%}
    {%- do dbt_multijoin._mj_fail("one_row_per_key: the model must be the dbt_multijoin.multi_join(...) call itself, with no SQL around it") -%}
  {%- endif -%}
  {%- set keys = state['keys'] -%}
  {%- set expected = keys | map('lower') | list -%}
  {%- for input in state['inputs'] -%}
    {%- do expected.extend(input['columns'] | map('lower') | list + [input['presence']]) -%}
  {%- endfor -%}
  {%- set existing_columns = adapter.get_columns_in_relation(target_relation) -%}
  {%- set existing = existing_columns | map(attribute='name') | map('lower') | list -%}
  {%- if existing != expected -%}
    {%- do dbt_multijoin._mj_fail("the model's columns (" ~ expected | join(', ') ~ ") differ from " ~ target_relation ~ "'s (" ~ existing | join(', ') ~ "): run it with --full-refresh") -%}
  {%- endif -%}
  {%- set key_table = dbt_multijoin._mj_changed_keys_table(target_relation) -%}
  {%- set rows_table = dbt_multijoin._mj_changed_rows_table(target_relation) -%}
  {%- do dbt_multijoin._mj_write_scratch_table(rows_table, sql, 'dbt_multijoin_changed_rows') -%}

  {%- set target_null = dbt_multijoin._mj_any_key_null('target', keys) -%}
  {%- set null_group = [] -%}
  {%- for input in state['inputs'] -%}
    {%- do null_group.append('when target.' ~ input['presence'] ~ ' then ' ~ loop.index0) -%}
  {%- endfor -%}
  {%- set matches = [] -%}
  {%- for k in keys -%}
    {%- do matches.append('source.' ~ dbt_multijoin._mj_quote(k) ~ ' <=> if(' ~ target_null ~ ', null, ' ~ dbt_multijoin._mj_column_ref('target', k) ~ ')') -%}
  {%- endfor -%}
  {%- do matches.append('source.dbt_multijoin_null_group <=> if(' ~ target_null ~ ', case ' ~ null_group | join(' ') ~ ' end, null)') -%}

  {%- set held_after = [] -%}
  {%- set present_any = [] -%}
  {%- set updates = [] -%}
  {%- set inserted = [] -%}
  {%- for k in keys -%}
    {%- do inserted.append('source.' ~ dbt_multijoin._mj_quote(k)) -%}
  {%- endfor -%}
  {%- for input in state['inputs'] -%}
    {%- set has = 'target.' ~ input['presence'] -%}
    {%- if input['changed'] -%}
      {%- set touched = 'source.dbt_multijoin_touched_' ~ loop.index0 -%}
      {%- set present = 'source.dbt_multijoin_present_' ~ loop.index0 -%}
      {%- do held_after.append('coalesce(if(' ~ touched ~ ', ' ~ present ~ ', ' ~ has ~ '), false)') -%}
      {%- do present_any.append(present) -%}
      {%- for column in input['columns'] -%}
        {%- set name = dbt_multijoin._mj_quote(column) -%}
        {%- do updates.append(name ~ ' = if(' ~ touched ~ ', source.' ~ name ~ ', target.' ~ name ~ ')') -%}
        {%- do inserted.append('source.' ~ name) -%}
      {%- endfor -%}
      {%- do updates.append(input['presence'] ~ ' = if(' ~ touched ~ ', if(' ~ present ~ ', true, null), ' ~ has ~ ')') -%}
      {%- do inserted.append('if(' ~ present ~ ', true, null)') -%}
    {%- else -%}
      {%- do held_after.append('coalesce(' ~ has ~ ', false)') -%}
      {%- for column in input['columns'] -%}
        {%- do inserted.append('null') -%}
      {%- endfor -%}
      {%- do inserted.append('null') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set column_list = dbt_multijoin._mj_column_list(existing_columns | map(attribute='name') | list) -%}
  {%- set target_filter = dbt_multijoin._mj_replaced_rows_filter(existing_columns, key_table, keys, state['changed_key_count']) -%}
  {%- call statement('main') -%}
    merge into {{ target_relation }} as target
    using {{ rows_table }} as source
    on {{ matches | join(' and ') }}{% if target_filter %}
        and {{ target_filter }}{% endif %}
    when matched and source.dbt_multijoin_null_group is not null then delete
    {%- if updates %}
    when matched and not ({{ held_after | join(' or ') }}) then delete
    when matched then update set {{ updates | join(', ') }}
    when not matched and source.dbt_multijoin_null_group is null and ({{ present_any | join(' or ') }}) then insert ({{ column_list }}) values ({{ inserted | join(', ') }})
    {%- endif %}
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_replaced_rows_filter(target_columns, key_table, keys, key_count) -%}
  {#- A condition on the target's row alone that every row the changed_keys MERGE replaces
      meets, or none. A row is replaced when its key is a changed key or has a NULL, so: a NULL
      in the key, or the key's 64-bit hash (xxhash64) is a changed key's (another key passes
      only on a hash collision, which is harmless: the MERGE's own condition decides). Only when
      each key column has the same type in the key table as in the target, of a type whose equal
      values have equal bytes (not floating point: -0.0 = 0.0; not a collated string), so equal
      keys hash alike.
      Up to `dbt_multijoin_hash_list_limit` changed keys (a project var, 50,000 by default) the
      exact hashes go into the SQL: as one binary constant that the extension's multijoin_hash_in
      looks each row up in (a primitive hash table), or without the extension as an IN list, which
      Spark looks up in a set of boxed longs: profiled on a 32M-row target with 47,000 hashes, that
      lookup was a quarter of the MERGE's scan CPU. Above the limit, they go into a bloom filter
      built once from the key table and written into the SQL (the extension's
      multijoin_bloom_filter, sized for 1% false positives, at most 8 Mibit: 1 MiB of filter, 2 MiB
      of SQL), which lets through about 1% of the other rows. Without the extension above the
      limit, no condition: the MERGE reads the whole target. (Measured, k = 8, 2M keys per input,
      20,000 changed: the MERGE took 3.25 s with the exact hashes, 3.64 s with hash buckets that
      let 1/32 of the other rows through.) -#}
  {%- if key_count == 0 -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set hashed_alike = ['tinyint', 'smallint', 'int', 'bigint', 'date', 'timestamp', 'timestamp_ntz', 'string', 'boolean', 'binary'] -%}
  {%- set target_types = {} -%}
  {%- for column in target_columns -%}
    {%- do target_types.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {%- set key_types = {} -%}
  {%- for column in adapter.get_columns_in_relation(key_table) -%}
    {%- do key_types.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {%- for k in keys -%}
    {%- set dtype = target_types.get(k | lower) -%}
    {%- if dtype is none or key_types.get(k | lower) != dtype or not (dtype in hashed_alike or dtype.startswith('decimal(')) -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": the MERGE reads the whole target (key " ~ k ~ " is " ~ dtype ~ " in the table, " ~ key_types.get(k | lower) ~ " among the changed keys)", info=True) -%}
      {{- return(none) -}}
    {%- endif -%}
  {%- endfor -%}
  {%- set key_null = dbt_multijoin._mj_any_key_null('target', keys) -%}
  {%- set hash = 'xxhash64(' ~ dbt_multijoin._mj_column_list(keys) ~ ')' -%}
  {%- set target_hash = 'xxhash64(' ~ dbt_multijoin._mj_column_list(keys, 'target') ~ ')' -%}
  {%- set limit = var('dbt_multijoin_hash_list_limit', 50000) | int -%}
  {%- if key_count <= limit and dbt_multijoin._mj_has_function('multijoin_hash_in') -%}
    {#- 16 hex digits a hash, written by Spark (the hex of a long is its two's complement): the
        big-endian bytes multijoin_hash_in reads. -#}
    {%- set hashes = run_query("select concat_ws('', collect_set(lpad(hex(" ~ hash ~ "), 16, '0'))) as key_hashes from " ~ key_table)[0]['key_hashes'] -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the MERGE reads the target through the exact hashes of the " ~ key_count ~ " changed keys (multijoin_hash_in)", info=True) -%}
    {{- return('(' ~ key_null ~ ' or multijoin_hash_in(unhex(\'' ~ hashes ~ '\'), ' ~ target_hash ~ '))') -}}
  {%- endif -%}
  {%- if key_count <= limit -%}
    {#- The literals are written by Spark, in one row: no client rounds a 64-bit value, and the
        lowest long, which has no literal of its own, is written as a cast. -#}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the MERGE reads the target through an IN list of the " ~ key_count ~ " changed keys' hashes (this session has no multijoin_hash_in: no extension, or a jar older than it)", info=True) -%}
    {%- set literal = "if(" ~ hash ~ " = -9223372036854775808, \"cast('-9223372036854775808' as bigint)\", concat(cast(" ~ hash ~ " as string), 'L'))" -%}
    {%- set hashes = run_query('select concat_ws(\', \', collect_set(' ~ literal ~ ')) as key_hashes from ' ~ key_table)[0]['key_hashes'] -%}
    {{- return('(' ~ key_null ~ ' or ' ~ target_hash ~ ' in (' ~ hashes ~ '))') -}}
  {%- endif -%}
  {%- if not dbt_multijoin._mj_has_function('multijoin_bloom_filter') -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the MERGE reads the whole target (" ~ key_count ~ " changed keys, more than dbt_multijoin_hash_list_limit " ~ limit ~ ", and no multijoin_bloom_filter: the extension is not loaded)", info=True) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set filter = run_query('select hex(multijoin_bloom_filter(' ~ hash ~ ', 0.01, 8388608)) as filter from ' ~ key_table)[0]['filter'] -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": the MERGE reads the target through a bloom filter of the " ~ key_count ~ " changed keys (" ~ dbt_multijoin._mj_bytes_text((filter | length) // 2) ~ ")", info=True) -%}
  {{- return('(' ~ key_null ~ ' or multijoin_might_contain(unhex(\'' ~ filter ~ '\'), ' ~ target_hash ~ '))') -}}
{%- endmacro %}


{#- After the MERGE: what the run records on the table. -#}
{% macro _mj_merge_friendly_properties() -%}
  {#- Table properties that make the changed_keys MERGE write only what changed. The changed
      keys are scattered over every file of the table (its rows are hash-partitioned on the key),
      so a copy-on-write MERGE rewrites the whole table to replace 1% of its keys: deletion
      vectors (Delta) and merge-on-read (Iceberg) mark the replaced rows instead. A property the
      model's own `tblproperties` sets is left to it. -#}
  {%- set wanted = {
      'delta': {'delta.enableDeletionVectors': 'true'},
      'iceberg': {'write.delete.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read', 'write.merge.mode': 'merge-on-read'},
  }.get(config.get('file_format'), {}) -%}
  {%- set configured = config.get('tblproperties') or {} -%}
  {%- set properties = {} -%}
  {%- for key, value in wanted.items() if key not in configured -%}
    {%- do properties.update({key: value}) -%}
  {%- endfor -%}
  {{- return(properties) -}}
{%- endmacro %}


{% macro _mj_marks_properties(header, full_build) -%}
  {#- The table properties a changed_keys run records (with the plan's, in one commit): the marks
      the run read up to, the next run's lower bounds. A run that fails before they are recorded
      keeps the previous marks, so the next run replaces the same keys again (idempotent). After
      a full build, also the properties that keep the next runs' MERGEs small. -#}
  {%- set properties = {} -%}
  {%- do properties.update(header['marks']) -%}
  {%- if full_build -%}
    {%- do properties.update(dbt_multijoin._mj_merge_friendly_properties()) -%}
  {%- endif -%}
  {{- return(properties) -}}
{%- endmacro %}
