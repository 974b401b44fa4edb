{{ config(materialized='multijoin', strategy='chain', spark_conf={'spark.sql.shuffle.partitions': '3'}) }}

{{ dbt_multijoin.multi_join(
    [ref('wide_in_1'), ref('wide_in_2'), ref('wide_in_3'), ref('wide_in_4'), ref('wide_in_5'), ref('wide_in_6')],
    key='device_id'
) }}
