{{ config(materialized='multijoin', strategy='chain') }}

{{ dbt_multijoin.multi_join([ref('dup_a'), ref('dup_b'), ref('dup_c')], key='device_id', join_type='left') }}
