{{ config(materialized='multijoin', strategy='chain') }}

{#- dup_b read through source() (the same table as ref('dup_b')): an input named by source().
    The depends_on line orders the model after the seed, which a source does not. #}
-- depends_on: {{ ref('dup_b') }}

{{ dbt_multijoin.multi_join(
    [ref('dup_a'), source('seeds', 'dup_b'), ref('dup_c')],
    key='device_id',
    join_type='left'
) }}
