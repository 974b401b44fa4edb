{#- Private: change source 'column' (the interface: sources.sql): a changed_since column that grows
    when a row is written: `updated_at`, a load id, a date.

    The mark is the highest value the last run read. A run reads the rows above the mark (and the
    rows whose changed_since is NULL: never older than a mark), and the rows AT the mark that
    changed since the last run: a date, a load id or a second-resolution timestamp ties all the
    time, so rows written after the last run may carry the mark's very value. The table itself tells
    which tie rows changed: a run records, with the mark, the version it read the input at (its
    Delta version or Iceberg snapshot), and the next run compares the rows at the mark now with the
    same rows at that version (time travel), per key, by a 64-bit hash of the columns the model
    reads: a key whose rows at the mark differ has changed. So the ties cost a read only when the
    table moved, and only the tie rows that changed are applied again. A Delta table without row
    tracking that was only appended to since that version needs no compare: the tie rows that
    changed are the ones in the files the appends added, which its log names
    (_mj_column_appended_files). A Delta table with row tracking (`delta.enableRowTracking`) tells
    it without the compare, when no commit since that version can have deleted a row (appends,
    UPDATEs, MERGEs that deleted none): a tie row that changed carries a
    `_metadata.row_commit_version` above it, and the key such a row had then is read off that
    version by its `_metadata.row_id`, from the changed rows alone. A compare reads every row at the
    mark twice; this reads the changed ones. Where the recorded version cannot be read (a table
    without versions, a mark recorded by an older release, a Delta version past its file retention
    or followed by a VACUUM, an expired Iceberg snapshot), every row at the mark is read and applied
    again (idempotent), and the log says why. An input whose table has not moved since the last run
    is not read at all.

    The reads of the input are pinned to the version the plan saw (VERSION AS OF), so that the
    mark and the version recorded together describe one state of the table.

    Not seen (docs/dbt_package.md): a row deleted or moved to another key, except at the mark; a
    row written late with an older value than the mark. -#}

{% macro _mj_column_source(input, properties) -%}
  {%- if input['changed_since'] == 'change_feed' -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set found = [] -%}
  {#- The input's columns as the plan described them: no second DESCRIBE of the input. -#}
  {%- for column in input['described_columns'] if (column['name'] | lower) == (input['changed_since'] | lower) -%}
    {%- do found.append({'column': column['name'], 'dtype': column['dtype']}) -%}
  {%- endfor -%}
  {%- if not found -%}
    {%- do dbt_multijoin._mj_fail("changed_since column '" ~ input['changed_since'] ~ "' not found in input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ")") -%}
  {%- endif -%}
  {%- set dtype = found[0]['dtype'] -%}
  {%- if not modules.re.fullmatch('(tinyint|smallint|int|integer|bigint|long|date|timestamp|timestamp_ntz|timestamp_ltz|string|decimal\\(\\d+,\\s*\\d+\\))', dtype) -%}
    {%- do dbt_multijoin._mj_fail("changed_since column '" ~ found[0]['column'] ~ "' of input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ") has type " ~ dtype ~ ": use an integral, decimal, date, timestamp or string column") -%}
  {%- endif -%}
  {%- set table_format = dbt_multijoin._mj_table_format(properties) -%}
  {%- set tracked = table_format == 'delta' and (properties.get('delta.enableRowTracking', 'false') | lower) == 'true'
      and (properties.get('delta.rowTrackingSuspended', 'false') | lower) != 'true' -%}
  {%- set source = {'column': found[0]['column'], 'dtype': dtype,
      'instant': dtype in ['timestamp', 'timestamp_ltz'], 'table_format': table_format, 'tracks_rows': tracked,
      'version': none, 'history': none, 'complete': false, 'properties': properties, 'read': none} -%}
  {%- do source.update(dbt_multijoin._mj_column_version_now(input, table_format, properties)) -%}
  {{- return(source) -}}
{%- endmacro %}


{#- The Delta commits read with the version now: the tie compare needs those back to the recorded
    version, which a daily load leaves a few commits behind; one statement then reads both. -#}
{% macro _mj_column_history_read() -%}
  {{- return(16) -}}
{%- endmacro %}


{% macro _mj_column_version_now(input, table_format, properties) -%}
  {#- {version: the input's table version now (its Iceberg snapshot, 'none' while it has none, or
      Delta version; none for a table without versions), history: a Delta table's newest commits
      ({version, operation, timestamp}, newest first, at most _mj_column_history_read of them),
      complete: whether they are its whole history}. -#}
  {%- if table_format == 'iceberg' -%}
    {{- return({'version': properties.get('current-snapshot-id', 'none')}) -}}
  {%- elif table_format == 'delta' -%}
    {%- set limit = dbt_multijoin._mj_column_history_read() -%}
    {%- set history = dbt_multijoin._mj_column_history(input['relation'], limit) -%}
    {{- return({'version': history[0]['version'] | string, 'history': history, 'complete': (history | length) < limit}) -}}
  {%- endif -%}
  {{- return({'version': none}) -}}
{%- endmacro %}


{% macro _mj_column_history(relation, limit) -%}
  {#- A Delta table's newest `limit` commits, newest first. -#}
  {%- set commits = [] -%}
  {%- for row in run_query('describe history ' ~ relation ~ ' limit ' ~ limit) -%}
    {%- do commits.append({'version': row['version'] | int, 'operation': row['operation'] or '', 'timestamp': row['timestamp'],
        'parameters': dbt_multijoin._mj_history_map(row['operationParameters']), 'metrics': dbt_multijoin._mj_history_map(row['operationMetrics'])}) -%}
  {%- endfor -%}
  {{- return(commits) -}}
{%- endmacro %}


{% macro _mj_history_map(value) -%}
  {#- A map column of DESCRIBE HISTORY as a dict: a session hands it over as one, a Thrift
      connection as JSON text; {} for anything else (a commit then counts as one that may have
      deleted rows). -#}
  {%- if value is mapping -%}
    {{- return(value) -}}
  {%- elif value is string and value.startswith('{') -%}
    {%- set parsed = fromjson(value) -%}
    {{- return(parsed if parsed is mapping else {}) -}}
  {%- endif -%}
  {{- return({}) -}}
{%- endmacro %}


{% macro _mj_column_is_append(commit) -%}
  {#- Whether a Delta commit's operation is an append: an INSERT or a DataFrame's append (WRITE in
      Append mode), or a stream's (in Append output mode). -#}
  {%- if commit['operation'] == 'WRITE' -%}
    {{- return(commit['parameters'].get('mode') == 'Append') -}}
  {%- elif commit['operation'] == 'STREAMING UPDATE' -%}
    {{- return(commit['parameters'].get('outputMode') == 'Append') -}}
  {%- endif -%}
  {{- return(false) -}}
{%- endmacro %}


{% macro _mj_column_keeps_every_row(commit) -%}
  {#- Whether a Delta commit surely deleted no row: an append, an UPDATE (it rewrites rows, keeping
      their row ids), a MERGE whose metrics count no deleted target row. Any other commit may have
      (a DELETE, an overwrite, a RESTORE), or changed the table's properties (row tracking may
      have been switched on after the recorded version): the run then compares. -#}
  {%- set operation = commit['operation'] -%}
  {%- if operation == 'UPDATE' or dbt_multijoin._mj_column_is_append(commit) -%}
    {{- return(true) -}}
  {%- elif operation == 'MERGE' -%}
    {{- return((commit['metrics'].get('numTargetRowsDeleted') | string) == '0') -}}
  {%- endif -%}
  {{- return(false) -}}
{%- endmacro %}


{#- The most commits after the recorded version whose log the appends-only read reads; past it
    (a table appended to every few minutes) the run compares the ties as for any other change. -#}
{% macro _mj_column_appends_read() -%}
  {{- return(100) -}}
{%- endmacro %}


{% macro _mj_column_appended_files(source, since) -%}
  {#- When every commit to a Delta input after the recorded version only appended rows, the names
      of the data files they added; else none. Appends change no row the table held then, so the
      rows at the mark that changed are exactly those in the added files: the run reads the rows
      at the mark once, at the version the plan saw, and keeps those in the added files
      (_metadata.file_name; Delta 3.3 still opens every file whose statistics may hold the mark,
      as the compare's read of now does), with no read of the older version (which Delta rebuilds
      from its log for each run).
      The history's operations say which commits can be appends; the commits' own log entries
      decide: nothing but added files (no removed file, no deletion vector, no change of schema or
      protocol) in every commit file from the recorded version on. A file name that is not plain
      (percent-encoded in the log) sends the run back to the compare. -#}
  {#- A table with row tracking keeps its own read (_mj_column_prepare): its scratch tables are
      what the run's later statements read, where Delta 3.3 (Spark 3.5) would plan a direct scan
      of such a table anew for each of them, missing the cached changes. -#}
  {%- if source['table_format'] != 'delta' or source['tracks_rows'] -%}
    {{- return(none) -}}
  {%- endif -%}
  {#- A table whose commits a coordinator or catalog owns may hold its newest commits outside
      _delta_log/ until they are backfilled: its log is not read here. -#}
  {%- for key in source['properties'] if 'coordinatedcommits' in (key | lower) or 'catalogowned' in (key | lower) or 'catalogmanaged' in (key | lower) -%}
    {{- return(none) -}}
  {%- endfor -%}
  {%- set first, last = (since | int) + 1, source['version'] | int -%}
  {%- if last - first + 1 > dbt_multijoin._mj_column_appends_read() -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set commits = source.get('since_history', []) | selectattr('version', 'gt', since | int) | list -%}
  {%- if (commits | length) != last - first + 1 -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- for commit in commits if not dbt_multijoin._mj_column_is_append(commit) -%}
    {{- return(none) -}}
  {%- endfor -%}
  {%- set location = (run_query('describe detail ' ~ source['input']['relation'])[0]['location'] | string).rstrip('/') -%}
  {%- if modules.re.search('[{}\\[\\]*?\\\\`]', location) -%}
    {#- A character the path's glob below would read as a pattern. -#}
    {{- return(none) -}}
  {%- endif -%}
  {%- set names = [] -%}
  {%- for version in range(first, last + 1) -%}
    {%- do names.append('%020d' | format(version)) -%}
  {%- endfor -%}
  {%- set log_files = location ~ '/_delta_log/' ~ (names[0] if (names | length) == 1 else '{' ~ names | join(',') ~ '}') ~ '.json' -%}
  {#- Each line of a commit file is one action, named by its one key; besides the added files, a
      commit's information, a stream's transaction id and a domain's metadata (row tracking's
      high-water mark) change no row. Names joined by spaces: the log keeps paths URI-encoded, so a
      space in a name would be "%20". -#}
  {%- set entries = run_query("select count(distinct _metadata.file_name) as commits,"
      ~ " count_if(get_json_object(value, '$.add') is null and get_json_object(value, '$.commitInfo') is null and get_json_object(value, '$.txn') is null and get_json_object(value, '$.domainMetadata') is null) as others,"
      ~ " count_if(get_json_object(value, '$.add.deletionVector') is not null) as with_vectors,"
      ~ " concat_ws(' ', collect_list(regexp_extract(get_json_object(value, '$.add.path'), '[^/]*$', 0))) as added"
      ~ " from text.`" ~ log_files ~ "`")[0] -%}
  {%- if (entries['commits'] | int) != last - first + 1 or (entries['others'] | int) != 0 or (entries['with_vectors'] | int) != 0 -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set added = (entries['added'] or '').split(' ') | reject('equalto', '') | list -%}
  {%- for name in added if '%' in name -%}
    {{- return(none) -}}
  {%- endfor -%}
  {{- return(added) -}}
{%- endmacro %}


{% macro _mj_column_plan_read(source, recorded) -%}
  {%- set mark = recorded['mark'] -%}
  {%- set column = source['column'] -%}
  {%- if mark != 'empty' and source['instant'] and not modules.re.fullmatch('-?\\d+', mark) -%}
    {%- do dbt_multijoin._mj_fail("the recorded mark '" ~ mark ~ "' of changed_since column '" ~ column ~ "' of input '" ~ source['input']['name'] ~ "' (" ~ source['input']['relation'] ~ ") is not a timestamp in microseconds: run with --full-refresh") -%}
  {%- endif -%}
  {%- if source['version'] is not none and recorded['version'] == source['version'] -%}
    {%- do source.update({'read': {'ties': 'none', 'newer': 'false'}}) -%}
    {{- return({'unchanged': true, 'reads': 'its table is at version ' ~ source['version'] ~ ', as at the last run'}) -}}
  {%- endif -%}
  {%- if mark == 'empty' -%}
    {%- do source.update({'read': {'ties': 'none', 'newer': 'true'}}) -%}
    {{- return({'unchanged': false, 'reads': 'changed_since ' ~ column ~ ', every row (no mark yet)'}) -}}
  {%- endif -%}
  {%- set unreadable = dbt_multijoin._mj_column_ties_unreadable(source, recorded) -%}
  {%- if unreadable is none -%}
    {%- set since = recorded['version'] -%}
    {%- set newer = dbt_multijoin._mj_column_newer_than(source, mark, ties=false) -%}
    {%- set appended = dbt_multijoin._mj_column_appended_files(source, since) -%}
    {%- if appended is not none -%}
      {%- do source.update({'read': {'ties': 'appended', 'files': appended, 'since': since, 'newer': newer}}) -%}
      {{- return({'unchanged': false, 'reads': 'changed_since ' ~ column ~ ' above ' ~ mark ~ ', and the rows at ' ~ mark ~ ' in the ' ~ (appended | length) ~ ' file' ~ ('' if (appended | length) == 1 else 's') ~ ' appended since version ' ~ since ~ ' (now ' ~ source['version'] ~ '; only appends since)'}) -}}
    {%- endif -%}
    {%- set may_delete = [] -%}
    {%- for commit in source.get('since_history', []) if source['tracks_rows'] and commit['version'] > (since | int) and not dbt_multijoin._mj_column_keeps_every_row(commit) -%}
      {%- do may_delete.append(commit['version']) -%}
    {%- endfor -%}
    {%- set by_row_ids = source['tracks_rows'] and not may_delete -%}
    {%- do source.update({'read': {'ties': 'tracked' if by_row_ids else 'changed', 'since': since, 'newer': newer}}) -%}
    {{- return({'unchanged': false, 'reads': 'changed_since ' ~ column ~ ' above ' ~ mark ~ ', and the rows at ' ~ mark ~ ' that changed since version ' ~ since ~ ' (now ' ~ source['version'] ~ ')' ~ (', by the table\'s row tracking' if by_row_ids else '')}) -}}
  {%- endif -%}
  {%- do source.update({'read': {'ties': 'all', 'newer': dbt_multijoin._mj_column_newer_than(source, mark, ties=true)}}) -%}
  {{- return({'unchanged': false, 'reads': 'changed_since ' ~ column ~ ' at or above ' ~ mark ~ ': every row at the mark is read and applied again, as ' ~ unreadable}) -}}
{%- endmacro %}


{% macro _mj_column_ties_unreadable(source, recorded) -%}
  {#- Why the rows at the mark cannot be compared with the version the last run read, or none
      when they can. -#}
  {%- set since = recorded['version'] -%}
  {%- if source['version'] is none -%}
    {{- return('the table has no versions (not Delta or Iceberg)') -}}
  {%- elif since is none -%}
    {{- return('no table version was recorded with the mark (a table built by an earlier release)') -}}
  {%- elif source['table_format'] == 'iceberg' -%}
    {%- if not modules.re.fullmatch('-?\\d+', since) or (run_query('select count(*) as n from ' ~ source['input']['relation'] ~ '.snapshots where snapshot_id = ' ~ since)[0]['n'] | int) == 0 -%}
      {{- return('snapshot ' ~ since ~ ' is no longer in the table (expired, or the table was replaced)') -}}
    {%- endif -%}
    {{- return(none) -}}
  {%- endif -%}
  {#- Delta: the version must still be in the log, no VACUUM may have run since, and it must be
      within the file retention (VACUUM never removes a file a version within it needs). -#}
  {%- if not modules.re.fullmatch('\\d+', since) -%}
    {{- return('the recorded version ' ~ since ~ ' is not a Delta version') -}}
  {%- endif -%}
  {#- The commits from the recorded version to the one the plan saw, newest first: those read with
      the version now when they reach back that far, else read again up to the recorded version
      (a table's whole history can hold thousands: every commit within its log retention). -#}
  {%- set history = source['history'] -%}
  {%- if not source['complete'] and history[-1]['version'] > (since | int) -%}
    {%- set history = dbt_multijoin._mj_column_history(source['input']['relation'], [(source['version'] | int) - (since | int) + 1, 1] | max) -%}
  {%- endif -%}
  {%- do source.update({'since_history': history}) -%}
  {%- set written = [] -%}
  {%- for commit in history -%}
    {%- if commit['version'] == (since | int) -%}
      {%- do written.append(commit['timestamp']) -%}
    {%- elif commit['version'] > (since | int) and commit['operation'].startswith('VACUUM') -%}
      {{- return('a VACUUM ran on the table after version ' ~ since) -}}
    {%- endif -%}
  {%- endfor -%}
  {%- if not written -%}
    {{- return('version ' ~ since ~ ' is no longer in the table\'s history') -}}
  {%- endif -%}
  {%- set retention = source['properties'].get('delta.deletedFileRetentionDuration', 'interval 1 weeks') -%}
  {%- if not modules.re.fullmatch('(?i)interval\\s+\\d+\\s+[a-z]+', retention) -%}
    {%- set retention = 'interval 1 weeks' -%}
  {%- endif -%}
  {#- Compared in SQL: a Thrift connection hands timestamps over as text. -#}
  {%- set expired = run_query('select cast(' ~ dbt_multijoin._mj_string_literal(written[0] | string) ~ ' as timestamp) < current_timestamp() - ' ~ retention ~ ' as expired')[0]['expired'] -%}
  {%- if expired is sameas true or (expired | string | lower) == 'true' -%}
    {{- return('version ' ~ since ~ ' is older than the table\'s file retention (' ~ retention ~ ')') -}}
  {%- endif -%}
  {{- return(none) -}}
{%- endmacro %}


{% macro _mj_column_value(source, mark) -%}
  {#- The recorded mark as a value of the column's type. -#}
  {%- if source['instant'] -%}
    {{- return('timestamp_micros(' ~ mark ~ ')') -}}
  {%- endif -%}
  {{- return('cast(' ~ dbt_multijoin._mj_string_literal(mark) ~ ' as ' ~ source['dtype'] ~ ')') -}}
{%- endmacro %}


{% macro _mj_column_newer_than(source, mark, ties) -%}
  {#- "Newer than the mark" over the bare column, NULL counting as newer; with `ties`, the rows at
      the mark too. A plain comparison of the bare column, so that Spark pushes it to the scan and
      skips the files and row groups whose statistics are all older. -#}
  {%- set column = dbt_multijoin._mj_quote(source['column']) -%}
  {{- return('(' ~ column ~ (' >= ' if ties else ' > ') ~ dbt_multijoin._mj_column_value(source, mark) ~ ' or ' ~ column ~ ' is null)') -}}
{%- endmacro %}


{% macro _mj_column_table_at(source, version) -%}
  {#- The input as of `version` (a table without versions: as it is). -#}
  {%- if version is none or version == 'none' -%}
    {{- return(source['input']['relation'] | string) -}}
  {%- endif -%}
  {{- return(source['input']['relation'] ~ ' version as of ' ~ version) -}}
{%- endmacro %}


{% macro _mj_column_at_mark(source, recorded) -%}
  {#- The input's rows at the recorded mark, as a condition: NULL-keyed rows too, so that a partial
      update sees when one of them changed (it replaces an input's NULL-keyed rows only then). -#}
  {{- return(dbt_multijoin._mj_quote(source['column']) ~ ' = ' ~ dbt_multijoin._mj_column_value(source, recorded['mark'])) -}}
{%- endmacro %}


{% macro _mj_column_tie_changes(source, recorded, with_rows=false) -%}
  {#- The input's rows at the mark that differ between the version the plan saw and
      the recorded one: a 64-bit hash per row of the columns the model reads, counted +1 now and -1
      then; a (key, hash) whose count is not 0 was added (> 0: a row now) or removed. Its columns:
      the input's key columns; `with_rows`, also `dbt_multijoin_change` (the count) and
      `dbt_multijoin_row`, the row now ({columns the model reads, dbt_multijoin_mark}; NULL for a
      removed one), so that a partial update needs no third read of the rows at the mark. -#}
  {%- set input = source['input'] -%}
  {%- set keys = dbt_multijoin._mj_column_list(input['keys']) -%}
  {%- set at_mark = dbt_multijoin._mj_column_at_mark(source, recorded) -%}
  {%- set hash = dbt_multijoin._mj_column_row_hash(input) ~ ' as dbt_multijoin_hash' -%}
  {%- set row = 'struct(' ~ dbt_multijoin._mj_column_list(input['columns']) ~ ', ' ~ dbt_multijoin._mj_quote(source['column']) ~ ' as dbt_multijoin_mark) as dbt_multijoin_row' -%}
  {%- set sides = [] -%}
  {%- if source['read']['ties'] == 'appended' -%}
    {#- Only appends since the recorded version: the rows at the mark in the added files are the
        ones that changed (none, when no added file holds the mark). -#}
    {%- set names = [] -%}
    {%- for name in source['read']['files'] -%}
      {%- do names.append(dbt_multijoin._mj_string_literal(name)) -%}
    {%- endfor -%}
    {%- set in_added = ('_metadata.file_name in (' ~ names | join(', ') ~ ')') if names else 'false' -%}
    {%- do sides.append('select ' ~ keys ~ ', ' ~ hash ~ ', 1 as dbt_multijoin_side' ~ (', ' ~ row if with_rows else '') ~ ' from ' ~ dbt_multijoin._mj_column_table_at(source, source['version']) ~ ' where ' ~ at_mark ~ ' and ' ~ in_added) -%}
  {%- else -%}
    {%- for version, side in [(source['version'], 1), (recorded['version'], -1)] -%}
      {%- do sides.append('select ' ~ keys ~ ', ' ~ hash ~ ', ' ~ side ~ ' as dbt_multijoin_side' ~ (', ' ~ row if with_rows else '') ~ ' from ' ~ dbt_multijoin._mj_column_table_at(source, version) ~ ' where ' ~ at_mark) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set kept = ', sum(dbt_multijoin_side) as dbt_multijoin_change, first(dbt_multijoin_row) filter (where dbt_multijoin_side = 1) as dbt_multijoin_row' if with_rows else '' -%}
  {{- return('select ' ~ keys ~ kept ~ ' from (' ~ sides | join(' union all ') ~ ') as tie_rows group by ' ~ keys ~ ', dbt_multijoin_hash having sum(dbt_multijoin_side) <> 0') -}}
{%- endmacro %}


{% macro _mj_column_row_hash(input) -%}
  {#- A 64-bit hash of a row's columns the model reads that tells where its NULLs are: Spark's hash
      functions skip a NULL, so (5, NULL) and (NULL, 5) hash alike, and an update that moved a
      value from one column to another would look like no change. Each column is hashed with its
      NULL flag; a struct, array or map as its JSON (to_json keeps an element's NULL and a field's
      name), as their hashes skip NULLs inside them too. -#}
  {%- set types = {} -%}
  {%- for column in input['described_columns'] -%}
    {%- do types.update({column['name'] | lower: column['dtype']}) -%}
  {%- endfor -%}
  {%- set parts = [] -%}
  {%- for column in input['columns'] -%}
    {%- set quoted = dbt_multijoin._mj_quote(column) -%}
    {%- set dtype = types.get(column | lower, '') -%}
    {%- set nested = dtype.startswith(('struct', 'array', 'map')) -%}
    {%- do parts.append(('to_json(' ~ quoted ~ ')' if nested else quoted) ~ ', isnull(' ~ quoted ~ ')') -%}
  {%- endfor -%}
  {{- return('xxhash64(' ~ parts | join(', ') ~ ')') -}}
{%- endmacro %}


{% macro _mj_column_tracked_tie_rows(source, recorded, columns) -%}
  {#- The row-tracking way to the same ties (read mode 'tracked', the header says when), from the
      two tables prepare wrote: the input's rows at the mark now that a commit after
      the recorded version wrote, and the keys the rows such a commit rewrote had at the mark at
      that version (an UPDATE may have moved a row to another key or off the mark). Its columns:
      `columns` (NULL but the keys in a row of then), `dbt_multijoin_mark` (NULL in a row of then)
      and `dbt_multijoin_present` (whether the row is one of now). -#}
  {%- set keys = source['input']['keys'] -%}
  {%- set then_columns = [] -%}
  {%- for column in columns -%}
    {%- do then_columns.append(dbt_multijoin._mj_quote(column) if column in keys else 'null as ' ~ dbt_multijoin._mj_quote(column)) -%}
  {%- endfor -%}
  {{- return('select ' ~ dbt_multijoin._mj_column_list(columns) ~ ', ' ~ dbt_multijoin._mj_quote(source['column']) ~ ' as dbt_multijoin_mark, true as dbt_multijoin_present from ' ~ source['rewritten_now']
      ~ ' where ' ~ dbt_multijoin._mj_column_at_mark(source, recorded)
      ~ ' union all select ' ~ then_columns | join(', ') ~ ', null, false from ' ~ source['rewritten_then']) -}}
{%- endmacro %}


{% macro _mj_column_whole_read_covers(source) -%}
  {{- return(true) -}}
{%- endmacro %}


{% macro _mj_column_rewritten_tables(source) -%}
  {#- Row tracking's scratch tables of this input (prepare writes them): [the rows rewritten since
      the recorded version as they are now, the keys they had at the mark then]. -#}
  {{- return([dbt_multijoin._mj_input_scratch_table(source, 'rewritten_now'), dbt_multijoin._mj_input_scratch_table(source, 'rewritten_then')]) -}}
{%- endmacro %}


{% macro _mj_column_prepare(source, recorded) -%}
  {#- Row tracking: the rows a commit after the recorded version wrote, as they are now, with their
      row ids, and the rows newer than the mark (a commit after that version wrote those too, but
      for a NULL changed_since); then the keys the rewritten rows had at the mark at the recorded
      version; each a parquet scratch table, from which the run reads all it reads of this input
      (_mj_column_read_table, _mj_column_tracked_tie_rows). Two statements, each reading
      `_metadata` of one version of the input: in one query over both (Spark 3.5, Delta 3.3) the
      filter on the newer version's row commit version was applied to the older scan, and the
      moved rows' keys went unseen. Tables, and no scan of the input in the changes' query: Delta
      3.3 (Spark 3.5) plans a scan of a table with row tracking anew for each query, so that Spark
      never finds a cache whose plan holds one; each later statement reading the changes read the
      input again (pipeline_tests/test_changed_keys_plan.py). -#}
  {%- if source['read']['ties'] == 'tracked' -%}
    {%- set now_table, then_table = dbt_multijoin._mj_column_rewritten_tables(source) -%}
    {%- set columns = source['input']['columns'] | list -%}
    {%- if (source['column'] | lower) not in (columns | map('lower') | list) -%}
      {%- do columns.append(source['column']) -%}
    {%- endif -%}
    {%- set keys = dbt_multijoin._mj_column_list(source['input']['keys']) -%}
    {%- set now_sql = 'select ' ~ dbt_multijoin._mj_column_list(columns) ~ ', _metadata.row_id as dbt_multijoin_row_id from '
        ~ dbt_multijoin._mj_column_table_at(source, source['version']) ~ ' where _metadata.row_commit_version > ' ~ recorded['version'] ~ ' or ' ~ source['read']['newer'] -%}
    {%- set then_sql = 'select ' ~ keys ~ ' from (select ' ~ keys ~ ', _metadata.row_id as dbt_multijoin_row_id from '
        ~ dbt_multijoin._mj_column_table_at(source, recorded['version']) ~ ' where ' ~ dbt_multijoin._mj_column_at_mark(source, recorded)
        ~ ') as then_rows left semi join ' ~ now_table ~ ' as rewritten on then_rows.dbt_multijoin_row_id = rewritten.dbt_multijoin_row_id' -%}
    {%- do dbt_multijoin._mj_write_scratch_table(now_table, now_sql, 'dbt_multijoin_rewritten_now') -%}
    {%- do dbt_multijoin._mj_write_scratch_table(then_table, then_sql, 'dbt_multijoin_rewritten_then') -%}
    {%- do source.update({'rewritten_now': now_table, 'rewritten_then': then_table, 'sized_reads': [now_sql, then_sql]}) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_column_read_table(source) -%}
  {#- What the run reads the rows newer than the mark from: the input at the version the plan saw,
      or, where row tracking tells the ties apart, prepare's table of the rewritten rows (which
      holds them). -#}
  {%- if source['read']['ties'] == 'tracked' -%}
    {{- return(source['rewritten_now']) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_column_table_at(source, source['version'])) -}}
{%- endmacro %}


{% macro _mj_column_changed_keys(source, recorded) -%}
  {%- set read = source['read'] -%}
  {%- set keys = dbt_multijoin._mj_source_keys_as_model_keys(source) -%}
  {%- set table = dbt_multijoin._mj_column_read_table(source) -%}
  {%- set rows = 'select ' ~ keys ~ ', ' ~ dbt_multijoin._mj_quote(source['column']) ~ ' as dbt_multijoin_mark from ' ~ table ~ ' where ' ~ read['newer'] -%}
  {%- if read['ties'] in ['changed', 'appended'] -%}
    {%- set rows = rows ~ '\n    union all\n    select ' ~ keys ~ ', null from (' ~ dbt_multijoin._mj_column_tie_changes(source, recorded) ~ ') as tie_changes' -%}
  {%- elif read['ties'] == 'tracked' -%}
    {%- set rows = rows ~ '\n    union all\n    select ' ~ keys ~ ', null from (' ~ dbt_multijoin._mj_column_tracked_tie_rows(source, recorded, source['input']['keys']) ~ ') as tie_rows' -%}
  {%- endif -%}
  {{- return(rows) -}}
{%- endmacro %}


{% macro _mj_column_net_rows(source, recorded, columns) -%}
  {#- The rows newer than the mark and, where the ties are compared, the rows at the mark of the keys
      whose rows there changed: a key whose row at the mark went away and that holds none now is
      absent (dbt_multijoin_present false). -#}
  {%- set read = source['read'] -%}
  {%- set table = dbt_multijoin._mj_column_read_table(source) -%}
  {%- set selected = dbt_multijoin._mj_column_list(columns) ~ ', ' ~ dbt_multijoin._mj_quote(source['column']) ~ ' as dbt_multijoin_mark' -%}
  {%- set newer = 'select ' ~ selected ~ ', true as dbt_multijoin_present from ' ~ table ~ ' where ' ~ read['newer'] -%}
  {%- if read['ties'] not in ['changed', 'appended', 'tracked'] -%}
    {{- return(newer) -}}
  {%- endif -%}
  {%- if read['ties'] == 'tracked' -%}
    {%- set ties = dbt_multijoin._mj_column_tracked_tie_rows(source, recorded, columns) -%}
  {%- else -%}
    {%- set from_tie = [] -%}
    {%- for column in columns -%}
      {%- do from_tie.append((dbt_multijoin._mj_quote(column) if column in source['input']['keys'] else dbt_multijoin._mj_column_ref('dbt_multijoin_row', column)) ~ ' as ' ~ dbt_multijoin._mj_quote(column)) -%}
    {%- endfor -%}
    {%- set ties = 'select ' ~ from_tie | join(', ') ~ ', dbt_multijoin_row.dbt_multijoin_mark as dbt_multijoin_mark, dbt_multijoin_change > 0 as dbt_multijoin_present from ('
        ~ dbt_multijoin._mj_column_tie_changes(source, recorded, with_rows=true) ~ ') as tie_changes' -%}
  {%- endif -%}
  {#- A row the input holds is never dropped (two of one key are for the one-row-per-key check to
      find); a key's absent entry only where it holds no row. -#}
  {{- return('select ' ~ dbt_multijoin._mj_column_list(columns) ~ ', dbt_multijoin_mark, dbt_multijoin_present from (select *, bool_or(dbt_multijoin_present) over (partition by ' ~ dbt_multijoin._mj_column_list(source['input']['keys'])
      ~ ') as dbt_multijoin_held from (' ~ newer ~ ' union all ' ~ ties ~ ') as both_reads) as netted where dbt_multijoin_present or not dbt_multijoin_held') -}}
{%- endmacro %}


{% macro _mj_column_mark(source) -%}
  {{- return({'instant': source['instant']}) -}}
{%- endmacro %}


{% macro _mj_column_full_state(source) -%}
  {#- The highest value now (at the version the plan saw), from a query run with the other
      inputs' in one job; 'empty' when the input has none. -#}
  {%- set table = dbt_multijoin._mj_column_table_at(source, source['version']) -%}
  {{- return({'query': 'select ' ~ dbt_multijoin._mj_highest_mark(dbt_multijoin._mj_quote(source['column']), source['instant']) ~ ' as mark from ' ~ table, 'version': source['version']}) -}}
{%- endmacro %}


{% macro _mj_column_next_state(source, recorded, highest) -%}
  {#- The mark moves up to the highest value read above it; the version to the one read at. -#}
  {{- return({'mark': recorded['mark'] if highest is none else highest, 'version': source['version']}) -}}
{%- endmacro %}


{% macro _mj_column_cleanup(source) -%}
  {#- Also those an earlier run that failed left. -#}
  {%- if source['tracks_rows'] -%}
    {%- for table in dbt_multijoin._mj_column_rewritten_tables(source) -%}
      {%- do dbt_multijoin._mj_drop_own_table_if_present(table) -%}
    {%- endfor -%}
  {%- endif -%}
{%- endmacro %}
