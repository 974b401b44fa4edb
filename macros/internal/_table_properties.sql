{#- Private: what the materialization records on the table it built, and reading it back. -#}

{% macro _mj_record_plan(relation, settings, operator, version, more_properties={}) -%}
  {#- Evidence that outlives the run: the strategy, the join operator of the plan (the generic test
      multijoin_operator_used reads it) and the extension's version; with `more_properties` (a
      changed_keys run's marks) in the same ALTER TABLE: one commit of a Delta or Iceberg table. -#}
  {%- set version = version if version is not none and modules.re.fullmatch('[A-Za-z0-9_.+-]{1,64}', version) else 'none' -%}
  {%- set properties = {'dbt_multijoin.strategy': settings['strategy'], 'dbt_multijoin.operator': operator, 'dbt_multijoin.extension_version': version} -%}
  {%- do properties.update(more_properties) -%}
  {%- set items = [] -%}
  {%- for property, value in properties.items() -%}
    {%- do items.append(dbt_multijoin._mj_string_literal(property) ~ ' = ' ~ dbt_multijoin._mj_string_literal(value)) -%}
  {%- endfor -%}
  {%- call statement('dbt_multijoin_record_plan') -%}
    alter table {{ relation }} set tblproperties ({{ items | join(', ') }})
  {%- endcall -%}
{%- endmacro %}


{% macro _mj_forget_recorded(relation) -%}
  {#- Unset every property the package recorded on `relation`. Iceberg's REPLACE TABLE keeps the
      replaced table's properties (Delta's does not): a rebuilt table would otherwise carry the
      marks, refill notes and merge-on-read sequence of the table it replaced, and the next run
      would read them as its own (after a --empty build, which records no mark, it would refresh
      an empty table from old marks). The run's own record follows the build. -#}
  {%- set keys = [] -%}
  {%- for key in dbt_multijoin._mj_table_properties(relation) if key.startswith('dbt_multijoin.') -%}
    {%- do keys.append(dbt_multijoin._mj_string_literal(key)) -%}
  {%- endfor -%}
  {%- if keys -%}
    {%- do dbt_multijoin._mj_exec('alter table ' ~ relation ~ ' unset tblproperties if exists (' ~ keys | join(', ') ~ ')') -%}
  {%- endif -%}
{%- endmacro %}


{% macro _mj_recorded_operator(relation) -%}
  {#- The operator _mj_record_plan recorded on `relation`, or none. -#}
  {{- return(dbt_multijoin._mj_table_properties(relation).get('dbt_multijoin.operator')) -}}
{%- endmacro %}


{% macro _mj_table_properties(relation) -%}
  {#- Every table property of `relation`: {key: value}. Of the relation itself, also where a
      --empty run renders it as a subquery (_mj_unlimited). -#}
  {%- set properties = {} -%}
  {%- for row in run_query('show tblproperties ' ~ dbt_multijoin._mj_unlimited(relation)) -%}
    {%- do properties.update({row['key']: row['value']}) -%}
  {%- endfor -%}
  {{- return(properties) -}}
{%- endmacro %}


{% macro _mj_table_format(properties) -%}
  {#- The format of a table by its properties (_mj_table_properties): 'iceberg', 'delta', or none
      for a table of neither. -#}
  {%- if (properties.get('format', '') | lower).startswith('iceberg') -%}
    {{- return('iceberg') -}}
  {%- endif -%}
  {{- return('delta' if 'delta.minReaderVersion' in properties else none) -}}
{%- endmacro %}
