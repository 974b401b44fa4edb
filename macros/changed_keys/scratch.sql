{#- Private: the scratch objects of a changed_keys run, their names, writing and dropping them:
    - the changes view `<schema>__<model>__dbt_mj_changes` (temporary): every changed input's
      changed rows, the union of `..._changes_<input index>` (temporary, cached: that input's,
      read once);
    - the key table `<model>__dbt_mj_changed_keys`: their distinct non-NULL keys;
    - the rows table `<model>__dbt_mj_changed_rows`: the MERGE's source;
    - the NULL-rows table `<model>__dbt_mj_null_rows` (partial update): the NULL-keyed rows as
      they are now of the inputs whose changes hold one;
    - a source's own tables of an input (_mj_input_scratch_table): per Delta input with row
      tracking `<model>__dbt_mj_rewritten_now_<input>` and `..._then_<input>` (source_column.sql),
      per Iceberg input read through its changelog `<model>__dbt_mj_changelog_<input>`
      (source_iceberg_changelog.sql); the source writes and drops them.
    Tables, not views, where a later query must not see the changes' plan: a query that reads a
    Delta table's change feed (table_changes) and the same table itself resolves both to the
    feed's snapshot (Delta 3.3 and 4.x). A run drops what an earlier failed run of the model left
    before it writes any, and drops its own when it ends: the tables it finds in dbt's cache of
    relations (listed when dbt starts, told of each table the run writes), the temporary views by
    name at its start (an earlier run in the same Spark session may have left them) and then those
    it made. So a run sends a DROP only for what is there: each statement costs a round trip and,
    on Delta, a look at the log of the table it names. -#}

{% macro _mj_temp_view(suffix) -%}
  {#- The name of a temporary view of this model's run: `<schema>__<model>__dbt_mj_<suffix>`, the
      schema in front so that models of one name in two schemas never share one. -#}
  {{- return(modules.re.sub('[^a-z0-9_]', '_', (this.schema ~ '__' ~ this.identifier ~ '__dbt_mj_' ~ suffix) | lower)) -}}
{%- endmacro %}


{% macro _mj_input_scratch_table(source, kind) -%}
  {#- A change source's scratch table `<model>__dbt_mj_<kind>_<input name>`. -#}
  {{- return(dbt_multijoin._mj_sibling(this, '__dbt_mj_' ~ kind ~ '_' ~ modules.re.sub('[^a-z0-9_]', '_', source['input']['name'] | lower))) -}}
{%- endmacro %}


{% macro _mj_changes_view() -%}
  {{- return(dbt_multijoin._mj_temp_view('changes')) -}}
{%- endmacro %}


{% macro _mj_input_changes_view(index) -%}
  {#- Input `index`'s changes, cached; the changes view is their union. -#}
  {{- return(dbt_multijoin._mj_temp_view('changes_' ~ index)) -}}
{%- endmacro %}


{% macro _mj_changed_keys_table(relation) -%}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_changed_keys')) -}}
{%- endmacro %}


{% macro _mj_changed_rows_table(relation) -%}
  {#- A parquet table: cached in a view, the rows cost more (CACHE TABLE plans the query more
      than once, a job per Delta input each time), and the MERGE over the view was slower. -#}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_changed_rows')) -}}
{%- endmacro %}


{% macro _mj_null_rows_table(relation) -%}
  {{- return(dbt_multijoin._mj_sibling(relation, '__dbt_mj_null_rows')) -}}
{%- endmacro %}


{% macro _mj_cache_view(plan, view, sql, statement_name) -%}
  {#- `sql`'s rows cached under the temporary view `view` (CACHE TABLE runs the query now; Spark
      keeps the rows in memory and spills them to disk); the run's start dropped any of that name. -#}
  {%- do dbt_multijoin._mj_made_view(plan, view) -%}
  {%- call statement(statement_name) -%}
    cache table {{ view }} as
{{ sql }}
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_write_scratch_table(relation, sql, statement_name) -%}
  {#- A parquet table of the package's own, created empty then filled
      (_mj_create_empty_then_insert says why), and added to dbt's cache of relations, where the
      drops at the run's end find it. -#}
  {%- do dbt_multijoin._mj_drop_own_table_if_present(relation) -%}
  {%- do dbt_multijoin._mj_create_empty_then_insert(relation, 'create table ' ~ relation ~ ' using parquet as ', sql, statement_name) -%}
  {%- do adapter.cache_added(relation) -%}
{%- endmacro %}


{% macro _mj_made_view(plan, view) -%}
  {#- Notes a temporary view the run made, for _mj_drop_changes_views. -#}
  {%- do plan.setdefault('made_views', []).append(view) -%}
{%- endmacro %}


{% macro _mj_drop_changes_views(plan, leftovers=false) -%}
  {#- The temporary views the run made (dropping a cached one uncaches it), or with `leftovers` every
      view a run of the model makes (the changes view, each input's), and what the sources made
      for them. -#}
  {%- set views = plan.get('made_views', []) -%}
  {%- if leftovers -%}
    {%- set views = [dbt_multijoin._mj_changes_view()] -%}
    {%- for input in plan['inputs'] -%}
      {%- do views.append(dbt_multijoin._mj_input_changes_view(input['index'])) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- for view in views -%}
    {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ view) -%}
  {%- endfor -%}
  {%- do plan.update({'made_views': []}) -%}
  {%- for input in plan['inputs'] -%}
    {%- do dbt_multijoin._mj_source_do(input['source'], 'cleanup') -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _mj_drop_changed_keys_scratch(plan, relation, leftovers=false) -%}
  {#- The run's scratch objects; with `leftovers`, at the start of a run that reads changes, also
      the views an earlier run of the model in this session may have left. -#}
  {%- do dbt_multijoin._mj_drop_changes_views(plan, leftovers) -%}
  {%- set tables = [dbt_multijoin._mj_changed_keys_table(relation), dbt_multijoin._mj_changed_rows_table(relation), dbt_multijoin._mj_null_rows_table(relation)] -%}
  {#- An earlier release's merge-on-read refresh wrote the lookup of base keys to a table of its
      own, which a run killed before its drop left behind: no run writes it now. -#}
  {%- if leftovers -%}
    {%- do tables.append(dbt_multijoin._mj_sibling(relation, '__dbt_mj_in_base')) -%}
  {%- endif -%}
  {%- for table in tables -%}
    {%- do dbt_multijoin._mj_drop_own_table_if_present(table) -%}
  {%- endfor -%}
{%- endmacro %}
