-- Runs right after the writer: must see exactly the baseline (schema.yml).
-- depends_on: {{ ref('conf_leak_1_writer') }}
{{ config(materialized='conf_probe') }}

select
    'current_timezone()' as conf_key,
    current_timezone() as conf_value
