{#- Private: the partial-update refresh of a changed_keys model, the rendering side: eligibility,
    the presence columns, the changes view's query and the MERGE's source.
    Not here: the state pair and the key-recompute path (_changed_keys_render.sql), the sources'
    net rows (_change_sources.sql), the one-row-per-key check and the MERGE
    (_changed_keys_apply.sql).

    When every input holds at most one row per key (the model says so with
    `one_row_per_key=true`), a row of the wide table is the key, then for each input either that
    input's one row or NULLs. A change in one input then needs only that input's changed rows: the
    row of a changed key keeps every other input's columns and gets the changed input's new ones,
    with no join and no read of the inputs that did not change (as Paimon's partial-update merge
    engine and the partial column updates of StarRocks and Doris stitch wide tables).

    What the table needs to know is which inputs hold each key: a row whose key one input dropped
    goes away only when no other input holds it, and an input's columns may all be NULL in a row it
    holds. So an eligible model's table carries one column per input, `dbt_multijoin_has_<input>`:
    true when that input holds the row's key, NULL when it does not (the FULL join's padding of a
    `true` column each input brings).

    Eligible: `one_row_per_key=true`, the model is the `multi_join(...)` call itself (no SQL around
    it), at most 63 inputs, the key columns of one type in every input, not floating point (-0.0
    and 0.0 are one key whose spelling depends on which input wrote it). Any other changed_keys
    model recomputes its changed keys with the multi-join (_changed_keys_render.sql), and the run
    says why.

    An incremental run renders the MERGE's source (_mj_merge_partial_update applies it), from the
    changes view the materialization caches first (`<model>__dbt_mj_changes`, one row per
    changed input row): per changed non-NULL key, for each changed input whether it changed the
    key (touched), whether it holds the key now (present) and its columns; one marker per
    changed input that deletes the table's NULL-keyed rows of that input; and that input's
    NULL-keyed rows as they are now (a row with a NULL key matches nothing: it is its own row). -#}

{% macro _mj_presence_column(input) -%}
  {{- return('dbt_multijoin_has_' ~ (input['name'] | lower)) -}}
{%- endmacro %}


{% macro _mj_partial_update_eligibility(spec) -%}
  {#- none when the model can be refreshed by partial updates, else why not (for the log). -#}
  {%- set declared = config.get('one_row_per_key', false) -%}
  {%- if declared is not sameas true and declared is not sameas false -%}
    {%- do dbt_multijoin._mj_fail("one_row_per_key must be true or false, got '" ~ declared ~ "'") -%}
  {%- endif -%}
  {%- if not declared -%}
    {{- return("the model does not declare one_row_per_key=true (every input at most one row per key)") -}}
  {%- endif -%}
  {#- The model's own text: config() and comments aside, one multi_join call and nothing else. -#}
  {%- set raw = modules.re.sub('(?s)\\{#.*?#\\}', '', model.raw_code) -%}
  {%- set raw = modules.re.sub('(?s)\\{\\{-?\\s*config\\(.*?\\)\\s*-?\\}\\}', '', raw).strip() -%}
  {%- if not modules.re.fullmatch('(?s)\\{\\{-?\\s*(dbt_multijoin\\.)?multi_join\\(.*\\)\\s*-?\\}\\}', raw) -%}
    {{- return("the model is more than the multi_join(...) call (its rows would be the SQL around it, which a partial update cannot apply)") -}}
  {%- endif -%}
  {%- if spec['inputs'] | length > 63 -%}
    {{- return("it has more than 63 inputs") -}}
  {%- endif -%}
  {%- for k in range(spec['keys'] | length) -%}
    {%- set types = [] -%}
    {%- for input in spec['inputs'] -%}
      {%- do types.append(input['key_types'][k]) -%}
    {%- endfor -%}
    {%- if types | unique | list | length > 1 -%}
      {{- return("key column " ~ spec['keys'][k] ~ " has different types in the inputs (" ~ types | join(', ') ~ ")") -}}
    {%- elif types[0] in ['float', 'double'] -%}
      {{- return("key column " ~ spec['keys'][k] ~ " is " ~ types[0] ~ " (-0.0 and 0.0 are one key, spelled as the input that wrote it)") -}}
    {%- endif -%}
  {%- endfor -%}
  {%- for input in spec['inputs'] -%}
    {%- for item in input['payload'] if (item['output_name'] | lower).startswith('dbt_multijoin_') -%}
      {{- return("input '" ~ input['name'] ~ "' brings a column named " ~ item['output_name'] ~ ", a prefix the package reserves") -}}
    {%- endfor -%}
  {%- endfor -%}
  {{- return(none) -}}
{%- endmacro %}


{% macro _mj_with_presence_columns(spec) -%}
  {#- `spec` whose inputs each bring their presence column as the last of their columns. -#}
  {%- set inputs = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set marked = {} -%}
    {%- do marked.update(input) -%}
    {%- set column = dbt_multijoin._mj_presence_column(input) -%}
    {%- do marked.update({'presence_column': column, 'payload': input['payload'] + [{'column': column, 'output_name': column}]}) -%}
    {%- do inputs.append(marked) -%}
  {%- endfor -%}
  {%- set marked_spec = {} -%}
  {%- do marked_spec.update(spec) -%}
  {%- do marked_spec.update({'inputs': inputs}) -%}
  {{- return(marked_spec) -}}
{%- endmacro %}


{% macro _mj_partial_changes_branch(spec, index, tracked, recorded, current, mark_items) -%}
  {#- One input's rows of the changes view, or none when it did not change: its changed rows,
      netted to one row per key (a change feed's last change of each key: present or gone).
      Columns: the model's keys, dbt_multijoin_input, dbt_multijoin_present, every input's
      columns (NULL but its own), the mark columns. -#}
  {%- set input = spec['inputs'][index] -%}
  {%- set changes = dbt_multijoin._mj_change_source_call(dbt_multijoin._mj_change_source(tracked), 'net_rows', input, tracked, recorded, current) -%}
  {%- if changes is none -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set columns = dbt_multijoin._mj_keys_as_model_keys(input, spec) + [index ~ ' as dbt_multijoin_input', 'dbt_multijoin_present'] -%}
  {%- for other in spec['inputs'] -%}
    {%- for item in other['payload'] -%}
      {%- set value = 'if(dbt_multijoin_present, ' ~ dbt_multijoin._mj_quote(item['column']) ~ ', null)' if other['name'] == input['name'] else 'null' -%}
      {%- do columns.append(value ~ ' as ' ~ dbt_multijoin._mj_quote(item['output_name'])) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{- return('select ' ~ (columns + mark_items) | join(', ') ~ ' from (' ~ changes ~ ') as net') -}}
{%- endmacro %}


{% macro _mj_null_rows_part(spec, index, changed_inputs) -%}
  {#- Input `index`'s NULL-keyed rows as they are now (each is a row of its own in the table), in
      the MERGE source's columns. -#}
  {%- set input = spec['inputs'][index] -%}
  {%- set columns = dbt_multijoin._mj_keys_as_model_keys(input, spec) + ['cast(null as int) as dbt_multijoin_null_group'] -%}
  {%- for other in changed_inputs -%}
    {%- do columns.append(((other == index) | string | lower) ~ ' as dbt_multijoin_touched_' ~ other) -%}
    {%- do columns.append(((other == index) | string | lower) ~ ' as dbt_multijoin_present_' ~ other) -%}
    {%- for item in spec['inputs'][other]['payload'] -%}
      {%- do columns.append((dbt_multijoin._mj_quote(item['column']) if other == index else 'null') ~ ' as ' ~ dbt_multijoin._mj_quote(item['output_name'])) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{- return('select ' ~ columns | join(', ') ~ ' from ' ~ input['relation'] ~ ' where ' ~ dbt_multijoin._mj_any_key_null(none, input['keys'])) -}}
{%- endmacro %}


{% macro _mj_render_partial_update(spec, tracked, recorded, marks, mark_columns) -%}
  {#- The state for the materialization (changes: the changes view's query) and the MERGE
      source over that view. -#}
  {%- set branches = [] -%}
  {%- set scans = [] -%}
  {%- set changed_inputs = [] -%}
  {%- for index in range(spec['inputs'] | length) -%}
    {%- set input = spec['inputs'][index] -%}
    {%- set property = dbt_multijoin._mj_mark_property(input['name']) -%}
    {%- set mark_items = [] -%}
    {%- for i in range(spec['inputs'] | length) if mark_columns.get(dbt_multijoin._mj_mark_property(spec['inputs'][i]['name'])) -%}
      {%- do mark_items.append(('dbt_multijoin_mark' if i == index else 'null') ~ ' as ' ~ dbt_multijoin._mj_mark_column(i)) -%}
    {%- endfor -%}
    {%- set branch = dbt_multijoin._mj_partial_changes_branch(spec, index, tracked[index], recorded[property], marks[property], mark_items) -%}
    {%- do scans.append(dbt_multijoin._mj_change_scan(input, tracked[index], recorded[property], marks[property], branch)) -%}
    {%- if branch is not none -%}
      {%- do branches.append('    ' ~ branch) -%}
      {%- do changed_inputs.append(index) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not branches -%}
    {#- Nothing changed: no rows, of the view's columns. -#}
    {%- set empty = dbt_multijoin._mj_keys_as_model_keys(spec['inputs'][0], spec) + ['-1 as dbt_multijoin_input', 'false as dbt_multijoin_present'] -%}
    {%- do branches.append('    select ' ~ empty | join(', ') ~ ' from ' ~ spec['inputs'][0]['relation'] ~ ' where false') -%}
  {%- endif -%}
  {%- set changes_sql = 'select * from (\n' ~ branches | join('\n    union all\n') ~ '\n) as changed_rows' -%}

  {#- The MERGE source: one row per changed non-NULL key, the NULL-keyed rows of the changed
      inputs, and the markers that delete the table's NULL-keyed rows of those inputs. The NULL-
      keyed rows are written to a scratch table (_mj_null_rows_table) before the changes view is
      cached: a query that reads a Delta table's change feed and the table itself (even through
      views) resolves both to the plain table (Delta 3.3, 4.0), so no query may see both. Its columns: the keys, dbt_multijoin_null_group (the
      index of the input whose NULL-keyed rows a marker deletes, else NULL), and per changed
      input its touched and present flags and its columns. -#}
  {%- set view = dbt_multijoin._mj_changes_view() -%}
  {%- set any_null = dbt_multijoin._mj_any_key_null(none, spec['keys']) -%}
  {%- set key_list = dbt_multijoin._mj_column_list(spec['keys']) -%}
  {%- set per_key = [key_list, 'cast(null as int) as dbt_multijoin_null_group'] -%}
  {%- set markers = [] -%}
  {%- for index in changed_inputs -%}
    {%- set input = spec['inputs'][index] -%}
    {%- set mine = 'dbt_multijoin_input = ' ~ index -%}
    {%- do per_key.append('bool_or(' ~ mine ~ ') as dbt_multijoin_touched_' ~ index) -%}
    {%- do per_key.append('bool_or(' ~ mine ~ ' and dbt_multijoin_present) as dbt_multijoin_present_' ~ index) -%}
    {%- for item in input['payload'] -%}
      {%- set name = dbt_multijoin._mj_quote(item['output_name']) -%}
      {#- One row per key and input in the view: `first` over that one row. -#}
      {%- do per_key.append('first(' ~ name ~ ') filter (where ' ~ mine ~ ') as ' ~ name) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for index in changed_inputs -%}
    {%- set items = [] -%}
    {%- for k in spec['keys'] -%}
      {%- do items.append('null') -%}
    {%- endfor -%}
    {%- do items.append(index) -%}
    {%- for other in changed_inputs -%}
      {%- do items.append('false, false') -%}
      {%- for item in spec['inputs'][other]['payload'] -%}
        {%- do items.append('null') -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- do markers.append('select ' ~ items | join(', ')) -%}
  {%- endfor -%}
  {%- set parts = ['select ' ~ per_key | join(', ') ~ '\nfrom ' ~ view ~ '\nwhere not (' ~ any_null ~ ')\ngroup by ' ~ key_list] -%}
  {%- set null_rows = [] -%}
  {%- for index in changed_inputs -%}
    {%- do null_rows.append(dbt_multijoin._mj_null_rows_part(spec, index, changed_inputs)) -%}
  {%- endfor -%}
  {%- if null_rows -%}
    {%- do parts.append('select * from ' ~ dbt_multijoin._mj_null_rows_table(this)) -%}
  {%- endif -%}
  {%- do parts.extend(markers) -%}
  {%- set inputs = [] -%}
  {%- for index in range(spec['inputs'] | length) -%}
    {%- set input = spec['inputs'][index] -%}
    {%- do inputs.append({'name': input['name'], 'relation': input['relation'] | string, 'presence': dbt_multijoin._mj_presence_column(input),
        'columns': input['payload'] | map(attribute='output_name') | list, 'changed': index in changed_inputs}) -%}
  {%- endfor -%}
  {%- set state = {'path': 'partial_update', 'keys': spec['keys'], 'marks': marks, 'changes': changes_sql, 'null_rows': null_rows | join('\nunion all\n') if null_rows else none,
      'mark_columns': mark_columns, 'changelog_views': dbt_multijoin._mj_changelog_views(spec, tracked), 'scans': scans, 'inputs': inputs} -%}
  {{- return(dbt_multijoin._mj_changed_keys_state_comment(state) ~ '\n' ~ parts | join('\nunion all\n')) -}}
{%- endmacro %}
