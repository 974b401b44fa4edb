{#- Private: EXPLAIN a query without raising, read the error or the join operator from the plan,
    and the materialization's plan checks. -#}

{% macro _mj_explain(sql) -%}
  {#- The physical plan as text. Spark's EXPLAIN catches analysis and planning errors and returns
      them as the plan text, so this never fails on a bad query (see _mj_plan_error). -#}
  {%- set lines = [] -%}
  {%- for row in run_query('explain ' ~ sql) -%}
    {%- do lines.append(row['plan']) -%}
  {%- endfor -%}
  {{- return(lines | join('\n')) -}}
{%- endmacro %}


{% macro _mj_plan_error(plan) -%}
  {#- The error EXPLAIN reported instead of a plan, or none. Spark 3.5 prints an analysis error
      where the physical plan would be ("== Physical Plan ==" then the exception); a planning
      error, and on Spark 4 every error, comes as "Error occurred during query planning:" then
      the message. -#}
  {%- for pattern in [
      '== Physical Plan ==\\s*\\n\\s*([\\w.$]+(Exception|Error)\\b[\\s\\S]*)',
      '^Error occurred during query planning:\\s*([\\s\\S]*)'] -%}
    {%- set match = modules.re.search(pattern, plan, modules.re.M) -%}
    {%- if match -%}
      {{- return(match.group(1).strip()) -}}
    {%- endif -%}
  {%- endfor -%}
  {{- return(none) -}}
{%- endmacro %}


{% macro _mj_plan_uses_operator(plan) -%}
  {#- True when the physical plan has a MultiJoin node (optionally inside a codegen stage). -#}
  {{- return(modules.re.search('^[\\s:|+\\-]*(\\*\\(\\d+\\)\\s*)?MultiJoin\\b', plan, modules.re.M) is not none) -}}
{%- endmacro %}


{% macro _mj_empty_run() -%}
  {#- Whether this is a --empty run (dbt renders every ref and source as an empty subquery). -#}
  {{- return(flags.EMPTY is defined and flags.EMPTY is sameas true) -}}
{%- endmacro %}


{% macro _mj_check_query(sql) -%}
  {#- Analyse the query as the session stands, before any conf of the model is changed: a parse
      or analysis error (a column that does not resolve, say) fails the model here with Spark's
      message. DESCRIBE QUERY stops after analysis: unlike EXPLAIN it does not optimize the
      query, which for Delta inputs runs a job per input. Returns the query's column names. -#}
  {%- set columns = [] -%}
  {%- for row in run_query('describe query ' ~ sql) -%}
    {%- do columns.append(row['col_name']) -%}
  {%- endfor -%}
  {{- return(columns) -}}
{%- endmacro %}


{% macro _mj_check_plan(sql, settings, saved) -%}
  {#- Plan the query under the model's confs. Returns 'MultiJoin' or 'vanilla'. For multiway
      without fallback, a plan without the operator fails the model (confs restored first). -#}
  {%- set plan = dbt_multijoin._mj_explain(sql) -%}
  {%- set error = dbt_multijoin._mj_plan_error(plan) -%}
  {%- if error is not none -%}
    {%- do dbt_multijoin._mj_restore_confs(saved) -%}
    {%- do dbt_multijoin._mj_fail("Spark cannot plan the model's query with its confs (" ~ dbt_multijoin._mj_describe_confs(settings['confs']) ~ "): " ~ error) -%}
  {%- endif -%}
  {%- set operator = 'MultiJoin' if dbt_multijoin._mj_plan_uses_operator(plan) else 'vanilla' -%}
  {#- dbt build --empty reads every input through `(select * from <input> where false limit 0)`.
      The extension collapses the hinted chain before Spark's optimizer folds those empty inputs
      into empty local relations, so the plan still has its MultiJoin node over them: the proof
      runs, and the log says over what. -#}
  {%- set empty = dbt_multijoin._mj_empty_run() -%}
  {%- if settings['strategy'] == 'multiway' and operator != 'MultiJoin' -%}
    {%- if not settings['fallback'] -%}
      {%- do dbt_multijoin._mj_restore_confs(saved) -%}
      {%- do dbt_multijoin._mj_fail("strategy 'multiway' but the physical plan has no MultiJoin node (is spark.multijoin.enabled false, or is the query not a multi_join(...)?"
          ~ (" This is a --empty run: the plan is of the query over the empty inputs." if empty else "") ~ "). Plan:\n" ~ plan) -%}
    {%- endif -%}
    {%- do exceptions.warn("dbt_multijoin: model '" ~ model.name ~ "': the plan has no MultiJoin node; allow_vanilla_fallback=true: running Spark's vanilla joins") -%}
  {%- endif -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": strategy " ~ settings['strategy'] ~ ", physical join operator: " ~ operator
      ~ (" (--empty: planned over the empty inputs)" if empty else ""), info=True) -%}
  {{- return(operator) -}}
{%- endmacro %}


{% macro _mj_rendered_query_operator(sql, settings, saved) -%}
  {#- The join operator of a query the package renders itself around the model's multi_join call (a
      key-recompute refresh's rows), without planning it first. For multiway without fallback the
      confs hold spark.multijoin.failOnFallback=true: a hinted chain the operator cannot take fails
      the statement that runs it, with the reason, before that statement writes anything, so the
      write is its own proof. An EXPLAIN first would plan every input again (on Delta a job per
      input). The write cannot tell one thing: the extension switched off, which ignores the hint
      with a warning; read here. With allow_vanilla_fallback the run must say which joins ran:
      EXPLAIN, as for a model's own SQL. Chain and balanced render no hint: Spark's own joins. -#}
  {%- if settings['strategy'] == 'multiway' and settings['fallback'] -%}
    {{- return(dbt_multijoin._mj_check_plan(sql, settings, saved)) -}}
  {%- endif -%}
  {%- set operator = 'vanilla' -%}
  {%- if settings['strategy'] == 'multiway' -%}
    {%- set enabled = run_query('set spark.multijoin.enabled')[0]['value'] | string | trim | lower -%}
    {%- if enabled == 'false' -%}
      {%- do dbt_multijoin._mj_restore_confs(saved) -%}
      {%- do dbt_multijoin._mj_fail("strategy 'multiway' but spark.multijoin.enabled is false: the refresh would run Spark's own joins (set allow_vanilla_fallback=true to allow that)") -%}
    {%- endif -%}
    {%- set operator = 'MultiJoin' -%}
  {%- endif -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": strategy " ~ settings['strategy'] ~ ", physical join operator: " ~ operator
      ~ (" (spark.multijoin.failOnFallback fails the write otherwise)" if operator == 'MultiJoin' else ""), info=True) -%}
  {{- return(operator) -}}
{%- endmacro %}
