#!/usr/bin/env bash
# Sets everything up, then runs the main job: `dbt build` of the example dbt project
# (integration_tests/) on the embedded `session` target, with the extension loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DBT_MULTIJOIN_JAR="$(.venv/bin/dbt-multijoin jar)"
cd integration_tests
../.venv/bin/dbt deps --profiles-dir . --target session
../.venv/bin/dbt build --profiles-dir . --target session
