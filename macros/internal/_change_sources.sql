{#- Private: the change sources of changed_keys: how an input shows which of its rows changed.

    Here: multi_join's changed_since read into one entry per input (_mj_tracked_columns: a column,
    or a change feed), the dispatch from that entry to its source (_mj_change_source) and on to
    the source's macros (_mj_change_source_call), then one block per source:
    - column: a changed_since column that grows when a row is written (_mj_column_*,
      _mj_newer_than);
    - delta_feed: a Delta table's change data feed (_mj_delta_feed_*);
    - iceberg_changelog: an Iceberg table's changelog between two snapshots
      (_mj_iceberg_changelog_*, _mj_iceberg_changes, _mj_changelog_view, _mj_changelog_views);
    and _mj_last_change_per_key, which both change feeds use.
    Not here: the marks and the key-recompute query that reads the changed rows
    (_changed_keys_render.sql), the partial update that reads the net rows (_partial_update.sql),
    the scratch objects' names (_changed_keys_apply.sql).

    A new source `<source>` is one block of macros taking (input, tracked, recorded, current),
    whose results _mj_change_source_call describes:
    - _mj_<source>_changed_rows: a FROM item of the input's rows changed after the mark
      `recorded` up to `current`, or none (the key-recompute path);
    - _mj_<source>_net_rows: those rows netted to one per key, as they are now (the
      partial-update path);
    - _mj_<source>_reads: what the run's log says the source reads since the mark (no query).
    Besides its block, a source is named here in its tracked entry (_mj_tracked_columns,
    _mj_change_feed) and its name (_mj_change_source); and in _changed_keys_render.sql, the only
    file besides this one that tells the sources apart, in its current mark (_mj_current_marks)
    and in whether its rows carry their marks in a column, as a column source's do
    (_mj_render_changed_keys: the inputs without a change_feed). -#}

{#- Which source each input uses, and the dispatch to its macros. -#}
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


{% macro _mj_change_source(tracked) -%}
  {#- How an input shows its changes: 'column' (a changed_since column), 'delta_feed' (Delta's
      change data feed) or 'iceberg_changelog'. Each source is one set of macros
      `_mj_<source>_changed_rows`, `_mj_<source>_net_rows` and `_mj_<source>_reads` (below),
      called through _mj_change_source_call: a new source is one more set. -#}
  {{- return({'delta': 'delta_feed', 'iceberg': 'iceberg_changelog'}.get(tracked.get('change_feed'), 'column')) -}}
{%- endmacro %}


{% macro _mj_change_source_call(source, operation, input, tracked, recorded, current) -%}
  {#- `_mj_<source>_<operation>(input, tracked, recorded, current)`:
      - changed_rows: a FROM item of every input row the source shows as changed since the
        mark `recorded` up to `current` (a change feed: inserted, deleted, and both images of an
        update), or none when nothing changed;
      - net_rows: a query of the input's rows changed since the mark, one per key at most, as
        they are now: its columns, `dbt_multijoin_present` (false: the key left the input) and
        `dbt_multijoin_mark` (a column source's changed_since value); none when nothing changed;
      - reads: what the source reads since the mark, in words, for the run's log
        (_mj_log_change_scans): the column and its mark, the versions, the snapshots. -#}
  {{- return(dbt_multijoin['_mj_' ~ source ~ '_' ~ operation](input, tracked, recorded, current)) -}}
{%- endmacro %}


{#- Source 'column': a changed_since column that grows when a row is written. -#}
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


{% macro _mj_column_reads(input, tracked, recorded, current) -%}
  {{- return('changed_since ' ~ tracked['column'] ~ (', no mark yet' if recorded == 'empty' else ', mark ' ~ recorded)) -}}
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


{#- Source 'delta_feed': a Delta table's change data feed. -#}
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


{% macro _mj_delta_feed_reads(input, tracked, recorded, current) -%}
  {%- if (current | int) <= (recorded | int) -%}
    {{- return('no change feed version after ' ~ recorded) -}}
  {%- endif -%}
  {{- return('change feed, versions ' ~ ((recorded | int) + 1) ~ ' to ' ~ current) -}}
{%- endmacro %}


{#- Source 'iceberg_changelog': an Iceberg table's changelog between two snapshots. -#}
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


{% macro _mj_iceberg_changelog_reads(input, tracked, recorded, current) -%}
  {%- if recorded == current -%}
    {{- return('no snapshot after ' ~ recorded) -}}
  {%- elif recorded == 'none' -%}
    {{- return('the whole table: it had no snapshot at the last run') -}}
  {%- endif -%}
  {{- return('changelog, the snapshots after ' ~ recorded ~ ' up to ' ~ current) -}}
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


{% macro _mj_changelog_views(spec, tracked) -%}
  {#- The temporary views of the Iceberg inputs' changes that a run's changes query reads. -#}
  {%- set views = [] -%}
  {%- for index in range(spec['inputs'] | length) if tracked[index].get('change_feed') == 'iceberg' -%}
    {%- do views.append(dbt_multijoin._mj_changelog_view(spec['inputs'][index])) -%}
  {%- endfor -%}
  {{- return(views) -}}
{%- endmacro %}


{#- What both change feeds share. -#}
{% macro _mj_last_change_per_key(input, feed, added, order) -%}
  {#- A change feed's last change of each key, with `dbt_multijoin_present`: whether that change
      left a row (`added`: an insert or an update's new image) or took it away (a delete, or
      the old image of an update that moved the row to another key). Within one commit (one
      `order` value) a key may lose a row and gain another (an UPDATE that shifts keys): the
      row it gains wins, since it is there when the commit ends. -#}
  {%- set keys = dbt_multijoin._mj_column_list(input['keys']) -%}
  {{- return('select * from (select *, row_number() over (partition by ' ~ keys ~ ' order by ' ~ order ~ ' desc, dbt_multijoin_present desc) as dbt_multijoin_rank from (select *, ' ~ added ~ ' as dbt_multijoin_present from ' ~ feed ~ ') as feed) as ranked where dbt_multijoin_rank = 1') -}}
{%- endmacro %}
