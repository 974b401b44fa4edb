{#- Private: reading a changed_keys run's changes, once, before any conf of the model is set: every
    changed input's changed rows are read, each input's into a cached view of its own, what each
    read is logged from the plan that ran, the changes view is their union, their distinct keys go
    to the key table, and the marks each input moves to are read from the same view. Both paths
    read this way; what a row of the view holds is the path's (the key recompute: recompute.sql;
    the partial update: partial_update.sql). An input whose table has not moved since the last run
    is not read at all, and when none moved, nothing is read and nothing written: the table stays
    as it is. -#}

{#- SQL pieces the paths share. -#}
{% macro _mj_any_key_null(alias, keys) -%}
  {%- set items = [] -%}
  {%- for k in keys -%}
    {%- do items.append(dbt_multijoin._mj_column_ref(alias, k) ~ ' is null') -%}
  {%- endfor -%}
  {{- return(items | join(' or ')) -}}
{%- endmacro %}


{% macro _mj_same_keys(left, right, keys) -%}
  {#- `left`'s key equal to `right`'s, part by part (a NULL part equals nothing). -#}
  {%- set items = [] -%}
  {%- for k in keys -%}
    {%- do items.append(dbt_multijoin._mj_column_ref(left, k) ~ ' = ' ~ dbt_multijoin._mj_column_ref(right, k)) -%}
  {%- endfor -%}
  {{- return(items | join(' and ')) -}}
{%- endmacro %}


{% macro _mj_merge_key_match(keys) -%}
  {#- The MERGE's match of a source row to a target row by key, one condition per key part,
      null-safe: a target row with a NULL in any key part compares as NULL in every part, so the
      source's NULL-keyed marker (every part NULL) matches it and no other source row does. -#}
  {%- set target_null = dbt_multijoin._mj_any_key_null('target', keys) -%}
  {%- set items = [] -%}
  {%- for k in keys -%}
    {%- do items.append(dbt_multijoin._mj_column_ref('source', k) ~ ' <=> if(' ~ target_null ~ ', null, ' ~ dbt_multijoin._mj_column_ref('target', k) ~ ')') -%}
  {%- endfor -%}
  {{- return(items) -}}
{%- endmacro %}


{% macro _mj_keys_as_model_keys(input, spec) -%}
  {#- A spec input's key columns under the model's key names: ['k as device_id', ...]. -#}
  {%- set items = [] -%}
  {%- for k in input['keys'] -%}
    {%- do items.append(dbt_multijoin._mj_quote(k) ~ ' as ' ~ dbt_multijoin._mj_quote(spec['keys'][loop.index0])) -%}
  {%- endfor -%}
  {{- return(items) -}}
{%- endmacro %}


{% macro _mj_mark_column(index) -%}
  {#- The changes view's column carrying input `index`'s changed_since values. -#}
  {{- return('dbt_multijoin_mark_' ~ index) -}}
{%- endmacro %}


{% macro _mj_mark_items(plan, index, value) -%}
  {#- The mark columns of input `index`'s rows in the changes view: `value` in its own column, NULL
      in every other input's (one column per input whose source carries marks). -#}
  {%- set items = [] -%}
  {%- for input in plan['inputs'] if dbt_multijoin._mj_source_do(input['source'], 'mark') is not none -%}
    {%- do items.append((value if input['index'] == index else 'null') ~ ' as ' ~ dbt_multijoin._mj_mark_column(input['index'])) -%}
  {%- endfor -%}
  {{- return(items) -}}
{%- endmacro %}


{% macro _mj_highest_mark(column, instant) -%}
  {#- The aggregate giving a column's mark as text: its highest value (an instant in microseconds
      since the epoch: its text would depend on the session time zone). -#}
  {{- return('cast(' ~ ('unix_micros(max(' ~ column ~ '))' if instant else 'max(' ~ column ~ ')') ~ ' as string)') -}}
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


{% macro _mj_change_partition_bytes() -%}
  {#- The bytes of a partition of the changes: each input's cache, then the changes view. -#}
  {{- return(32 * 1024 * 1024) -}}
{%- endmacro %}


{#- Reading the changes. -#}
{% macro _mj_read_inputs(plan) -%}
  {#- The inputs the run reads: their table moved since the last run, or they are read whole. -#}
  {%- set inputs = [] -%}
  {%- for input in plan['inputs'] if not input['unchanged'] -%}
    {%- do inputs.append(input) -%}
  {%- endfor -%}
  {{- return(inputs) -}}
{%- endmacro %}


{% macro _mj_cache_changes(plan, branches) -%}
  {#- Each input's changes (`branches`, by input index) read once into its cached view, in plan
      order. Returns {input index: view}. A view of its own per input: a later query finds cached
      rows by their plan, and a plan that Spark makes anew for each query is never found (a scan of
      an Iceberg changelog on Spark 4.1, of a Delta table with row tracking on Spark 3.5: those
      sources read their input into scratch tables, sources.sql); in one cache over every input,
      one such input had every input read again.
      A cache keeps the partitions of its query's last stage, and adaptive execution does not
      coalesce that stage: an input's changes whose last operator shuffles (the tie compare's
      aggregate, a change feed's window) would be cached in spark.sql.shuffle.partitions
      partitions, 200 tasks by default for a few thousand rows, and cost more than the rebuild.
      The extension's MULTIJOIN_COALESCE_BY_SIZE hint merges them into a partition per 32 MiB of
      the size Spark estimates for them (their scans' files, an estimate from above); a session
      without the extension ignores the hint, with Spark's warning. -#}
  {%- set views = {} -%}
  {%- for input in plan['inputs'] if branches.get(input['index']) is not none -%}
    {%- set view = dbt_multijoin._mj_input_changes_view(input['index']) -%}
    {%- set sized = 'select /*+ MULTIJOIN_COALESCE_BY_SIZE(' ~ dbt_multijoin._mj_change_partition_bytes() ~ ') */ * from (\n' ~ branches[input['index']] ~ '\n) as input_changes' -%}
    {%- do dbt_multijoin._mj_cache_view(plan, view, sized, 'dbt_multijoin_changes_' ~ input['index']) -%}
    {%- do views.update({input['index']: view}) -%}
  {%- endfor -%}
  {{- return(views) -}}
{%- endmacro %}


{% macro _mj_changes_sql(views, change_bytes) -%}
  {#- The changes view's query: the union of the inputs' cached views, in a partition per 32 MiB
      of the change files they read. Each cache holds a partition per 32 MiB of an estimate from
      above (_mj_cache_changes); the files the reads did read are known now, and usually far fewer:
      every read of the changes would otherwise run a task per cached partition. A coalesce merges
      partitions without a shuffle; none where the size is not known. -#}
  {%- set parts = [] -%}
  {%- for view in views.values() -%}
    {%- do parts.append('    select * from ' ~ view) -%}
  {%- endfor -%}
  {%- set hint = '' -%}
  {%- if change_bytes is not none -%}
    {%- set hint = '/*+ COALESCE(' ~ ([1, ((change_bytes / dbt_multijoin._mj_change_partition_bytes()) | round(0, 'ceil') | int)] | max) ~ ') */ ' -%}
  {%- endif -%}
  {{- return('select ' ~ hint ~ '* from (\n' ~ parts | join('\n    union all\n') ~ '\n) as changed_rows') -}}
{%- endmacro %}


{% macro _mj_read_changes(plan, relation) -%}
  {#- Reads the changes (this file's header). Returns {read: whether anything was read,
      changed_key_count, states: {input index: {mark, version}} to record}. -#}
  {%- do dbt_multijoin._mj_drop_changed_keys_scratch(plan, relation, leftovers=true) -%}
  {%- set read = dbt_multijoin._mj_read_inputs(plan) -%}
  {%- if not read -%}
    {%- do dbt_multijoin._mj_log_reads(plan, {}, false) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": no input changed since the last run: nothing to read or write", info=True) -%}
    {{- return({'read': false, 'changed_key_count': 0, 'states': dbt_multijoin._mj_next_states(plan, {})}) -}}
  {%- endif -%}
  {%- for input in read if input['source_read'] -%}
    {%- do dbt_multijoin._mj_source_do(input['source'], 'prepare', input['recorded']) -%}
  {%- endfor -%}
  {%- set branches = {} -%}
  {%- for input in read -%}
    {%- do branches.update({input['index']: dbt_multijoin._mj_partial_changes_branch(plan, input) if plan['path'] == 'partial_update' else dbt_multijoin._mj_recompute_changes_branch(plan, input)}) -%}
  {%- endfor -%}
  {#- Read before they are sized: sizing them beforehand planned every input's reads twice. The
      views keep their analyzed plans: every later statement of the run reads them. -#}
  {%- set views_conf = dbt_multijoin._mj_views_keep_their_plans() -%}
  {%- set views = dbt_multijoin._mj_cache_changes(plan, branches) -%}
  {%- set change_bytes = dbt_multijoin._mj_log_reads(plan, views, dbt_multijoin._mj_has_function('multijoin_cached_scan_size')) -%}
  {%- set changes = dbt_multijoin._mj_changes_view() -%}
  {%- do dbt_multijoin._mj_exec('create or replace temporary view ' ~ changes ~ ' as\n' ~ dbt_multijoin._mj_changes_sql(views, change_bytes)) -%}
  {%- do dbt_multijoin._mj_made_view(plan, changes) -%}
  {%- do dbt_multijoin._mj_restore_confs(views_conf) -%}
  {%- if plan['path'] == 'partial_update' -%}
    {#- Before any table is written: a run this check fails leaves nothing behind. -#}
    {%- do dbt_multijoin._mj_check_one_row_per_key(plan, changes) -%}
  {%- endif -%}
  {%- set key_table = dbt_multijoin._mj_changed_keys_table(relation) -%}
  {%- do dbt_multijoin._mj_write_scratch_table(key_table, 'select distinct ' ~ dbt_multijoin._mj_column_list(plan['keys']) ~ ' from ' ~ changes ~ ' where not (' ~ dbt_multijoin._mj_any_key_null(none, plan['keys']) ~ ')', 'dbt_multijoin_changed_keys') -%}
  {#- One row: the key count and, by a global aggregate over the view, each mark column's highest
      value and (partial update) the inputs whose changes hold a NULL-keyed row. With no aggregate
      (only change feeds read by a key recompute) nothing is read from the view: a bare SELECT over
      it gave a row per changed row, and none when the changes held none (a change feed whose only
      change was to a NULL-keyed row), which failed the run, and every run after it. -#}
  {%- set aggregates = [] -%}
  {%- if plan['path'] == 'partial_update' -%}
    {%- do aggregates.append("concat_ws(',', collect_set(if(" ~ dbt_multijoin._mj_any_key_null(none, plan['keys']) ~ ", cast(dbt_multijoin_input as string), null))) as dbt_multijoin_null_inputs") -%}
  {%- endif -%}
  {%- for input in read -%}
    {%- set mark = dbt_multijoin._mj_source_do(input['source'], 'mark') -%}
    {%- if mark is not none -%}
      {%- do aggregates.append(dbt_multijoin._mj_highest_mark(dbt_multijoin._mj_mark_column(input['index']), mark['instant']) ~ ' as ' ~ dbt_multijoin._mj_mark_column(input['index'])) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set items = ['(select count(*) from ' ~ key_table ~ ') as changed_key_count'] + aggregates -%}
  {%- set found = run_query('select ' ~ items | join(', ') ~ (' from ' ~ changes if aggregates else ''))[0] -%}
  {%- set highest = {} -%}
  {%- for input in read if dbt_multijoin._mj_source_do(input['source'], 'mark') is not none and found[dbt_multijoin._mj_mark_column(input['index'])] is not none -%}
    {%- do highest.update({input['index']: found[dbt_multijoin._mj_mark_column(input['index'])] | string}) -%}
  {%- endfor -%}
  {%- if plan['path'] != 'partial_update' -%}
    {#- The key-recompute query reads the key table, not the changes: they go now. A partial
        update's MERGE source reads the view: it goes with the scratch tables. -#}
    {%- do dbt_multijoin._mj_drop_changes_views(plan) -%}
  {%- endif -%}
  {%- set count = found['changed_key_count'] | int -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ count ~ " changed keys", info=True) -%}
  {%- set null_rows_inputs = none -%}
  {%- if plan['path'] == 'partial_update' -%}
    {%- set null_rows_inputs = dbt_multijoin._mj_write_null_rows(plan, relation, read, found['dbt_multijoin_null_inputs']) -%}
  {%- endif -%}
  {{- return({'read': true, 'changed_key_count': count, 'states': dbt_multijoin._mj_next_states(plan, highest), 'null_rows_inputs': null_rows_inputs}) -}}
{%- endmacro %}


{% macro _mj_next_states(plan, highest) -%}
  {#- What the run records per input: an input not read keeps its recorded state; the others move
      on to where their source stood when the plan was made. -#}
  {%- set states = {} -%}
  {%- for input in plan['inputs'] -%}
    {%- if input['unchanged'] -%}
      {%- do states.update({input['index']: input['recorded']}) -%}
    {%- else -%}
      {%- do states.update({input['index']: dbt_multijoin._mj_source_do(input['source'], 'next_state', input['recorded'], highest.get(input['index']))}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(states) -}}
{%- endmacro %}


{% macro _mj_full_states(plan) -%}
  {#- What a full build records per input, read before the build reads the inputs (a row written
      in between is read again by the next run, which is idempotent): the sources' states, their
      queries (the highest changed_since values) run as one job. -#}
  {%- set states = {} -%}
  {%- set queries = [] -%}
  {%- for input in plan['inputs'] -%}
    {%- set state = dbt_multijoin._mj_source_do(input['source'], 'full_state') -%}
    {%- do states.update({input['index']: state}) -%}
    {%- if state.get('query') -%}
      {%- do queries.append('select ' ~ input['index'] ~ ' as input_index, mark from (' ~ state['query'] ~ ') as highest') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if queries -%}
    {%- for row in run_query(queries | join('\nunion all\n')) -%}
      {%- do states[row['input_index'] | int].update({'mark': 'empty' if row['mark'] is none else row['mark'] | string}) -%}
    {%- endfor -%}
  {%- endif -%}
  {{- return(states) -}}
{%- endmacro %}


{% macro _mj_log_reads(plan, views, sized) -%}
  {#- One line per input: what it read since the last run (`views`: each read input's cached
      changes, by input index), and (`sized`: the extension's multijoin_cached_scan_size is there)
      the files and bytes its reads read, after partition pruning and file skipping, from the plan
      that ran, in one query for every input. Returns the bytes of every input's changes, or none
      where that is not known (no extension, a scan sized only by the statistics it reports). -#}
  {%- set found = none -%}
  {%- if sized and views -%}
    {%- set sizes = [] -%}
    {%- set fields = [] -%}
    {%- for index, view in views.items() -%}
      {#- A source that wrote scratch tables for these changes read the input only through them:
          the queries it wrote them from (its `sized_reads`), sized as planned again; else what
          the cached changes' plan read. -#}
      {%- set source = plan['inputs'][index]['source'] -%}
      {%- set parts = [] -%}
      {%- if not source.get('sized_reads') -%}
        {%- do parts.append('size_' ~ index ~ '_0') -%}
        {%- do sizes.append('multijoin_cached_scan_size(' ~ dbt_multijoin._mj_string_literal(view) ~ ') as size_' ~ index ~ '_0') -%}
      {%- endif -%}
      {%- for query in source.get('sized_reads', []) -%}
        {%- do sizes.append('multijoin_scan_size(' ~ dbt_multijoin._mj_string_literal(query) ~ ') as size_' ~ index ~ '_' ~ loop.index) -%}
        {%- do parts.append('size_' ~ index ~ '_' ~ loop.index) -%}
      {%- endfor -%}
      {%- for field in ['files', 'bytes', 'estimated_scans'] -%}
        {%- do fields.append(parts | join('.' ~ field ~ ' + ') ~ '.' ~ field ~ ' as ' ~ field ~ '_' ~ index) -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- set found = run_query('select ' ~ fields | join(', ') ~ ' from (select ' ~ sizes | join(', ') ~ ') as sizes')[0] -%}
  {%- endif -%}
  {%- set total = {'bytes': 0, 'known': found is not none} -%}
  {%- for input in plan['inputs'] -%}
    {%- set line = "dbt_multijoin: " ~ model.name ~ ": input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ "): " -%}
    {%- set index = input['index'] -%}
    {%- if index not in views -%}
      {%- set line = line ~ "reads nothing" -%}
    {%- elif found is none -%}
      {%- set line = line ~ "reads" -%}
    {%- else -%}
      {%- set files, bytes, estimated = found['files_' ~ index] | int, found['bytes_' ~ index] | int, found['estimated_scans_' ~ index] | int -%}
      {%- set line = line ~ ("reads nothing" if files == 0 and bytes == 0 and estimated == 0 else "reads " ~ files ~ (" file, " if files == 1 else " files, ") ~ dbt_multijoin._mj_bytes_text(bytes)) -%}
      {%- if estimated > 0 -%}
        {%- do total.update({'known': false}) -%}
      {%- endif -%}
      {%- do total.update({'bytes': total['bytes'] + bytes}) -%}
    {%- endif -%}
    {%- set line = line ~ " (" ~ input['reads'] ~ (", read whole once: " ~ input['whole'] if input['whole'] else "") ~ ")" -%}
    {%- if found is not none and index in views and (found['estimated_scans_' ~ index] | int) > 0 -%}
      {%- set line = line ~ "; " ~ found['estimated_scans_' ~ index] ~ " of its scans sized by the statistics they report, their files not counted" -%}
    {%- endif -%}
    {%- do log(line, info=True) -%}
  {%- endfor -%}
  {{- return(total['bytes'] if total['known'] else none) -}}
{%- endmacro %}

