{#- Private: change source 'iceberg_changelog' (the interface: sources.sql): an Iceberg table's
    changelog between the snapshot the last run read up to and the one the plan saw
    (`changed_since='change_feed'` on an Iceberg table). The changelog is a temporary view made
    by Iceberg's create_changelog_view procedure when the run reads the changes (prepare), never
    while the model is rendered or compiled, and dropped when the run ends (cleanup). Rows that a
    copy-on-write operation rewrote unchanged (carry-overs) are left out. The run reads the
    changelog once, into a scratch table, and everything else from that table: Spark 4.1 resolves
    the changelog's table anew on each reference, so a cache whose query reads the changelog is
    never found again, and each later statement of the run read the changelog again. -#}

{% macro _mj_iceberg_changelog_source(input, properties) -%}
  {%- if input['changed_since'] != 'change_feed' or dbt_multijoin._mj_table_format(properties) != 'iceberg' -%}
    {{- return(none) -}}
  {%- endif -%}
  {#- Its current snapshot: read with the format, in the same metadata query. -#}
  {{- return({'snapshot': properties.get('current-snapshot-id', 'none'), 'view': none}) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_plan_read(source, recorded) -%}
  {%- set mark = recorded['mark'] -%}
  {%- if mark == source['snapshot'] -%}
    {{- return({'unchanged': true, 'reads': 'no snapshot after ' ~ mark}) -}}
  {%- elif mark == 'none' -%}
    {{- return({'unchanged': false, 'reads': 'the whole table: it had no snapshot at the last run'}) -}}
  {%- elif not modules.re.fullmatch('-?\\d+', mark) -%}
    {%- do dbt_multijoin._mj_fail("the recorded snapshot " ~ mark ~ " of input '" ~ source['input']['name'] ~ "' (" ~ source['input']['relation'] ~ ") is not an Iceberg snapshot id: run with --full-refresh") -%}
  {%- endif -%}
  {{- return({'unchanged': false, 'reads': 'changelog, the snapshots after ' ~ mark ~ ' up to ' ~ source['snapshot']}) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_whole_read_covers(source) -%}
  {{- return(false) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_prepare(source, recorded) -%}
  {#- The changes as a temporary view (create_changelog_view), or the table itself when the last
      run saw it without a snapshot. The recorded snapshot must still be an ancestor of the
      current one. -#}
  {%- set relation = source['input']['relation'] | string -%}
  {%- set mark = recorded['mark'] -%}
  {%- if mark == 'none' -%}
    {%- do source.update({'view': relation}) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set where = "the recorded snapshot " ~ mark ~ " of input '" ~ source['input']['name'] ~ "' (" ~ relation ~ ")" -%}
  {%- set ancestor = run_query('select count(*) as n from ' ~ relation ~ '.history where snapshot_id = ' ~ mark ~ ' and is_current_ancestor') -%}
  {%- if source['snapshot'] == 'none' or (ancestor[0]['n'] | int) == 0 -%}
    {%- do dbt_multijoin._mj_fail(where ~ " is no longer in the table's history (expired, rolled back, or the table was replaced): run with --full-refresh") -%}
  {%- endif -%}
  {%- set view = dbt_multijoin._mj_temp_view('changes_' ~ source['input']['name']) -%}
  {%- do run_query("call spark_catalog.system.create_changelog_view(table => " ~ dbt_multijoin._mj_string_literal(relation) ~ ", options => map('start-snapshot-id', '" ~ mark ~ "', 'end-snapshot-id', '" ~ source['snapshot'] ~ "'), changelog_view => '" ~ view ~ "')") -%}
  {%- set table = dbt_multijoin._mj_input_scratch_table(source, 'changelog') -%}
  {%- set rows = 'select ' ~ dbt_multijoin._mj_column_list(source['input']['columns']) ~ ', _change_type, _change_ordinal from ' ~ view -%}
  {%- do dbt_multijoin._mj_write_scratch_table(table, rows, 'dbt_multijoin_changelog') -%}
  {%- do source.update({'view': view, 'rows': table | string, 'sized_reads': [rows]}) -%}
{%- endmacro %}


{% macro _mj_iceberg_changelog_read(source) -%}
  {#- What the run reads the changes from: the changelog's table, or the input itself. -#}
  {{- return(source.get('rows') or source['view']) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_changed_keys(source, recorded) -%}
  {{- return('select ' ~ dbt_multijoin._mj_source_keys_as_model_keys(source) ~ ', null as dbt_multijoin_mark from ' ~ dbt_multijoin._mj_iceberg_changelog_read(source) ~ ' as changed') -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_net_rows(source, recorded, columns) -%}
  {%- if source['view'] == (source['input']['relation'] | string) -%}
    {#- The last run saw the table without a snapshot: every row is new. -#}
    {{- return('select ' ~ dbt_multijoin._mj_column_list(columns) ~ ', true as dbt_multijoin_present, cast(null as string) as dbt_multijoin_mark from ' ~ source['view']) -}}
  {%- endif -%}
  {{- return(dbt_multijoin._mj_last_change_per_key(source, dbt_multijoin._mj_iceberg_changelog_read(source), "_change_type in ('INSERT', 'UPDATE_AFTER')", '_change_ordinal')) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_mark(source) -%}
  {{- return(none) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_full_state(source) -%}
  {{- return({'mark': source['snapshot'], 'version': none}) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_next_state(source, recorded, highest) -%}
  {{- return({'mark': source['snapshot'], 'version': none}) -}}
{%- endmacro %}


{% macro _mj_iceberg_changelog_cleanup(source) -%}
  {#- Also the table an earlier run that failed left. -#}
  {%- if source['view'] is not none and source['view'] != (source['input']['relation'] | string) -%}
    {%- do dbt_multijoin._mj_exec('drop view if exists ' ~ source['view']) -%}
    {#- Dropped once: a key-recompute run cleans up after its changes are read and again at its end. -#}
    {%- do source.update({'view': none}) -%}
  {%- endif -%}
  {%- do dbt_multijoin._mj_drop_own_table_if_present(dbt_multijoin._mj_input_scratch_table(source, 'changelog')) -%}
{%- endmacro %}
