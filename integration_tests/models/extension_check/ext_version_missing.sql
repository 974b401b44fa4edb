-- On a target without the extension: extension_version() is none, and does not fail the model.
select '{{ dbt_multijoin.extension_version() or "none" }}' as reported_version
