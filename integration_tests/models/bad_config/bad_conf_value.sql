{{ config(materialized='multijoin', spark_conf={'spark.sql.shuffle.partitions': '4` ; drop table worked_r1 ; --'}) }}

{{ dbt_multijoin.multi_join([ref('worked_r1'), ref('worked_r2')], key='device_id') }}
