{#- Private: validate multi_join's arguments and resolve the column lists of every input. -#}

{% macro _mj_strategies() -%}
  {{- return(['multiway', 'chain', 'balanced']) -}}
{%- endmacro %}


{% macro _mj_model_strategy() -%}
  {#- The model's `strategy` config, validated; multiway when unset. -#}
  {%- set strategy = config.get('strategy') -%}
  {%- if strategy is none -%}
    {{- return('multiway') -}}
  {%- endif -%}
  {%- if strategy not in dbt_multijoin._mj_strategies() -%}
    {%- do dbt_multijoin._mj_fail("unknown strategy " ~ "'" ~ strategy ~ "'"
        ~ " (expected one of: " ~ dbt_multijoin._mj_strategies() | join(', ') ~ ")") -%}
  {%- endif -%}
  {{- return(strategy) -}}
{%- endmacro %}


{% macro _mj_spec(relations, key, join_type, strategy, columns, rename, names) -%}
  {#- Returns {strategy, keys: [output key names], inputs: [{relation, name, alias, keys: [column],
      payload: [[column, output name]]}]}. Every check runs before any SQL is rendered. -#}
  {%- if join_type not in ['full', 'left', 'inner'] -%}
    {%- do dbt_multijoin._mj_fail("unknown join_type " ~ "'" ~ join_type ~ "'" ~ " (multi_join supports 'full', 'left' and 'inner')") -%}
  {%- endif -%}

  {%- set model_strategy = dbt_multijoin._mj_model_strategy() -%}
  {%- if strategy is none -%}
    {%- set strategy = model_strategy -%}
  {%- elif strategy not in dbt_multijoin._mj_strategies() -%}
    {%- do dbt_multijoin._mj_fail("unknown strategy " ~ "'" ~ strategy ~ "'"
        ~ " (expected one of: " ~ dbt_multijoin._mj_strategies() | join(', ') ~ ")") -%}
  {%- elif config.get('strategy') is not none and strategy != model_strategy -%}
    {%- do dbt_multijoin._mj_fail("multi_join(strategy='" ~ strategy ~ "') contradicts the model config strategy='" ~ model_strategy ~ "'") -%}
  {%- endif -%}

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
      {%- do dbt_multijoin._mj_fail("input name " ~ "'" ~ name ~ "'" ~ " is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*): pass names=[...]") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if names | map('lower') | unique | list | length != names | length -%}
    {%- do dbt_multijoin._mj_fail("two inputs have the same name (" ~ names | join(', ') ~ "): pass names=[...] with one distinct name per input") -%}
  {%- endif -%}
  {%- for option, value in [('columns', columns), ('rename', rename)] -%}
    {%- if value is not none and value is not mapping -%}
      {%- do dbt_multijoin._mj_fail(option ~ " must map input names to " ~ ("column lists" if option == 'columns' else "{old: new} renames")) -%}
    {%- endif -%}
    {%- for name in (value or {}) -%}
      {%- if (name | lower) not in names | map('lower') | list -%}
        {%- do dbt_multijoin._mj_fail(option ~ " names an unknown input " ~ "'" ~ name ~ "'" ~ " (inputs: " ~ names | join(', ') ~ ")") -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endfor -%}

  {%- set inputs = [] -%}
  {%- for relation in relations -%}
    {%- set name = names[loop.index0] -%}
    {%- set available = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
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
    {%- set key_lower = keys | map('lower') | list -%}

    {%- set selected = dbt_multijoin._mj_lookup(columns, name) -%}
    {%- if selected is none -%}
      {%- set selected = available | reject('in', key_columns) | list -%}
    {%- else -%}
      {%- set wanted = dbt_multijoin._mj_as_list(selected) -%}
      {%- set selected = [] -%}
      {%- for column in wanted -%}
        {%- if column is not string or (column | lower) not in by_lower -%}
          {%- do dbt_multijoin._mj_fail("columns['" ~ name ~ "'] names " ~ "'" ~ column ~ "'" ~ ", not a column of " ~ relation ~ " (" ~ available | join(', ') ~ ")") -%}
        {%- elif (column | lower) in key_lower -%}
          {%- do dbt_multijoin._mj_fail("columns['" ~ name ~ "'] lists the key column '" ~ column ~ "': key columns are always output once, coalesced") -%}
        {%- endif -%}
        {%- do selected.append(by_lower[column | lower]) -%}
      {%- endfor -%}
    {%- endif -%}

    {%- set renames = {} -%}
    {%- for old, new in (dbt_multijoin._mj_lookup(rename, name) or {}).items() -%}
      {%- if (old | lower) not in selected | map('lower') | list -%}
        {%- do dbt_multijoin._mj_fail("rename['" ~ name ~ "'] renames " ~ "'" ~ old ~ "'" ~ ", which is not a selected non-key column of that input") -%}
      {%- endif -%}
      {%- if not dbt_multijoin._mj_is_identifier(new) -%}
        {%- do dbt_multijoin._mj_fail("rename['" ~ name ~ "'] target " ~ "'" ~ new ~ "'" ~ " is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)") -%}
      {%- endif -%}
      {%- do renames.update({old | lower: new}) -%}
    {%- endfor -%}

    {%- set payload = [] -%}
    {%- for column in selected -%}
      {%- do payload.append([column, renames.get(column | lower, column)]) -%}
    {%- endfor -%}
    {%- do inputs.append({'relation': relation, 'name': name, 'alias': 't' ~ loop.index, 'keys': key_columns, 'payload': payload}) -%}
  {%- endfor -%}

  {#- Output key columns take the first input's spelling. -#}
  {%- set key_names = inputs[0]['keys'] -%}

  {#- A non-key output name used by more than one input gets the input's name as prefix. -#}
  {%- set seen = {} -%}
  {%- for input in inputs -%}
    {%- for pair in input['payload'] -%}
      {%- do seen.update({pair[1] | lower: seen.get(pair[1] | lower, 0) + 1}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set prefixed = [] -%}
  {%- for input in inputs -%}
    {%- set payload = [] -%}
    {%- for pair in input['payload'] -%}
      {%- do payload.append([pair[0], (input['name'] ~ '_' ~ pair[1]) if seen[pair[1] | lower] > 1 else pair[1]]) -%}
    {%- endfor -%}
    {%- do prefixed.append({'relation': input['relation'], 'name': input['name'], 'alias': input['alias'], 'keys': input['keys'], 'payload': payload}) -%}
  {%- endfor -%}
  {%- set inputs = prefixed -%}
  {%- set outputs = key_names | map('lower') | list -%}
  {%- for input in inputs -%}
    {%- for pair in input['payload'] -%}
      {%- if (pair[1] | lower) in outputs -%}
        {%- do dbt_multijoin._mj_fail("output column '" ~ pair[1] ~ "' (from input '" ~ input['name'] ~ "', column '" ~ pair[0] ~ "') would appear twice: rename or drop it with rename= / columns=") -%}
      {%- endif -%}
      {%- do outputs.append(pair[1] | lower) -%}
    {%- endfor -%}
  {%- endfor -%}

  {#- A LEFT join is not associative: a balanced tree of LEFT joins is another query. -#}
  {%- if join_type == 'left' and strategy == 'balanced' -%}
    {%- do dbt_multijoin._mj_fail("strategy 'balanced' does not apply to join_type 'left' (use multiway or chain)") -%}
  {%- endif -%}
  {{- return({'strategy': strategy, 'join_type': join_type, 'keys': key_names, 'inputs': inputs}) -}}
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
