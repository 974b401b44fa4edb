{{ config(materialized='multijoin') }}

{{ dbt_multijoin.multi_join([ref('worked_r1'), ref('worked_r2')], key='device_id') }}
