-- Fails when extension_version() does not give the version of the extension the session runs.
select
    reported_version,
    session_version
from {{ ref('ext_version_loaded') }}
where reported_version != session_version
