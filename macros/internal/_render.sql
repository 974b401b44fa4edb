{#- Private: render the joins of a resolved spec (see _mj_spec): the flat chain (strategies
    multiway and chain) and the balanced tree of CTEs. Names go through _quoting.sql. -#}

{% macro _mj_leaf(input) -%}
  {#- An input as one side of a join: its FROM item and the columns it brings,
      payload [{alias, column, output_name}]. -#}
  {%- set alias = input['alias'] -%}
  {%- set payload = [] -%}
  {%- for item in input['payload'] -%}
    {%- do payload.append({'alias': alias, 'column': item['column'], 'output_name': item['output_name']}) -%}
  {%- endfor -%}
  {#- An input restricted by a `where` (changed-keys runs), or carrying a presence column (a
      partial-update model's `dbt_multijoin_has_<input>`: true in its own rows, NULL where the
      join pads it), is read through a subquery. -#}
  {%- set marker = input.get('presence_column') -%}
  {%- if input.get('where') is none and marker is none -%}
    {%- set source = input['relation'] -%}
  {%- else -%}
    {%- set source = '(select *' ~ (', true as ' ~ marker if marker else '') ~ ' from ' ~ input['relation'] ~ (' where ' ~ input['where'] if input.get('where') else '') ~ ')' -%}
  {%- endif -%}
  {{- return({
      'from': source ~ ' as ' ~ alias,
      'keys': input['keys'] | map('string') | list,
      'alias': alias,
      'payload': payload}) -}}
{%- endmacro %}


{% macro _mj_select_list(key_exprs, key_names, payload) -%}
  {#- Each key expression AS its key name, then every {alias, column, output_name} of the
      payload. -#}
  {%- set items = [] -%}
  {%- for expr, key_name in zip(key_exprs, key_names) -%}
    {%- set name = dbt_multijoin._mj_quote(key_name) -%}
    {#- A plain column of the same name needs no alias (LEFT and INNER keys are the driver's). -#}
    {%- if expr.endswith('.' ~ name) -%}
      {%- do items.append(expr) -%}
    {%- else -%}
      {%- do items.append(expr ~ ' as ' ~ name) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for item in payload -%}
    {%- set ref = dbt_multijoin._mj_column_ref(item['alias'], item['column']) -%}
    {%- if item['column'] == item['output_name'] -%}
      {%- do items.append(ref) -%}
    {%- else -%}
      {%- do items.append(ref ~ ' as ' ~ dbt_multijoin._mj_quote(item['output_name'])) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(items) -}}
{%- endmacro %}


{% macro _mj_coalesce(exprs) -%}
  {{- return(exprs[0] if exprs | length == 1 else 'coalesce(' ~ exprs | join(', ') ~ ')') -}}
{%- endmacro %}


{% macro _mj_on(conditions) -%}
  {#- One equality per key column, ANDed. -#}
  {%- if conditions | length == 1 -%}
    {{- return('    on ' ~ conditions[0]) -}}
  {%- endif -%}
  {{- return('    on\n        ' ~ conditions | join('\n        and ')) -}}
{%- endmacro %}


{% macro _mj_chain_head(spec, hint, coalesced) -%}
  {#- The leaves of the inputs and the SELECT lines of a chain over them: per key column the
      coalesce of every input's key (`coalesced`: FULL) or the first input's (LEFT, INNER), then
      every input's payload. Returns {sides, lines}. -#}
  {%- set sides = [] -%}
  {%- set payload = [] -%}
  {%- for input in spec['inputs'] -%}
    {%- set side = dbt_multijoin._mj_leaf(input) -%}
    {%- do sides.append(side) -%}
    {%- do payload.extend(side['payload']) -%}
  {%- endfor -%}
  {%- set key_exprs = [] -%}
  {%- for k in range(spec['keys'] | length) -%}
    {%- set refs = [] -%}
    {%- for side in sides -%}
      {%- do refs.append(dbt_multijoin._mj_column_ref(side['alias'], side['keys'][k])) -%}
    {%- endfor -%}
    {%- do key_exprs.append(dbt_multijoin._mj_coalesce(refs) if coalesced else refs[0]) -%}
  {%- endfor -%}
  {%- set lines = ['select /*+ MULTI_JOIN */' if hint else 'select'] -%}
  {%- set items = dbt_multijoin._mj_select_list(key_exprs, spec['keys'], payload) -%}
  {%- for item in items -%}
    {%- do lines.append('    ' ~ item ~ (',' if not loop.last else '')) -%}
  {%- endfor -%}
  {{- return({'sides': sides, 'lines': lines}) -}}
{%- endmacro %}


{% macro _mj_render_chain(spec, hint) -%}
  {#- R1 FULL JOIN R2 ON R1.K = R2.K FULL JOIN R3 ON coalesce(R1.K, R2.K) = R3.K ...
      select coalesce(R1.K, ..., Rn.K) AS K: the flat spelling of the nested-coalesce form. -#}
  {%- set head = dbt_multijoin._mj_chain_head(spec, hint, spec['join_type'] == 'full') -%}
  {%- set sides = head['sides'] -%}
  {%- set lines = head['lines'] -%}
  {%- do lines.append('from ' ~ sides[0]['from']) -%}
  {%- for side in sides[1:] -%}
    {%- set earlier = sides[:loop.index] -%}
    {%- set conditions = [] -%}
    {%- for k in range(spec['keys'] | length) -%}
      {%- set refs = [] -%}
      {%- for left in (earlier if spec['join_type'] == 'full' else earlier[:1]) -%}
        {%- do refs.append(dbt_multijoin._mj_column_ref(left['alias'], left['keys'][k])) -%}
      {%- endfor -%}
      {%- do conditions.append(dbt_multijoin._mj_coalesce(refs) ~ ' = ' ~ dbt_multijoin._mj_column_ref(side['alias'], side['keys'][k])) -%}
    {%- endfor -%}
    {%- do lines.append(dbt_multijoin._mj_join_keyword(spec) ~ ' ' ~ side['from']) -%}
    {%- do lines.append(dbt_multijoin._mj_on(conditions)) -%}
  {%- endfor -%}
  {{- return(lines | join('\n')) -}}
{%- endmacro %}


{% macro _mj_render_balanced(spec) -%}
  {#- Pairs joined as a balanced binary tree, ((R1 R2) (R3 R4)) ..., every inner pair a CTE
      whose key columns are the coalesce of its two sides. Same rows as the chain. -#}
  {%- set ctes = [] -%}
  {%- set root = dbt_multijoin._mj_tree(spec, 0, spec['inputs'] | length, ctes) -%}
  {#- The root was appended last: it is the final select, not a CTE. -#}
  {%- if ctes | length == 1 -%}
    {{- return(root['select']) -}}
  {%- endif -%}
  {{- return('with ' ~ ctes[:-1] | join(',\n\n') ~ '\n\n' ~ root['select']) -}}
{%- endmacro %}


{% macro _mj_tree(spec, lo, hi, ctes) -%}
  {#- The side for inputs[lo:hi]: a leaf, or the join of its two halves. Inner joins are
      appended to `ctes` (children first); the caller renders the root's select. -#}
  {%- if hi - lo == 1 -%}
    {{- return(dbt_multijoin._mj_leaf(spec['inputs'][lo])) -}}
  {%- endif -%}
  {%- set mid = ((lo + hi) / 2) | round(0, 'ceil') | int -%}
  {%- set left = dbt_multijoin._mj_tree(spec, lo, mid, ctes) -%}
  {%- set right = dbt_multijoin._mj_tree(spec, mid, hi, ctes) -%}
  {%- set key_exprs = [] -%}
  {%- set conditions = [] -%}
  {%- for k in range(spec['keys'] | length) -%}
    {%- set l = dbt_multijoin._mj_column_ref(left['alias'], left['keys'][k]) -%}
    {%- set r = dbt_multijoin._mj_column_ref(right['alias'], right['keys'][k]) -%}
    {%- do key_exprs.append('coalesce(' ~ l ~ ', ' ~ r ~ ')') -%}
    {%- do conditions.append(l ~ ' = ' ~ r) -%}
  {%- endfor -%}
  {%- set lines = ['select'] -%}
  {%- set items = dbt_multijoin._mj_select_list(key_exprs, spec['keys'], left['payload'] + right['payload']) -%}
  {%- for item in items -%}
    {%- do lines.append('    ' ~ item ~ (',' if not loop.last else '')) -%}
  {%- endfor -%}
  {%- do lines.append('from ' ~ left['from']) -%}
  {%- do lines.append(dbt_multijoin._mj_join_keyword(spec) ~ ' ' ~ right['from']) -%}
  {%- do lines.append(dbt_multijoin._mj_on(conditions)) -%}
  {%- set select = lines | join('\n') -%}
  {%- set name = 'j' ~ (lo + 1) ~ '_' ~ hi -%}
  {%- do ctes.append(name ~ ' as (\n' ~ (select | indent(4, true)) ~ '\n)') -%}
  {%- set payload = [] -%}
  {#- Above this CTE, its columns are read by their output names. -#}
  {%- for item in left['payload'] + right['payload'] -%}
    {%- do payload.append({'alias': name, 'column': item['output_name'], 'output_name': item['output_name']}) -%}
  {%- endfor -%}
  {{- return({
      'select': select,
      'from': name,
      'keys': spec['keys'],
      'alias': name,
      'payload': payload}) -}}
{%- endmacro %}


{% macro _mj_join_keyword(spec) -%}
  {{- return({'full': 'full outer join', 'left': 'left outer join', 'inner': 'inner join'}[spec['join_type']]) -}}
{%- endmacro %}
