{#- Private: on_schema_change for changed_keys (dbt's setting; validated in _incremental.sql), when
    the model's columns differ from its table's:
    - 'ignore' and 'fail': the run fails and asks for --full-refresh. A changed_keys run replaces
      whole rows of the model's columns: a column it ignored would be left stale in the rows it
      replaces, which is a wrong table, not an ignored column.
    - 'append_new_columns': a column the model gained is added to the table and filled from the
      input that brings it, which this run reads in full once (its every key recomputed, or its rows
      applied by a partial update; where a column cannot be traced to one input, every input); a
      column the model lost stays in the table, NULL in the rows written from now on.
    - 'sync_all_columns': the same; a column whose type changed is altered as dbt-spark alters one
      (`alter column ... type`, which takes what the format allows: a widening) and filled again
      from its input; and when a column the model lost must go, the run builds the whole table
      (one atomic replace). dbt-spark refuses to drop columns, Delta drops one only with column
      mapping, and an Iceberg table on a Hive metastore fails the drop's commit when a column of
      another type moves into the dropped one's position: a rebuild drops it on every format. -#}

{% macro _mj_query_columns(sql) -%}
  {#- The query's columns [{name, dtype}] (DESCRIBE QUERY: analysis only, nothing runs). -#}
  {%- set columns = [] -%}
  {%- for row in run_query('describe query ' ~ sql) -%}
    {%- do columns.append({'name': row['col_name'], 'dtype': row['data_type'] | lower}) -%}
  {%- endfor -%}
  {{- return(columns) -}}
{%- endmacro %}


{% macro _mj_changed_keys_schema_change(plan, relation, model_columns) -%}
  {#- What on_schema_change makes of a difference between the model's and the table's columns: none
      when they agree, else {added, retyped} (columns), with the inputs to read whole marked in the
      plan, or {rebuild: why} when the whole table must be built. Fails where the setting refuses
      the change. -#}
  {%- set setting = dbt_multijoin._mj_on_schema_change() -%}
  {#- The table's columns; a merge-on-read store's own columns aside. -#}
  {%- set own = [] -%}
  {%- if plan['layout'] == 'merge_on_read' -%}
    {%- set own = dbt_multijoin._mj_mor_control_columns(plan['spec']) | map(attribute=0) | list -%}
  {%- endif -%}
  {%- set table = {} -%}
  {%- for column in dbt_multijoin._mj_store_columns(plan) if (column.name | lower) not in own -%}
    {%- do table.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {%- set wanted = {} -%}
  {%- for column in model_columns -%}
    {%- do wanted.update({column['name'] | lower: column['dtype']}) -%}
  {%- endfor -%}
  {%- set added, dropped, retyped = [], [], [] -%}
  {%- for column in model_columns if (column['name'] | lower) not in table -%}
    {%- do added.append(column) -%}
  {%- endfor -%}
  {%- for name, dtype in table.items() if name not in wanted -%}
    {%- do dropped.append(name) -%}
  {%- endfor -%}
  {%- for column in model_columns if (column['name'] | lower) in table and table[column['name'] | lower] != column['dtype'] -%}
    {%- do retyped.append(column) -%}
  {%- endfor -%}
  {%- if not (added or dropped or retyped) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set change = "the model's columns differ from " ~ relation ~ "'s (new: " ~ (added | map(attribute='name') | join(', ') or 'none') ~ "; gone: " ~ (dropped | join(', ') or 'none') ~ "; another type: " ~ (retyped | map(attribute='name') | join(', ') or 'none') ~ ")" -%}
  {%- if setting in ['ignore', 'fail'] -%}
    {%- do dbt_multijoin._mj_fail(change ~ ": on_schema_change '" ~ setting ~ "' stops the run; set on_schema_change to 'append_new_columns' or 'sync_all_columns', or run it with --full-refresh") -%}
  {%- endif -%}
  {%- set sync = setting == 'sync_all_columns' -%}
  {%- if retyped and not sync -%}
    {%- do dbt_multijoin._mj_fail(change ~ ": on_schema_change 'append_new_columns' does not change a column's type; set it to 'sync_all_columns', or run it with --full-refresh") -%}
  {%- endif -%}
  {%- if dropped and sync -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ change ~ "; on_schema_change 'sync_all_columns' drops " ~ dropped | join(', ') ~ " by building the whole table", info=True) -%}
    {{- return({'rebuild': 'on_schema_change sync_all_columns drops ' ~ dropped | join(', ')}) -}}
  {%- endif -%}
  {%- for column in added + retyped -%}
    {%- do dbt_multijoin._mj_read_whole_for(plan, column['name']) -%}
  {%- endfor -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ change ~ "; on_schema_change '" ~ setting ~ "'", info=True) -%}
  {{- return({'added': added, 'retyped': retyped, 'rebuild': none}) -}}
{%- endmacro %}


{% macro _mj_read_whole_for(plan, column) -%}
  {#- Mark the input that brings output column `column` to be read in full once; every input
      where none brings it under that name (a column of SQL around the call). -#}
  {%- set owners = [] -%}
  {%- for input in plan['spec']['inputs'] -%}
    {%- for item in input['payload'] if (item['output_name'] | lower) == (column | lower) -%}
      {%- do owners.append(input['name']) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for input in plan['inputs'] if not owners or input['name'] in owners -%}
    {%- do input.update({'whole': "it brings column " ~ column if owners else "column " ~ column ~ " comes from no one input"}) -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _mj_apply_schema_change(relation, change) -%}
  {#- ALTER the table as `change` says, before the run writes into it. -#}
  {%- if change['added'] -%}
    {%- set items = [] -%}
    {%- for column in change['added'] -%}
      {%- do items.append(dbt_multijoin._mj_quote(column['name']) ~ ' ' ~ column['dtype']) -%}
    {%- endfor -%}
    {%- do dbt_multijoin._mj_exec('alter table ' ~ relation ~ ' add columns (' ~ items | join(', ') ~ ')') -%}
  {%- endif -%}
  {%- for column in change['retyped'] -%}
    {%- do alter_column_type(relation, dbt_multijoin._mj_quote(column['name']), column['dtype']) -%}
  {%- endfor -%}
{%- endmacro %}
