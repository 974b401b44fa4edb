{#- Private: the extension's class name, whether the session has the extension, and how to load
    it where the target's Spark runs. -#}

{% macro _mj_extension_class() -%}
  {#- The class for spark.sql.extensions. Macros cannot import Python: this must equal
      dbt_multijoin.EXTENSION_CLASS (tests/test_dbt_integration.py checks it). -#}
  {{- return('org.apache.spark.sql.multijoin.MultiJoinExtensions') -}}
{%- endmacro %}


{% macro _mj_has_function(name) -%}
  {#- Whether the session resolves the SQL function `name`: one of the extension's, which a jar
      older than the function, or no extension at all, leaves out. -#}
  {{- return((run_query("show functions like '" ~ name ~ "'") | length) > 0) -}}
{%- endmacro %}


{% macro _mj_missing_extension_help() -%}
  {#- How to load the extension where this target's Spark runs (see _target_kind.sql). -#}
  {%- set class = dbt_multijoin._mj_extension_class() -%}
  {%- set kind = dbt_multijoin._mj_spark_kind() -%}
  {%- if kind == 'session' -%}
    {{- return("this target runs Spark inside dbt (method: session): add to the profile's server_side_parameters spark.jars: <path printed by `dbt-multijoin jar`> and spark.sql.extensions: " ~ class
        ~ " (static confs, read when dbt starts the SparkSession; `dbt-multijoin profile --method session` prints a complete profile)") -}}
  {%- elif kind == 'thrift' -%}
    {{- return("this target is a Spark Thrift Server (method: thrift): restart it with --jars <jar> --conf spark.sql.extensions=" ~ class
        ~ ", with <jar> the path printed by `dbt-multijoin jar --spark <the server's Spark minor>` (`dbt-multijoin thrift start` does this for a local server; `dbt-multijoin thrift --help` shows the whole command); confs sent by dbt cannot load it into a running server") -}}
  {%- endif -%}
  {{- return("add the jar printed by `dbt-multijoin jar --spark <the cluster's Spark minor>` to the cluster's libraries and set spark.sql.extensions=" ~ class ~ " in its Spark config, then restart it (method session: the profile's server_side_parameters spark.jars and spark.sql.extensions; method thrift: start the server with --jars and --conf spark.sql.extensions, e.g. `dbt-multijoin thrift start`)") -}}
{%- endmacro %}


{% macro _mj_require_extension(settings) -%}
  {#- multiway needs the extension: returns its version; without it, fails with how to load it on
      this target, or (allow_vanilla_fallback) warns and returns none. -#}
  {%- if settings['strategy'] != 'multiway' -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set version = dbt_multijoin.extension_version() -%}
  {%- if version is not none -%}
    {{- return(version) -}}
  {%- endif -%}
  {%- set problem = "the MultiJoin extension is not loaded on target '" ~ target.name ~ "' (select multijoin_version() does not resolve)" -%}
  {%- if not settings['fallback'] -%}
    {%- do dbt_multijoin._mj_fail(problem ~ ". To load it: " ~ dbt_multijoin._mj_missing_extension_help()
        ~ ". Or set allow_vanilla_fallback=true on the model to run the same SQL through Spark's vanilla joins.") -%}
  {%- endif -%}
  {%- do exceptions.warn("dbt_multijoin: model '" ~ model.name ~ "': " ~ problem ~ "; allow_vanilla_fallback=true: running the same SQL through Spark's vanilla joins (same rows, no MultiJoin operator)") -%}
  {{- return(none) -}}
{%- endmacro %}
