{#- Private: the partial-update path of changed_keys: the refresh of a model whose inputs hold at
    most one row per key (`one_row_per_key=true`).

    A row of such a wide table is the key, then for each input either that input's one row or
    NULLs. A change in one input then needs only that input's changed rows: the row of a changed
    key keeps every other input's columns and gets the changed input's new ones, with no join and
    no read of the inputs that did not change (as Paimon's partial-update merge engine and the
    partial column updates of StarRocks and Doris stitch wide tables).

    What the table needs to know is which inputs hold each key: a row whose key one input dropped
    goes away only when no other input holds it, and an input's columns may all be NULL in a row it
    holds. So an eligible model's table carries one column per input, `dbt_multijoin_has_<input>`:
    true when that input holds the row's key, NULL when it does not (the FULL join's padding of a
    `true` column each input brings).

    Eligible (the model's config and its multi_join call say so, _mj_partial_update_eligibility):
    `one_row_per_key=true`, at most 63 inputs, the key columns of one type in every input, not
    floating point (-0.0 and 0.0 are one key whose spelling depends on which input wrote it). The
    plan also needs the model to be the `multi_join(...)` call alone: a partial update applies the
    call's rows, so no SQL may wrap them. Any other changed_keys model recomputes its changed keys
    (recompute.sql), and the run says why.

    A run caches, in the changes view, one row per changed input row: per changed non-NULL key, for
    each changed input whether it changed the key (touched), whether it holds the key now (present)
    and its columns; the NULL-keyed rows as they are now of each input whose changes hold one go
    to the NULL-rows table (a row with a NULL key matches nothing: it is its own row). One MERGE
    then applies them. -#}

{% macro _mj_presence_column(input) -%}
  {{- return('dbt_multijoin_has_' ~ (input['name'] | lower)) -}}
{%- endmacro %}


{% macro _mj_partial_update_eligibility(spec) -%}
  {#- none when the model's config and call allow partial updates, else why not (for the log). -#}
  {%- set declared = dbt_multijoin._mj_config('one_row_per_key', false) -%}
  {%- if declared is not sameas true and declared is not sameas false -%}
    {%- do dbt_multijoin._mj_fail("one_row_per_key must be true or false, got '" ~ declared ~ "'") -%}
  {%- endif -%}
  {%- if not declared -%}
    {{- return("the model does not declare one_row_per_key=true (every input at most one row per key)") -}}
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


{% macro _mj_input_payload(spec_input) -%}
  {#- An input's own columns: its payload without the presence column. -#}
  {{- return(spec_input['payload'] | rejectattr('column', 'equalto', spec_input.get('presence_column')) | list) -}}
{%- endmacro %}


{% macro _mj_partial_changes_branch(plan, input) -%}
  {#- Input `input`'s rows of the changes view: its changed rows netted to one per key (its source's
      net rows; read whole, with every row it holds, its source's row winning for a key it has).
      Columns: the model's keys, dbt_multijoin_input, dbt_multijoin_present, every input's columns
      (NULL but its own), the mark columns. -#}
  {%- set spec = plan['spec'] -%}
  {%- set spec_input = spec['inputs'][input['index']] -%}
  {%- set source = input['source'] -%}
  {%- set columns = source['input']['columns'] -%}
  {%- set canonical = dbt_multijoin._mj_column_list(columns) ~ ', dbt_multijoin_present, dbt_multijoin_mark' -%}
  {%- set reads = [] -%}
  {%- if input['source_read'] -%}
    {%- do reads.append('select ' ~ canonical ~ ', 0 as dbt_multijoin_priority from (' ~ dbt_multijoin._mj_source_do(source, 'net_rows', input['recorded'], columns) ~ ') as source_rows') -%}
  {%- endif -%}
  {%- if input['whole'] -%}
    {%- do reads.append('select ' ~ dbt_multijoin._mj_column_list(columns) ~ ', true as dbt_multijoin_present, null as dbt_multijoin_mark, 1 as dbt_multijoin_priority from ' ~ spec_input['relation'] ~ ' where not (' ~ dbt_multijoin._mj_any_key_null(none, source['input']['keys']) ~ ')') -%}
  {%- endif -%}
  {%- set net = reads[0] if reads | length == 1 else 'select * from (select *, row_number() over (partition by ' ~ dbt_multijoin._mj_column_list(source['input']['keys']) ~ ' order by dbt_multijoin_priority) as dbt_multijoin_rank from (' ~ reads | join(' union all ') ~ ') as both_reads) as ranked where dbt_multijoin_rank = 1' -%}
  {%- set items = dbt_multijoin._mj_keys_as_model_keys(spec_input, spec) + [input['index'] ~ ' as dbt_multijoin_input', 'dbt_multijoin_present'] -%}
  {%- for other in spec['inputs'] -%}
    {%- for item in dbt_multijoin._mj_input_payload(other) -%}
      {%- set value = 'if(dbt_multijoin_present, ' ~ dbt_multijoin._mj_quote(item['column']) ~ ', null)' if other['name'] == spec_input['name'] else 'null' -%}
      {%- do items.append(value ~ ' as ' ~ dbt_multijoin._mj_quote(item['output_name'])) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{- return('select ' ~ (items + dbt_multijoin._mj_mark_items(plan, input['index'], 'dbt_multijoin_mark')) | join(', ') ~ ' from (' ~ net ~ ') as net') -}}
{%- endmacro %}


{% macro _mj_check_one_row_per_key(plan, changes) -%}
  {#- A partial update trusts one_row_per_key: two changed rows of one key in one input fail the
      run, naming the input, its relation and the key, before anything is written. (Rows that did
      not change are not read: the generic test multijoin_key_unique on each input checks them.) -#}
  {%- set keys = dbt_multijoin._mj_column_list(plan['keys']) -%}
  {%- set found = run_query('select dbt_multijoin_input, ' ~ keys ~ ', count(*) as n from ' ~ changes ~ ' where not (' ~ dbt_multijoin._mj_any_key_null(none, plan['keys']) ~ ') group by dbt_multijoin_input, ' ~ keys ~ ' having count(*) > 1 limit 1') -%}
  {%- if found | length > 0 -%}
    {%- set row = found[0] -%}
    {%- set input = plan['inputs'][row['dbt_multijoin_input'] | int] -%}
    {%- set key = [] -%}
    {%- for k in plan['keys'] -%}
      {%- do key.append(k ~ ' = ' ~ row[k]) -%}
    {%- endfor -%}
    {#- What the sources wrote to read the changes (row tracking's tables) goes before the run
        fails: it leaves nothing behind. -#}
    {%- do dbt_multijoin._mj_drop_changes_views(plan) -%}
    {%- do dbt_multijoin._mj_fail("one_row_per_key: input '" ~ input['name'] ~ "' (" ~ input['relation'] ~ ") has " ~ row['n'] ~ " rows of the key " ~ key | join(', ') ~ ": drop one_row_per_key (the run then recomputes changed keys with the multi-join), or make the input unique on the key") -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_null_rows_part(plan, index, replaced) -%}
  {#- Input `index`'s NULL-keyed rows as they are now (each is a row of its own in the table), in
      the NULL-rows table's columns: the MERGE source's, for the inputs of `replaced` only (a NULL
      of another input's column would have no type to be written with; the MERGE source gives those
      columns their NULLs). -#}
  {%- set spec = plan['spec'] -%}
  {%- set input = spec['inputs'][index] -%}
  {%- set columns = dbt_multijoin._mj_keys_as_model_keys(input, spec) + ['cast(null as int) as dbt_multijoin_null_group'] -%}
  {%- for other in replaced -%}
    {%- do columns.append(((other == index) | string | lower) ~ ' as dbt_multijoin_touched_' ~ other) -%}
    {%- do columns.append(((other == index) | string | lower) ~ ' as dbt_multijoin_present_' ~ other) -%}
    {%- for item in dbt_multijoin._mj_input_payload(spec['inputs'][other]) -%}
      {%- do columns.append((dbt_multijoin._mj_quote(item['column']) if other == index else 'null') ~ ' as ' ~ dbt_multijoin._mj_quote(item['output_name'])) -%}
    {%- endfor -%}
  {%- endfor -%}
  {{- return('select ' ~ columns | join(', ') ~ ' from ' ~ input['relation'] ~ ' where ' ~ dbt_multijoin._mj_any_key_null(none, input['keys'])) -}}
{%- endmacro %}


{% macro _mj_changed_indexes(read) -%}
  {{- return(read | map(attribute='index') | list) -}}
{%- endmacro %}


{% macro _mj_write_null_rows(plan, relation, read, null_inputs) -%}
  {#- The NULL-keyed rows as they are now of each changed input whose NULL-keyed rows may have
      changed, written to the NULL-rows table; returns those inputs' indexes. Such an input's
      changes hold a NULL-keyed row (`null_inputs`: their indexes, comma-separated), or it is read
      whole (a whole read leaves its NULL-keyed rows out of the changes). Every other input's
      NULL-keyed rows in the table stay as they are, unread: its source saw no change to one (a
      source that does not see deletes, a column, does not see them for these rows either), and
      no table is written when no input's may have changed, the usual case. A table, not a part
      of the MERGE's source query: a query that reads a Delta table's change feed and the table
      itself (even through views) resolves both to the plain table (Delta 3.3, 4.x), so no query
      may see both. -#}
  {%- set flagged = (null_inputs or '').split(',') | reject('equalto', '') | map('int') | list -%}
  {%- set replaced = [] -%}
  {%- for input in read if input['index'] in flagged or input['whole'] -%}
    {%- do replaced.append(input['index']) -%}
  {%- endfor -%}
  {%- if replaced -%}
    {%- set parts = [] -%}
    {%- for index in replaced -%}
      {%- do parts.append(dbt_multijoin._mj_null_rows_part(plan, index, replaced)) -%}
    {%- endfor -%}
    {%- do dbt_multijoin._mj_write_scratch_table(dbt_multijoin._mj_null_rows_table(relation), parts | join('\nunion all\n'), 'dbt_multijoin_null_rows') -%}
  {%- endif -%}
  {{- return(replaced) -}}
{%- endmacro %}


{% macro _mj_partial_merge_source(plan, changed, null_replaced) -%}
  {#- The MERGE's source: its parts (_mj_partial_merge_source_parts) as one query. -#}
  {%- set parts = dbt_multijoin._mj_partial_merge_source_parts(plan, changed, null_replaced) -%}
  {{- return(([parts['keyed']] + parts['null_keyed']) | join('\nunion all\n')) -}}
{%- endmacro %}


{% macro _mj_partial_merge_source_parts(plan, changed, null_replaced) -%}
  {#- The parts of the MERGE's source, {keyed: one row per changed non-NULL key, null_keyed: for
      each input of `null_replaced` (_mj_write_null_rows) its NULL-keyed rows (the NULL-rows table)
      and a marker that deletes the table's NULL-keyed rows of that input}, each a query of the
      same columns: the keys, dbt_multijoin_null_group (the index of the input whose NULL-keyed
      rows a marker deletes, else NULL), and per changed input its touched and present flags and
      its columns. -#}
  {%- set spec = plan['spec'] -%}
  {%- set key_list = dbt_multijoin._mj_column_list(spec['keys']) -%}
  {%- set per_key = [key_list, 'cast(null as int) as dbt_multijoin_null_group'] -%}
  {%- for index in changed -%}
    {%- set mine = 'dbt_multijoin_input = ' ~ index -%}
    {%- do per_key.append('bool_or(' ~ mine ~ ') as dbt_multijoin_touched_' ~ index) -%}
    {%- do per_key.append('bool_or(' ~ mine ~ ' and dbt_multijoin_present) as dbt_multijoin_present_' ~ index) -%}
    {%- for item in dbt_multijoin._mj_input_payload(spec['inputs'][index]) -%}
      {%- set name = dbt_multijoin._mj_quote(item['output_name']) -%}
      {#- One row per key and input in the view: `first` over that one row. -#}
      {%- do per_key.append('first(' ~ name ~ ') filter (where ' ~ mine ~ ') as ' ~ name) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set keyed = 'select ' ~ per_key | join(', ') ~ '\nfrom ' ~ dbt_multijoin._mj_changes_view() ~ '\nwhere not (' ~ dbt_multijoin._mj_any_key_null(none, spec['keys']) ~ ')\ngroup by ' ~ key_list -%}
  {%- set null_keyed = [] -%}
  {%- if null_replaced -%}
    {%- set null_rows = [key_list, 'dbt_multijoin_null_group'] -%}
    {%- for index in changed -%}
      {%- set own = index in null_replaced -%}
      {%- do null_rows.append('dbt_multijoin_touched_' ~ index if own else 'false') -%}
      {%- do null_rows.append('dbt_multijoin_present_' ~ index if own else 'false') -%}
      {%- for item in dbt_multijoin._mj_input_payload(spec['inputs'][index]) -%}
        {%- do null_rows.append(dbt_multijoin._mj_quote(item['output_name']) if own else 'null') -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- do null_keyed.append('select ' ~ null_rows | join(', ') ~ ' from ' ~ dbt_multijoin._mj_null_rows_table(this)) -%}
  {%- endif -%}
  {%- for index in null_replaced -%}
    {%- set items = [] -%}
    {%- for k in spec['keys'] -%}
      {%- do items.append('null') -%}
    {%- endfor -%}
    {%- do items.append(index) -%}
    {%- for other in changed -%}
      {%- do items.append('false, false') -%}
      {%- for item in dbt_multijoin._mj_input_payload(spec['inputs'][other]) -%}
        {%- do items.append('null') -%}
      {%- endfor -%}
    {%- endfor -%}
    {%- do null_keyed.append('select ' ~ items | join(', ')) -%}
  {%- endfor -%}
  {{- return({'keyed': keyed, 'null_keyed': null_keyed}) -}}
{%- endmacro %}


{% macro _mj_merge_partial_update(plan, target_relation, read, key_count, null_replaced) -%}
  {#- Apply the changes in one MERGE (statement 'main'): a changed key's row gets each changed
      input's new columns (NULLs where the key left that input) and keeps the others'; a new key is
      inserted; a row no input holds any more is deleted; the NULL-keyed rows of each input of
      `null_replaced` (_mj_write_null_rows) are replaced by its current ones. A target row
      matches at most one source row: its key's, or when its key has a NULL, the marker of the one
      input it came from. The source is written to the rows table first (as the recompute path
      does), and only the replaced target rows are shuffled (target_filter.sql). Columns the table
      has beyond the model's (on_schema_change 'append_new_columns' keeps them) are left as they
      are. -#}
  {%- set spec = plan['spec'] -%}
  {%- set keys = spec['keys'] -%}
  {%- set changed = dbt_multijoin._mj_changed_indexes(read) -%}
  {%- set existing_columns = adapter.get_columns_in_relation(target_relation) -%}
  {%- set existing = existing_columns | map(attribute='name') | map('lower') | list -%}
  {%- set inserted_columns = dbt_multijoin._mj_partial_update_columns(spec) -%}
  {%- for column in inserted_columns if (column | lower) not in existing -%}
    {%- do dbt_multijoin._mj_fail("the model's column " ~ column ~ " is not a column of " ~ target_relation ~ " (" ~ existing | join(', ') ~ "): run it with --full-refresh") -%}
  {%- endfor -%}
  {%- set key_table = dbt_multijoin._mj_changed_keys_table(target_relation) -%}
  {%- set rows_table = dbt_multijoin._mj_changed_rows_table(target_relation) -%}
  {%- do dbt_multijoin._mj_write_scratch_table(rows_table, dbt_multijoin._mj_partial_merge_source(plan, changed, null_replaced), 'dbt_multijoin_changed_rows') -%}

  {%- set target_null = dbt_multijoin._mj_any_key_null('target', keys) -%}
  {%- set null_group = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- do null_group.append('when target.' ~ input['presence_column'] ~ ' then ' ~ loop.index0) -%}
  {%- endfor -%}
  {%- set matches = dbt_multijoin._mj_merge_key_match(keys) -%}
  {%- do matches.append('source.dbt_multijoin_null_group <=> if(' ~ target_null ~ ', case ' ~ null_group | join(' ') ~ ' end, null)') -%}

  {%- set held_after = [] -%}
  {%- set present_any = [] -%}
  {%- set updates = [] -%}
  {%- set inserted = [dbt_multijoin._mj_column_list(keys, 'source')] -%}
  {%- for input in spec['inputs'] -%}
    {%- set index = loop.index0 -%}
    {%- set has = 'target.' ~ input['presence_column'] -%}
    {%- if index in changed -%}
      {%- set touched = 'source.dbt_multijoin_touched_' ~ index -%}
      {%- set present = 'source.dbt_multijoin_present_' ~ index -%}
      {%- do held_after.append('coalesce(if(' ~ touched ~ ', ' ~ present ~ ', ' ~ has ~ '), false)') -%}
      {%- do present_any.append(present) -%}
      {%- for item in dbt_multijoin._mj_input_payload(input) -%}
        {%- set name = dbt_multijoin._mj_quote(item['output_name']) -%}
        {%- do updates.append(name ~ ' = if(' ~ touched ~ ', source.' ~ name ~ ', target.' ~ name ~ ')') -%}
        {%- do inserted.append('source.' ~ name) -%}
      {%- endfor -%}
      {%- do updates.append(input['presence_column'] ~ ' = if(' ~ touched ~ ', if(' ~ present ~ ', true, null), ' ~ has ~ ')') -%}
      {%- do inserted.append('if(' ~ present ~ ', true, null)') -%}
    {%- else -%}
      {%- do held_after.append('coalesce(' ~ has ~ ', false)') -%}
      {%- for item in dbt_multijoin._mj_input_payload(input) -%}
        {%- do inserted.append('null') -%}
      {%- endfor -%}
      {%- do inserted.append('null') -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set column_list = dbt_multijoin._mj_column_list(inserted_columns) -%}
  {%- set target_filter = dbt_multijoin._mj_replaced_rows_filter(existing_columns, key_table, keys, key_count) -%}
  {%- call statement('main') -%}
    merge into {{ target_relation }} as target
    using {{ rows_table }} as source
    on {{ matches | join(' and ') }}{% if target_filter %}
        and {{ target_filter }}{% endif %}
    when matched and source.dbt_multijoin_null_group is not null then delete
    when matched and not ({{ held_after | join(' or ') }}) then delete
    when matched then update set {{ updates | join(', ') }}
    when not matched and source.dbt_multijoin_null_group is null and ({{ present_any | join(' or ') }}) then insert ({{ column_list }}) values ({{ inserted | join(', ') }})
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_partial_update_columns(spec) -%}
  {#- A partial-update model's columns, as a full build writes them: the keys, then per input its
      columns and its presence column (the table's, and the merge-on-read view's). -#}
  {%- set columns = [] -%}
  {%- do columns.extend(spec['keys']) -%}
  {%- for input in spec['inputs'] -%}
    {%- for item in dbt_multijoin._mj_input_payload(input) -%}
      {%- do columns.append(item['output_name']) -%}
    {%- endfor -%}
    {%- do columns.append(input['presence_column']) -%}
  {%- endfor -%}
  {{- return(columns) -}}
{%- endmacro %}
