{#- Private: EXPLAIN a query without raising, and read the plan. -#}

{% macro _mj_explain(sql) -%}
  {#- The physical plan as text. Spark's EXPLAIN catches analysis and planning errors and returns
      them as the plan text, so this never fails on a bad query (see _mj_plan_error). -#}
  {%- set lines = [] -%}
  {%- for row in run_query('explain ' ~ sql) -%}
    {%- do lines.append(row[0]) -%}
  {%- endfor -%}
  {{- return(lines | join('\n')) -}}
{%- endmacro %}


{% macro _mj_plan_error(plan) -%}
  {#- The error EXPLAIN reported instead of a plan ("== Physical Plan ==" then an exception), or none. -#}
  {%- set match = modules.re.search('== Physical Plan ==\\s*\\n\\s*([\\w.$]+(Exception|Error)\\b[\\s\\S]*)', plan) -%}
  {{- return(match.group(1).strip() if match else none) -}}
{%- endmacro %}


{% macro _mj_plan_uses_operator(plan) -%}
  {#- True when the physical plan has a MultiJoin node (optionally inside a codegen stage). -#}
  {{- return(modules.re.search('^[\\s:|+\\-]*(\\*\\(\\d+\\)\\s*)?MultiJoin\\b', plan, modules.re.M) is not none) -}}
{%- endmacro %}


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


{% macro _mj_missing_extension_help() -%}
  {#- How to load the extension where this target's Spark runs. -#}
  {%- set class = 'org.apache.spark.sql.multijoin.MultiJoinExtensions' -%}
  {%- set kind = dbt_multijoin._mj_spark_kind() -%}
  {%- if kind == 'session' -%}
    {{- return("this target runs Spark inside dbt (method: session): add to the profile's server_side_parameters spark.jars: <path printed by `dbt-multijoin jar`> and spark.sql.extensions: " ~ class
        ~ " (static confs, read when dbt starts the SparkSession; `dbt-multijoin profile --method session` prints a complete profile)") -}}
  {%- elif kind == 'thrift' -%}
    {{- return("this target is a Spark Thrift Server (method: thrift): start it with the jar, spark-submit --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2 --driver-class-path <jar> --jars <jar> --conf spark.sql.extensions=" ~ class
        ~ " ... with <jar> the path printed by `dbt-multijoin jar` (`dbt-multijoin thrift start` does this); confs sent by dbt cannot load it into a running server") -}}
  {%- endif -%}
  {{- return("add the jar printed by `dbt-multijoin jar` to the cluster's libraries and set spark.sql.extensions=" ~ class ~ " in its Spark config, then restart it (method session: the profile's server_side_parameters spark.jars and spark.sql.extensions; method thrift: start the server with --jars and --conf spark.sql.extensions, e.g. `dbt-multijoin thrift start`)") -}}
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


{% macro _mj_check_query(sql) -%}
  {#- Plan the query as the session stands: a parse error raises here and an analysis error is
      reported, while no conf of the model has been changed yet. -#}
  {%- set error = dbt_multijoin._mj_plan_error(dbt_multijoin._mj_explain(sql)) -%}
  {%- if error is not none -%}
    {%- do dbt_multijoin._mj_fail("Spark cannot plan the model's query: " ~ error) -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_check_plan(sql, settings, saved) -%}
  {#- Plan the query under the model's confs. Returns 'MultiJoin' or 'vanilla'. For multiway
      without fallback, a plan without the operator fails the model (confs restored first). -#}
  {%- set plan = dbt_multijoin._mj_explain(sql) -%}
  {%- set error = dbt_multijoin._mj_plan_error(plan) -%}
  {%- if error is not none -%}
    {%- do dbt_multijoin._mj_restore_confs(saved) -%}
    {%- do dbt_multijoin._mj_fail("Spark cannot plan the model's query with its confs (" ~ settings['confs'] | map('join', '=') | join(', ') ~ "): " ~ error) -%}
  {%- endif -%}
  {%- set operator = 'MultiJoin' if dbt_multijoin._mj_plan_uses_operator(plan) else 'vanilla' -%}
  {%- if settings['strategy'] == 'multiway' and operator != 'MultiJoin' -%}
    {%- if not settings['fallback'] -%}
      {%- do dbt_multijoin._mj_restore_confs(saved) -%}
      {%- do dbt_multijoin._mj_fail("strategy 'multiway' but the physical plan has no MultiJoin node (is spark.multijoin.enabled false, or is the query not a multi_join(...)?). Plan:\n" ~ plan) -%}
    {%- endif -%}
    {%- do exceptions.warn("dbt_multijoin: model '" ~ model.name ~ "': the plan has no MultiJoin node; allow_vanilla_fallback=true: running Spark's vanilla joins") -%}
  {%- endif -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": strategy " ~ settings['strategy'] ~ ", physical join operator: " ~ operator, info=True) -%}
  {{- return(operator) -}}
{%- endmacro %}


{% macro _mj_record_plan(relation, settings, operator, version) -%}
  {#- Evidence that outlives the run: which operator the plan used (multijoin_operator_used reads it). -#}
  {%- set version = version if version is not none and modules.re.fullmatch('[A-Za-z0-9_.+-]{1,64}', version) else 'none' -%}
  {%- call statement('dbt_multijoin_record_plan') -%}
    alter table {{ relation }} set tblproperties (
      'dbt_multijoin.strategy' = '{{ settings['strategy'] }}',
      'dbt_multijoin.operator' = '{{ operator }}',
      'dbt_multijoin.extension_version' = '{{ version }}'
    )
  {%- endcall -%}
{%- endmacro %}
