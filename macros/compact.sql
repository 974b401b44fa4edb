{% macro compact(model_name) -%}
  {#- Fold a merge-on-read model's delta rows into its base rows now, as a run does once they pass
      the model's compaction_share: `dbt run-operation dbt_multijoin.compact --args
      '{model_name: device_profile}'`. One statement, one commit: readers see the table as before, and
      a compaction that is stopped leaves it so. docs/dbt_package.md ("merge-on-read"). -#}
  {%- set nodes = [] -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.name == model_name -%}
    {%- do nodes.append(node) -%}
  {%- endfor -%}
  {%- if nodes | length != 1 -%}
    {{ exceptions.raise_compiler_error("dbt_multijoin.compact: no one model named '" ~ model_name ~ "' (found " ~ nodes | length ~ ")") }}
  {%- endif -%}
  {%- set node = nodes[0] -%}
  {%- set view = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias, type='view') -%}
  {%- set store = dbt_multijoin._mj_mor_store(view) -%}
  {%- set properties = dbt_multijoin._mj_table_properties(store) if load_cached_relation(store) is not none else {} -%}
  {%- if 'dbt_multijoin.mor.keys' not in properties -%}
    {{ exceptions.raise_compiler_error("dbt_multijoin.compact: model '" ~ model_name ~ "' has no merge-on-read store " ~ store ~ " (layout='merge_on_read', built at least once)") }}
  {%- endif -%}
  {%- set keys = fromjson(properties['dbt_multijoin.mor.keys']) -%}
  {%- set share = dbt_multijoin._mj_mor_compaction_setting('compaction_share', node.config) -%}
  {%- set max_rows = dbt_multijoin._mj_mor_compaction_setting('compaction_max_delta_rows', node.config) -%}
  {%- set before = dbt_multijoin._mj_mor_store_state(store) -%}
  {#- It reads the view; a run's compaction can read the same rows without the broadcast, as it
      renders the model, which this operation cannot. -#}
  {%- if max_rows is number and not dbt_multijoin._mj_mor_broadcasts_delta(before['delta_rows'], max_rows) -%}
    {{ exceptions.raise_compiler_error("dbt_multijoin.compact: model '" ~ model_name ~ "' has " ~ before['delta_rows'] ~ " delta rows, more than twice its compaction_max_delta_rows " ~ max_rows ~ ", which this operation would broadcast to every task; compact them in a run, which joins them by a shuffle: dbt run --select " ~ model_name ~ " --vars '{dbt_multijoin_compact: true}'") }}
  {%- endif -%}
  {#- The compaction's confs, set for its statement alone where the session has not set them: a
      run-operation's connection ends with it, so one that fails midway leaves them to no one. -#}
  {%- set listing = dbt_multijoin._mj_conf_listing() -%}
  {%- set confs = [] -%}
  {%- for conf in dbt_multijoin._mj_mor_compaction_confs(dbt_multijoin._mj_table_format(properties)) if conf['key'] not in listing -%}
    {%- do confs.append(conf) -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(conf['key'], conf['value'])) -%}
  {%- endfor -%}
  {%- set columns = adapter.get_columns_in_relation(view) | map(attribute='name') | list -%}
  {%- set unranged = dbt_multijoin._mj_mor_compact(model_name, store, view, keys, before, properties.get('dbt_multijoin.mor.base_rows', '0') | int,
      dbt_multijoin._mj_mor_unranged_rows(properties), share, buckets=properties.get('dbt_multijoin.mor.buckets'), model_columns=columns) -%}
  {%- for conf in confs -%}
    {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(conf['key'])) -%}
  {%- endfor -%}
  {%- set after = dbt_multijoin._mj_mor_store_state(store, whole=true) -%}
  {#- With no delta row left, the view reads the base rows alone (the view of every other shape
      needs the model's inputs, which this operation does not render: a run narrows it). -#}
  {%- if after['delta_rows'] == 0 -%}
    {%- do dbt_multijoin._mj_mor_create_base_rows_view(view, store, columns) -%}
  {%- endif -%}
  {%- do dbt_multijoin._mj_exec('alter table ' ~ store ~ " set tblproperties ('dbt_multijoin.mor.base_rows' = '" ~ after['base_rows']
      ~ "', 'dbt_multijoin.mor.unranged_rows' = '" ~ unranged ~ "')") -%}
  {%- do log("dbt_multijoin: " ~ model_name ~ ": compacted " ~ before['delta_rows'] ~ " delta rows into " ~ after['base_rows'] ~ " base rows", info=True) -%}
{%- endmacro %}
