{#- Private: the change sources of changed_keys, behind one interface: how an input shows which of
    its rows changed since the last run.

    Each source is one file, source_<kind>.sql, and nothing outside it tells the kinds apart:
    - column (source_column.sql): a changed_since column that grows when a row is written;
    - delta_feed (source_delta_feed.sql): a Delta table's change data feed;
    - iceberg_changelog (source_iceberg_changelog.sql): an Iceberg table's changelog.

    A source is a dict {kind, input: {name, relation, keys, columns, described_columns,
    changed_since, model_keys}, ...what the kind needs} (`described_columns`: every column of the
    input as the plan described it, {name, dtype}), made by its constructor at plan time, and
    these macros of the kind, all reached through _mj_source_do(source, operation, ...):
    - _mj_<kind>_source(input, properties): the source of `input` (`properties`: its table
      properties), with where the input stands now (a version, a snapshot); none when this kind
      does not read it (the kinds are asked in the order of _mj_change_source_kinds);
    - plan_read(source, recorded): what the run will read since `recorded` ({mark, version}),
      stored in the source; returns {unchanged: nothing to read, reads: the log's words};
    - whole_read_covers(source): whether reading the whole input shows all the source would (a
      column: yes; a change feed also shows the keys rows left: no);
    - prepare(source, recorded): what must exist before the changes are read (a view, scratch
      tables), at run time. A source that writes scratch tables reads the input only through them
      (a cache of the changes is then found by every later statement: Spark never finds one whose
      query reads an Iceberg changelog on Spark 4.1, or a Delta table with row tracking on Spark
      3.5), and lists the queries it writes them from in its `sized_reads`, whose files the read
      log counts;
    - changed_keys(source, recorded): a query of the changed rows' keys, under the model's key
      names, and `dbt_multijoin_mark` (the row's changed_since value, or NULL) (key recompute);
    - net_rows(source, recorded, columns): a query of the changed keys' rows as they are now, one
      per key: the input's `columns`, `dbt_multijoin_present` (false: the key left the input) and
      `dbt_multijoin_mark` (partial update);
    - mark(source): how its rows carry their changed_since values in `dbt_multijoin_mark`:
      {instant: whether they are instants, whose marks are recorded in microseconds}, or none when
      they carry none (a change feed: its mark is where it stands);
    - full_state(source): what a full build records: {mark, version} or {query} (a one-row query of
      `mark`, run with the other inputs' in one job);
    - next_state(source, recorded, highest): what an incremental run records, `highest` being the
      largest `dbt_multijoin_mark` read (none when none);
    - cleanup(source): drop what prepare made.
    A new source is one file defining these, and its name in _mj_change_source_kinds. -#}

{% macro _mj_change_source_kinds() -%}
  {#- The change sources, asked in this order which one reads an input. -#}
  {{- return(['delta_feed', 'iceberg_changelog', 'column']) -}}
{%- endmacro %}


{% macro _mj_change_source(input, spec) -%}
  {#- The change source of a spec's input (one SHOW TBLPROPERTIES, shared by every kind). -#}
  {%- set relation = dbt_multijoin._mj_metadata_relation(input['relation']) -%}
  {%- set properties = dbt_multijoin._mj_table_properties(relation) -%}
  {%- set described = {'name': input['name'], 'relation': relation, 'keys': input['keys'],
      'columns': input['keys'] + input['payload'] | map(attribute='column') | reject('equalto', input.get('presence_column')) | list,
      'described_columns': input['described_columns'], 'changed_since': input['changed_since'], 'model_keys': spec['keys']} -%}
  {%- for kind in dbt_multijoin._mj_change_source_kinds() -%}
    {%- set source = dbt_multijoin['_mj_' ~ kind ~ '_source'](described, properties) -%}
    {%- if source is not none -%}
      {%- do source.update({'kind': kind, 'input': described}) -%}
      {{- return(source) -}}
    {%- endif -%}
  {%- endfor -%}
  {#- A view (a merge-on-read model's relation is one) has no change feed of its own: say so, as
      the likeliest reason a feed was asked of a model's relation. -#}
  {%- set found = load_cached_relation(relation) -%}
  {%- set what = 'a view' if found is not none and found.type == 'view' else 'this table' -%}
  {%- do dbt_multijoin._mj_fail("changed_since '" ~ input['changed_since'] ~ "' for input '" ~ input['name'] ~ "' (" ~ relation
      ~ "): no change source reads " ~ what ~ ". 'change_feed' needs an Iceberg table, or a Delta table with delta.enableChangeDataFeed = true (alter table ... set tblproperties); for other tables and for views (a merge-on-read model's relation is a view) name a column instead") -%}
{%- endmacro %}


{% macro _mj_source_do(source, operation) -%}
  {#- `_mj_<kind>_<operation>(source, ...)`: the one way to a source's macros. -#}
  {{- return(dbt_multijoin['_mj_' ~ source['kind'] ~ '_' ~ operation](source, *varargs)) -}}
{%- endmacro %}


{% macro _mj_metadata_relation(relation) -%}
  {#- The relation itself, for statements about it (DESCRIBE, SHOW TBLPROPERTIES, time travel):
      `dbt build --empty` renders a ref or source as a subquery that only a query can read. -#}
  {%- if relation is mapping and relation.limit is defined and relation.limit is not none -%}
    {{- return(relation.incorporate(limit=none)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{%- endmacro %}


{#- What several sources share. -#}
{% macro _mj_source_keys_as_model_keys(source, alias=none) -%}
  {#- The input's key columns under the model's key names: ['k as device_id', ...]. -#}
  {%- set items = [] -%}
  {%- for k in source['input']['keys'] -%}
    {%- do items.append(dbt_multijoin._mj_column_ref(alias, k) ~ ' as ' ~ dbt_multijoin._mj_quote(source['input']['model_keys'][loop.index0])) -%}
  {%- endfor -%}
  {{- return(items | join(', ')) -}}
{%- endmacro %}


{% macro _mj_last_change_per_key(source, feed, added, order) -%}
  {#- A change feed's last change of each key, as net rows (the interface's `net_rows`): whether
      that change left a row (`added`: an insert or an update's new image) or took it away (a
      delete, or the old image of an update that moved the row to another key). Within one commit
      (one `order` value) a key may lose a row and gain another (an UPDATE that shifts keys): the
      row it gains wins, since it is there when the commit ends. -#}
  {%- set keys = dbt_multijoin._mj_column_list(source['input']['keys']) -%}
  {%- set columns = dbt_multijoin._mj_column_list(source['input']['columns']) -%}
  {{- return('select ' ~ columns ~ ', dbt_multijoin_present, cast(null as string) as dbt_multijoin_mark from (select *, row_number() over (partition by ' ~ keys ~ ' order by ' ~ order ~ ' desc, dbt_multijoin_present desc) as dbt_multijoin_rank from (select *, ' ~ added ~ ' as dbt_multijoin_present from ' ~ feed ~ ') as feed) as ranked where dbt_multijoin_rank = 1') -}}
{%- endmacro %}
