{#- Private: the scratch objects of a changed_keys run, their names, writing and dropping them:
    - the changes view `<schema>__<model>__dbt_mj_changes` (temporary): every changed input's
      changed rows, the union of `..._changes_<input index>` (temporary, cached: that input's,
      read once);
    - the key table `<model>__dbt_mj_changed_keys`: their distinct non-NULL keys;
    - the rows table `<model>__dbt_mj_changed_rows`: the MERGE's source;
    - the NULL-rows table `<model>__dbt_mj_null_rows` (partial update): the changed inputs'
      NULL-keyed rows as they are now;
    - a source's own tables of an input (_mj_input_scratch_table): per Delta input with row
      tracking `<model>__dbt_mj_rewritten_now_<input>` and `..._then_<input>` (source_column.sql),
      per Iceberg input read through its changelog `<model>__dbt_mj_changelog_<input>`
      (source_iceberg_changelog.sql); the source writes and drops them.
    Tables, not views, where a later query must not see the changes' plan: a query that reads a
    Delta table's change feed (table_changes) and the same table itself resolves both to the
    feed's snapshot (Delta 3.3 and 4.x). A run drops what an earlier failed run of the model left
    before it writes any, and drops its own when it ends. -#}

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


{% macro _mj_cache_view(view, sql, statement_name) -%}
  {#- `sql`'s rows cached under the temporary view `view` (CACHE TABLE runs the query now; Spark
      keeps the rows in memory and spills them to disk). -#}
  {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ view) -%}
  {%- call statement(statement_name) -%}
    cache table {{ view }} as
{{ sql }}
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_write_scratch_table(relation, sql, statement_name) -%}
  {#- A parquet table of the package's own, created empty then filled
      (_mj_create_empty_then_insert says why). -#}
  {%- do dbt_multijoin._mj_drop_own_table(relation, false) -%}
  {%- do dbt_multijoin._mj_create_empty_then_insert(relation, 'create table ' ~ relation ~ ' using parquet as ', sql, statement_name) -%}
{%- endmacro %}


{% macro _mj_drop_changes_views(plan) -%}
  {#- The changes view, the inputs' cached views (dropping them uncaches them) and what the
      sources made for them. -#}
  {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ dbt_multijoin._mj_changes_view()) -%}
  {%- for input in plan['inputs'] -%}
    {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ dbt_multijoin._mj_input_changes_view(input['index'])) -%}
    {%- do dbt_multijoin._mj_source_do(input['source'], 'cleanup') -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _mj_drop_changed_keys_scratch(plan, relation) -%}
  {%- do dbt_multijoin._mj_drop_changes_views(plan) -%}
  {%- for table in [dbt_multijoin._mj_changed_keys_table(relation), dbt_multijoin._mj_changed_rows_table(relation), dbt_multijoin._mj_null_rows_table(relation)] -%}
    {%- do dbt_multijoin._mj_drop_own_table(table, false) -%}
  {%- endfor -%}
{%- endmacro %}
