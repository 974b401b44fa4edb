{#- Private: the strategy, and multi_join's arguments validated and resolved against the inputs'
    column lists. -#}

{% macro _mj_strategies() -%}
  {{- return(['multiway', 'chain', 'balanced']) -}}
{%- endmacro %}


{% macro _mj_strategy(requested=none) -%}
  {#- The model's strategy: the model's `strategy` config and multi_join's `strategy` argument
      (`requested`), each checked, and equal when both are given; multiway when neither is. -#}
  {%- set configured = dbt_multijoin._mj_config('strategy') -%}
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

  {#- The relations the inputs' columns come from: what dbt hands a unit test or a --empty run
      stands for one (_mj_described_relation). Their identifiers name the inputs by default, so
      that a unit test renders the column names a build does. -#}
  {%- set described = [] -%}
  {%- for relation in relations -%}
    {%- do described.append(dbt_multijoin._mj_described_relation(relation, 'input ' ~ loop.index)) -%}
  {%- endfor -%}

  {#- Input names: prefixes for colliding columns and keys of `columns` / `rename`. -#}
  {%- if names is none -%}
    {%- set names = described | map(attribute='identifier') | map('lower') | list -%}
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
    {%- do inputs.append(dbt_multijoin._mj_input(relation, described[loop.index0], name, 't' ~ loop.index, keys,
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


{% macro _mj_in_unit_test() -%}
  {#- Whether this is a dbt unit test of the model: dbt renders the model's SQL with each input
      replaced by a fixture CTE (`__dbt__cte__<name>`), and runs no materialization. -#}
  {{- return(model is defined and model.resource_type == 'unit_test') -}}
{%- endmacro %}


{% macro _mj_tested_model_name() -%}
  {#- The model a unit test tests (for messages), or this model's own name. -#}
  {%- if dbt_multijoin._mj_in_unit_test() and model.get('tested_node_unique_id') -%}
    {{- return(model['tested_node_unique_id'].split('.')[-1]) -}}
  {%- endif -%}
  {{- return(model.name) -}}
{%- endmacro %}


{% macro _mj_fixture_relation(relation, label) -%}
  {#- The relation a unit test's fixture CTE stands for. dbt builds a fixture's rows with that
      relation's columns (get_fixture_sql: adapter.get_columns_in_relation(this), `this` being the
      input's own database, schema and identifier, or its defer_relation when the input is not
      built here and --defer gave one), so its columns are the fixture's columns, and a unit test
      needs the input to exist but not to hold any rows. The fixture's node is in the unit test's
      manifest, which dbt gives to no macro but its own resolvers: it is read from `ref`'s. -#}
  {%- set tested = dbt_multijoin._mj_tested_model_name() -%}
  {%- set manifest = ref.manifest if ref.manifest is defined else none -%}
  {%- if manifest is none or manifest.nodes is not defined -%}
    {%- do dbt_multijoin._mj_fail("(unit test of model '" ~ tested ~ "') " ~ label ~ " is the unit-test fixture " ~ relation.identifier
        ~ ", and this dbt version does not say which relation it stands for; multi_join reads each input's columns from its relation") -%}
  {%- endif -%}
  {%- for node_id in model.depends_on.nodes -%}
    {%- set node = manifest.nodes.get(node_id) -%}
    {#- A source's fixture CTE is named after the fixture's unique id, <source>__<table>
        (UnitTestSourceDefinition.cte_name); a model, seed or snapshot's after its identifier
        (create_ephemeral_from). -#}
    {%- set cte = none if node is none else '__dbt__cte__' ~ (node_id.split('.')[-1] if node.source_name is defined else node.alias) -%}
    {%- if cte is not none and relation.identifier == cte -%}
      {%- set real = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias) -%}
      {%- set deferred = node.defer_relation if node.defer_relation is defined else none -%}
      {%- if deferred and load_relation(real) is none -%}
        {%- set real = api.Relation.create(database=deferred.database, schema=deferred.schema, identifier=deferred.alias) -%}
      {%- endif -%}
      {{- return(real) -}}
    {%- endif -%}
  {%- endfor -%}
  {%- do dbt_multijoin._mj_fail("(unit test of model '" ~ tested ~ "') " ~ label ~ " is the unit-test fixture " ~ relation.identifier
      ~ ", which none of the unit test's inputs (" ~ model.depends_on.nodes | join(', ') ~ ") stands for") -%}
{%- endmacro %}


{% macro _mj_described_relation(relation, label) -%}
  {#- The relation whose columns are the input's columns. multi_join's SQL reads the input as dbt
      hands it (a unit test's fixture CTE, or for --empty and --sample a subquery over the
      relation), but the columns come from the relation itself: the fixture's from the relation
      it stands for (_mj_fixture_relation), the subquery's from the relation without its limit or
      event-time filter (Spark cannot DESCRIBE a subquery). -#}
  {%- if relation.type == 'cte' or (relation.identifier or '').startswith('__dbt__cte__') -%}
    {%- if dbt_multijoin._mj_in_unit_test() -%}
      {{- return(dbt_multijoin._mj_fixture_relation(relation, label)) -}}
    {%- endif -%}
    {%- do dbt_multijoin._mj_fail(label ~ " (" ~ relation.identifier ~ ") is an ephemeral model: multi_join reads each input's columns from the database,"
        ~ " so an input must be a table or a view (materialized='view' builds nothing but a name)") -%}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_unlimited(relation)) -}}
{%- endmacro %}


{% macro _mj_unlimited(relation) -%}
  {#- `relation` itself, as statements about the relation (DESCRIBE, SHOW TBLPROPERTIES) must name
      it: dbt --empty renders a ref or source as `(select * from <relation> where false limit 0)`
      and --sample as a subquery with an event-time filter, which only a query can read.
      Anything else (a name given as a string) is returned as it is. -#}
  {%- if relation is not mapping or relation.limit is not defined -%}
    {{- return(relation) -}}
  {%- endif -%}
  {{- return(api.Relation.create(database=relation.database, schema=relation.schema, identifier=relation.identifier, type=relation.type)) -}}
{%- endmacro %}


{% macro _mj_input(relation, described_relation, name, alias, keys, selected, renames) -%}
  {#- One input resolved against its columns in the database: {relation: its FROM item as dbt
      handed it, described: the relation its columns come from (_mj_described_relation), name,
      alias, keys: its spelling of the key columns, payload: [{column, output_name}] of the
      non-key columns it brings, key_types: the key columns' types, described_columns: every
      column of `described` as {name, dtype}, in its order}. `selected`: its entry of
      multi_join's `columns` (none: every non-key column); `renames`: its entry of `rename`.
      Code that reads an input's metadata (columns, table properties, history) reads
      `described`; SQL that reads its rows reads `relation`. -#}
  {%- set described = adapter.get_columns_in_relation(described_relation) -%}
  {%- set available = described | map(attribute='name') | list -%}
  {%- set types = {} -%}
  {%- set described_columns = [] -%}
  {%- for column in described -%}
    {%- do types.update({column.name | lower: column.dtype | lower}) -%}
    {%- do described_columns.append({'name': column.name, 'dtype': column.dtype | lower}) -%}
  {%- endfor -%}
  {%- if available | length == 0 -%}
    {%- if dbt_multijoin._mj_in_unit_test() -%}
      {%- do dbt_multijoin._mj_fail("(unit test of model '" ~ dbt_multijoin._mj_tested_model_name() ~ "') input '" ~ name ~ "': the relation its fixture "
          ~ relation.identifier ~ " stands for, " ~ described_relation ~ ", does not exist or has no columns; dbt takes a fixture's columns from that relation too: build it first (it may be empty, e.g. dbt run --empty)") -%}
    {%- endif -%}
    {%- do dbt_multijoin._mj_fail("input '" ~ name ~ "' (" ~ described_relation ~ ") does not exist or has no columns") -%}
  {%- endif -%}
  {%- set by_lower = {} -%}
  {%- for column in available -%}
    {%- do by_lower.update({column | lower: column}) -%}
  {%- endfor -%}

  {%- set key_columns = [] -%}
  {%- for k in keys -%}
    {%- if (k | lower) not in by_lower -%}
      {%- do dbt_multijoin._mj_fail("key column '" ~ k ~ "' not found in input '" ~ name ~ "' (" ~ described_relation ~ "); its columns: " ~ available | join(', ')) -%}
    {%- endif -%}
    {%- do key_columns.append(by_lower[k | lower]) -%}
  {%- endfor -%}

  {%- set kept = [] -%}
  {%- if selected is none -%}
    {%- set kept = available | reject('in', key_columns) | list -%}
  {%- else -%}
    {%- for column in dbt_multijoin._mj_as_list(selected) -%}
      {%- if column is not string or (column | lower) not in by_lower -%}
        {%- do dbt_multijoin._mj_fail("columns['" ~ name ~ "'] names '" ~ column ~ "', not a column of " ~ described_relation ~ " (" ~ available | join(', ') ~ ")") -%}
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
  {{- return({'relation': relation, 'described': described_relation, 'name': name, 'alias': alias, 'keys': key_columns, 'key_types': key_types, 'payload': payload, 'described_columns': described_columns}) -}}
{%- endmacro %}
