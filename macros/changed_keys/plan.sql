{#- Private: the changed_keys strategy's plan, made once per run by the materialization before
    anything is read or written: a value saying what the run will do and why.

    plan = {
      path: 'full' | 'recompute' | 'partial_update', why: the reason, in words (logged),
      spec: the multi_join call resolved (_mj_spec), with the presence columns when the table
            carries them (partial_update.sql),
      keys: the model's key columns, bare: the model is the multi_join(...) call and nothing else,
      inputs: [{index, name, relation, source (the change source and where it stands now,
                sources.sql), recorded ({mark, version} this table recorded for it, none on a
                full build), unchanged (its table has not moved since: nothing to read),
                reads (what it reads, in words), whole (false, or why it is read in full once:
                it brings a column the table gains), source_read (whether its change source is
                read: it moved, and a whole read does not show all it would)}],
      schema_change: what on_schema_change adds to and drops from the table (schema_change.sql),
    }

    How the materialization learns the call: it renders the model's code once more with a request
    in `model` (_mj_model_call); multi_join answers a request by recording its own arguments
    instead of rendering SQL (multi_join.sql). Nothing parses the model's SQL or raw code, and
    rendering itself never reads a mark or a table's state: `dbt compile`, `dbt ls` and
    `dbt docs generate` run nothing but the inputs' DESCRIBEs. -#}

{% macro _mj_model_call() -%}
  {#- {call: the arguments of the model's one multi_join(...) call, bare: whether the model is that
      call alone (config() and comments aside)}: the model's code rendered again, with a request
      that multi_join answers with its arguments and an empty string. -#}
  {%- set request = {'calls': [], 'plan': none} -%}
  {%- do model.update({'dbt_multijoin_request': request}) -%}
  {%- set around = render(model['raw_code']) -%}
  {%- do model.pop('dbt_multijoin_request') -%}
  {%- if request['calls'] | length != 1 -%}
    {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' needs the model's SQL to hold exactly one dbt_multijoin.multi_join(..., changed_since=...) call (found " ~ request['calls'] | length ~ ")") -%}
  {%- endif -%}
  {{- return({'call': request['calls'][0], 'bare': (around | trim) == ''}) -}}
{%- endmacro %}


{% macro _mj_render_model_for(plan) -%}
  {#- The model's SQL for `plan`'s key-recompute run: its code rendered again, with multi_join
      answering the plan's request by the changed keys' rows (recompute.sql), so that SQL the
      model wraps around the call applies to those rows as it does on a full build. -#}
  {%- set request = {'calls': [], 'plan': plan} -%}
  {%- do model.update({'dbt_multijoin_request': request}) -%}
  {%- set sql = render(model['raw_code']) -%}
  {%- do model.pop('dbt_multijoin_request') -%}
  {{- return(sql) -}}
{%- endmacro %}


{% macro _mj_answer_request(request, call) -%}
  {#- multi_join's answer to the materialization's request: the changed keys' rows of the request's
      plan, or (no plan yet) its own arguments recorded and no SQL. -#}
  {%- if request['plan'] is not none -%}
    {{- return(dbt_multijoin._mj_recompute_rows_sql(request['plan'])) -}}
  {%- endif -%}
  {%- do request['calls'].append(call) -%}
  {{- return('') -}}
{%- endmacro %}


{% macro _mj_changed_keys_spec(spec, changed_since) -%}
  {#- A changed_keys model's spec: each input's `changed_since` (a column name, or 'change_feed')
      checked and recorded on it, and the presence columns added when the model declares
      one_row_per_key and qualifies (partial_update.sql). The same on a compile and in a run's
      plan, and it runs no statement: the columns and feeds are checked by the plan. -#}
  {%- if changed_since is none -%}
    {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' needs multi_join(..., changed_since='<column>') (or 'change_feed', or a mapping {input name: either}): the column each input's rows grow in when they are written, e.g. updated_at") -%}
  {%- elif changed_since is not string and changed_since is not mapping -%}
    {%- do dbt_multijoin._mj_fail("changed_since must be a column name, 'change_feed', or a mapping {input name: either}, got " ~ changed_since) -%}
  {%- endif -%}
  {%- if spec['join_type'] != 'full' -%}
    {%- do dbt_multijoin._mj_fail("incremental_strategy 'changed_keys' supports join_type 'full' only, got '" ~ spec['join_type'] ~ "'") -%}
  {%- endif -%}
  {%- for input in spec['inputs'] -%}
    {%- set wanted = changed_since if changed_since is string else dbt_multijoin._mj_lookup(changed_since, input['name']) -%}
    {%- if wanted is none or wanted is not string or wanted == '' -%}
      {%- do dbt_multijoin._mj_fail("changed_since names nothing for input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ "): every input of a changed_keys model needs a column or 'change_feed'") -%}
    {%- endif -%}
    {%- do input.update({'changed_since': wanted}) -%}
  {%- endfor -%}
  {%- set refused = dbt_multijoin._mj_partial_update_eligibility(spec) -%}
  {%- set resolved = spec if refused is not none else dbt_multijoin._mj_with_presence_columns(spec) -%}
  {%- do resolved.update({'partial_update_refused': refused}) -%}
  {{- return(resolved) -}}
{%- endmacro %}


{% macro _mj_changed_keys_plan(relation, existing_relation, incremental, model_columns) -%}
  {#- The run's plan (this file's header), from the model's call, its table's recorded state and
      where each input stands now. `incremental`: dbt's answer (the table exists, no
      --full-refresh); `model_columns`: the full build's columns ({name, dtype}, the model's
      query analysed), for on_schema_change and the merge-on-read store's statistics. -#}
  {%- set asked = dbt_multijoin._mj_model_call() -%}
  {%- set call = asked['call'] -%}
  {%- set spec = dbt_multijoin._mj_changed_keys_spec(
      dbt_multijoin._mj_spec(call['relations'], call['key'], call['join_type'], call['strategy'], call['columns'], call['rename'], call['names']),
      call['changed_since']) -%}
  {#- Where the table's rows and state live: the model's table, or (layout merge_on_read) the store
      under the model's view. -#}
  {%- set layout = dbt_multijoin._mj_layout() -%}
  {%- set store = dbt_multijoin._mj_mor_store(relation) if layout == 'merge_on_read' else relation -%}
  {%- set store_now = existing_relation if layout != 'merge_on_read' else load_cached_relation(store) -%}
  {%- set laid_out = existing_relation is none or (existing_relation.type == 'view') == (layout == 'merge_on_read') -%}
  {%- set incremental = incremental or (layout == 'merge_on_read' and existing_relation is not none and store_now is not none and not should_full_refresh()) -%}
  {%- set incremental = incremental and laid_out and store_now is not none -%}
  {%- set properties = dbt_multijoin._mj_table_properties(store_now) if incremental else {} -%}
  {%- set recorded = dbt_multijoin._mj_recorded_state(properties) -%}
  {%- set inputs = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- do inputs.append({'index': loop.index0, 'name': input['name'], 'relation': input['relation'] | string,
        'source': dbt_multijoin._mj_change_source(input, spec),
        'recorded': recorded.get(input['name'] | lower), 'source_read': false, 'unchanged': false, 'reads': none, 'whole': false}) -%}
  {%- endfor -%}
  {%- set plan = {'spec': spec, 'keys': spec['keys'], 'bare': asked['bare'], 'inputs': inputs,
      'schema_change': none, 'path': none, 'why': none, 'layout': layout, 'relation': relation,
      'store': store, 'recorded_properties': properties, 'store_columns': none, 'model_columns': model_columns} -%}
  {%- if layout == 'merge_on_read' -%}
    {%- do dbt_multijoin._mj_mor_check(plan) -%}
  {%- endif -%}

  {%- set full_because = dbt_multijoin._mj_full_build_reason(plan, existing_relation, store_now, incremental) -%}
  {%- if full_because is not none -%}
    {%- do plan.update({'path': 'full', 'why': full_because}) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": building the whole table: " ~ full_because, info=True) -%}
    {{- return(plan) -}}
  {%- endif -%}

  {%- set schema_change = dbt_multijoin._mj_changed_keys_schema_change(plan, existing_relation if layout != 'merge_on_read' else store_now, model_columns) -%}
  {%- if schema_change and schema_change['rebuild'] -%}
    {%- do plan.update({'path': 'full', 'why': schema_change['rebuild']}) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": building the whole table: " ~ schema_change['rebuild'], info=True) -%}
    {{- return(plan) -}}
  {%- endif -%}
  {%- do plan.update({'schema_change': schema_change}) -%}
  {%- if spec['partial_update_refused'] is none and plan['bare'] -%}
    {%- do plan.update({'path': 'partial_update', 'why': 'every input holds at most one row per key (one_row_per_key=true)'}) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": partial update: reading the changed rows of the inputs that changed, no join", info=True) -%}
  {%- else -%}
    {%- set why = spec['partial_update_refused'] or 'the model is more than the multi_join(...) call (its rows would be the SQL around it, which a partial update cannot apply)' -%}
    {%- do plan.update({'path': 'recompute', 'why': 'no partial update, as ' ~ why}) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": recomputing the changed keys with the multi-join: no partial update, as " ~ why, info=True) -%}
  {%- endif -%}
  {%- for input in inputs -%}
    {%- if input['recorded']['refill'] and not input['whole'] -%}
      {%- do input.update({'whole': 'a run that was to read it in full stopped before it recorded its marks (' ~ input['recorded']['refill'] ~ ')'}) -%}
    {%- endif -%}
    {%- set read = dbt_multijoin._mj_source_do(input['source'], 'plan_read', input['recorded']) -%}
    {#- Read whole, an input's source is read too unless the whole read shows all it would. -#}
    {%- set covered = input['whole'] and dbt_multijoin._mj_source_do(input['source'], 'whole_read_covers') -%}
    {%- do input.update({'source_read': not read['unchanged'] and not covered, 'unchanged': read['unchanged'] and not input['whole'], 'reads': read['reads']}) -%}
  {%- endfor -%}
  {{- return(plan) -}}
{%- endmacro %}


{% macro _mj_full_build_reason(plan, existing_relation, store_now, incremental) -%}
  {#- Why the run builds the whole table, or none when it can apply the changes. -#}
  {%- if not incremental -%}
    {%- if existing_relation is none -%}
      {{- return('the table does not exist yet') -}}
    {%- elif plan['layout'] == 'merge_on_read' and existing_relation.type != 'view' -%}
      {{- return('the layout changed to merge_on_read: ' ~ existing_relation ~ ' becomes a view over ' ~ plan['store']) -}}
    {%- elif plan['layout'] != 'merge_on_read' and existing_relation.type == 'view' -%}
      {{- return('the relation is a view (a merge-on-read layout, or a view of another model): it becomes a table') -}}
    {%- elif store_now is none -%}
      {{- return('its store ' ~ plan['store'] ~ ' does not exist') -}}
    {%- endif -%}
    {{- return('--full-refresh') -}}
  {%- endif -%}
  {%- set missing = [] -%}
  {%- for input in plan['inputs'] if input['recorded'] is none -%}
    {%- do missing.append(dbt_multijoin._mj_mark_property(input['name'])) -%}
  {%- endfor -%}
  {%- if plan['layout'] == 'merge_on_read' and plan['recorded_properties'].get('dbt_multijoin.mor.delta') != dbt_multijoin._mj_mor_delta_kind() -%}
    {{- return('its store ' ~ plan['store'] ~ ' holds delta rows as an earlier release wrote them (a row per key and run)') -}}
  {%- endif -%}
  {%- if plan['layout'] == 'merge_on_read' -%}
    {%- set recorded_buckets = plan['recorded_properties'].get('dbt_multijoin.mor.buckets') -%}
    {%- if recorded_buckets is none -%}
      {{- return('its store ' ~ plan['store'] ~ ' is not partitioned by key bucket (an earlier release wrote it)') -}}
    {%- elif recorded_buckets | int != dbt_multijoin._mj_mor_buckets() -%}
      {{- return('compaction_buckets changed from ' ~ recorded_buckets ~ ' to ' ~ dbt_multijoin._mj_mor_buckets() ~ ': the store is partitioned again') -}}
    {%- endif -%}
  {%- endif -%}
  {%- if plan['spec']['partial_update_refused'] is none -%}
    {#- A table built before the model declared one_row_per_key has no presence columns. -#}
    {%- set existing = dbt_multijoin._mj_store_columns(plan) | map(attribute='name') | map('lower') | list -%}
    {%- for input in plan['spec']['inputs'] if input['presence_column'] not in existing -%}
      {%- do missing.append('column ' ~ input['presence_column']) -%}
    {%- endfor -%}
  {%- endif -%}
  {{- return(none if not missing else 'no recorded mark for ' ~ missing | join(', ')) -}}
{%- endmacro %}


{% macro _mj_store_columns(plan) -%}
  {#- The columns of the table a refresh changes (plan['store']: a merge-on-read model's store),
      described once per run: the checks of its presence columns and of on_schema_change both
      read them. -#}
  {%- if plan['store_columns'] is none -%}
    {%- do plan.update({'store_columns': adapter.get_columns_in_relation(plan['store'])}) -%}
  {%- endif -%}
  {{- return(plan['store_columns']) -}}
{%- endmacro %}


{#- The state a run records on the table, and reads back the next time. -#}
{% macro _mj_mark_property(name) -%}
  {#- Where an input's mark is recorded: the highest changed_since value read (a column), or the
      Delta version or Iceberg snapshot read up to (a change feed). -#}
  {{- return('dbt_multijoin.changed_since.' ~ (name | lower)) -}}
{%- endmacro %}


{% macro _mj_version_property(name) -%}
  {#- Where a column-tracked input's table version at the last read is recorded (its Delta version
      or Iceberg snapshot): the next run compares it with the table's version now. -#}
  {{- return('dbt_multijoin.input_version.' ~ (name | lower)) -}}
{%- endmacro %}


{% macro _mj_recorded_state(properties) -%}
  {#- {input name (lower case): {mark, version, refill}} as the last run recorded them in the table
      `properties` (version: none where none was recorded; refill: why a run that stopped was to
      read the input in full, or none). -#}
  {%- set state = {} -%}
  {%- set prefix = dbt_multijoin._mj_mark_property('') -%}
  {%- for key, value in properties.items() if key.startswith(prefix) -%}
    {%- set name = key[prefix | length:] -%}
    {%- set version = properties.get(dbt_multijoin._mj_version_property(name), 'none') -%}
    {%- do state.update({name: {'mark': value, 'version': none if version == 'none' else version,
        'refill': properties.get(dbt_multijoin._mj_refill_property(name))}}) -%}
  {%- endfor -%}
  {{- return(state) -}}
{%- endmacro %}


{% macro _mj_state_properties(plan, states) -%}
  {#- The table properties recording `states` ({input index: {mark, version}}). -#}
  {%- set properties = {} -%}
  {%- for input in plan['inputs'] -%}
    {%- set state = states[input['index']] -%}
    {%- do properties.update({dbt_multijoin._mj_mark_property(input['name']): state['mark']}) -%}
    {#- 'none' where the source has no version, so that no earlier run's value outlives it. -#}
    {%- do properties.update({dbt_multijoin._mj_version_property(input['name']): state['version'] or 'none'}) -%}
  {%- endfor -%}
  {{- return(properties) -}}
{%- endmacro %}
