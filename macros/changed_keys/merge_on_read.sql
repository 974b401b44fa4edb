{#- Private: the merge-on-read layout of a partial-update model (`layout='merge_on_read'`, Delta or
    Iceberg): a refresh writes what changed and reads no column of the table but its key.

    The table readers name is a view over one store table, `<model>__dbt_mj_store`, partitioned by
    the key's bucket (`dbt_multijoin_bucket`: _mj_mor_bucket_sql, compaction_buckets of them), which
    holds:
    - base rows (`dbt_multijoin_seq` = 0): the wide table as the last full build or compaction left
      it, each file a range of keys within one bucket (a full build writes them sorted by bucket and
      key), so that a filter on the key skips the others;
    - delta rows (`dbt_multijoin_seq` > 0, the last run that wrote them): one per key a refresh
      changed since the last compaction, holding the latest columns and presence of each input
      a refresh changed for the key (`dbt_multijoin_touched_<i>`: whether the row carries input
      i's), and whether the key had a base row (`dbt_multijoin_in_base`); per input whose changes
      held a NULL-keyed row its NULL-keyed rows as they are now (`dbt_multijoin_null_group` = i),
      and a marker row saying that they replace that input's earlier ones
      (`dbt_multijoin_null_marker`).
    A refresh merges its changes into the delta rows in one MERGE (one commit). The view gives
    each key, per input, the columns of its delta row where that touched the input, else the base
    row's: one scan of the store's keyed rows, each joined to its key's delta row (few: the view
    broadcasts them, and a run compacts once they pass compaction_max_delta_rows), keeping the
    base rows and the delta rows of keys no base row has, plus the NULL-keyed rows of each
    input's latest generation. One delta row per key needs no aggregate in the view, which every
    reader would pay for. It is plain Spark SQL, so any Spark reads it, with or without the
    extension. A compaction folds the delta rows into base rows in one statement (one commit):
    the view's rows replace every store row. It keeps each base file's key range: each file is
    read by a task of its own and written back as one file, so no shuffle and no second read of
    the view; the rows of keys no base row had go to files of their own, which cover no one
    range. Once such rows pass _mj_mor_resort_rows, a compaction sorts the whole store by the
    key again, as a full build writes it (_mj_mor_compact); so does one of
    more than twice compaction_max_delta_rows delta rows, which it joins by a shuffle, not a
    broadcast (_mj_mor_settle). A compaction a run finds due is a step: it folds the delta rows of
    the buckets holding the most, rewriting their partitions alone (_mj_mor_step), so that a run
    pays for part of the store's rewrite, not all of it.

    What a reader's query holds follows what the store holds: the view's text is of the store's
    shape (_mj_mor_view_shape), recorded in the view's own properties. Without delta rows (after a
    build or a whole compaction) it is the base rows alone, NULL-keyed ones included, which no
    generation has replaced then: one scan, no join. With delta rows, it joins them on the
    columns of the inputs they touch (the others come from the base row alone), and it has the
    branch of NULL-keyed rows only while a delta row is NULL-keyed or a marker (a NULL-keyed base
    row that no marker replaced is current, and the scan of the keyed rows reads it with them,
    its key matching no delta row). Spark analyses and optimizes
    every part a view's text holds on each query, whatever the optimizer leaves out of the plan
    after, so a part the store does not need costs every query its planning. A run widens the
    shape before it writes the store (to the inputs it changes, and the NULL-keyed branch where it
    writes NULL-keyed rows) and narrows it to what the store holds after its last write, so a
    reader, whose query is analysed against one view and one store version, never misses a row;
    a run that leaves the shape as it was replaces the view neither time. (An earlier release
    pruned by the flags of a one-row view `<model>__dbt_mj_store_parts`: the first run that
    replaces the view drops it.)

    Every statement is one commit, and applying a refresh's delta rows again gives the same rows,
    so a run killed at any point leaves a readable, correct table, and the next run is right. -#}

{% macro _mj_layout() -%}
  {#- The model's `layout`: 'table' (the default: one table, refreshed by MERGE) or
      'merge_on_read'. -#}
  {%- set layout = config.get('layout', 'table') -%}
  {%- if layout not in ['table', 'merge_on_read'] -%}
    {%- do dbt_multijoin._mj_fail("layout must be 'table' or 'merge_on_read', got '" ~ layout ~ "'") -%}
  {%- endif -%}
  {%- if layout == 'merge_on_read' and config.get('incremental_strategy') != 'changed_keys' -%}
    {%- do dbt_multijoin._mj_fail("layout 'merge_on_read' needs incremental_strategy 'changed_keys' with one_row_per_key=true") -%}
  {%- endif -%}
  {{- return(layout) -}}
{%- endmacro %}


{% macro _mj_mor_broadcast_key_limit() -%}
  {#- The most changed keys a refresh sends to every task to find which have a base row (a project
      var, 1,000,000 by default: a hash table of some tens of MB in each executor). -#}
  {{- return(var('dbt_multijoin_broadcast_key_limit', 1000000) | int) -}}
{%- endmacro %}


{% macro _mj_mor_delta_kind() -%}
  {#- What the store's delta rows are, recorded on it: a store an earlier release wrote (a delta
      row per key and run, which the view aggregated) is built again once. -#}
  {{- return('one_row_per_key') -}}
{%- endmacro %}


{% macro _mj_mor_store(relation) -%}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_store')) -}}
{%- endmacro %}


{% macro _mj_mor_parts(store) -%}
  {#- The one-row view of flags an earlier release's view read (the header says what became of it). -#}
  {{- return(dbt_multijoin._mj_sibling(store, '_parts').incorporate(type='view')) -}}
{%- endmacro %}


{% macro _mj_mor_open_parts(store) -%}
  {#- An earlier release's view, before a full build replaces the store under it: its flags say
      every part. -#}
  {%- set parts = dbt_multijoin._mj_mor_parts(store) -%}
  {%- if load_cached_relation(parts) is not none -%}
    {%- do dbt_multijoin._mj_exec('create or replace view ' ~ parts
        ~ ' as select * from values (true, true) as parts(dbt_multijoin_delta_rows, dbt_multijoin_null_keyed_rows)') -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_mor_drop_parts(store) -%}
  {%- set parts = dbt_multijoin._mj_mor_parts(store) -%}
  {%- if load_cached_relation(parts) is not none -%}
    {%- do adapter.drop_relation(parts) -%}
  {%- endif -%}
{%- endmacro %}


{#- The view's shape (the header says what it is for): {inputs: the indexes of the inputs whose
    columns it takes from delta rows; null_keyed_rows: whether it has the branch of NULL-keyed rows
    (with neither, the store holds no delta row and the view is the base rows alone);
    columns: a digest of the model's columns it names, _mj_mor_columns_digest}. At least every
    input some delta row of the store touches, and the branch while a delta row is NULL-keyed or
    a marker, so that a reader never misses a row; the model's columns as the store has them. -#}
{% macro _mj_mor_view_inputs_key() -%}
  {{- return('dbt_multijoin.mor.delta_inputs') -}}
{%- endmacro %}


{% macro _mj_mor_view_null_key() -%}
  {{- return('dbt_multijoin.mor.null_keyed_rows') -}}
{%- endmacro %}


{% macro _mj_mor_view_columns_key() -%}
  {{- return('dbt_multijoin.mor.columns') -}}
{%- endmacro %}


{% macro _mj_mor_columns_digest(names) -%}
  {#- The view's columns in a property: a run after one that changed the store's columns and
      stopped before it replaced the view finds them differ, and replaces it. -#}
  {{- return(local_md5(names | map('lower') | join(','))) -}}
{%- endmacro %}


{% macro _mj_mor_replace_view(view, shape, sql) -%}
  {%- do dbt_multijoin._mj_exec('create or replace view ' ~ view ~ " tblproperties ('" ~ dbt_multijoin._mj_mor_view_inputs_key() ~ "' = '"
      ~ shape['inputs'] | join(',') ~ "', '" ~ dbt_multijoin._mj_mor_view_null_key() ~ "' = '" ~ (shape['null_keyed_rows'] | string | lower)
      ~ "', '" ~ dbt_multijoin._mj_mor_view_columns_key() ~ "' = '" ~ shape['columns'] ~ "') as\n" ~ sql) -%}
{%- endmacro %}


{% macro _mj_mor_create_base_rows_view(view, store, columns) -%}
  {#- The view of a store that holds no delta row (after a full build or a whole compaction): its
      base rows, `columns` (the model's names). Returns its shape. -#}
  {%- set shape = {'inputs': [], 'null_keyed_rows': false, 'columns': dbt_multijoin._mj_mor_columns_digest(columns), 'recorded': true} -%}
  {%- do dbt_multijoin._mj_mor_replace_view(view, shape, 'select ' ~ dbt_multijoin._mj_column_list(columns) ~ ' from ' ~ store ~ ' where dbt_multijoin_seq = 0') -%}
  {%- do dbt_multijoin._mj_mor_drop_parts(store) -%}
  {{- return(shape) -}}
{%- endmacro %}


{% macro _mj_mor_reads_base_rows_alone(shape) -%}
  {#- Whether a view of `shape` is the base rows alone: only where the store holds no delta row. A
      delta row that touches no input is a marker, which the branch of NULL-keyed rows must apply. -#}
  {{- return(shape['inputs'] == [] and not shape['null_keyed_rows']) -}}
{%- endmacro %}


{% macro _mj_mor_create_view(view, spec, store, shape) -%}
  {%- if dbt_multijoin._mj_mor_reads_base_rows_alone(shape) -%}
    {%- do dbt_multijoin._mj_mor_create_base_rows_view(view, store, dbt_multijoin._mj_partial_update_columns(spec)) -%}
  {%- else -%}
    {%- do dbt_multijoin._mj_mor_replace_view(view, shape, dbt_multijoin._mj_mor_view_sql(spec, store, chosen=shape['inputs'], null_keyed_rows=shape['null_keyed_rows'])) -%}
    {%- do dbt_multijoin._mj_mor_drop_parts(store) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_mor_view_shape(plan) -%}
  {#- The view's shape now: as this run last set it, else as the view records it; every input and
      the branch where it records none (a view an earlier release made, which `recorded` false
      has the next set replace) or is missing. -#}
  {%- if plan.get('mor_view_shape') is not none -%}
    {{- return(plan['mor_view_shape']) -}}
  {%- endif -%}
  {%- set every = {'inputs': range(plan['spec']['inputs'] | length) | list, 'null_keyed_rows': true, 'columns': none, 'recorded': false} -%}
  {%- if load_cached_relation(plan['relation']) is none -%}
    {{- return(every) -}}
  {%- endif -%}
  {%- set properties = dbt_multijoin._mj_table_properties(plan['relation']) -%}
  {%- set recorded = properties.get(dbt_multijoin._mj_mor_view_inputs_key()) -%}
  {%- set null_keyed = properties.get(dbt_multijoin._mj_mor_view_null_key()) -%}
  {%- set columns = properties.get(dbt_multijoin._mj_mor_view_columns_key()) -%}
  {%- if recorded is none or null_keyed is none or columns is none -%}
    {{- return(every) -}}
  {%- endif -%}
  {%- set inputs = [] -%}
  {%- for index in recorded.split(',') if index != '' -%}
    {%- do inputs.append(index | int) -%}
  {%- endfor -%}
  {{- return({'inputs': inputs, 'null_keyed_rows': null_keyed == 'true', 'columns': columns, 'recorded': true}) -}}
{%- endmacro %}


{% macro _mj_mor_set_view_shape(plan, inputs, null_keyed_rows, why) -%}
  {#- Replace the view where its shape changes. -#}
  {%- set shape = {'inputs': inputs | unique | sort | list, 'null_keyed_rows': null_keyed_rows,
      'columns': dbt_multijoin._mj_mor_columns_digest(dbt_multijoin._mj_partial_update_columns(plan['spec'])), 'recorded': true} -%}
  {%- if shape != dbt_multijoin._mj_mor_view_shape(plan) -%}
    {%- if dbt_multijoin._mj_mor_reads_base_rows_alone(shape) -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": the view reads the base rows alone (" ~ why ~ ")", info=True) -%}
    {%- else -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": the view takes the columns of input(s) [" ~ shape['inputs'] | join(', ') ~ "] from delta rows, "
          ~ ("with" if null_keyed_rows else "without") ~ " the branch of NULL-keyed rows (" ~ why ~ ")", info=True) -%}
    {%- endif -%}
    {%- do dbt_multijoin._mj_mor_create_view(plan['relation'], plan['spec'], plan['store'], shape) -%}
  {%- endif -%}
  {%- do plan.update({'mor_view_shape': shape}) -%}
{%- endmacro %}


{% macro _mj_mor_widen_view(plan, indexes, null_keyed_rows) -%}
  {#- Before a write to the store, after any change of its columns: delta rows that touch the
      inputs `indexes`, and NULL-keyed rows or markers where `null_keyed_rows`. A view that
      records no shape (an earlier release's) gives way to one that reads every part. -#}
  {%- set shape = dbt_multijoin._mj_mor_view_shape(plan) -%}
  {%- do plan.update({'mor_view_shape': shape}) -%}
  {%- do dbt_multijoin._mj_mor_set_view_shape(plan, shape['inputs'] + indexes, shape['null_keyed_rows'] or null_keyed_rows, 'before this run writes the store') -%}
{%- endmacro %}


{% macro _mj_mor_narrow_view(plan, state) -%}
  {#- After the run's last write to the store (`state`: _mj_mor_store_state with the inputs). -#}
  {%- do dbt_multijoin._mj_mor_set_view_shape(plan, state['touched_inputs'], state['null_keyed_delta_rows'], 'what the store holds') -%}
{%- endmacro %}


{% macro _mj_mor_store_state(store, whole=false, inputs=0, buckets=0) -%}
  {#- What the store holds, in one query after a write: {delta_rows, highest_seq,
      null_keyed_delta_rows (whether a delta row is NULL-keyed or a marker: the view then needs
      its branch of NULL-keyed rows), new_key_rows (the delta rows of keys no base
      row has), delta_files (the data files holding delta rows, for _mj_mor_gather_delta; none
      with `whole`), base_rows (with `whole`; else none), touched_inputs (of the first `inputs` inputs,
      the indexes of those some delta row touches), bucket_delta_rows and bucket_new_key_rows (of
      the first `buckets` key buckets, per bucket, its delta rows and those of keys no base row
      has)}. Without `whole` it reads the delta rows alone (the formats' file statistics skip the
      base files by the filter); the base rows are counted only after a build or a compaction,
      which wrote them. Counting the delta's files costs a set of file names per task (an
      aggregate Spark does not compile), paid on the delta rows alone. -#}
  {%- set touched = [] -%}
  {%- for index in range(inputs) -%}
    {%- do touched.append(', coalesce(max(dbt_multijoin_seq > 0 and ' ~ dbt_multijoin._mj_mor_touched(index) ~ '), false) as touched_' ~ index) -%}
  {%- endfor -%}
  {%- for bucket in range(buckets) -%}
    {%- do touched.append(', count_if(dbt_multijoin_seq > 0 and dbt_multijoin_bucket = ' ~ bucket ~ ') as bucket_delta_' ~ bucket
        ~ ', count_if(dbt_multijoin_seq > 0 and not dbt_multijoin_in_base and dbt_multijoin_bucket = ' ~ bucket ~ ') as bucket_new_' ~ bucket) -%}
  {%- endfor -%}
  {%- set state = run_query(
      'select count_if(dbt_multijoin_seq > 0) as delta_rows, coalesce(max(dbt_multijoin_seq), 0) as highest_seq, '
      ~ 'count_if(dbt_multijoin_seq > 0 and not dbt_multijoin_in_base) as new_key_rows, '
      ~ 'coalesce(max(dbt_multijoin_seq > 0 and dbt_multijoin_null_group is not null), false) as null_keyed_delta_rows'
      ~ (', count_if(dbt_multijoin_seq = 0) as base_rows' if whole else ', size(collect_set(dbt_multijoin_file)) as delta_files')
      ~ touched | join('')
      ~ (' from ' ~ store if whole else ' from (select *, input_file_name() as dbt_multijoin_file from ' ~ store ~ ' where dbt_multijoin_seq > 0) as stored'))[0] -%}
  {%- set touched_inputs = [] -%}
  {%- for index in range(inputs) if (state['touched_' ~ index] | string | lower) in ['true', '1'] -%}
    {%- do touched_inputs.append(index) -%}
  {%- endfor -%}
  {{- return({'delta_rows': state['delta_rows'] | int, 'highest_seq': state['highest_seq'] | int, 'new_key_rows': state['new_key_rows'] | int,
      'delta_files': none if whole else state['delta_files'] | int,
      'null_keyed_delta_rows': (state['null_keyed_delta_rows'] | string | lower) in ['true', '1'],
      'base_rows': state['base_rows'] | int if whole else none,
      'touched_inputs': touched_inputs,
      'bucket_delta_rows': dbt_multijoin._mj_mor_bucket_counts(state, 'bucket_delta_', buckets),
      'bucket_new_key_rows': dbt_multijoin._mj_mor_bucket_counts(state, 'bucket_new_', buckets)}) -}}
{%- endmacro %}


{% macro _mj_mor_bucket_counts(state, prefix, buckets) -%}
  {%- set counts = [] -%}
  {%- for bucket in range(buckets) -%}
    {%- do counts.append(state[prefix ~ bucket] | int) -%}
  {%- endfor -%}
  {{- return(counts) -}}
{%- endmacro %}


{% macro _mj_mor_compaction_setting(name, model_config=none) -%}
  {#- The model's compaction setting `name` (compaction_share, compaction_max_delta_rows,
      compaction_buckets, compaction_max_delta_files), or its
      default: from the run's config, or from `model_config` (dbt_multijoin.compact, which has
      the model's node, not its run). Unchecked: a run checks them when it plans (_mj_mor_check). -#}
  {%- set defaults = {'compaction_share': 0.03, 'compaction_max_delta_rows': 1000000, 'compaction_buckets': 8, 'compaction_max_delta_files': none} -%}
  {{- return((config if model_config is none else model_config).get(name, defaults[name])) -}}
{%- endmacro %}


{% macro _mj_mor_broadcasts_delta(delta_rows, max_rows) -%}
  {#- Whether a compaction may read `delta_rows` delta rows through the view, which broadcasts
      them. Readers held at most compaction_max_delta_rows (`max_rows`) of them before a run, and
      a run that changes no more keys than that adds at most as many: up to twice the bound, yes.
      More came from one run's large change (or a bound lowered since): a run's compaction then
      joins them by a shuffle (_mj_mor_settle), and dbt_multijoin.compact refuses. -#}
  {{- return(delta_rows <= 2 * max_rows) -}}
{%- endmacro %}


{% macro _mj_mor_compaction_share() -%}
  {#- Compact once the delta rows pass this share of the base rows (the model's
      `compaction_share`, 0.03 by default). What a reader's full scan of the view costs over the
      table's grows with it (the view joins every base row to the delta rows), and a compaction's
      step keeps the more frequent compactions of a low share cheap; docs/dbt_package.md gives
      the measurements. -#}
  {%- set share = dbt_multijoin._mj_mor_compaction_setting('compaction_share') -%}
  {%- if share is not number or share <= 0 -%}
    {%- do dbt_multijoin._mj_fail("compaction_share must be a number above 0, got '" ~ share ~ "'") -%}
  {%- endif -%}
  {{- return(share) -}}
{%- endmacro %}


{% macro _mj_mor_resort_rows(share, base_rows) -%}
  {#- How many rows outside a file's key range (the rows of keys no base row had when they were
      folded in: _mj_mor_compact) the store may hold before a compaction sorts it by the key again:
      `share` (compaction_share) of the base rows, and at least a tenth of them. Each such row is in
      a file a filter on the key reads whatever key it asks for; a tenth of the base bounds that,
      while a re-sort costs about a full build's sort, so a low compaction_share, which keeps the
      readers' join small, does not also re-sort the store of a table that gains keys more often. -#}
  {{- return([share, 0.1] | max * [base_rows, 1] | max) -}}
{%- endmacro %}


{% macro _mj_mor_compaction_max_delta_rows() -%}
  {#- Compact once the delta rows pass this many rows, whatever their share (the model's
      `compaction_max_delta_rows`, 1,000,000 by default). Every reader of the view, and a
      compaction, holds all the delta rows in each task (the view broadcasts them, one row of the
      model's width per key): a share of a large table would be more than a task can hold, and
      Spark refuses a broadcast past 8 GiB. -#}
  {%- set rows = dbt_multijoin._mj_mor_compaction_setting('compaction_max_delta_rows') -%}
  {%- if rows is not number or rows is not integer or rows < 1 -%}
    {%- do dbt_multijoin._mj_fail("compaction_max_delta_rows must be a whole number of at least 1, got '" ~ rows ~ "'") -%}
  {%- endif -%}
  {{- return(rows) -}}
{%- endmacro %}


{% macro _mj_mor_max_delta_files() -%}
  {#- Gather the delta rows into a file per key bucket once they are spread over more than this
      many data files (the model's `compaction_max_delta_files`; by default 4 per key bucket).
      A refresh's MERGE writes the rows it changes into new files (one per key bucket and write
      task), and on Iceberg a position delete file for each earlier delta file holding a key it
      changes again. So the delta's files grow with the runs since the last compaction, not with
      its rows: a model whose runs change few keys reaches its compaction_share after many runs,
      and meanwhile every reader of the view and every refresh's MERGE pays a task, and on
      Iceberg the delete files, per file (_mj_mor_gather_delta). -#}
  {%- set files = dbt_multijoin._mj_mor_compaction_setting('compaction_max_delta_files') -%}
  {%- if files is none -%}
    {{- return(4 * dbt_multijoin._mj_mor_buckets()) -}}
  {%- endif -%}
  {%- if files is not number or files is not integer or files < 1 -%}
    {%- do dbt_multijoin._mj_fail("compaction_max_delta_files must be a whole number of at least 1, got '" ~ files ~ "'") -%}
  {%- endif -%}
  {{- return(files) -}}
{%- endmacro %}


{% macro _mj_mor_buckets() -%}
  {#- How many key buckets the store is partitioned into (the model's `compaction_buckets`, 8 by
      default): a compaction due in a run folds the delta rows of some of them (_mj_mor_settle). -#}
  {%- set buckets = dbt_multijoin._mj_mor_compaction_setting('compaction_buckets') -%}
  {%- if buckets is not number or buckets is not integer or buckets < 1 or buckets > 1024 -%}
    {%- do dbt_multijoin._mj_fail("compaction_buckets must be a whole number from 1 to 1024, got '" ~ buckets ~ "'") -%}
  {%- endif -%}
  {{- return(buckets) -}}
{%- endmacro %}


{% macro _mj_mor_bucket_sql(keys, buckets, alias=none, types=none) -%}
  {#- The key bucket of a row: Spark's hash of its key columns (`types`: {key: type} to cast them
      to, the store's, where the row's may differ: hash(1) of an int is not that of a bigint)
      modulo `buckets`; bucket 0 for a row with a NULL key column, so that every NULL-keyed row
      and marker, whose latest generation the view takes across them, lives in one bucket.
      Spark's hash gives -0.0 and 0.0, and every NaN, one value, as its joins match them. -#}
  {%- set hashed = [] -%}
  {%- for k in keys -%}
    {%- set column = dbt_multijoin._mj_column_ref(alias, k) -%}
    {%- do hashed.append(column if types is none else 'cast(' ~ column ~ ' as ' ~ types[k] ~ ')') -%}
  {%- endfor -%}
  {{- return('if(' ~ dbt_multijoin._mj_any_key_null(alias, keys) ~ ', 0, pmod(hash(' ~ hashed | join(', ') ~ '), ' ~ buckets ~ '))') -}}
{%- endmacro %}


{% macro _mj_mor_bucket_filter(buckets, alias=none) -%}
  {#- A filter on the store's rows of the key buckets `buckets` (none: every row). -#}
  {{- return('' if buckets is none else dbt_multijoin._mj_column_ref(alias, 'dbt_multijoin_bucket') ~ ' in (' ~ buckets | join(', ') ~ ')') -}}
{%- endmacro %}


{% macro _mj_mor_check(plan) -%}
  {#- A merge-on-read model must be refreshed by partial updates; its compaction settings are
      checked here too, when the run plans, so that a bad one fails it before any write. The store
      is partitioned by the key bucket, so the model sets no partitioning of its own. -#}
  {%- do dbt_multijoin._mj_mor_compaction_share() -%}
  {%- do dbt_multijoin._mj_mor_compaction_max_delta_rows() -%}
  {%- do dbt_multijoin._mj_mor_buckets() -%}
  {%- do dbt_multijoin._mj_mor_max_delta_files() -%}
  {%- do dbt_multijoin._mj_mor_compaction_asked() -%}
  {%- for setting in ['partition_by', 'clustered_by'] if config.get(setting) -%}
    {%- do dbt_multijoin._mj_fail("layout 'merge_on_read' partitions its store by a bucket of the key (compaction_buckets), so " ~ setting ~ " cannot be set, got '" ~ config.get(setting) ~ "'") -%}
  {%- endfor -%}
  {%- if plan['spec']['partial_update_refused'] is not none -%}
    {%- do dbt_multijoin._mj_fail("layout 'merge_on_read' needs a partial-update model, and " ~ plan['spec']['partial_update_refused']) -%}
  {%- elif not plan['bare'] -%}
    {%- do dbt_multijoin._mj_fail("layout 'merge_on_read' needs the model to be the multi_join(...) call alone (a partial update applies its rows; no SQL may wrap them)") -%}
  {%- elif config.get('file_format') not in ['delta', 'iceberg'] -%}
    {%- do dbt_multijoin._mj_fail("layout 'merge_on_read' needs file_format 'delta' or 'iceberg', got '" ~ config.get('file_format') ~ "'") -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_mor_input_columns(input) -%}
  {#- An input's columns in the model (and the store): its payload, then its presence column. -#}
  {{- return(dbt_multijoin._mj_input_payload(input) | map(attribute='output_name') | list + [input['presence_column']]) -}}
{%- endmacro %}


{#- The store's columns besides the model's. -#}
{% macro _mj_mor_touched(index) -%}
  {{- return('dbt_multijoin_touched_' ~ index) -}}
{%- endmacro %}


{% macro _mj_mor_control_columns(spec) -%}
  {#- [(name, type)] of the store's own columns, after the model's. -#}
  {%- set columns = [('dbt_multijoin_seq', 'bigint'), ('dbt_multijoin_in_base', 'boolean'), ('dbt_multijoin_null_group', 'int'), ('dbt_multijoin_null_marker', 'boolean'), ('dbt_multijoin_bucket', 'int')] -%}
  {%- for input in spec['inputs'] -%}
    {%- do columns.append((dbt_multijoin._mj_mor_touched(loop.index0), 'boolean')) -%}
  {%- endfor -%}
  {{- return(columns) -}}
{%- endmacro %}


{#- The full build: the store's base rows, and the view. -#}
{% macro _mj_mor_base_row_control(name, type, keys, buckets, alias) -%}
  {#- The value of the store's own column `name` in a base row of the model's row `alias`. -#}
  {%- if name == 'dbt_multijoin_seq' -%}
    {{- return('0') -}}
  {%- elif name == 'dbt_multijoin_bucket' -%}
    {{- return(dbt_multijoin._mj_mor_bucket_sql(keys, buckets, alias)) -}}
  {%- endif -%}
  {{- return('cast(null as ' ~ type ~ ')') -}}
{%- endmacro %}


{% macro _mj_mor_build(plan, view, existing_relation, sql) -%}
  {#- Write the store from the model's full build (statement 'main'), partitioned by the key
      bucket and sorted by bucket and key, then make the model's relation the view over it. A
      table of the model's name (the model was built in the default layout) gives way to the view
      after the store is written. -#}
  {%- set spec = plan['spec'] -%}
  {%- set store = plan['store'] -%}
  {%- set buckets = dbt_multijoin._mj_mor_buckets() -%}
  {%- set control = [] -%}
  {%- for name, type in dbt_multijoin._mj_mor_control_columns(spec) -%}
    {%- do control.append(dbt_multijoin._mj_mor_base_row_control(name, type, spec['keys'], buckets, 'model') ~ ' as ' ~ name) -%}
  {%- endfor -%}
  {%- set rows = 'select *, ' ~ control | join(', ') ~ ' from (\n' ~ sql ~ '\n) as model order by dbt_multijoin_bucket, ' ~ dbt_multijoin._mj_column_list(spec['keys']) -%}
  {%- set store_now = load_cached_relation(store) -%}
  {#- The view a reader reads until the new one replaces it may read the new store, which holds
      base rows alone: a view of this release reads them whatever its shape, and one of an earlier
      release once its flags say every part. -#}
  {%- do dbt_multijoin._mj_mor_open_parts(store) -%}
  {%- do dbt_multijoin._mj_build_full(store, store_now, rows, {'partitioned_by': ['dbt_multijoin_bucket'],
      'properties': dbt_multijoin._mj_mor_store_properties(plan)}) -%}
  {%- set state = dbt_multijoin._mj_mor_store_state(store, whole=true) -%}
  {%- if existing_relation is not none and existing_relation.type != 'view' -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ existing_relation ~ " becomes a view over " ~ store ~ " (layout merge_on_read)", info=True) -%}
    {%- do dbt_multijoin._mj_drop_own_table(existing_relation, existing_relation.is_delta) -%}
  {%- endif -%}
  {#- The store holds no delta row. -#}
  {%- do plan.update({'mor_view_shape': dbt_multijoin._mj_mor_create_base_rows_view(view, store, dbt_multijoin._mj_partial_update_columns(spec))}) -%}
  {%- do adapter.cache_added(view.incorporate(type='view')) -%}
  {{- return(state['base_rows']) -}}
{%- endmacro %}


{% macro _mj_mor_view_sql(spec, store, broadcast=true, chosen=none, buckets=none, null_keyed_rows=true) -%}
  {#- What readers see: the layout file's header says how. Without `broadcast`, the same rows with
      no hint on the join, which Spark then plans by the sizes it estimates (a shuffle of both
      sides): the compaction of more delta rows than a task should hold (_mj_mor_settle).
      `chosen`: the indexes of the inputs whose columns come from a key's delta row where it
      touched them (none: every input). Those of the others come from the base row alone, which
      is right while no delta row touches them (_mj_mor_widen_view and _mj_mor_narrow_view keep it
      so), and then readers pay neither their choice per row nor their delta columns in the
      broadcast. `buckets`: the rows of those key buckets alone (a compaction's step), each of its
      reads of the store limited to their partitions; none, every row. `null_keyed_rows`: whether
      the store may hold NULL-keyed delta rows (a refresh's NULL-keyed rows and markers, which
      replace an input's earlier ones): then the NULL-keyed rows come from a branch that keeps
      each input's latest generation; without, every NULL-keyed row is a base row and current,
      and the keyed rows' scan reads them with the others (their key matches no delta row). -#}
  {%- set keys = spec['keys'] -%}
  {%- set in_buckets = {} -%}
  {%- for alias in ['delta_row', 'b', none] -%}
    {%- do in_buckets.update({alias: '' if buckets is none else ' and ' ~ dbt_multijoin._mj_mor_bucket_filter(buckets, alias)}) -%}
  {%- endfor -%}
  {%- set merged, held_merged = [], [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set touched = 'd.' ~ dbt_multijoin._mj_mor_touched(loop.index0) -%}
    {%- set from_delta = chosen is none or loop.index0 in chosen -%}
    {%- for name in dbt_multijoin._mj_mor_input_columns(input) -%}
      {%- if from_delta -%}
        {%- do merged.append('case when ' ~ touched ~ ' then ' ~ dbt_multijoin._mj_column_ref('d', name) ~ ' else ' ~ dbt_multijoin._mj_column_ref('b', name) ~ ' end as ' ~ dbt_multijoin._mj_quote(name)) -%}
      {%- else -%}
        {%- do merged.append(dbt_multijoin._mj_column_ref('b', name) ~ ' as ' ~ dbt_multijoin._mj_quote(name)) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if from_delta -%}
      {%- do held_merged.append('coalesce(case when ' ~ touched ~ ' then d.' ~ input['presence_column'] ~ ' else b.' ~ input['presence_column'] ~ ' end, false)') -%}
    {%- else -%}
      {%- do held_merged.append('coalesce(b.' ~ input['presence_column'] ~ ', false)') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set columns = dbt_multijoin._mj_column_list(dbt_multijoin._mj_partial_update_columns(spec)) -%}
  {%- set input_of = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- do input_of.append('when ' ~ input['presence_column'] ~ ' then ' ~ loop.index0) -%}
  {%- endfor -%}
  {%- set null_keyed_branch = '\nunion all\n'
    ~ '-- NULL-keyed rows, per input its latest generation: the delta rows of its latest marker, or\n'
    ~ '-- its base rows (generation 0) while no marker replaced them; one scan of the store\n'
    ~ 'select ' ~ columns ~ ' from (\n'
    ~ '  select *, max(dbt_multijoin_seq) over (partition by dbt_multijoin_generation_of) as dbt_multijoin_latest from (\n'
    ~ '    select *, if(dbt_multijoin_seq = 0, case ' ~ input_of | join(' ') ~ ' end, dbt_multijoin_null_group) as dbt_multijoin_generation_of\n'
    ~ '    from ' ~ store ~ ' as stored\n'
    ~ '    where ((dbt_multijoin_seq = 0 and (' ~ dbt_multijoin._mj_any_key_null(none, keys) ~ ')) or (dbt_multijoin_seq > 0 and dbt_multijoin_null_group is not null))' ~ in_buckets[none] ~ '\n'
    ~ '  ) as null_keyed\n'
    ~ ') as generations\n'
    ~ 'where dbt_multijoin_seq = dbt_multijoin_latest and not coalesce(dbt_multijoin_null_marker, false)' -%}
  {#- The keyed rows in one scan of the store, not a scan for the base rows and another for the
      delta rows of new keys: a delta row of a key no base row has is its own match in the join,
      so the same columns give its own. A base row with no delta row is always held (a build and
      a compaction write only keys some input holds): the held test runs on the delta's keys. -#}
  {{- return(
    'with dbt_multijoin_delta as (\n'
    ~ '  select delta_row.* from ' ~ store ~ ' as delta_row\n'
    ~ '  where delta_row.dbt_multijoin_seq > 0 and not (' ~ dbt_multijoin._mj_any_key_null('delta_row', keys) ~ ')' ~ in_buckets['delta_row'] ~ '\n)\n'
    ~ '-- per key, its base row, or the delta row of a key no base row has; per input the columns of\n'
    ~ '-- the key\'s delta row where that touched the input\n'
    ~ 'select ' ~ ('/*+ BROADCAST(d) */ ' if broadcast else '') ~ dbt_multijoin._mj_column_list(keys, 'b') ~ ', ' ~ merged | join(', ') ~ '\n'
    ~ 'from ' ~ store ~ ' as b left outer join dbt_multijoin_delta as d on ' ~ dbt_multijoin._mj_same_keys('b', 'd', keys) ~ '\n'
    ~ 'where ' ~ ('not (' ~ dbt_multijoin._mj_any_key_null('b', keys) ~ ') and ' if null_keyed_rows else '') ~ '(b.dbt_multijoin_seq = 0 or not b.dbt_multijoin_in_base)' ~ in_buckets['b'] ~ '\n'
    ~ '  and (' ~ dbt_multijoin._mj_column_ref('d', keys[0]) ~ ' is null or ' ~ held_merged | join(' or ') ~ ')'
    ~ (null_keyed_branch if null_keyed_rows else '')
  ) -}}
{%- endmacro %}


{#- A refresh: the changes as delta rows. -#}
{% macro _mj_mor_write_delta(plan, read, key_count, null_replaced, seq) -%}
  {#- Write the run's changes to the store as delta rows of sequence `seq`, in one MERGE
      (statement 'main'): a changed key's delta row, one per key, merged with the one it had, and,
      appended, the NULL-keyed rows as they are now of each input of `null_replaced`
      (_mj_write_null_rows) and a marker per such input. Its source is the rows table, written
      with whether each changed key has a base row (a scan of the base rows' key column) in one
      statement: a table of its own for that lookup cost a refresh its create, its drop and a job.
      The MERGE reads the delta rows only (`dbt_multijoin_seq > 0` in its condition, which the
      formats' file statistics skip the base files by). -#}
  {%- set spec = plan['spec'] -%}
  {%- set store = plan['store'] -%}
  {%- set relation = plan['relation'] -%}
  {%- set keys = spec['keys'] -%}
  {%- set changed = dbt_multijoin._mj_changed_indexes(read) -%}
  {%- set rows_table = dbt_multijoin._mj_changed_rows_table(relation) -%}
  {%- set key_table = dbt_multijoin._mj_changed_keys_table(relation) -%}
  {#- Which changed keys have a base row: a scan of the base rows' key column, semi-joined to the
      changed keys. Up to _mj_mor_broadcast_key_limit changed keys, each task holds them all
      (a broadcast) and looks every base key up once; a hash or bloom filter before that lookup
      would only hash every base key a second time. Above it, the filter keeps the join's shuffle
      to the changed keys' rows and about 1% of the others. The keys found join the changed rows
      as an EXISTS (an existence join): a key found twice cannot double its row, so they need no
      DISTINCT, and up to the limit they are broadcast like the changed keys they are some of, so
      neither they nor the changed rows are shuffled for it. -#}
  {%- if key_count <= dbt_multijoin._mj_mor_broadcast_key_limit() -%}
    {%- set hint, found_hint, filter = '/*+ BROADCAST(changed) */ ', '/*+ BROADCAST(in_base) */ ', none -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the refresh looks the base rows' keys up among the " ~ key_count ~ " changed keys, which every task holds (a broadcast)", info=True) -%}
  {%- else -%}
    {%- set hint, found_hint = '', '' -%}
    {%- set filter = dbt_multijoin._mj_replaced_rows_filter(adapter.get_columns_in_relation(store), key_table, keys, key_count, reader='the refresh reads the base rows\' keys') -%}
  {%- endif -%}
  {%- set in_base = 'select ' ~ hint ~ dbt_multijoin._mj_column_list(keys, 'target') ~ ' from ' ~ store ~ ' as target left semi join ' ~ key_table ~ ' as changed on ' ~ dbt_multijoin._mj_same_keys('target', 'changed', keys)
      ~ ' where target.dbt_multijoin_seq = 0' ~ (' and ' ~ filter if filter else '') -%}
  {#- On the keyed rows alone: the NULL-keyed rows and markers have no base row to find, and Spark
      (both lines) fails to push a projection holding a correlated EXISTS through a UNION
      (`key not found` in its optimizer rule PushProjectionThroughUnion). -#}
  {%- set parts = dbt_multijoin._mj_partial_merge_source_parts(plan, changed, null_replaced) -%}
  {%- set rows = ['select keyed.*, exists(select ' ~ found_hint ~ '1 from (\n' ~ in_base ~ '\n) as in_base where ' ~ dbt_multijoin._mj_same_keys('in_base', 'keyed', keys) ~ ') as dbt_multijoin_has_base_row\n'
      ~ 'from (\n' ~ parts['keyed'] ~ '\n) as keyed'] -%}
  {%- for part in parts['null_keyed'] -%}
    {%- do rows.append('select *, false as dbt_multijoin_has_base_row from (\n' ~ part ~ '\n) as null_keyed') -%}
  {%- endfor -%}
  {%- do dbt_multijoin._mj_write_scratch_table(rows_table, rows | join('\nunion all\n'), 'dbt_multijoin_changed_rows') -%}

  {%- set items = [] -%}
  {%- for k in keys -%}
    {%- do items.append(dbt_multijoin._mj_column_ref('source', k)) -%}
  {%- endfor -%}
  {%- set null_group = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set index = loop.index0 -%}
    {%- for item in dbt_multijoin._mj_input_payload(input) -%}
      {%- do items.append(('source.' ~ dbt_multijoin._mj_quote(item['output_name']) if index in changed else 'null') ~ ' as ' ~ dbt_multijoin._mj_quote(item['output_name'])) -%}
    {%- endfor -%}
    {%- do items.append(('if(source.dbt_multijoin_present_' ~ index ~ ', true, null)' if index in changed else 'null') ~ ' as ' ~ input['presence_column']) -%}
    {%- if index in changed -%}
      {%- do null_group.append('when source.dbt_multijoin_touched_' ~ index ~ ' then ' ~ index) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set key_null = dbt_multijoin._mj_any_key_null('source', keys) -%}
  {%- do items.append(seq ~ ' as dbt_multijoin_seq') -%}
  {%- do items.append('if(' ~ key_null ~ ', null, source.dbt_multijoin_has_base_row) as dbt_multijoin_in_base') -%}
  {#- A marker (its null group set in the source) or a NULL-keyed row (the one input it touches). -#}
  {%- do items.append('coalesce(source.dbt_multijoin_null_group, if(' ~ key_null ~ ', case ' ~ null_group | join(' ') ~ ' end, null)) as dbt_multijoin_null_group') -%}
  {%- do items.append('source.dbt_multijoin_null_group is not null as dbt_multijoin_null_marker') -%}
  {#- The key bucket of the store's key types (markers and NULL-keyed rows have a NULL key). -#}
  {%- set store_types = dbt_multijoin._mj_column_types(dbt_multijoin._mj_store_columns(plan)) -%}
  {%- set key_types = {} -%}
  {%- for k in keys -%}
    {%- do key_types.update({k: store_types[k | lower]}) -%}
  {%- endfor -%}
  {%- do items.append(dbt_multijoin._mj_mor_bucket_sql(keys, plan['recorded_properties']['dbt_multijoin.mor.buckets'], 'source', key_types) ~ ' as dbt_multijoin_bucket') -%}
  {%- for input in spec['inputs'] -%}
    {%- do items.append(('coalesce(source.dbt_multijoin_touched_' ~ loop.index0 ~ ', false)' if loop.index0 in changed else 'false') ~ ' as ' ~ dbt_multijoin._mj_mor_touched(loop.index0)) -%}
  {%- endfor -%}
  {#- A key's delta row takes, per input the run changed and the key's row touched, its columns,
      presence and touched flag; the other inputs' stay as they were, and so does whether the key
      had a base row. -#}
  {%- set updates = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set index = loop.index0 -%}
    {%- if index in changed -%}
      {%- set touched = 'source.' ~ dbt_multijoin._mj_mor_touched(index) -%}
      {%- for name in dbt_multijoin._mj_mor_input_columns(input) -%}
        {%- do updates.append(dbt_multijoin._mj_quote(name) ~ ' = if(' ~ touched ~ ', ' ~ dbt_multijoin._mj_column_ref('source', name) ~ ', ' ~ dbt_multijoin._mj_column_ref('target', name) ~ ')') -%}
      {%- endfor -%}
      {%- do updates.append(dbt_multijoin._mj_mor_touched(index) ~ ' = target.' ~ dbt_multijoin._mj_mor_touched(index) ~ ' or ' ~ touched) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do updates.append('dbt_multijoin_seq = source.dbt_multijoin_seq') -%}
  {%- call statement('main') -%}
    merge into {{ store }} as target
    using (
      select {{ items | join(',\n        ') }}
      from {{ rows_table }} as source
    ) as source
    on target.dbt_multijoin_seq > 0 and source.dbt_multijoin_null_group is null and {{ dbt_multijoin._mj_same_keys('target', 'source', keys) }}
    when matched then update set {{ updates | join(', ') }}
    when not matched then insert *
  {%- endcall -%}
{%- endmacro %}


{#- Compaction. -#}
{% macro _mj_mor_unranged_rows(properties) -%}
  {#- The base rows outside a file's key range (the rows of new keys that compactions since the
      last sorted write put in files of their own), as the store records them: 0 for a store an
      earlier release wrote, whose every write was sorted. -#}
  {{- return(properties.get('dbt_multijoin.mor.unranged_rows', '0') | int) -}}
{%- endmacro %}


{% macro _mj_mor_store_properties(plan) -%}
  {#- Table properties of the store, from the run's plan and the model's config: its key buckets
      (a model whose compaction_buckets changes is built again); on Iceberg, each file read in a task of its own (an open cost of
      1 GiB outweighs the split target), so that a compaction that keeps the key ranges writes
      each file back alone (Iceberg plans its scans itself, with no session conf for it; on Delta
      the compaction sets Spark's conf for the same: _mj_mor_compaction_confs), and its writes
      neither redistributed nor sorted by the bucket, which Iceberg does by default to a
      partitioned table: a task writes one open file per bucket (fanout) in the order its rows
      come, so that a compaction task's file comes back whole and in key order; and the file
      statistics of the columns the store's reads filter on (_mj_mor_statistics_properties). A
      property the model's own `tblproperties` sets is left to it. -#}
  {%- set file_format = config.get('file_format') -%}
  {%- set wanted = {'dbt_multijoin.mor.buckets': dbt_multijoin._mj_mor_buckets() | string} -%}
  {%- if file_format == 'iceberg' -%}
    {%- do wanted.update({'read.split.open-file-cost': '1073741824', 'write.distribution-mode': 'none', 'write.spark.fanout.enabled': 'true'}) -%}
  {%- endif -%}
  {%- do wanted.update(dbt_multijoin._mj_mor_statistics_properties(file_format, plan['keys'], plan['model_columns'])) -%}
  {{- return(dbt_multijoin._mj_unless_configured(wanted)) -}}
{%- endmacro %}


{% macro _mj_mor_statistics_properties(file_format, keys, model_columns) -%}
  {#- Every read of the store but a reader's full scan filters on the key or on the sequence: the
      delta rows (`dbt_multijoin_seq > 0`: the view's join, a refresh's MERGE, the state query, a
      compaction) and a reader's key. The formats skip files by per-file statistics, which they
      keep of a table's first columns only (Delta: 32, `delta.dataSkippingNumIndexedCols`;
      Iceberg: 100, `write.metadata.metrics.max-inferred-column-defaults`), and the sequence comes
      after the model's columns: in a wider model, every read of the delta rows would read every
      base file. So the store names the columns it keeps statistics of: on Delta the sequence and
      the model's columns in order (`model_columns`, keys first; {name, dtype}) of the types Delta
      keeps them of, as many as its default in all; on Iceberg the keys and the sequence besides
      its default ones. A model whose `tblproperties` choose Delta's statistics columns by either
      property keeps its choice. -#}
  {%- set configured = config.get('tblproperties') or {} -%}
  {%- if file_format == 'delta' and 'delta.dataSkippingNumIndexedCols' not in configured -%}
    {%- set named = ['dbt_multijoin_seq'] -%}
    {%- for column in model_columns if dbt_multijoin._mj_delta_keeps_statistics(column['dtype']) -%}
      {%- do named.append(dbt_multijoin._mj_quote(column['name'])) -%}
    {%- endfor -%}
    {{- return({'delta.dataSkippingStatsColumns': named[:32] | join(',')}) -}}
  {%- elif file_format == 'iceberg' -%}
    {%- set metrics = {'write.metadata.metrics.column.dbt_multijoin_seq': 'full'} -%}
    {%- for k in keys -%}
      {%- do metrics.update({'write.metadata.metrics.column.' ~ k: 'truncate(16)'}) -%}
    {%- endfor -%}
    {{- return(metrics) -}}
  {%- endif -%}
  {{- return({}) -}}
{%- endmacro %}


{% macro _mj_delta_keeps_statistics(dtype) -%}
  {#- Whether Delta keeps minimum and maximum statistics of a column of `dtype` (Spark's type name,
      lower case): numbers, dates, timestamps and strings; it refuses the others (booleans,
      binaries, nested types) as statistics columns. -#}
  {%- set base = dtype.split('(')[0] -%}
  {{- return(base in ['tinyint', 'smallint', 'int', 'bigint', 'float', 'double', 'decimal', 'date', 'timestamp', 'timestamp_ntz', 'string', 'char', 'varchar']) -}}
{%- endmacro %}


{% macro _mj_mor_compaction_confs(file_format) -%}
  {#- The confs under which a compaction of a Delta store reads each file in a task of its own:
      Spark packs small files into one task by their size (spark.sql.files.openCostInBytes, the
      cost it counts for opening one, above any task's bytes packs none; a file larger than a
      task still splits, into pieces of one range). Without it a task that read two files would
      write one file covering both ranges and the keys between: the rows are the same, a filter on
      the key skips less. And a task writes one open file per key bucket it meets, rather than
      sorting its rows by the bucket first, which would cost the sort and, once it spills, lose the
      key order a file's rows come in. A value the session sets is left to it. -#}
  {{- return([{'key': 'spark.sql.files.openCostInBytes', 'value': '1073741824', 'unless_set': true},
      {'key': 'spark.sql.maxConcurrentOutputFileWriters', 'value': '1025', 'unless_set': true}] if file_format == 'delta' else []) -}}
{%- endmacro %}


{% macro _mj_mor_write_confs(settings) -%}
  {#- The compaction's confs among a merge-on-read run's write confs (_mj_incremental_confs): the
      run compacts inside its write, whose reads of the store (the delta rows, the base rows'
      keys) then also take a task per file. Set only beside the model's other confs, as the
      MERGE's are (_mj_merge_friendly_confs says why); a value the model's own `spark_conf` gives
      is left to it. -#}
  {%- if config.get('layout', 'table') != 'merge_on_read' or settings['confs'] | length == 0 -%}
    {{- return([]) -}}
  {%- endif -%}
  {%- set own = settings['confs'] | map(attribute='key') | list -%}
  {%- set confs = [] -%}
  {%- for conf in dbt_multijoin._mj_mor_compaction_confs(config.get('file_format')) if conf['key'] not in own -%}
    {%- do confs.append(conf) -%}
  {%- endfor -%}
  {{- return(confs) -}}
{%- endmacro %}


{% macro _mj_mor_compact(name, store, view, keys, state, base_rows, unranged_rows, share, shuffled_rows=none, step=none, buckets=none, model_columns=none) -%}
  {#- Fold the delta rows into base rows, in one statement and one commit (statement
      'dbt_multijoin_compact'): the view's rows, written as base rows (`dbt_multijoin_seq` 0),
      replace every store row up to the highest sequence there now (`state`:
      _mj_mor_store_state; 0, nothing to fold). The store holds no deleted rows afterwards: a
      MERGE that replaced the delta keys' rows wrote position deletes (Iceberg) or deletion
      vectors (Delta) into every base file, the changed keys being spread over all of them, which
      every later read of the view filtered out again, one more set per compaction. A refresh
      whose delta rows land after the highest sequence was read keeps them: they are not in the
      replaced rows.
      Two ways, both giving the view's rows:
      - keeping the key ranges (no sort): each store file is read by a task of its own
        (_mj_mor_store_properties, _mj_mor_compaction_confs) and the view's join broadcasts the
        delta rows, so a base file's rows, their delta columns folded in, come out of one task
        and are written as one file with the same key range: no shuffle and one read of the view.
        They also come out in the file's order, which is the key's (a full build and a sorting
        compaction write each file sorted; this way keeps it so): the join streams the base rows
        in the order the scan reads them, so a sort within the task would only sort them again
        (measured at 4M keys per input: 5-9% of the statement). The rows of keys no base row had
        come out of the tasks that read delta files, into files that cover no one range, which a
        filter on the key reads whatever it asks for;
      - sorted by the key (`order by`), as a full build writes the store: a shuffle by key range,
        whose bounds Spark samples by reading the view once more. Taken once the rows outside a
        file's range (`unranged_rows`, recorded on the store, and this compaction's new keys)
        would pass _mj_mor_resort_rows (of `share`, the model's compaction_share, and the base
        rows), and always when `shuffled_rows` is given: the view's rows with the delta rows
        joined by a shuffle, not broadcast (_mj_mor_view_sql), read instead of the view, whose
        tasks would each hold all of them.
      `step` ({buckets: [the key buckets to fold], rows: their view's rows, _mj_mor_view_sql}):
      a compaction's step, which folds the delta rows of those buckets alone, keeping the key
      ranges: it replaces their partitions' rows up to the highest sequence, from the view's rows
      of those buckets. The other buckets' rows stay as they are, delta rows included.
      `buckets`: the store's count of key buckets, as it records it (none: a store an earlier
      release wrote, with no bucket column). `model_columns`: the view's column names, where the
      caller has described it.
      Returns the rows outside a file's range after it. -#}
  {%- if state['highest_seq'] == 0 -%}
    {{- return(unranged_rows) -}}
  {%- endif -%}
  {%- set new_key_rows = state['new_key_rows'] -%}
  {%- if step is not none -%}
    {%- set new_key_rows = 0 -%}
    {%- for bucket in step['buckets'] -%}
      {%- set new_key_rows = new_key_rows + state['bucket_new_key_rows'][bucket] -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set unranged = unranged_rows + new_key_rows -%}
  {%- set resort_rows = dbt_multijoin._mj_mor_resort_rows(share, base_rows) -%}
  {%- set keep_ranges = shuffled_rows is none and (step is not none or unranged <= resort_rows) -%}
  {%- set model_columns = model_columns or adapter.get_columns_in_relation(view) | map(attribute='name') | list -%}
  {%- set items = [] -%}
  {%- for column in adapter.get_columns_in_relation(store) -%}
    {%- if column.name in model_columns -%}
      {%- do items.append(dbt_multijoin._mj_quote(column.name)) -%}
    {%- else -%}
      {%- do items.append(dbt_multijoin._mj_mor_base_row_control(column.name, column.data_type, keys, buckets, none) ~ ' as ' ~ dbt_multijoin._mj_quote(column.name)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if step is not none -%}
    {%- do log("dbt_multijoin: " ~ name ~ ": the compaction folds the delta rows of key bucket(s) " ~ step['buckets'] | join(', ') ~ ", keeping each base file's key range; " ~ new_key_rows ~ " new key(s) go to files of their own (" ~ unranged ~ " base row(s) outside a file's range)", info=True) -%}
  {%- elif keep_ranges -%}
    {%- do log("dbt_multijoin: " ~ name ~ ": the compaction keeps each base file's key range; " ~ new_key_rows ~ " new key(s) go to files of their own (" ~ unranged ~ " base row(s) outside a file's range, sorted again past " ~ resort_rows | int ~ ")", info=True) -%}
  {%- elif shuffled_rows is not none -%}
    {%- do log("dbt_multijoin: " ~ name ~ ": the compaction joins the " ~ state['delta_rows'] ~ " delta rows to the base by a shuffle, not a broadcast (more than twice compaction_max_delta_rows), and sorts the store by the key", info=True) -%}
  {%- else -%}
    {%- do log("dbt_multijoin: " ~ name ~ ": the compaction sorts the store by the key: " ~ unranged ~ " base row(s) would be outside a file's key range, past " ~ resort_rows | int ~ " (compaction_share " ~ share ~ ", at least a tenth, of " ~ base_rows ~ " base rows)", info=True) -%}
  {%- endif -%}
  {%- call statement('dbt_multijoin_compact') -%}
    insert into {{ store }} replace where dbt_multijoin_seq <= {{ state['highest_seq'] }}{{ '' if step is none else ' and ' ~ dbt_multijoin._mj_mor_bucket_filter(step['buckets']) }}
    select {{ items | join(', ') }} from {{ view if shuffled_rows is none and step is none else '(\n' ~ (shuffled_rows or step['rows']) ~ '\n) as merged' }}{{ '' if keep_ranges else ' order by ' ~ ('dbt_multijoin_bucket, ' if buckets is not none else '') ~ dbt_multijoin._mj_column_list(keys) }}
  {%- endcall -%}
  {{- return(unranged if keep_ranges else 0) -}}
{%- endmacro %}


{% macro _mj_mor_gather_delta(name, store, keys, state) -%}
  {#- Where the delta rows (`state`: _mj_mor_store_state) are spread over more than
      _mj_mor_max_delta_files data files, rewrite them into a file per key bucket, sorted by the
      key, in one statement (one commit): the same rows replace every delta row up to the highest
      sequence, and the base files stay as they are. No reader sees a row change, and a run
      stopped before the commit leaves the files as they were. Delta files hold delta rows alone
      (a refresh's MERGE writes them; a build and a compaction write base rows), so the
      replacement drops whole files, which the sequence's file statistics tell apart, and with
      them the deletes written against them. The shuffle by bucket puts each bucket's rows in
      one task, whatever Spark's file packing of the store's reads. -#}
  {%- set limit = dbt_multijoin._mj_mor_max_delta_files() -%}
  {%- if state['delta_files'] <= limit -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- do log("dbt_multijoin: " ~ name ~ ": the " ~ state['delta_rows'] ~ " delta rows are in " ~ state['delta_files'] ~ " files, past compaction_max_delta_files " ~ limit ~ ": rewritten into a file per key bucket", info=True) -%}
  {%- set delta = 'dbt_multijoin_seq > 0 and dbt_multijoin_seq <= ' ~ state['highest_seq'] -%}
  {%- call statement('dbt_multijoin_gather_delta') -%}
    insert into {{ store }} replace where {{ delta }}
    select * from {{ store }} where {{ delta }}
    distribute by dbt_multijoin_bucket sort by dbt_multijoin_bucket, {{ dbt_multijoin._mj_column_list(keys) }}
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_mor_compaction_asked() -%}
  {#- The run var dbt_multijoin_compact: 'whole' (true: fold every delta row, whatever their
      share), 'step' (fold the key buckets a compaction due would, _mj_mor_step, due or not: a step
      at a time of the run's choosing), or '' (false, unset: compact when due). -#}
  {%- set asked = var('dbt_multijoin_compact', false) -%}
  {%- if asked in [true, 'true', 'True'] -%}
    {{- return('whole') -}}
  {%- elif asked == 'step' -%}
    {{- return('step') -}}
  {%- elif asked not in [false, 'false', 'False', none, ''] -%}
    {%- do dbt_multijoin._mj_fail("the var dbt_multijoin_compact must be true, false or 'step', got '" ~ asked ~ "'") -%}
  {%- endif -%}
  {{- return('') -}}
{%- endmacro %}


{% macro _mj_mor_step(state, limit) -%}
  {#- The key buckets a compaction due folds (_mj_mor_settle): those holding the most delta rows,
      until at most three quarters of `limit` (the delta rows that make a compaction due) are left
      in the others; none when that is every bucket (a whole compaction). A bucket with no delta
      row is never rewritten. With the changed keys spread over the key space, a step folds about a
      quarter of the buckets, so a run that finds a compaction due pays about a quarter of the
      store's rewrite, and the next step is due after a quarter of the bound's changed keys: the
      same rewriting in all, in smaller steps (docs/dbt_package.md gives the measurements). -#}
  {%- set counts = state['bucket_delta_rows'] -%}
  {%- set by_rows = [] -%}
  {%- for rows in counts -%}
    {%- do by_rows.append((rows, loop.index0)) -%}
  {%- endfor -%}
  {%- set left = namespace(rows=state['delta_rows'], buckets=[]) -%}
  {%- for rows, bucket in by_rows | sort(reverse=true) -%}
    {%- if left.rows > limit * 3 // 4 and rows > 0 -%}
      {%- set left.rows = left.rows - rows -%}
      {%- do left.buckets.append(bucket) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(none if left.buckets | length == counts | length else left.buckets | sort) -}}
{%- endmacro %}


{% macro _mj_mor_settle(plan) -%}
  {#- After a refresh's write (or none): compact when the delta rows pass the model's
      compaction_share of the base rows or its compaction_max_delta_rows, then say which parts the
      store holds. A compaction due folds some key buckets (_mj_mor_step), which costs a run a part
      of the store's rewrite, and so does one the run var dbt_multijoin_compact='step' asks for; the
      whole store at once where dbt_multijoin_compact=true asks for it (whatever the delta rows),
      where every bucket is due, and where the compaction sorts the store again or joins the delta
      rows by a shuffle (_mj_mor_compact). One query of the store when it does not compact, and
      then a rewrite of the delta rows alone where they are spread over too many files
      (_mj_mor_gather_delta). Returns {base_rows, unranged_rows} to record, or none when it did
      not compact. -#}
  {%- set store = plan['store'] -%}
  {%- set base_rows = (plan['recorded_properties'].get('dbt_multijoin.mor.base_rows', '0') | int) -%}
  {%- set inputs = plan['spec']['inputs'] | length -%}
  {%- set buckets = plan['recorded_properties'].get('dbt_multijoin.mor.buckets') -%}
  {%- set state = dbt_multijoin._mj_mor_store_state(store, inputs=inputs, buckets=(buckets or 0) | int) -%}
  {%- set share = dbt_multijoin._mj_mor_compaction_share() -%}
  {%- set max_rows = dbt_multijoin._mj_mor_compaction_max_delta_rows() -%}
  {%- set asked = dbt_multijoin._mj_mor_compaction_asked() -%}
  {#- The delta rows compaction_share allows beside the base rows. -#}
  {%- set share_rows = share * [base_rows, 1] | max -%}
  {%- set past_share = state['delta_rows'] > share_rows -%}
  {%- set past_rows = state['delta_rows'] > max_rows -%}
  {%- if not (asked or past_share or past_rows) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ state['delta_rows'] ~ " delta rows beside " ~ base_rows ~ " base rows (compaction past " ~ share ~ " of them or past " ~ max_rows ~ " rows)", info=True) -%}
    {%- do dbt_multijoin._mj_mor_gather_delta(model.name, store, plan['keys'], state) -%}
    {%- do dbt_multijoin._mj_mor_narrow_view(plan, state) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set limit = [share_rows, max_rows] | min -%}
  {%- set step_buckets = none -%}
  {%- set unranged_rows = dbt_multijoin._mj_mor_unranged_rows(plan['recorded_properties']) -%}
  {%- set shuffled = not dbt_multijoin._mj_mor_broadcasts_delta(state['delta_rows'], max_rows) -%}
  {%- if asked != 'whole' and not shuffled and unranged_rows + state['new_key_rows'] <= dbt_multijoin._mj_mor_resort_rows(share, base_rows) -%}
    {#- A step asked for before one is due folds as one due now would: three quarters of the delta
        rows are left. -#}
    {%- set step_buckets = dbt_multijoin._mj_mor_step(state, limit if past_share or past_rows else [limit, state['delta_rows']] | min) -%}
    {%- if step_buckets == [] -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": no compaction step: " ~ state['delta_rows'] ~ " delta rows beside " ~ base_rows ~ " base rows", info=True) -%}
      {%- do dbt_multijoin._mj_mor_gather_delta(model.name, store, plan['keys'], state) -%}
      {%- do dbt_multijoin._mj_mor_narrow_view(plan, state) -%}
      {{- return(none) -}}
    {%- endif -%}
  {%- endif -%}
  {%- set why = 'asked: dbt_multijoin_compact' ~ ('=step' if asked == 'step' else '') if asked else ('past compaction_share ' ~ share if past_share else 'past compaction_max_delta_rows ' ~ max_rows) -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": compacting " ~ state['delta_rows'] ~ " delta rows into " ~ base_rows ~ " base rows (" ~ why ~ ")", info=True) -%}
  {#- Both read what the store holds (`state`), as the view does. -#}
  {%- set shuffled_rows = dbt_multijoin._mj_mor_view_sql(plan['spec'], store, broadcast=false, null_keyed_rows=state['null_keyed_delta_rows']) if shuffled else none -%}
  {%- set step = none -%}
  {%- if step_buckets is not none -%}
    {%- set step = {'buckets': step_buckets, 'rows': dbt_multijoin._mj_mor_view_sql(plan['spec'], store, chosen=state['touched_inputs'], buckets=step_buckets,
        null_keyed_rows=state['null_keyed_delta_rows'])} -%}
  {%- endif -%}
  {%- set unranged = dbt_multijoin._mj_mor_compact(model.name, store, plan['relation'], plan['keys'], state, base_rows,
      unranged_rows, share, shuffled_rows, step, buckets) -%}
  {%- set state = dbt_multijoin._mj_mor_store_state(store, whole=true, inputs=inputs) -%}
  {%- do dbt_multijoin._mj_mor_narrow_view(plan, state) -%}
  {{- return({'base_rows': state['base_rows'], 'unranged_rows': unranged}) -}}
{%- endmacro %}


{% macro _mj_mor_leave(plan, relation, view, sql) -%}
  {#- The model left the merge-on-read layout: build its table beside the view (statement 'main'),
      then put it in the view's place and drop the store. Between the drop and the rename no
      relation has the model's name (two metastore calls); a run that dies there leaves the store,
      and the next run builds the table again. -#}
  {%- set staging = dbt_multijoin._mj_staging_relation(relation) -%}
  {%- do dbt_multijoin._mj_drop_own_table_if_present(staging) -%}
  {%- do dbt_multijoin._mj_build_full(staging, none, sql) -%}
  {#- In the table layout the plan's store is the table itself: the store left is the view's. -#}
  {%- set store = dbt_multijoin._mj_mor_store(relation) -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": the view " ~ view ~ " becomes a table (layout table); its store " ~ store ~ " is dropped", info=True) -%}
  {%- do adapter.drop_relation(view) -%}
  {%- do adapter.rename_relation(staging, relation) -%}
  {%- do dbt_multijoin._mj_drop_own_table_if_present(store) -%}
  {%- do adapter.drop_relation(dbt_multijoin._mj_mor_parts(store)) -%}
{%- endmacro %}
