{#- Private: SQL text from names and values. Identifiers, quoting, string literals, column
    lists and key predicates: every name the package writes into SQL goes through here. -#}


{% macro _mj_is_identifier(name) -%}
  {#- A plain SQL identifier: what a rename target or an input name may be. -#}
  {{- return(name is string and modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name) is not none) -}}
{%- endmacro %}


{% macro _mj_quote(name) -%}
  {#- Quote a column name for Spark SQL when it needs it: names that are not plain identifiers
      or that are reserved words get backticks (a backtick inside is doubled), so no column
      name can break out of its identifier. -#}
  {%- if dbt_multijoin._mj_is_identifier(name) and (name | lower) not in dbt_multijoin._mj_reserved_words() -%}
    {{- return(name) -}}
  {%- endif -%}
  {{- return('`' ~ (name | replace('`', '``')) ~ '`') -}}
{%- endmacro %}


{% macro _mj_reserved_words() -%}
  {#- Spark's ANSI reserved keywords plus the strict non-reserved ones (join syntax). -#}
  {{- return([
    'all', 'and', 'anti', 'any', 'array', 'as', 'authorization', 'between', 'both', 'by', 'case',
    'cast', 'check', 'collate', 'column', 'constraint', 'create', 'cross', 'cube', 'current',
    'current_date', 'current_time', 'current_timestamp', 'current_user', 'date', 'default',
    'delete', 'describe', 'distinct', 'div', 'else', 'end', 'escape', 'except', 'exists',
    'false', 'fetch', 'filter', 'for', 'foreign', 'from', 'full', 'function', 'grant', 'group',
    'grouping', 'having', 'if', 'in', 'inner', 'insert', 'intersect', 'interval', 'into', 'is',
    'join', 'key', 'lateral', 'leading', 'left', 'like', 'limit', 'map', 'minus', 'natural',
    'not', 'null', 'of', 'offset', 'on', 'only', 'or', 'order', 'outer', 'overlaps', 'partition',
    'percent', 'primary', 'range', 'references', 'right', 'rollup', 'row', 'rows', 'select',
    'semi', 'session_user', 'set', 'setminus', 'some', 'struct', 'table', 'tablesample', 'then',
    'time', 'timestamp', 'to', 'trailing', 'true', 'union', 'unique', 'unknown', 'update',
    'user', 'using', 'values', 'when', 'where', 'window', 'with'
  ]) -}}
{%- endmacro %}


{% macro _mj_string_literal(text) -%}
  {#- A Spark SQL string literal for any text (backslash and quote escaped). -#}
  {{- return("'" ~ (text | string | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'") -}}
{%- endmacro %}


{% macro _mj_column_ref(alias, column) -%}
  {#- alias.column, the column quoted; the bare quoted column without an alias. -#}
  {{- return((alias ~ '.' if alias else '') ~ dbt_multijoin._mj_quote(column)) -}}
{%- endmacro %}


{% macro _mj_column_types(columns) -%}
  {#- {lower-case name: lower-case type} of dbt Columns (adapter.get_columns_in_relation). -#}
  {%- set types = {} -%}
  {%- for column in columns -%}
    {%- do types.update({column.name | lower: column.dtype | lower}) -%}
  {%- endfor -%}
  {{- return(types) -}}
{%- endmacro %}


{% macro _mj_column_list(columns, alias=none, indent=none) -%}
  {#- Quoted column names, optionally qualified: "a, b", or with indent=n one per line
      ("a,\n<n spaces>b") as a select list. -#}
  {%- set items = [] -%}
  {%- for column in columns -%}
    {%- do items.append(dbt_multijoin._mj_column_ref(alias, column)) -%}
  {%- endfor -%}
  {{- return(items | join(', ' if indent is none else ',\n' ~ ' ' * indent)) -}}
{%- endmacro %}


{% macro _mj_key_predicate(keys, template, joiner, indent) -%}
  {#- The WHERE / ON condition of the generic tests, to follow the keyword directly: template
      with {k} replaced by each quoted key column, joined by `joiner` (and/or). One key: " cond";
      more: each condition on its own line at `indent` spaces. -#}
  {%- set items = [] -%}
  {%- for k in keys -%}
    {%- do items.append(template | replace('{k}', dbt_multijoin._mj_quote(k))) -%}
  {%- endfor -%}
  {%- if items | length == 1 -%}
    {{- return(' ' ~ items[0]) -}}
  {%- endif -%}
  {%- set pad = '\n' ~ ' ' * indent -%}
  {{- return(pad ~ items | join(pad ~ joiner ~ ' ')) -}}
{%- endmacro %}


{% macro _mj_select_targets(columns, alias, indent) -%}
  {#- The whole select list, to follow SELECT [DISTINCT] directly: " a" for one column, else
      one column per line at `indent` spaces. -#}
  {%- if columns | length == 1 -%}
    {{- return(' ' ~ dbt_multijoin._mj_column_list(columns, alias)) -}}
  {%- endif -%}
  {{- return('\n' ~ ' ' * indent ~ dbt_multijoin._mj_column_list(columns, alias, indent=indent)) -}}
{%- endmacro %}
