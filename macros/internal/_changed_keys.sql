{#- Private: the changed_keys incremental strategy, the rendering side.

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
    the next run also drops the key and rows tables a failed run left.

    What the materialization needs from the rendering travels in a header comment at the top of
    the compiled SQL: {"keys", "marks" (the marks to record: change feeds' current versions read
    before the query; for columns, the recorded marks that the changed rows raise), "changes"
    (the changed rows' query, null for a full build), "mark_columns" ({mark property: {column,
    instant}}: where the changed rows carry each column's values), "changelog_views" (the
    temporary views of Iceberg inputs' changes that query reads)}. It also documents, in
    target/compiled, which marks a run read from. -#}

{% macro _mj_changed_keys_state_comment(state) -%}
  {#- What the rendering hands to the materialization, as the first line of the compiled SQL
      (read back by _mj_changed_keys_state): {path: 'full' | 'recompute' | 'partial_update',
      keys, marks (to record after the run: change feeds' current versions read before the
      query; for columns, the recorded marks that the changed rows raise), changes (the
      changed rows' query, none for a full build), mark_columns ({mark property: {column,
      instant}}: where the changed rows carry each column's values), changelog_views (the
      temporary views of Iceberg inputs' changes that query reads), and for a partial update
      inputs ([{name, relation, presence, columns, changed}])}. It also documents, in
      target/compiled, which marks a run read from. -#}
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


{% macro _mj_changelog_views(spec, tracked) -%}
  {#- The temporary views of the Iceberg inputs' changes that a run's changes query reads. -#}
  {%- set views = [] -%}
  {%- for index in range(spec['inputs'] | length) if tracked[index].get('change_feed') == 'iceberg' -%}
    {%- do views.append(dbt_multijoin._mj_changelog_view(spec['inputs'][index])) -%}
  {%- endfor -%}
  {{- return(views) -}}
{%- endmacro %}


{% macro _mj_mark_property(name) -%}
  {{- return('dbt_multijoin.changed_since.' ~ (name | lower)) -}}
{%- endmacro %}


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


{% macro _mj_mark_column(index) -%}
  {#- The column of the changes view carrying input `index`'s changed_since values. -#}
  {{- return('dbt_multijoin_mark_' ~ index) -}}
{%- endmacro %}


{% macro _mj_tracked_columns(spec, changed_since) -%}
  {#- How each input shows its changes, one per input: {column, dtype} (a column that grows when a
      row is written), {change_feed: 'delta'} (Delta's change data feed) or {change_feed: 'iceberg',
      snapshot} (an Iceberg table's changelog, and its current snapshot). `changed_since` is one
      value for every input or a mapping {input name: value}. -#}
  {%- if changed_since is none -%}
    {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' needs multi_join(..., changed_since='<column>') (or 'change_feed', or a mapping {input name: either}): the column each input's rows grow in when they are written, e.g. updated_at") -%}
  {%- endif -%}
  {%- if spec['join_type'] != 'full' -%}
    {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' supports join_type 'full' only, got '" ~ spec['join_type'] ~ "'") -%}
  {%- endif -%}
  {%- set tracked = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set wanted = changed_since if changed_since is string else dbt_multijoin._mj_lookup(changed_since, input['name']) -%}
    {%- if wanted is none -%}
      {%- do dbt_multijoin._mj_fail("changed_since names nothing for input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ "): every input of a changed_keys model needs a column or 'change_feed'") -%}
    {%- elif wanted == 'change_feed' -%}
      {%- do tracked.append(dbt_multijoin._mj_change_feed(input)) -%}
    {%- else -%}
      {%- do tracked.append(dbt_multijoin._mj_tracked_column(input, wanted)) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(tracked) -}}
{%- endmacro %}


{% macro _mj_tracked_column(input, wanted) -%}
  {%- set found = [] -%}
  {%- for column in adapter.get_columns_in_relation(input['relation']) if (column.name | lower) == (wanted | lower) -%}
    {%- do found.append({'column': column.name, 'dtype': column.dtype | lower}) -%}
  {%- endfor -%}
  {%- if not found -%}
    {%- do dbt_multijoin._mj_fail("changed_since column '" ~ wanted ~ "' not found in input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ")") -%}
  {%- endif -%}
  {%- if not modules.re.fullmatch('(tinyint|smallint|int|integer|bigint|long|date|timestamp|timestamp_ntz|timestamp_ltz|string|decimal\\(\\d+,\\s*\\d+\\))', found[0]['dtype']) -%}
    {%- do dbt_multijoin._mj_fail("changed_since column '" ~ found[0]['column'] ~ "' of input '" ~ input['name'] ~ "' has type " ~ found[0]['dtype'] ~ ": use an integral, decimal, date, timestamp or string column") -%}
  {%- endif -%}
  {{- return(found[0]) -}}
{%- endmacro %}


{% macro _mj_change_feed(input) -%}
  {#- An input read through its table's change feed: an Iceberg table (its snapshots' changelog)
      or a Delta table with the change data feed on. -#}
  {%- set properties = dbt_multijoin._mj_table_properties(input['relation']) -%}
  {%- if (properties.get('format', '') | lower).startswith('iceberg') -%}
    {#- Its current snapshot is its mark: read here, with the format, in one metadata query. -#}
    {{- return({'change_feed': 'iceberg', 'snapshot': properties.get('current-snapshot-id', 'none')}) -}}
  {%- elif (properties.get('delta.enableChangeDataFeed', '') | lower) == 'true' -%}
    {{- return({'change_feed': 'delta'}) -}}
  {%- endif -%}
  {%- do dbt_multijoin._mj_fail("changed_since 'change_feed' for input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ") needs an Iceberg table, or a Delta table with delta.enableChangeDataFeed = true (alter table ... set tblproperties); for other tables name a column instead") -%}
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


{% macro _mj_change_source(tracked) -%}
  {#- How an input shows its changes: 'column' (a changed_since column), 'delta_feed' (Delta's
      change data feed) or 'iceberg_changelog'. Each source is one set of macros
      `_mj_<source>_changed_rows` and `_mj_<source>_net_rows` (below), called through
      _mj_change_source_call: a new source is one more set. -#}
  {{- return({'delta': 'delta_feed', 'iceberg': 'iceberg_changelog'}.get(tracked.get('change_feed'), 'column')) -}}
{%- endmacro %}


{% macro _mj_change_source_call(source, operation, input, tracked, recorded, current) -%}
  {#- `_mj_<source>_<operation>(input, tracked, recorded, current)`:
      - changed_rows: a FROM item of every input row the source shows as changed since the
        mark `recorded` up to `current` (a change feed: inserted, deleted, and both images of an
        update), or none when nothing changed;
      - net_rows: a query of the input's rows changed since the mark, one per key at most, as
        they are now: its columns, `dbt_multijoin_present` (false: the key left the input) and
        `dbt_multijoin_mark` (a column source's changed_since value); none when nothing changed. -#}
  {{- return(dbt_multijoin['_mj_' ~ source ~ '_' ~ operation](input, tracked, recorded, current)) -}}
{%- endmacro %}


{% macro _mj_changed_rows(input, tracked, recorded, current, items) -%}
  {#- The select of `items` (the keys, the changed_since values) over `input`'s changed rows
      (none when nothing changed). A change feed gives both the old and the new image of an
      update, so a key an update moved away from is changed too. -#}
  {%- set rows = dbt_multijoin._mj_change_source_call(dbt_multijoin._mj_change_source(tracked), 'changed_rows', input, tracked, recorded, current) -%}
  {{- return(none if rows is none else 'select ' ~ items ~ ' from ' ~ rows) -}}
{%- endmacro %}


{% macro _mj_column_changed_rows(input, tracked, recorded, current) -%}
  {#- The key-recompute path reads rows strictly above the mark: with the ties read again, every
      run replaces the keys of the mark's rows, and on Spark 4.1 with Delta 4.0 that MERGE (many
      matched keys, deletion vectors) fails with "Unexpected row: did not match any merge
      clause" (pipeline_tests/test_rebuild_safety.py). Ties are read on the partial-update path. -#}
  {{- return('(select * from ' ~ input['relation'] ~ ' where ' ~ dbt_multijoin._mj_newer_than(tracked, recorded, ties=false) ~ ') as changed') -}}
{%- endmacro %}


{% macro _mj_column_net_rows(input, tracked, recorded, current) -%}
  {#- Rows at or above the mark are the rows as they are now (one per key: one_row_per_key). -#}
  {{- return('select *, true as dbt_multijoin_present, ' ~ dbt_multijoin._mj_quote(tracked['column']) ~ ' as dbt_multijoin_mark from ' ~ input['relation'] ~ ' where ' ~ dbt_multijoin._mj_newer_than(tracked, recorded)) -}}
{%- endmacro %}


{% macro _mj_delta_feed_versions(input, recorded, current) -%}
  {#- `table_changes(...)` of the versions after the recorded one up to `current`, or none. -#}
  {%- if not modules.re.fullmatch('\\d+', recorded) -%}
    {%- do dbt_multijoin._mj_fail("the recorded mark '" ~ recorded ~ "' of input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ") is not a Delta version: run with --full-refresh") -%}
  {%- endif -%}
  {%- if (current | int) <= (recorded | int) -%}
    {{- return(none) -}}
  {%- endif -%}
  {{- return('table_changes(' ~ dbt_multijoin._mj_string_literal(input['relation'] | string) ~ ', ' ~ ((recorded | int) + 1) ~ ', ' ~ current ~ ')') -}}
{%- endmacro %}


{% macro _mj_delta_feed_changed_rows(input, tracked, recorded, current) -%}
  {%- set versions = dbt_multijoin._mj_delta_feed_versions(input, recorded, current) -%}
  {{- return(none if versions is none else versions ~ ' as changed') -}}
{%- endmacro %}


{% macro _mj_delta_feed_net_rows(input, tracked, recorded, current) -%}
  {%- set versions = dbt_multijoin._mj_delta_feed_versions(input, recorded, current) -%}
  {%- if versions is none -%}
    {{- return(none) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_last_change_per_key(input, versions, "_change_type in ('insert', 'update_postimage')", '_commit_version')) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_changed_rows(input, tracked, recorded, current) -%}
  {%- set view = dbt_multijoin._mj_iceberg_changes(input, recorded, current) -%}
  {{- return(none if view is none else view ~ ' as changed') -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_net_rows(input, tracked, recorded, current) -%}
  {%- set view = dbt_multijoin._mj_iceberg_changes(input, recorded, current) -%}
  {%- if view is none -%}
    {{- return(none) -}}
  {%- elif view == (input['relation'] | string) -%}
    {#- The last run saw the table without a snapshot: every row is new. -#}
    {{- return('select *, true as dbt_multijoin_present from ' ~ view) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_last_change_per_key(input, view, "_change_type in ('INSERT', 'UPDATE_AFTER')", '_change_ordinal')) -}}
{%- endmacro %}


{% macro _mj_last_change_per_key(input, feed, added, order) -%}
  {#- A change feed's last change of each key, with `dbt_multijoin_present`: whether that change
      left a row (`added`: an insert or an update's new image) or took it away (a delete, or
      the old image of an update that moved the row to another key). Within one commit (one
      `order` value) a key may lose a row and gain another (an UPDATE that shifts keys): the
      row it gains wins, since it is there when the commit ends. -#}
  {%- set keys = dbt_multijoin._mj_column_list(input['keys']) -%}
  {{- return('select * from (select *, row_number() over (partition by ' ~ keys ~ ' order by ' ~ order ~ ' desc, dbt_multijoin_present desc) as dbt_multijoin_rank from (select *, ' ~ added ~ ' as dbt_multijoin_present from ' ~ feed ~ ') as feed) as ranked where dbt_multijoin_rank = 1') -}}
{%- endmacro %}


{% macro _mj_iceberg_changes(input, recorded, current) -%}
  {#- The rows an Iceberg input changed after snapshot `recorded` up to `current`: a temporary
      view made by Iceberg's create_changelog_view procedure (rows an operation rewrote unchanged,
      copy-on-write carry-overs, left out), or the table itself when the last run saw it without
      a snapshot. None when nothing changed. The procedure runs in this session now, while the
      model's SQL is rendered: the key table is written from the view right after. -#}
  {%- if recorded == current -%}
    {{- return(none) -}}
  {%- elif recorded == 'none' -%}
    {{- return(input['relation'] | string) -}}
  {%- endif -%}
  {%- set relation = input['relation'] | string -%}
  {%- set where = "the recorded snapshot " ~ recorded ~ " of input '" ~ input['name'] ~ "' (" ~ relation ~ ")" -%}
  {%- if not modules.re.fullmatch('-?\\d+', recorded) -%}
    {%- do dbt_multijoin._mj_fail(where ~ " is not an Iceberg snapshot id: run with --full-refresh") -%}
  {%- endif -%}
  {%- set ancestor = run_query('select count(*) as n from ' ~ relation ~ '.history where snapshot_id = ' ~ recorded ~ ' and is_current_ancestor') -%}
  {%- if current == 'none' or (ancestor[0]['n'] | int) == 0 -%}
    {%- do dbt_multijoin._mj_fail(where ~ " is no longer in the table's history (expired, rolled back, or the table was replaced): run with --full-refresh") -%}
  {%- endif -%}
  {%- set view = dbt_multijoin._mj_changelog_view(input) -%}
  {%- do run_query("call spark_catalog.system.create_changelog_view(table => " ~ dbt_multijoin._mj_string_literal(relation) ~ ", options => map('start-snapshot-id', '" ~ recorded ~ "', 'end-snapshot-id', '" ~ current ~ "'), changelog_view => '" ~ view ~ "')") -%}
  {{- return(view) -}}
{%- endmacro %}


{% macro _mj_changelog_view(input) -%}
  {#- The temporary view of an Iceberg input's changes for this model (dropped once the changed
      rows are cached). -#}
  {{- return(dbt_multijoin._mj_temp_view('changes_' ~ input['name'])) -}}
{%- endmacro %}


{% macro _mj_newer_than(tracked, mark, ties=true) -%}
  {#- The predicate "newer than `mark`" over the bare column; NULL counts as newer. With `ties`
      (the partial-update path) rows that tie the mark are read again: a date, a load id or a
      second-resolution timestamp is shared by rows the last run saw and rows written after it
      (with the same value), and re-applying them is idempotent; the key-recompute path passes
      ties=false (_mj_column_changed_rows says why). A plain comparison of the bare column, so
      Spark pushes it to the scan, where files and row groups whose statistics are all older are
      skipped. -#}
  {%- set column = dbt_multijoin._mj_quote(tracked['column']) -%}
  {%- if mark == 'empty' -%}
    {{- return('true') -}}
  {%- elif dbt_multijoin._mj_is_instant(tracked['dtype']) -%}
    {%- if not modules.re.fullmatch('-?\\d+', mark) -%}
      {%- do dbt_multijoin._mj_fail("the recorded mark '" ~ mark ~ "' of changed_since column '" ~ tracked['column'] ~ "' is not a timestamp in microseconds: run with --full-refresh") -%}
    {%- endif -%}
    {{- return('(' ~ column ~ (' >= ' if ties else ' > ') ~ 'timestamp_micros(' ~ mark ~ ') or ' ~ column ~ ' is null)') -}}
  {%- endif -%}
  {{- return('(' ~ column ~ (' >= ' if ties else ' > ') ~ 'cast(' ~ dbt_multijoin._mj_string_literal(mark) ~ ' as ' ~ tracked['dtype'] ~ ') or ' ~ column ~ ' is null)') -}}
{%- endmacro %}


{% macro _mj_recorded_marks(relation) -%}
  {#- {property: mark} of every changed_since mark recorded on `relation`. -#}
  {%- set marks = {} -%}
  {%- for key, value in dbt_multijoin._mj_table_properties(relation).items() if key.startswith('dbt_multijoin.changed_since.') -%}
    {%- do marks.update({key: value}) -%}
  {%- endfor -%}
  {{- return(marks) -}}
{%- endmacro %}


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
  {%- for input in spec['inputs'] -%}
    {%- set property = dbt_multijoin._mj_mark_property(input['name']) -%}
    {%- set items = dbt_multijoin._mj_keys_as_model_keys(input, spec) -%}
    {%- set index = loop.index0 -%}
    {%- for i in column_tracked -%}
      {%- do items.append((dbt_multijoin._mj_quote(tracked[i]['column']) if i == index else 'null') ~ ' as ' ~ dbt_multijoin._mj_mark_column(i)) -%}
    {%- endfor -%}
    {%- set branch = dbt_multijoin._mj_changed_rows(input, tracked[index], recorded[property], marks[property], items | join(', ')) -%}
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

  {%- set state = {'path': 'recompute', 'keys': spec['keys'], 'marks': marks, 'changes': changes_sql, 'mark_columns': mark_columns, 'changelog_views': dbt_multijoin._mj_changelog_views(spec, tracked)} -%}
  {{- return(dbt_multijoin._mj_changed_keys_state_comment(state) ~ '\n' ~ lines | join('\n') ~ '\nunion all\n' ~ dbt_multijoin._mj_render_chain(null_spec, hint=hint)) -}}
{%- endmacro %}
