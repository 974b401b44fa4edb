{{ config(materialized='multijoin') }}

{{ dbt_multijoin.multi_join([ref('worked_r1')], key='device_id') }}
