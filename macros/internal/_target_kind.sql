{#- Private: where the target's Spark runs. -#}

{% macro _mj_spark_kind() -%}
  {#- Where this target's Spark runs, for advice on loading the jar: 'session' (dbt-spark's
      session method: pyspark drives Spark from dbt's own process), 'thrift' (a Spark Thrift
      Server) or 'cluster' (anything else). dbt's `target` does not carry the connection method
      for spark, so this reads the session's confs. -#}
  {%- set listing = dbt_multijoin._mj_conf_listing() -%}
  {%- set app = listing.get('spark.app.name', '') -%}
  {%- set hive_server = [] -%}
  {%- for key in listing if key.startswith('hive.server2.') -%}
    {%- do hive_server.append(key) -%}
  {%- endfor -%}
  {%- if hive_server or app.startswith('SparkSQL::') or app == 'Thrift JDBC/ODBC Server' -%}
    {{- return('thrift') -}}
  {%- elif 'spark.submit.pyFiles' in listing and 'spark.serializer.objectStreamReset' in listing -%}
    {{- return('session') -}}
  {%- endif -%}
  {{- return('cluster') -}}
{%- endmacro %}
