-- extension_version() as the package reports it, next to what the extension answers in the same
-- session (tests/ext_version_is_the_loaded_one.sql compares them).
select
    '{{ dbt_multijoin.extension_version() }}' as reported_version,
    multijoin_version() as session_version
