-- The confs as every model sees them before the writer runs.
{{ config(materialized='conf_probe') }}

select
    'current_timezone()' as conf_key,
    current_timezone() as conf_value
