{#- Private: the filter that keeps a changed_keys MERGE's target side small.

    Because the MERGE also inserts, Delta and Iceberg join the source to the target with the
    target on the side that is not kept, which Spark cannot broadcast: the whole target would be
    shuffled to find the few rows replaced. A condition on the target's row alone, in the MERGE's
    ON clause, is pushed below that join and drops most target rows first. A row is replaced when
    its key is a changed key or has a NULL, so: a NULL in the key, or the key's 64-bit hash
    (xxhash64) is a changed key's (another key passes only on a hash collision, which is harmless:
    the MERGE's own condition decides). -#}

{% macro _mj_replaced_rows_filter(target_columns, key_table, keys, key_count, reader='the MERGE reads the target') -%}
  {#- The condition, or none. Only when each key column has the same type in the key table as in
      the target, of a type whose equal values have equal bytes (not floating point: -0.0 = 0.0;
      not a collated string), so that equal keys hash alike.
      Up to `dbt_multijoin_hash_list_limit` changed keys (a project var, 50,000 by default) the
      exact hashes go into the SQL: as one binary constant that the extension's multijoin_hash_in
      looks each row up in (a primitive hash table), or without the extension as an IN list, which
      Spark looks up in a set of boxed longs, a large share of the scan's CPU on a big target.
      Above the limit, they go into a bloom filter built once from the key table and written into
      the SQL (the extension's multijoin_bloom_filter, sized for 1% false positives, at most
      8 Mibit), which lets through about 1% of the other rows. Without the extension above the
      limit, no condition: the MERGE reads the whole target. The run logs which, with `reader`
      (what reads the target: a MERGE, or a merge-on-read refresh reading the base rows' keys). -#}
  {%- if key_count == 0 -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set hashed_alike = ['tinyint', 'smallint', 'int', 'bigint', 'date', 'timestamp', 'timestamp_ntz', 'string', 'boolean', 'binary'] -%}
  {%- set target_types = dbt_multijoin._mj_column_types(target_columns) -%}
  {%- set key_types = dbt_multijoin._mj_column_types(adapter.get_columns_in_relation(key_table)) -%}
  {%- for k in keys -%}
    {%- set dtype = target_types.get(k | lower) -%}
    {%- if dtype is none or key_types.get(k | lower) != dtype or not (dtype in hashed_alike or dtype.startswith('decimal(')) -%}
      {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ reader ~ " whole (key " ~ k ~ " is " ~ dtype ~ " in the table, " ~ key_types.get(k | lower) ~ " among the changed keys)", info=True) -%}
      {{- return(none) -}}
    {%- endif -%}
  {%- endfor -%}
  {%- set key_null = dbt_multijoin._mj_any_key_null('target', keys) -%}
  {%- set hash = 'xxhash64(' ~ dbt_multijoin._mj_column_list(keys) ~ ')' -%}
  {%- set target_hash = 'xxhash64(' ~ dbt_multijoin._mj_column_list(keys, 'target') ~ ')' -%}
  {%- set limit = var('dbt_multijoin_hash_list_limit', 50000) | int -%}
  {%- if key_count <= limit and dbt_multijoin._mj_has_function('multijoin_hash_in') -%}
    {#- 16 hex digits a hash, written by Spark (the hex of a long is its two's complement): the
        big-endian bytes multijoin_hash_in reads. -#}
    {%- set hashes = run_query("select concat_ws('', collect_set(lpad(hex(" ~ hash ~ "), 16, '0'))) as key_hashes from " ~ key_table)[0]['key_hashes'] -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ reader ~ " through the exact hashes of the " ~ key_count ~ " changed keys (multijoin_hash_in)", info=True) -%}
    {{- return('(' ~ key_null ~ ' or multijoin_hash_in(unhex(\'' ~ hashes ~ '\'), ' ~ target_hash ~ '))') -}}
  {%- endif -%}
  {%- if key_count <= limit -%}
    {#- The literals are written by Spark, in one row: no client rounds a 64-bit value, and the
        lowest long, which has no literal of its own, is written as a cast. -#}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ reader ~ " through an IN list of the " ~ key_count ~ " changed keys' hashes (this session has no multijoin_hash_in: no extension, or a jar older than it)", info=True) -%}
    {%- set literal = "if(" ~ hash ~ " = -9223372036854775808, \"cast('-9223372036854775808' as bigint)\", concat(cast(" ~ hash ~ " as string), 'L'))" -%}
    {%- set hashes = run_query('select concat_ws(\', \', collect_set(' ~ literal ~ ')) as key_hashes from ' ~ key_table)[0]['key_hashes'] -%}
    {{- return('(' ~ key_null ~ ' or ' ~ target_hash ~ ' in (' ~ hashes ~ '))') -}}
  {%- endif -%}
  {%- if not dbt_multijoin._mj_has_function('multijoin_bloom_filter') -%}
    {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ reader ~ " whole (" ~ key_count ~ " changed keys, more than dbt_multijoin_hash_list_limit " ~ limit ~ ", and no multijoin_bloom_filter: the extension is not loaded)", info=True) -%}
    {{- return(none) -}}
  {%- endif -%}
  {%- set filter = run_query('select hex(multijoin_bloom_filter(' ~ hash ~ ', 0.01, 8388608)) as filter from ' ~ key_table)[0]['filter'] -%}
  {%- do log("dbt_multijoin: " ~ model.name ~ ": " ~ reader ~ " through a bloom filter of the " ~ key_count ~ " changed keys (" ~ dbt_multijoin._mj_bytes_text((filter | length) // 2) ~ ")", info=True) -%}
  {{- return('(' ~ key_null ~ ' or multijoin_might_contain(unhex(\'' ~ filter ~ '\'), ' ~ target_hash ~ '))') -}}
{%- endmacro %}
