#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite: the operator against vanilla Spark, the
# CLI, and the dbt project on the session and thrift targets. Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
.venv/bin/python -m pytest "$@"
status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit "$status"
