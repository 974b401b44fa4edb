{#- Private: the strategy, and multi_join's arguments validated and resolved against the inputs'
    column lists. -#}

{% macro _mj_strategies() -%}
  {{- return(['multiway', 'chain', 'balanced']) -}}
{%- endmacro %}


{% macro _mj_strategy(requested=none) -%}
  {#- The model's strategy: the model's `strategy` config and multi_join's `strategy` argument
      (`requested`), each checked, and equal when both are given; multiway when neither is. -#}
  {%- set configured = config.get('strategy') -%}
  {%- for given in [configured, requested] if given is not none and given not in dbt_multijoin._mj_strategies() -%}
    {%- do dbt_multijoin._mj_fail("unknown strategy '" ~ given ~ "' (expected one of: " ~ dbt_multijoin._mj_strategies() | join(', ') ~ ")") -%}
  {%- endfor -%}
  {%- if configured is not none and requested is not none and requested != configured -%}
    {%- do dbt_multijoin._mj_fail("multi_join(strategy='" ~ requested ~ "') contradicts the model config strategy='" ~ configured ~ "'") -%}
  {%- endif -%}
  {{- return(requested if requested is not none else (configured if configured is not none else 'multiway')) -}}
{%- endmacro %}


{% macro _mj_is_relation(obj) -%}
  {{- return(obj is mapping and obj.get('metadata', {}).get('type', '').endswith('Relation')) -}}
{%- endmacro %}


{% macro _mj_as_list(value) -%}
  {#- A string or a list of strings as a list (key='a' or key=['a', 'b']). -#}
  {%- if value is string -%}
    {{- return([value]) -}}
  {%- endif -%}
  {{- return(value | list) -}}
{%- endmacro %}


{% macro _mj_lookup(mapping, name) -%}
  {#- mapping[name], matching the input name case-insensitively; none when absent. -#}
  {%- for candidate, value in (mapping or {}).items() -%}
    {%- if (candidate | lower) == (name | lower) -%}
      {{- return(value) -}}
    {%- endif -%}
  {%- endfor -%}
  {{- return(none) -}}
{%- endmacro %}


{% macro _mj_spec(relations, key, join_type, strategy, columns, rename, names) -%}
  {#- Returns {strategy, join_type, keys: [output key names], inputs: [{relation, name, alias,
      keys: [column], payload: [{column, output_name}]}]}. Every check runs before any SQL is
      rendered. -#}
  {%- if join_type not in ['full', 'left', 'inner'] -%}
    {%- do dbt_multijoin._mj_fail("unknown join_type '" ~ join_type ~ "' (multi_join supports 'full', 'left' and 'inner')") -%}
  {%- endif -%}
  {%- set strategy = dbt_multijoin._mj_strategy(strategy) -%}

  {%- if relations is string or relations is mapping or relations is not iterable -%}
    {%- do dbt_multijoin._mj_fail("multi_join expects a list of relations, e.g. [ref('a'), ref('b')]") -%}
  {%- endif -%}
  {%- set relations = relations | list -%}
  {%- if relations | length < 2 -%}
    {%- do dbt_multijoin._mj_fail("multi_join needs at least two inputs, got " ~ relations | length) -%}
  {%- endif -%}
  {%- for relation in relations -%}
    {%- if not dbt_multijoin._mj_is_relation(relation) -%}
      {%- do dbt_multijoin._mj_fail("input " ~ loop.index ~ " is not a relation (" ~ relation ~ "): pass ref(...) or source(...)") -%}
    {%- endif -%}
  {%- endfor -%}

  {%- if key is none or (key is not string and key is not iterable) or key | length == 0 -%}
    {%- do dbt_multijoin._mj_fail("multi_join needs key='column' or key=['column', ...]") -%}
  {%- endif -%}
  {%- set keys = dbt_multijoin._mj_as_list(key) -%}
  {%- for k in keys -%}
    {%- if k is not string or k | length == 0 -%}
      {%- do dbt_multijoin._mj_fail("key columns must be names, got " ~ k) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if keys | map('lower') | unique | list | length != keys | length -%}
    {%- do dbt_multijoin._mj_fail("key lists a column twice: " ~ keys | join(', ')) -%}
  {%- endif -%}

  {#- Input names: prefixes for colliding columns and keys of `columns` / `rename`. -#}
  {%- if names is none -%}
    {%- set names = relations | map(attribute='identifier') | map('lower') | list -%}
  {%- elif names is string or names | length != relations | length -%}
    {%- do dbt_multijoin._mj_fail("names must list one name per input (" ~ relations | length ~ " inputs)") -%}
  {%- endif -%}
  {%- for name in names -%}
    {%- if not dbt_multijoin._mj_is_identifier(name) -%}
      {%- do dbt_multijoin._mj_fail("input name '" ~ name ~ "' is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*): pass names=[...]") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if names | map('lower') | unique | list | length != names | length -%}
    {%- do dbt_multijoin._mj_fail("two inputs have the same name (" ~ names | join(', ') ~ "): pass names=[...] with one distinct name per input") -%}
  {%- endif -%}
  {%- for option in [
      {'name': 'columns', 'value': columns, 'maps_to': 'column lists'},
      {'name': 'rename', 'value': rename, 'maps_to': '{old: new} renames'}] -%}
    {%- if option['value'] is not none and option['value'] is not mapping -%}
      {%- do dbt_multijoin._mj_fail(option['name'] ~ " must map input names to " ~ option['maps_to']) -%}
    {%- endif -%}
    {%- for name in (option['value'] or {}) -%}
      {%- if (name | lower) not in names | map('lower') | list -%}
        {%- do dbt_multijoin._mj_fail(option['name'] ~ " names an unknown input '" ~ name ~ "' (inputs: " ~ names | join(', ') ~ ")") -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}

  {%- set inputs = [] -%}
  {%- for relation in relations -%}
    {%- set name = names[loop.index0] -%}
    {%- do inputs.append(dbt_multijoin._mj_input(relation, name, 't' ~ loop.index, keys,
        dbt_multijoin._mj_lookup(columns, name), dbt_multijoin._mj_lookup(rename, name) or {})) -%}
  {%- endfor -%}

  {#- Output key columns take the first input's spelling. -#}
  {%- set key_names = inputs[0]['keys'] -%}

  {#- A non-key output name used by more than one input gets the input's name as prefix. -#}
  {%- set uses = {} -%}
  {%- for input in inputs -%}
    {%- for item in input['payload'] -%}
      {%- do uses.update({item['output_name'] | lower: uses.get(item['output_name'] | lower, 0) + 1}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set outputs = key_names | map('lower') | list -%}
  {%- for input in inputs -%}
    {%- for item in input['payload'] -%}
      {%- if uses[item['output_name'] | lower] > 1 -%}
        {%- do item.update({'output_name': input['name'] ~ '_' ~ item['output_name']}) -%}
      {%- endif -%}
      {%- if (item['output_name'] | lower) in outputs -%}
        {%- do dbt_multijoin._mj_fail("output column '" ~ item['output_name'] ~ "' (from input '" ~ input['name'] ~ "', column '" ~ item['column'] ~ "') would appear twice: rename or drop it with rename= / columns=") -%}
      {%- endif -%}
      {%- do outputs.append(item['output_name'] | lower) -%}
    {%- endfor -%}
  {%- endfor -%}

  {#- A LEFT join is not associative: a balanced tree of LEFT joins is another query. -#}
  {%- if join_type == 'left' and strategy == 'balanced' -%}
    {%- do dbt_multijoin._mj_fail("strategy 'balanced' does not apply to join_type 'left' (use multiway or chain)") -%}
  {%- endif -%}
  {{- return({'strategy': strategy, 'join_type': join_type, 'keys': key_names, 'inputs': inputs}) -}}
{%- endmacro %}


{% macro _mj_input(relation, name, alias, keys, selected, renames) -%}
  {#- One input resolved against its columns in the database: {relation, name, alias, keys: its
      spelling of the key columns, payload: [{column, output_name}] of the non-key columns it
      brings, key_types: the key columns' types}. `selected`: its entry of multi_join's `columns`
      (none: every non-key column); `renames`: its entry of `rename`. -#}
  {%- set described = adapter.get_columns_in_relation(relation) -%}
  {%- set available = described | map(attribute='name') | list -%}
  {%- set types = {} -%}
  {%- for column in described -%}
    {%- do types.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {%- if available | length == 0 -%}
    {%- do dbt_multijoin._mj_fail("input '" ~ name ~ "' (" ~ relation ~ ") does not exist or has no columns") -%}
  {%- endif -%}
  {%- set by_lower = {} -%}
  {%- for column in available -%}
    {%- do by_lower.update({column | lower: column}) -%}
  {%- endfor -%}

  {%- set key_columns = [] -%}
  {%- for k in keys -%}
    {%- if (k | lower) not in by_lower -%}
      {%- do dbt_multijoin._mj_fail("key column '" ~ k ~ "' not found in input '" ~ name ~ "' (" ~ relation ~ "); its columns: " ~ available | join(', ')) -%}
    {%- endif -%}
    {%- do key_columns.append(by_lower[k | lower]) -%}
  {%- endfor -%}

  {%- set kept = [] -%}
  {%- if selected is none -%}
    {%- set kept = available | reject('in', key_columns) | list -%}
  {%- else -%}
    {%- for column in dbt_multijoin._mj_as_list(selected) -%}
      {%- if column is not string or (column | lower) not in by_lower -%}
        {%- do dbt_multijoin._mj_fail("columns['" ~ name ~ "'] names '" ~ column ~ "', not a column of " ~ relation ~ " (" ~ available | join(', ') ~ ")") -%}
      {%- elif (column | lower) in keys | map('lower') | list -%}
        {%- do dbt_multijoin._mj_fail("columns['" ~ name ~ "'] lists the key column '" ~ column ~ "': key columns are always output once, coalesced") -%}
      {%- endif -%}
      {%- do kept.append(by_lower[column | lower]) -%}
    {%- endfor -%}
  {%- endif -%}

  {%- set new_names = {} -%}
  {%- for old, new in renames.items() -%}
    {%- if (old | lower) not in kept | map('lower') | list -%}
      {%- do dbt_multijoin._mj_fail("rename['" ~ name ~ "'] renames '" ~ old ~ "', which is not a selected non-key column of that input") -%}
    {%- endif -%}
    {%- if not dbt_multijoin._mj_is_identifier(new) -%}
      {%- do dbt_multijoin._mj_fail("rename['" ~ name ~ "'] target '" ~ new ~ "' is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)") -%}
    {%- endif -%}
    {%- do new_names.update({old | lower: new}) -%}
  {%- endfor -%}

  {%- set payload = [] -%}
  {%- for column in kept -%}
    {%- do payload.append({'column': column, 'output_name': new_names.get(column | lower, column)}) -%}
  {%- endfor -%}
  {%- set key_types = [] -%}
  {%- for k in key_columns -%}
    {%- do key_types.append(types[k | lower]) -%}
  {%- endfor -%}
  {{- return({'relation': relation, 'name': name, 'alias': alias, 'keys': key_columns, 'key_types': key_types, 'payload': payload}) -}}
{%- endmacro %}
