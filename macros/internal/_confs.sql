{#- Private: the model's confs, validated; set them with a way back; put them back.

    Spark has one conf namespace per session. The session method shares one SparkSession across
    all models, so a SET outlives the model unless it is undone. Before changing a key we read
    whether it was explicitly set (the `SET` listing) and to what, and afterwards either SET it
    back or RESET it (RESET alone would fall back to the server default, not to a value the
    session was opened with, e.g. a thrift `set:hiveconf:` key).

    Jinja cannot catch an error, so a statement that fails while the confs are changed ends the
    materialization before it can restore them. Two defences:
    - the model's SQL is planned first with EXPLAIN, which reports analysis and planning errors
      as text instead of raising: those failures restore the confs before failing the model;
    - a ledger in the session itself (spark.dbt_multijoin.pending / .saved.<key>) records what to
      restore until the restore is done. `restore_confs()` replays it: every multijoin model runs
      it first, and a project can run it before every model as a pre-hook (docs/dbt_package.md). -#}

{% macro _mj_ledger_pending() -%}
  {{- return('spark.dbt_multijoin.pending') -}}
{%- endmacro %}


{% macro _mj_ledger_saved(key) -%}
  {{- return('spark.dbt_multijoin.saved.' ~ key) -}}
{%- endmacro %}


{% macro _mj_is_conf_key(key) -%}
  {#- Dotted names only: letters, digits, '_' and '-' between the dots. -#}
  {{- return(key is string and modules.re.fullmatch('[A-Za-z][A-Za-z0-9_-]*([.][A-Za-z0-9_-]+)+', key) is not none) -}}
{%- endmacro %}


{% macro _mj_is_conf_value(value) -%}
  {#- An allow-list: numbers, sizes, durations, booleans, class names, time zones, paths.
      No quotes, backticks, semicolons, spaces, comments or ${...} substitutions. -#}
  {{- return(value is string and value | length <= 1024 and modules.re.fullmatch('[A-Za-z0-9_.,:/+@%-]+', value) is not none) -}}
{%- endmacro %}


{% macro _mj_set_sql(key, value) -%}
  {#- Spark's quoted SET form: key and value are back-quoted identifiers. Keys passed here are
      validated; values come from the allow-list or from the server (a backtick is doubled). -#}
  {{- return('set `' ~ key ~ '` = `' ~ (value | replace('`', '``')) ~ '`') -}}
{%- endmacro %}


{% macro _mj_reset_sql(key) -%}
  {{- return('reset `' ~ key ~ '`') -}}
{%- endmacro %}


{% macro _mj_exec(sql) -%}
  {%- do adapter.execute(sql, auto_begin=False, fetch=False) -%}
{%- endmacro %}


{% macro _mj_conf_listing() -%}
  {#- {key: value} of every conf explicitly set in this session (`SET` without arguments). -#}
  {%- set listing = {} -%}
  {%- for row in run_query('set') -%}
    {%- do listing.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {{- return(listing) -}}
{%- endmacro %}


{% macro _mj_model_settings() -%}
  {#- The model's multijoin config, validated before any statement runs:
      {strategy, fallback, confs: [[key, value], ...]} (the model's spark_conf, then the
      strategy's own confs). -#}
  {%- set strategy = dbt_multijoin._mj_model_strategy() -%}
  {%- set fallback = config.get('allow_vanilla_fallback', false) -%}
  {%- if fallback is not sameas true and fallback is not sameas false -%}
    {%- do dbt_multijoin._mj_fail("allow_vanilla_fallback must be true or false, got '" ~ fallback ~ "'") -%}
  {%- endif -%}
  {%- set spark_conf = config.get('spark_conf') -%}
  {%- if spark_conf is none -%}
    {%- set spark_conf = {} -%}
  {%- elif spark_conf is not mapping -%}
    {%- do dbt_multijoin._mj_fail("spark_conf must be a mapping of conf keys to values, got '" ~ spark_conf ~ "'") -%}
  {%- endif -%}
  {%- set confs = [] -%}
  {%- for key, raw in spark_conf.items() -%}
    {%- if not dbt_multijoin._mj_is_conf_key(key) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is not a valid conf key (dotted name of letters, digits, '_' and '-')") -%}
    {%- elif key in ['spark.sql.extensions', 'spark.jars'] -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is static: it is set when the session or Thrift Server starts (see `dbt-multijoin profile`)") -%}
    {%- elif (key | lower) == 'spark.multijoin.failonfallback' -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is set by the multiway strategy: use allow_vanilla_fallback=true instead") -%}
    {%- elif (key | lower).startswith('spark.dbt_multijoin.') -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' is reserved for the package's own bookkeeping") -%}
    {%- endif -%}
    {%- if raw is sameas true or raw is sameas false -%}
      {%- set value = (raw | string | lower) -%}
    {%- elif raw is number -%}
      {%- set value = raw | string -%}
    {%- else -%}
      {%- set value = raw -%}
    {%- endif -%}
    {%- if not dbt_multijoin._mj_is_conf_value(value) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf value for '" ~ key ~ "' is not allowed: " ~ (value | string)[:80] ~ " (allowed: letters, digits and _ . , : / + @ % -)") -%}
    {%- endif -%}
    {%- do confs.append([key, value]) -%}
  {%- endfor -%}
  {%- if strategy == 'multiway' -%}
    {#- No silent fallback: a hinted query that cannot use the operator fails with the reason. -#}
    {%- do confs.append(['spark.multijoin.failOnFallback', 'true' if fallback is sameas false else 'false']) -%}
  {%- endif -%}
  {{- return({'strategy': strategy, 'fallback': fallback, 'confs': confs}) -}}
{%- endmacro %}


{% macro _mj_set_confs(confs) -%}
  {#- SET every [key, value]; returns the saved state [[key, previous value or none], ...] that
      _mj_restore_confs takes. -#}
  {%- set saved = [] -%}
  {%- if confs | length == 0 -%}
    {{- return(saved) -}}
  {%- endif -%}
  {%- set before = dbt_multijoin._mj_conf_listing() -%}
  {%- for key, value in confs -%}
    {%- set previous = before.get(key) -%}
    {%- if previous is not none and ('${' in previous or previous.endswith('(redacted)')) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ key ~ "' has a value this session cannot restore (redacted or containing ${...}); set it outside the model") -%}
    {%- endif -%}
    {%- do saved.append([key, previous]) -%}
  {%- endfor -%}
  {#- Replaying the restore first changes nothing, but fails on a key Spark refuses to change
      (a static or Spark core conf) before any key is changed. -#}
  {%- for key, previous in saved -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(key) if previous is none else dbt_multijoin._mj_set_sql(key, previous)) -%}
  {%- endfor -%}
  {%- for key, previous in saved if previous is not none -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_saved(key), previous)) -%}
  {%- endfor -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_pending(), saved | map('first') | join(','))) -%}
  {%- for key, value in confs -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(key, value)) -%}
  {%- endfor -%}
  {#- The session method re-applies the profile's server_side_parameters before every statement:
      a key listed there silently keeps the profile's value. Read back to make that loud. -#}
  {%- set after = dbt_multijoin._mj_conf_listing() -%}
  {%- for key, value in confs -%}
    {%- if after.get(key) != value -%}
      {%- do dbt_multijoin._mj_restore_confs(saved) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf '" ~ key ~ "' = '" ~ value ~ "' did not take effect (the session reports '"
          ~ after.get(key) ~ "'): on the session method, runtime confs in the profile's server_side_parameters are re-applied before every statement; remove the key from the profile or from the model") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for key, value in confs -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": SET " ~ key ~ "=" ~ value ~ " (was " ~ (saved[loop.index0][1] if saved[loop.index0][1] is not none else "unset") ~ ")") -%}
  {%- endfor -%}
  {{- return(saved) -}}
{%- endmacro %}


{% macro _mj_restore_confs(saved) -%}
  {#- Put every saved key back (SET the previous value, or RESET a key that was unset), then
      clear the ledger. -#}
  {%- for key, previous in saved -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(key) if previous is none else dbt_multijoin._mj_set_sql(key, previous)) -%}
  {%- endfor -%}
  {%- for key, previous in saved if previous is not none -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(dbt_multijoin._mj_ledger_saved(key))) -%}
  {%- endfor -%}
  {%- if saved | length > 0 -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(dbt_multijoin._mj_ledger_pending())) -%}
  {%- endif -%}
{%- endmacro %}
