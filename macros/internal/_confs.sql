{#- Private: set the model's confs with a way back; put them back.

    Spark has one conf namespace per session. The session method shares one SparkSession across
    all models, so a SET outlives the model unless it is undone. Before changing a key we read
    whether it was explicitly set (the `SET` listing) and to what, and afterwards either SET it
    back or RESET it (RESET alone would fall back to the server default, not to a value the
    session was opened with, e.g. a thrift `set:hiveconf:` key).

    At threads above 1, the Python package's dbt plugin (dbt_multijoin/dbt_plugin.py) gives each
    dbt connection of the session method a Spark session of its own, marked
    spark.dbt_multijoin.session=per_connection: a model's SETs then end with its session, and
    the models running beside it cannot see them. Without the plugin, the session method at
    threads above 1 would run models that change confs side by side in one session: such a model
    fails instead (_mj_require_own_session).

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


{% macro _mj_session_mark() -%}
  {#- The conf the dbt plugin sets in each connection's own session (dbt_multijoin/dbt_plugin.py,
      SESSION_MARK_KEY and SESSION_MARK_VALUE there). -#}
  {{- return({'key': 'spark.dbt_multijoin.session', 'value': 'per_connection'}) -}}
{%- endmacro %}


{% macro _mj_own_session(listing) -%}
  {#- Whether this connection runs in a session of its own (the dbt plugin's mark is set). -#}
  {%- set mark = dbt_multijoin._mj_session_mark() -%}
  {{- return(listing.get(mark['key']) == mark['value']) -}}
{%- endmacro %}


{% macro _mj_shares_session(listing) -%}
  {#- Whether other dbt threads send their statements to this session while this model runs: the
      session method (one SparkSession for the whole dbt process) at threads above 1, without the
      dbt plugin's session per connection. A Thrift Server opens a session per connection. -#}
  {{- return(not dbt_multijoin._mj_own_session(listing) and (target.threads | int) > 1 and dbt_multijoin._mj_spark_kind() == 'session') -}}
{%- endmacro %}


{% macro _mj_require_own_session(listing, confs) -%}
  {#- Fails a model that would change confs in a session other threads use at the same time:
      their statements would run under its confs, and its own under theirs. -#}
  {%- if dbt_multijoin._mj_shares_session(listing) -%}
    {%- do dbt_multijoin._mj_fail("its confs (" ~ dbt_multijoin._mj_describe_confs(confs) ~ ") would be set in a SparkSession that " ~ target.threads
        ~ " dbt threads share: this target runs Spark inside dbt (method: session), where dbt-spark sends every thread's statements to one SparkSession, whose confs are one map for all of them."
        ~ " Install the Python package where dbt runs (pip install dbt-multijoin; from a checkout: pip install -e <checkout> --config-settings editable_mode=compat): its dbt plugin runs each model in a Spark session of its own"
        ~ " (installed but not loaded: dbt's log says why). Or run with threads: 1") -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_exec(sql) -%}
  {%- do adapter.execute(sql, auto_begin=False, fetch=False) -%}
{%- endmacro %}


{% macro _mj_conf_listing() -%}
  {#- {key: value} of every conf explicitly set in this session (`SET` without arguments). -#}
  {%- set listing = {} -%}
  {%- for row in run_query('set') -%}
    {%- do listing.update({row['key']: row['value']}) -%}
  {%- endfor -%}
  {{- return(listing) -}}
{%- endmacro %}


{% macro _mj_describe_confs(confs) -%}
  {#- "key=value, ..." of a list of {key, value}, for messages. -#}
  {%- set pairs = [] -%}
  {%- for conf in confs -%}
    {%- do pairs.append(conf['key'] ~ '=' ~ conf['value']) -%}
  {%- endfor -%}
  {{- return(pairs | join(', ')) -}}
{%- endmacro %}


{% macro _mj_put_back(saved) -%}
  {#- SET every saved key to its previous value, or RESET a key that was not set. -#}
  {%- for conf in saved -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(conf['key']) if conf['previous'] is none else dbt_multijoin._mj_set_sql(conf['key'], conf['previous'])) -%}
  {%- endfor -%}
{%- endmacro %}


{% macro _mj_set_confs(all_confs) -%}
  {#- SET every {key, value}; returns the saved state [{key, previous}, ...] (previous: the
      value the session had explicitly set, or none) that _mj_restore_confs takes. A conf marked
      `unless_set` (one the package prefers, not one the model asks for) gives way to a value the
      session has set explicitly (the profile's server_side_parameters, a pre-hook's SET). -#}
  {%- set saved = [] -%}
  {%- if all_confs | length == 0 -%}
    {{- return(saved) -}}
  {%- endif -%}
  {%- set before = dbt_multijoin._mj_conf_listing() -%}
  {%- set confs = [] -%}
  {%- for conf in all_confs if not (conf.get('unless_set') and conf['key'] in before) -%}
    {%- do confs.append(conf) -%}
  {%- endfor -%}
  {%- do dbt_multijoin._mj_require_own_session(before, confs) -%}
  {%- for conf in confs -%}
    {%- set previous = before.get(conf['key']) -%}
    {%- if previous is not none and ('${' in previous or previous.endswith('(redacted)')) -%}
      {%- do dbt_multijoin._mj_fail("spark_conf key '" ~ conf['key'] ~ "' has a value this session cannot restore (redacted or containing ${...}); set it outside the model") -%}
    {%- endif -%}
    {%- do saved.append({'key': conf['key'], 'previous': previous}) -%}
  {%- endfor -%}
  {#- Putting everything back first changes nothing, but fails on a key Spark refuses to change
      (a static or Spark core conf) before any key is changed. -#}
  {%- do dbt_multijoin._mj_put_back(saved) -%}
  {%- do dbt_multijoin._mj_write_ledger(saved) -%}
  {%- for conf in confs -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(conf['key'], conf['value'])) -%}
  {%- endfor -%}
  {#- Read back: a SET that did not stick must fail the model, not be ignored. In a session of
      its own nothing else writes; in dbt-spark's one session of the session method, dbt-spark
      re-applies the profile's server_side_parameters before every statement (a key listed there
      keeps the profile's value), and at threads above 1 another model's SET lands there too. -#}
  {%- set after = dbt_multijoin._mj_conf_listing() -%}
  {%- for conf in confs if after.get(conf['key']) != conf['value'] -%}
    {%- do dbt_multijoin._mj_restore_confs(saved) -%}
    {%- if dbt_multijoin._mj_own_session(after) -%}
      {%- set cause = "the model runs in a session of its own, so no other statement changed it: Spark did not keep the value as given" -%}
    {%- elif dbt_multijoin._mj_shares_session(after) -%}
      {%- set cause = "another model running at the same time set it: on the session method every one of the " ~ target.threads
          ~ " dbt threads sends its statements to one SparkSession; install the Python package where dbt runs (its dbt plugin runs each model in a session of its own) or run with threads: 1" -%}
    {%- else -%}
      {%- set cause = "on the session method, runtime confs in the profile's server_side_parameters are re-applied before every statement; remove the key from the profile or from the model" -%}
    {%- endif -%}
    {%- do dbt_multijoin._mj_fail("spark_conf '" ~ conf['key'] ~ "' = '" ~ conf['value'] ~ "' did not take effect (the session reports '"
        ~ after.get(conf['key']) ~ "'): " ~ cause) -%}
  {%- endfor -%}
  {%- for conf, was in zip(confs, saved) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": SET " ~ conf['key'] ~ "=" ~ conf['value'] ~ " (was " ~ (was['previous'] if was['previous'] is not none else "unset") ~ ")") -%}
  {%- endfor -%}
  {{- return(saved) -}}
{%- endmacro %}


{% macro _mj_write_ledger(saved) -%}
  {#- Records in the session what to restore ([{key, previous}]), before any key is changed. -#}
  {%- for conf in saved if conf['previous'] is not none -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_saved(conf['key']), conf['previous'])) -%}
  {%- endfor -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_pending(), saved | map(attribute='key') | join(','))) -%}
{%- endmacro %}


{% macro _mj_views_keep_their_plans() -%}
  {#- Makes the temporary views created from now on keep the plan Spark analyzed when they were
      created; returns the saved state that _mj_restore_confs takes to end that. A view created by
      SQL keeps its text by default, and every statement that reads it analyzes the text again:
      a changed_keys run's cached changes are read by several statements, and each one resolved
      every input table again (a Delta table's older version is rebuilt from its log each time)
      before finding the cached rows. Spark's conf for it, spark.sql.legacy.storeAnalyzedPlanForView,
      is set under the ledger like a model's confs (a statement that fails leaves it for
      restore_confs()), and not at all in a session other dbt threads use at the same time. -#}
  {%- set key = 'spark.sql.legacy.storeAnalyzedPlanForView' -%}
  {%- set listing = dbt_multijoin._mj_conf_listing() -%}
  {%- if dbt_multijoin._mj_shares_session(listing) or listing.get(key) == 'true' -%}
    {{- return([]) -}}
  {%- endif -%}
  {%- set saved = [{'key': key, 'previous': listing.get(key)}] -%}
  {%- do dbt_multijoin._mj_write_ledger(saved) -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(key, 'true')) -%}
  {{- return(saved) -}}
{%- endmacro %}


{% macro _mj_restore_confs(saved) -%}
  {#- Put every saved key back, then clear the ledger. -#}
  {%- do dbt_multijoin._mj_put_back(saved) -%}
  {%- for conf in saved if conf['previous'] is not none -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(dbt_multijoin._mj_ledger_saved(conf['key']))) -%}
  {%- endfor -%}
  {%- if saved | length > 0 -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(dbt_multijoin._mj_ledger_pending())) -%}
  {%- endif -%}
{%- endmacro %}
