{% macro it_probe_keys() %}
  {{- return([
    'spark.sql.shuffle.partitions',
    'spark.sql.session.timeZone',
    'spark.sql.caseSensitive',
    'spark.sql.ansi.enabled',
    'spark.multijoin.failOnFallback',
    'spark.dbt_multijoin_it.marker'
  ]) -}}
{% endmacro %}


{% materialization conf_probe, adapter='spark' %}
  {#- A table of (conf_key, conf_value): for each probe key, its value if the model's session has
      it explicitly set, '<not set>' otherwise, read with `SET` at run time, after the pre-hooks,
      in the model's own session; then the rows of the model's SQL, conf-dependent expressions
      Spark evaluates while it builds the table (current_timezone()). Comparing explicit
      settings, not effective values, also catches a restore that pinned a key to its default
      instead of unsetting it. -#}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table') -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {{ run_hooks(pre_hooks) }}
  {%- set explicit = {} -%}
  {%- for row in run_query('set') -%}
    {%- do explicit.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- if old_relation is not none -%}
    {{ adapter.drop_relation(old_relation) }}
  {%- endif -%}
  {%- call statement('main') -%}
    create table {{ target_relation }} using parquet as
    {% for key in it_probe_keys() -%}
    select
        '{{ key }}' as conf_key,
        '{{ explicit.get(key, "<not set>") | replace("\\", "\\\\") | replace("'", "\\'") }}' as conf_value
    union all
    {% endfor -%}
    select
        conf_key,
        conf_value
    from (
        {{ compiled_code }}
    ) as conf_dependent
  {%- endcall -%}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
