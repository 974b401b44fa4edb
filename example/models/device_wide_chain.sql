-- The wide table: the eight inputs full-outer-joined on device_id, strategy 'chain'.
{{ config(materialized='multijoin', strategy='chain', spark_conf={'spark.sql.shuffle.partitions': '8'}) }}

{{ dbt_multijoin.multi_join(
    [ref('device_in_1'), ref('device_in_2'), ref('device_in_3'), ref('device_in_4'),
     ref('device_in_5'), ref('device_in_6'), ref('device_in_7'), ref('device_in_8')],
    key='device_id'
) }}
