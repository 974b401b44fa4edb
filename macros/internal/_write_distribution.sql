{#- Private: write a full build of an Iceberg table partitioned by buckets of the key without the
    redistribution Iceberg asks for, when the model's query already delivers its rows grouped that
    way (docs/table_formats.md, "Writing a table bucketed alike").

    Iceberg's default write distribution for a partitioned table (`hash`) makes Spark shuffle the
    whole output into the table's partitions before writing, even when the query's plan already
    reports each of its partitions holding one bucket (a multi-join over inputs bucketed alike on
    the key). The extension's multijoin_write_grouping(sql, transforms) reads the query's physical
    plan, under the model's confs, and says whether its output is grouped by exactly the table's
    partition transforms. Only then is this one write made with Iceberg's distribution mode `none`
    (the session conf spark.sql.iceberg.distribution-mode, set and put back around the write, in
    the ledger of _confs.sql like the model's own confs): no shuffle, and each task writes the one
    bucket it holds into files of its own. Otherwise the table's own distribution applies, as
    before; so does a distribution mode the session sets itself (the model's spark_conf, the
    profile). The run logs which.

    Either way the rows written are the same: Iceberg's writer computes each row's partition
    itself, so the grouping only decides how many files a write makes. -#}

{% macro _mj_distribution_mode_conf() -%}
  {{- return('spark.sql.iceberg.distribution-mode') -}}
{%- endmacro %}


{% macro _mj_grouped_write_begin(sql) -%}
  {#- Before a full build's write of `sql`: when the model is an Iceberg table partitioned by
      transforms its query's output is grouped by, set the distribution mode `none` for this
      session until _mj_grouped_write_end, and return what that must put back; else none. -#}
  {%- if (config.get('file_format') or '') != 'iceberg' -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set partition_by = config.get('partition_by') -%}
  {%- if partition_by is string -%}
    {%- set partition_by = [partition_by] -%}
  {%- endif -%}
  {%- if not partition_by -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the table is not partitioned: its own write distribution applies", info=True) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- if not dbt_multijoin._mj_has_function('multijoin_write_grouping') -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the table's own write distribution applies: this extension has no multijoin_write_grouping (an older jar)", info=True) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set transforms = [] -%}
  {%- for transform in partition_by -%}
    {%- do transforms.append(dbt_multijoin._mj_string_literal(transform)) -%}
  {%- endfor -%}
  {%- set answer = run_query('select multijoin_write_grouping(' ~ dbt_multijoin._mj_string_literal(sql) ~ ', array(' ~ transforms | join(', ') ~ ')) as grouping').columns[0].values()[0] -%}
  {%- if not answer.startswith('grouped:') -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the table's own write distribution applies (the query's output is redistributed by its partitions): " ~ answer[('not grouped: ' | length):], info=True) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set key = dbt_multijoin._mj_distribution_mode_conf() -%}
  {%- set listing = dbt_multijoin._mj_conf_listing() -%}
  {%- if listing.get(key) is not none -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": the query's output is " ~ answer ~ ", as the table is partitioned, but the session sets " ~ key ~ "=" ~ listing.get(key) ~ " (the model's spark_conf or the profile): that applies", info=True) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set saved = {'key': key, 'pending': listing.get(dbt_multijoin._mj_ledger_pending())} -%}
  {#- In the ledger beside the model's own confs: a write that fails leaves it for restore_confs(),
      which resets it (it was not set). -#}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_pending(), ((saved['pending'] ~ ',') if saved['pending'] else '') ~ key)) -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_set_sql(key, 'none')) -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": the query's output is " ~ answer ~ ", as the table is partitioned: written with no redistribution (" ~ key ~ "=none for this write)", info=True) -%}
  {{- return(saved) -}}
{%- endmacro %}


{% macro _mj_grouped_write_end(saved) -%}
  {#- After the write: put back what _mj_grouped_write_begin changed (nothing if it returned none). -#}
  {%- if saved is none -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(saved['key'])) -%}
  {%- do dbt_multijoin._mj_exec(dbt_multijoin._mj_reset_sql(dbt_multijoin._mj_ledger_pending()) if not saved['pending'] else dbt_multijoin._mj_set_sql(dbt_multijoin._mj_ledger_pending(), saved['pending'])) -%}
{%- endmacro %}
