{#- Private: change source 'delta_feed' (the interface: sources.sql): a Delta table's change data
    feed (`changed_since='change_feed'` on a table with delta.enableChangeDataFeed = true). Its
    mark is the table version the last run read up to; a run reads the feed's versions after it,
    up to the version the plan saw. The feed shows deletes and the old image of an update too, so
    a key a row left is a changed key as well. -#}

{% macro _mj_delta_feed_source(input, properties) -%}
  {%- if input['changed_since'] != 'change_feed' or (properties.get('delta.enableChangeDataFeed', '') | lower) != 'true' -%}
    {{- return(none) -}}
  {%- endif -%}
  {{- return({'version': run_query('describe history ' ~ input['relation'] ~ ' limit 1')[0]['version'] | string}) -}}
{%- endmacro %}


{% macro _mj_delta_feed_plan_read(source, recorded) -%}
  {%- set mark = recorded['mark'] -%}
  {%- if not modules.re.fullmatch('\\d+', mark) -%}
    {%- do dbt_multijoin._mj_fail("the recorded mark '" ~ mark ~ "' of input '" ~ source['input']['name'] ~ "' (" ~ source['input']['relation'] ~ ") is not a Delta version: run with --full-refresh") -%}
  {%- endif -%}
  {%- if (source['version'] | int) <= (mark | int) -%}
    {{- return({'unchanged': true, 'reads': 'no change feed version after ' ~ mark}) -}}
  {%- endif -%}
  {{- return({'unchanged': false, 'reads': 'change feed, versions ' ~ ((mark | int) + 1) ~ ' to ' ~ source['version']}) -}}
{%- endmacro %}


{% macro _mj_delta_feed_versions(source, recorded) -%}
  {%- set relation = dbt_multijoin._mj_string_literal(source['input']['relation'] | string) -%}
  {{- return('table_changes(' ~ relation ~ ', ' ~ ((recorded['mark'] | int) + 1) ~ ', ' ~ source['version'] ~ ')') -}}
{%- endmacro %}


{% macro _mj_delta_feed_whole_read_covers(source) -%}
  {{- return(false) -}}
{%- endmacro %}


{% macro _mj_delta_feed_prepare(source, recorded) -%}
{%- endmacro %}


{% macro _mj_delta_feed_changed_keys(source, recorded) -%}
  {{- return('select ' ~ dbt_multijoin._mj_source_keys_as_model_keys(source) ~ ', null as dbt_multijoin_mark from ' ~ dbt_multijoin._mj_delta_feed_versions(source, recorded) ~ ' as changed') -}}
{%- endmacro %}


{% macro _mj_delta_feed_net_rows(source, recorded, columns) -%}
  {{- return(dbt_multijoin._mj_last_change_per_key(source, dbt_multijoin._mj_delta_feed_versions(source, recorded), "_change_type in ('insert', 'update_postimage')", '_commit_version')) -}}
{%- endmacro %}


{% macro _mj_delta_feed_mark(source) -%}
  {{- return(none) -}}
{%- endmacro %}


{% macro _mj_delta_feed_full_state(source) -%}
  {{- return({'mark': source['version'], 'version': none}) -}}
{%- endmacro %}


{% macro _mj_delta_feed_next_state(source, recorded, highest) -%}
  {{- return({'mark': source['version'], 'version': none}) -}}
{%- endmacro %}


{% macro _mj_delta_feed_cleanup(source) -%}
{%- endmacro %}
