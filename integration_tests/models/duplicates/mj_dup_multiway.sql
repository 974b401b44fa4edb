{{ config(
    materialized='multijoin',
    strategy='multiway',
    partition_by=['country'],
    tblproperties={'owner_team': 'analytics'},
    persist_docs={'relation': true},
    post_hook="analyze table {{ this }} compute statistics"
) }}

-- dbt-spark's table options keep working: partition_by, tblproperties, persist_docs, hooks.
{{ dbt_multijoin.multi_join([ref('dup_a'), ref('dup_b'), ref('dup_c')], key='device_id') }}
