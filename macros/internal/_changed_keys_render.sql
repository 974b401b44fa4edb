{#- Private: the changed_keys incremental strategy, the rendering side: what
    multi_join(..., changed_since=...) renders, and the state it hands to the materialization.

    Here: the state pair (_mj_changed_keys_state_comment writes it, _mj_changed_keys_state reads
    it; its one shape is described on the writer), the marks, the SQL pieces rendering and
    applying share, and _mj_render_changed_keys: the full build, or the changed keys' rows
    recomputed by the multi-join (the key-recompute path).
    Not here: how an input shows its changes (_change_sources.sql); the partial-update path's
    rendering (_partial_update.sql); applying what is rendered: scratch tables, MERGEs, the marks
    recorded (_changed_keys_apply.sql); what every incremental strategy shares (_incremental.sql).

    A changed_keys model is one multi_join(..., changed_since=...) whose inputs each have a column
    that grows when a row is written (changed_since), or a change feed. After every build the
    materialization records, per input, where it has read up to (its mark). The next run:
    - the changed rows are the input rows not older than their input's mark (ties are read
      again; a row whose changed_since is NULL is never older than a mark), or the change feed's rows since the
      recorded version; the materialization caches them, with their changed_since values, in a
      temporary view before the query runs, raises each column's mark to the highest value
      among them, and writes their distinct keys to the small table the query drives from
      (`<model>__dbt_mj_changed_keys`);
    - the query is the multi-join restricted to those keys: the key table drives a LEFT
      multi-join of every input (the operator prunes each input with a bloom filter of the
      driver's keys before its shuffle), minus the key rows no input has any more; plus the rows
      whose key is NULL (never matched, re-derived on every run);
    - the materialization writes the query's rows to a scratch table
      (`<model>__dbt_mj_changed_rows`), then replaces the target's rows of exactly those keys, and
      every NULL-keyed row, by them in one MERGE (one atomic commit: Delta and Iceberg).
    The changes view lives in the run's own Spark session (a Spark Thrift Server uncaches a
    session's views when it closes; on the session method the next run of the model drops it);
    the next run also drops the key and rows tables a failed run left. -#}

{#- The state: one shape, one writer, one reader. -#}
{% macro _mj_changed_keys_state_comment(state) -%}
  {#- What the rendering hands to the materialization, as the first line of the compiled SQL
      (read back by _mj_changed_keys_state): {path: 'full' | 'recompute' | 'partial_update',
      keys, marks (to record after the run: change feeds' current versions read before the
      query; for columns, the recorded marks that the changed rows raise), changes (the
      changed rows' query, none for a full build); except on a full build, mark_columns ({mark
      property: {column, instant}}: where the changed rows carry each column's values),
      changelog_views (the temporary views of Iceberg inputs' changes that query reads) and
      scans (per input, _mj_change_scan: its part of that query, for the log); on a
      partial update also null_rows (the changed inputs' NULL-keyed rows' query, or none) and
      inputs ([{name, relation, presence, columns, changed}])}. The materialization adds
      `bare` (_mj_changed_keys_state) and `changed_key_count`, and raises `marks`
      (_mj_write_changed_keys). It also documents, in target/compiled, which marks a run read
      from. -#}
  {{- return('/* dbt_multijoin changed_keys ' ~ tojson(state) ~ ' */') -}}
{%- endmacro %}


{% macro _mj_changed_keys_state(sql) -%}
  {#- The state _mj_changed_keys_state_comment wrote at the top of a model's compiled SQL, and
      whether the SQL is that comment followed by what multi_join rendered and nothing else
      (`bare`: a partial update applies the rendered rows, so no SQL may wrap them). -#}
  {%- set match = modules.re.search('^/\\* dbt_multijoin changed_keys (\\{.*\\}) \\*/', sql, modules.re.M) -%}
  {%- if match is none -%}
    {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' needs the model's SQL to be one dbt_multijoin.multi_join(..., changed_since=...) call") -%}
  {%- endif -%}
  {%- set state = fromjson(match.group(1)) -%}
  {%- do state.update({'bare': sql.strip().startswith(match.group(0))}) -%}
  {{- return(state) -}}
{%- endmacro %}


{#- The marks: where each input has been read up to, recorded on the table. -#}
{% macro _mj_mark_property(name) -%}
  {{- return('dbt_multijoin.changed_since.' ~ (name | lower)) -}}
{%- endmacro %}


{% macro _mj_mark_column(index) -%}
  {#- The column of the changes view carrying input `index`'s changed_since values. -#}
  {{- return('dbt_multijoin_mark_' ~ index) -}}
{%- endmacro %}


{% macro _mj_is_instant(dtype) -%}
  {#- A TIMESTAMP (with local time zone) is recorded as microseconds since the epoch: its text
      form depends on the session time zone, which may differ between runs. -#}
  {{- return(dtype in ['timestamp', 'timestamp_ltz']) -}}
{%- endmacro %}


{% macro _mj_highest_mark(column, instant) -%}
  {#- The aggregate giving a column's mark as text: its highest value (for an instant, in
      microseconds since the epoch). -#}
  {{- return('cast(' ~ ('unix_micros(max(' ~ column ~ '))' if instant else 'max(' ~ column ~ ')') ~ ' as string)') -}}
{%- endmacro %}


{% macro _mj_recorded_marks(relation) -%}
  {#- {property: mark} of every changed_since mark recorded on `relation`. -#}
  {%- set marks = {} -%}
  {%- for key, value in dbt_multijoin._mj_table_properties(relation).items() if key.startswith('dbt_multijoin.changed_since.') -%}
    {%- do marks.update({key: value}) -%}
  {%- endfor -%}
  {{- return(marks) -}}
{%- endmacro %}


{% macro _mj_current_marks(spec, tracked, recorded=none) -%}
  {#- Where each input stands now, {mark property: mark as text}: its highest changed_since value
      ('empty' when it has none), or for a change feed its current Delta version or Iceberg
      snapshot ('none' while the table has none). The highest values of every input tracked by a
      column come from one query: one job, not one per input. With `recorded` (an incremental
      run), an input tracked by a column keeps its recorded mark instead: the materialization
      raises it from the changed rows it reads anyway, so no input is scanned for it. -#}
  {%- set found = {} -%}
  {%- set highest = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set feed = tracked[loop.index0].get('change_feed') -%}
    {%- if feed == 'iceberg' -%}
      {%- do found.update({loop.index0: tracked[loop.index0]['snapshot']}) -%}
    {%- elif feed -%}
      {%- do found.update({loop.index0: run_query('describe history ' ~ input['relation'] ~ ' limit 1')[0]['version'] | string}) -%}
    {%- elif recorded is not none -%}
      {%- do found.update({loop.index0: recorded[dbt_multijoin._mj_mark_property(input['name'])]}) -%}
    {%- else -%}
      {%- set value = dbt_multijoin._mj_highest_mark(dbt_multijoin._mj_quote(tracked[loop.index0]['column']), dbt_multijoin._mj_is_instant(tracked[loop.index0]['dtype'])) -%}
      {%- do highest.append('select ' ~ loop.index0 ~ ' as input_index, ' ~ value ~ ' as mark from ' ~ input['relation']) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if highest -%}
    {%- for row in run_query(highest | join('\nunion all\n')) -%}
      {%- do found.update({row['input_index'] | int: 'empty' if row['mark'] is none else row['mark']}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set marks = {} -%}
  {%- for input in spec['inputs'] -%}
    {%- do marks.update({dbt_multijoin._mj_mark_property(input['name']): found[loop.index0]}) -%}
  {%- endfor -%}
  {{- return(marks) -}}
{%- endmacro %}


{#- SQL pieces the rendering and the applying share. -#}
{% macro _mj_any_key_null(alias, keys) -%}
  {%- set items = [] -%}
  {%- for k in keys -%}
    {%- do items.append(dbt_multijoin._mj_column_ref(alias, k) ~ ' is null') -%}
  {%- endfor -%}
  {{- return(items | join(' or ')) -}}
{%- endmacro %}


{% macro _mj_keys_as_model_keys(input, spec) -%}
  {#- `input`'s key columns under the model's key names: ['k as device_id', ...]. -#}
  {%- set items = [] -%}
  {%- for k in input['keys'] -%}
    {%- do items.append(dbt_multijoin._mj_quote(k) ~ ' as ' ~ dbt_multijoin._mj_quote(spec['keys'][loop.index0])) -%}
  {%- endfor -%}
  {{- return(items) -}}
{%- endmacro %}


{#- The model: a full build, or the changed keys recomputed by the multi-join. -#}
{% macro _mj_changed_rows(input, tracked, recorded, current, items) -%}
  {#- The select of `items` (the keys, the changed_since values) over `input`'s changed rows
      (none when nothing changed). A change feed gives both the old and the new image of an
      update, so a key an update moved away from is changed too. -#}
  {%- set rows = dbt_multijoin._mj_change_source_call(dbt_multijoin._mj_change_source(tracked), 'changed_rows', input, tracked, recorded, current) -%}
  {{- return(none if rows is none else 'select ' ~ items ~ ' from ' ~ rows) -}}
{%- endmacro %}


{% macro _mj_change_scan(input, tracked, recorded, current, sql) -%}
  {#- An input's entry of the state's `scans`: {name, relation, sql (its part of the changes
      query, none when it has no change to read), reads (what it reads since the mark, in
      words)}. The materialization sizes and logs it before the changes are read
      (_mj_log_change_scans). -#}
  {{- return({'name': input['name'], 'relation': input['relation'] | string, 'sql': sql,
      'reads': dbt_multijoin._mj_change_source_call(dbt_multijoin._mj_change_source(tracked), 'reads', input, tracked, recorded, current)}) -}}
{%- endmacro %}


{% macro _mj_render_changed_keys(spec, changed_since) -%}
  {#- The state comment, then the whole model (a full build), the MERGE source of a partial
      update (_partial_update.sql), or the changed keys' rows recomputed by the multi-join. -#}
  {%- set tracked = dbt_multijoin._mj_tracked_columns(spec, changed_since) -%}
  {%- set hint = spec['strategy'] == 'multiway' -%}
  {%- set not_partial = dbt_multijoin._mj_partial_update_eligibility(spec) -%}
  {%- set whole_spec = spec if not_partial else dbt_multijoin._mj_with_presence_columns(spec) -%}

  {%- set incremental = dbt_multijoin.is_incremental() -%}
  {%- set recorded = dbt_multijoin._mj_recorded_marks(this) if incremental else {} -%}
  {%- set missing = [] -%}
  {%- for input in spec['inputs'] if dbt_multijoin._mj_mark_property(input['name']) not in recorded -%}
    {%- do missing.append(dbt_multijoin._mj_mark_property(input['name'])) -%}
  {%- endfor -%}
  {%- if incremental and not not_partial and not missing -%}
    {#- A table built before the model declared one_row_per_key has no presence columns. -#}
    {%- set existing = adapter.get_columns_in_relation(this) | map(attribute='name') | map('lower') | list -%}
    {%- for input in spec['inputs'] if dbt_multijoin._mj_presence_column(input) not in existing -%}
      {%- do missing.append('column ' ~ dbt_multijoin._mj_presence_column(input)) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if not incremental or missing -%}
    {%- if incremental -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": no recorded mark for " ~ missing | join(', ') ~ ": building the whole table", info=True) -%}
    {%- endif -%}
    {%- set state = {'path': 'full', 'keys': spec['keys'], 'marks': dbt_multijoin._mj_current_marks(spec, tracked), 'changes': none} -%}
    {%- set whole = dbt_multijoin._mj_render_balanced(whole_spec) if spec['strategy'] == 'balanced' else dbt_multijoin._mj_render_chain(whole_spec, hint=hint) -%}
    {{- return(dbt_multijoin._mj_changed_keys_state_comment(state) ~ '\n' ~ whole) -}}
  {%- endif -%}
  {%- set marks = dbt_multijoin._mj_current_marks(spec, tracked, recorded) -%}

  {#- The changed rows: keys of rows newer than their input's recorded mark, and, in a column of
      its own per input tracked by a column, their changed_since values (NULL in the other
      inputs' rows), from which the materialization raises the marks. -#}
  {%- set mark_columns = {} -%}
  {%- set column_tracked = [] -%}
  {%- for i in range(spec['inputs'] | length) if not tracked[i].get('change_feed') -%}
    {%- do column_tracked.append(i) -%}
    {%- do mark_columns.update({dbt_multijoin._mj_mark_property(spec['inputs'][i]['name']): {
        'column': dbt_multijoin._mj_mark_column(i), 'instant': dbt_multijoin._mj_is_instant(tracked[i]['dtype'])}}) -%}
  {%- endfor -%}
  {%- if not not_partial -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": partial update: reading the changed rows of the inputs that changed, no join", info=True) -%}
    {{- return(dbt_multijoin._mj_render_partial_update(spec, tracked, recorded, marks, mark_columns)) -}}
  {%- endif -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": recomputing the changed keys with the multi-join: no partial update, as " ~ not_partial, info=True) -%}
  {%- set branches = [] -%}
  {%- set scans = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set property = dbt_multijoin._mj_mark_property(input['name']) -%}
    {%- set items = dbt_multijoin._mj_keys_as_model_keys(input, spec) -%}
    {%- set index = loop.index0 -%}
    {%- for i in column_tracked -%}
      {%- do items.append((dbt_multijoin._mj_quote(tracked[i]['column']) if i == index else 'null') ~ ' as ' ~ dbt_multijoin._mj_mark_column(i)) -%}
    {%- endfor -%}
    {%- set branch = dbt_multijoin._mj_changed_rows(input, tracked[index], recorded[property], marks[property], items | join(', ')) -%}
    {%- do scans.append(dbt_multijoin._mj_change_scan(input, tracked[index], recorded[property], marks[property], branch)) -%}
    {%- if branch is not none -%}
      {%- do branches.append('    ' ~ branch) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not branches -%}
    {#- Nothing changed (only change feeds, none with a new version): no rows, of the keys' types. -#}
    {%- do branches.append('    select ' ~ dbt_multijoin._mj_keys_as_model_keys(spec['inputs'][0], spec) | join(', ') ~ ' from ' ~ spec['inputs'][0]['relation'] ~ ' where false') -%}
  {%- endif -%}
  {%- set changes_sql = 'select * from (\n' ~ branches | join('\n    union all\n') ~ '\n) as newer_rows' -%}

  {#- The changed keys' rows: the key table drives a LEFT multi-join of every input; a key that
      no input has any more gives no row (as in the FULL join). The key columns are the FULL
      join's coalesce of the inputs' keys, not the driver's, so values such as -0.0 come out as a
      full build writes them. -#}
  {%- set head = dbt_multijoin._mj_chain_head(spec, hint, true) -%}
  {%- set sides = head['sides'] -%}
  {%- set lines = head['lines'] -%}
  {%- do lines.append('from ' ~ dbt_multijoin._mj_changed_keys_table(this) ~ ' as changed') -%}
  {%- set present = [] -%}
  {%- for side in sides -%}
    {%- set conditions = [] -%}
    {%- for k in range(spec['keys'] | length) -%}
      {%- do conditions.append(dbt_multijoin._mj_column_ref('changed', spec['keys'][k]) ~ ' = ' ~ dbt_multijoin._mj_column_ref(side['alias'], side['keys'][k])) -%}
    {%- endfor -%}
    {%- do lines.append('left outer join ' ~ side['from']) -%}
    {%- do lines.append(dbt_multijoin._mj_on(conditions)) -%}
    {%- do present.append(dbt_multijoin._mj_column_ref(side['alias'], side['keys'][0]) ~ ' is not null') -%}
  {%- endfor -%}
  {%- do lines.append('where ' ~ present | join(' or ')) -%}

  {#- Rows with a NULL in a key column match nothing: every run re-derives all of them. -#}
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

  {%- set state = {'path': 'recompute', 'keys': spec['keys'], 'marks': marks, 'changes': changes_sql, 'mark_columns': mark_columns, 'changelog_views': dbt_multijoin._mj_changelog_views(spec, tracked), 'scans': scans} -%}
  {{- return(dbt_multijoin._mj_changed_keys_state_comment(state) ~ '\n' ~ lines | join('\n') ~ '\nunion all\n' ~ dbt_multijoin._mj_render_chain(null_spec, hint=hint)) -}}
{%- endmacro %}
