{#- Private: the changed_keys strategy as the materialization runs it, after the plan
    (plan.sql): three calls, one per step of the materialization.
    1. _mj_changed_keys_read, before any conf of the model is set: what a full build records, or
       the changes read (changes.sql), so that bad input (two rows of a key under one_row_per_key,
       a stale mark) fails the run with the session as it was and nothing written;
    2. _mj_changed_keys_write, under the model's confs: the whole table, or the path's MERGE
       (recompute.sql, partial_update.sql), in the statement 'main'; returns the join operator;
    3. _mj_changed_keys_properties: what the run records on the table with the operator, in the
       same commit: where each input was read up to.
    Then the materialization drops the run's scratch objects (_mj_drop_changed_keys_scratch). -#}

{% macro _mj_changed_keys_read(plan, relation) -%}
  {#- {read: whether the run writes, changed_key_count, states: {input index: {mark, version}} to
      record, or none}. A --empty run (dbt build --empty) reads no input: its full build writes
      an empty table and records no mark, so that the next run builds the whole table; on an
      existing table it leaves table and marks as they are. -#}
  {%- set empty = dbt_multijoin._mj_empty_run() -%}
  {%- if plan['path'] == 'full' -%}
    {%- if empty -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": --empty: no mark recorded, so the next run builds the whole table", info=True) -%}
      {{- return({'read': true, 'changed_key_count': none, 'states': none, 'base_rows': none}) -}}
    {%- endif -%}
    {{- return({'read': true, 'changed_key_count': none, 'states': dbt_multijoin._mj_full_states(plan), 'base_rows': none}) -}}
  {%- endif -%}
  {%- if empty -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": --empty: no input is read, the table stays as it is", info=True) -%}
    {{- return({'read': false, 'changed_key_count': 0, 'states': dbt_multijoin._mj_next_states(plan, {})}) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_read_changes(plan, relation)) -}}
{%- endmacro %}


{% macro _mj_changed_keys_write(plan, changes, relation, existing_relation, sql, columns, settings, saved) -%}
  {#- The run's write, in the statement 'main' (`sql`: the model's compiled SQL, the full build;
      `columns`: its columns). Returns the join operator to record. -#}
  {%- if plan['path'] == 'full' -%}
    {%- set operator = dbt_multijoin._mj_check_plan(sql, settings, saved) -%}
    {%- if plan['layout'] == 'merge_on_read' -%}
      {%- do changes.update({'base_rows': dbt_multijoin._mj_mor_build(plan, relation, existing_relation, sql)}) -%}
    {%- elif existing_relation is not none and existing_relation.type == 'view' -%}
      {%- do dbt_multijoin._mj_mor_leave(plan, relation, existing_relation, sql) -%}
    {%- else -%}
      {%- do dbt_multijoin._mj_build_full(relation, existing_relation, sql) -%}
    {%- endif -%}
    {{- return(operator) -}}
  {%- endif -%}
  {#- A partial update joins nothing: the table keeps the operator its last full build recorded. -#}
  {%- set operator = plan['recorded_properties'].get('dbt_multijoin.operator', 'none') -%}
  {%- if not changes['read'] -%}
    {%- call statement('main') -%}
      select 0 as dbt_multijoin_rows_written
    {%- endcall -%}
    {%- if plan['layout'] == 'merge_on_read' and dbt_multijoin._mj_mor_compaction_asked() -%}
      {#- Asked to compact: it does, though nothing changed (then the run records its state). -#}
      {%- do changes.update({'read': true, 'seq': plan['recorded_properties'].get('dbt_multijoin.mor.seq', '0') | int,
          'compacted': dbt_multijoin._mj_mor_settle(plan)}) -%}
    {%- endif -%}
    {{- return(operator) -}}
  {%- endif -%}
  {%- if plan['schema_change'] -%}
    {#- Recorded before the columns change, so that a run that stops between here and the marks
        makes the next one read those inputs in full again. -#}
    {%- do dbt_multijoin._mj_record_refill(plan, plan['store']) -%}
    {%- do dbt_multijoin._mj_apply_schema_change(plan['store'], plan['schema_change']) -%}
  {%- endif -%}
  {%- if plan['layout'] == 'merge_on_read' -%}
    {#- Before the store's rows change, the view reads every part the run writes: the columns of
        every input it changes from delta rows, and NULL-keyed rows if it writes them; and the
        model's columns, after a change of the store's (merge_on_read.sql). -#}
    {%- do dbt_multijoin._mj_mor_widen_view(plan, dbt_multijoin._mj_changed_indexes(dbt_multijoin._mj_read_inputs(plan)),
        (changes['null_rows_inputs'] or []) | length > 0) -%}
  {%- endif -%}
  {%- if plan['layout'] == 'merge_on_read' -%}
    {%- set seq = (plan['recorded_properties'].get('dbt_multijoin.mor.seq', '0') | int) + 1 -%}
    {%- do dbt_multijoin._mj_mor_write_delta(plan, dbt_multijoin._mj_read_inputs(plan), changes['changed_key_count'], changes['null_rows_inputs'], seq) -%}
    {%- do changes.update({'seq': seq, 'compacted': dbt_multijoin._mj_mor_settle(plan)}) -%}
    {{- return(operator) -}}
  {%- elif plan['path'] == 'partial_update' -%}
    {%- do dbt_multijoin._mj_merge_partial_update(plan, relation, dbt_multijoin._mj_read_inputs(plan), changes['changed_key_count'], changes['null_rows_inputs']) -%}
    {{- return(operator) -}}
  {%- endif -%}
  {%- set rows = dbt_multijoin._mj_render_model_for(plan) -%}
  {%- set operator = dbt_multijoin._mj_rendered_query_operator(rows, settings, saved) -%}
  {%- do dbt_multijoin._mj_merge_recomputed(plan, relation, rows, columns, changes['changed_key_count']) -%}
  {{- return(operator) -}}
{%- endmacro %}


{% macro _mj_changed_keys_properties(plan, changes) -%}
  {#- The table properties the run records with its operator, in one commit: each input's mark
      and version (none on a --empty full build, none when nothing was read: the table keeps what
      it has); after a full build also the properties that keep later MERGEs small. A run that
      fails before it records leaves the previous marks, so the next run reads the same changes
      again (applying them again is idempotent). -#}
  {%- if changes['states'] is none -%}
    {{- return({}) -}}
  {%- endif -%}
  {%- set properties = dbt_multijoin._mj_state_properties(plan, changes['states']) -%}
  {%- if plan['path'] == 'full' -%}
    {%- do properties.update(dbt_multijoin._mj_merge_friendly_properties()) -%}
  {%- endif -%}
  {#- The merge-on-read store: its last delta sequence (a full build starts again from 0), its own
      table properties, and its base rows and those outside a file's key range, where the run
      counted them (a full build, sorted; a compaction). -#}
  {%- if plan['layout'] == 'merge_on_read' -%}
    {%- do properties.update({'dbt_multijoin.mor.seq': changes.get('seq', 0) | string, 'dbt_multijoin.mor.keys': tojson(plan['keys']),
        'dbt_multijoin.mor.delta': dbt_multijoin._mj_mor_delta_kind()}) -%}
    {%- do properties.update(dbt_multijoin._mj_mor_store_properties(plan)) -%}
    {%- if changes.get('base_rows') is not none -%}
      {%- do properties.update({'dbt_multijoin.mor.base_rows': changes['base_rows'] | string, 'dbt_multijoin.mor.unranged_rows': '0'}) -%}
    {%- elif changes.get('compacted') -%}
      {%- do properties.update({'dbt_multijoin.mor.base_rows': changes['compacted']['base_rows'] | string,
          'dbt_multijoin.mor.unranged_rows': changes['compacted']['unranged_rows'] | string}) -%}
    {%- endif -%}
  {%- endif -%}
  {{- return(properties) -}}
{%- endmacro %}


{% macro _mj_merge_friendly_properties() -%}
  {#- Table properties that make a changed_keys MERGE write only what changed. The changed keys are
      scattered over every file of the table (its rows are hash-partitioned on the key), so a
      copy-on-write MERGE rewrites the whole table to replace 1% of its keys: deletion vectors
      (Delta) and merge-on-read (Iceberg) mark the replaced rows instead. A property the model's
      own `tblproperties` sets is left to it. -#}
  {{- return(dbt_multijoin._mj_unless_configured({
      'delta': {'delta.enableDeletionVectors': 'true'},
      'iceberg': {'write.delete.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read', 'write.merge.mode': 'merge-on-read'},
  }.get(config.get('file_format'), {}))) -}}
{%- endmacro %}


{% macro _mj_unless_configured(wanted) -%}
  {#- The table properties of `wanted` that the model's own `tblproperties` leaves unset. -#}
  {%- set configured = config.get('tblproperties') or {} -%}
  {%- set properties = {} -%}
  {%- for key, value in wanted.items() if key not in configured -%}
    {%- do properties.update({key: value}) -%}
  {%- endfor -%}
  {{- return(properties) -}}
{%- endmacro %}


{% macro _mj_merge_friendly_confs(settings) -%}
  {#- Confs under which a changed_keys MERGE on Delta reads its source as it is. Delta first copies
      a MERGE's source into the executors' storage (materializeSource 'auto') unless the source
      reads Delta tables only: a source that could change between the MERGE's two passes (finding
      the touched files, then writing them) would give wrong rows. Ours cannot: every path's MERGE
      (recompute.sql, partial_update.sql, merge_on_read.sql) reads the run's own scratch tables,
      which nothing writes while it runs, through no nondeterministic expression. The copy would
      be one more job and pass over the source, and its room in memory or on disk.
      Set only beside the model's other confs (a multiway model's, whose write sets
      failOnFallback): a model that sets none may share its session with other threads, whose
      MERGEs would then run under it too (_mj_require_own_session), and leaves Delta's default.
      A value the model's own `spark_conf` or the session gives is left to it. -#}
  {%- set key = 'spark.databricks.delta.merge.materializeSource' -%}
  {%- if config.get('file_format') != 'delta' or settings['confs'] | length == 0
      or key in settings['confs'] | map(attribute='key') | list -%}
    {{- return([]) -}}
  {%- endif -%}
  {{- return([{'key': key, 'value': 'none', 'unless_set': true}]) -}}
{%- endmacro %}


{#- Inputs to read in full once more: recorded before a change of columns, cleared with the marks. -#}
{% macro _mj_refill_property(name) -%}
  {{- return('dbt_multijoin.refill.' ~ (name | lower)) -}}
{%- endmacro %}


{% macro _mj_record_refill(plan, relation) -%}
  {%- set items = [] -%}
  {%- for input in plan['inputs'] if input['whole'] -%}
    {%- do items.append(dbt_multijoin._mj_string_literal(dbt_multijoin._mj_refill_property(input['name'])) ~ ' = ' ~ dbt_multijoin._mj_string_literal(input['whole'])) -%}
  {%- endfor -%}
  {%- if items -%}
    {%- do dbt_multijoin._mj_exec('alter table ' ~ relation ~ ' set tblproperties (' ~ items | join(', ') ~ ')') -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_clear_refill(plan, relation) -%}
  {#- After the marks are recorded: the inputs read in full no longer need it. -#}
  {%- set keys = [] -%}
  {%- for input in plan['inputs'] if input['whole'] -%}
    {%- do keys.append(dbt_multijoin._mj_string_literal(dbt_multijoin._mj_refill_property(input['name']))) -%}
  {%- endfor -%}
  {%- if keys -%}
    {%- do dbt_multijoin._mj_exec('alter table ' ~ relation ~ ' unset tblproperties if exists (' ~ keys | join(', ') ~ ')') -%}
  {%- endif -%}
{%- endmacro %}
