{% macro it_check_empty_build(results) %}
  {#- on-run-end (dbt_project.yml). For `dbt build --empty` into a schema of its own, with
      --vars '{empty_build_reference_schema: <the schema of a full build>}': every multijoin model
      this run built has no rows, and the columns and types, in order, of the same model in the
      reference schema. Logs one line per model, and fails the run naming each model that
      differs. Without the var it does nothing. -#}
  {%- set reference = var('empty_build_reference_schema', none) -%}
  {%- if not execute or reference is none -%}
    {{- return('') -}}
  {%- endif -%}
  {%- set problems = [] -%}
  {%- for result in results if result.node.resource_type == 'model' and result.node.config.materialized == 'multijoin' and result.status == 'success' -%}
    {%- set node = result.node -%}
    {%- set built = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- set full = api.Relation.create(database=node.database, schema=reference, identifier=node.alias) -%}
    {%- set columns = {} -%}
    {%- for side, relation in [('empty', built), ('full', full)] -%}
      {%- set described = [] -%}
      {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do described.append(column.name ~ ' ' ~ column.dtype) -%}
      {%- endfor -%}
      {%- do columns.update({side: described}) -%}
    {%- endfor -%}
    {%- set rows = run_query('select count(*) as n from ' ~ built)[0]['n'] -%}
    {%- if rows != 0 or columns['empty'] != columns['full'] or not columns['full'] -%}
      {%- do problems.append(node.name ~ ': ' ~ rows ~ ' rows, columns ' ~ columns['empty'] | join(', ') ~ ' where ' ~ full ~ ' has ' ~ columns['full'] | join(', ')) -%}
    {%- else -%}
      {%- do log('it_empty_build: ' ~ node.name ~ ': 0 rows, the columns of ' ~ full ~ ': ' ~ columns['full'] | join(', '), info=True) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if problems -%}
    {%- do exceptions.raise_compiler_error('it_empty_build: ' ~ problems | join('; ')) -%}
  {%- endif -%}
  {{- return('') -}}
{% endmacro %}
