{#- Private: set the model's confs with a way back; put them back.

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


{% macro _mj_set_confs(confs) -%}
  {#- SET every {key, value}; returns the saved state [{key, previous}, ...] (previous: the
      value the session had explicitly set, or none) that _mj_restore_confs takes. -#}
  {%- set saved = [] -%}
  {%- if confs | length == 0 -%}
    {{- return(saved) -}}
  {%- endif -%}
  {%- set before = dbt_multijoin._mj_conf_listing() -%}
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
  {%- for conf in saved if conf['previous'] is not none -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_saved(conf['key']), conf['previous'])) -%}
  {%- endfor -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_pending(), saved | map(attribute='key') | join(','))) -%}
  {%- for conf in confs -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(conf['key'], conf['value'])) -%}
  {%- endfor -%}
  {#- The session method re-applies the profile's server_side_parameters before every statement:
      a key listed there silently keeps the profile's value. Read back to make that loud. -#}
  {%- set after = dbt_multijoin._mj_conf_listing() -%}
  {%- for conf in confs if after.get(conf['key']) != conf['value'] -%}
    {%- do dbt_multijoin._mj_restore_confs(saved) -%}
    {%- do dbt_multijoin._mj_fail("spark_conf '" ~ conf['key'] ~ "' = '" ~ conf['value'] ~ "' did not take effect (the session reports '"
        ~ after.get(conf['key']) ~ "'): on the session method, runtime confs in the profile's server_side_parameters are re-applied before every statement; remove the key from the profile or from the model") -%}
  {%- endfor -%}
  {%- for conf, was in zip(confs, saved) -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": SET " ~ conf['key'] ~ "=" ~ conf['value'] ~ " (was " ~ (was['previous'] if was['previous'] is not none else "unset") ~ ")") -%}
  {%- endfor -%}
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
