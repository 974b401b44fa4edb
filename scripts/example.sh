#!/usr/bin/env bash
# Sets up what the example runs on, .venv and its jar (scripts/setup.sh --example: a line per step,
# the details in build/setup-main.log; not the other Sparks the tests use), then builds the example dbt
# project (example/) on the embedded `session` target with the extension loaded:
# eight generated inputs of 1,000,000 keys each, and one wide table over them built twice,
# strategy multiway (the MultiJoin operator) and strategy chain (Spark's binary joins). Ends with
# a summary: both builds' times and shuffle bytes, the plan line that shows MultiJoin ran, and
# where the tables are. A few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/example
run_log=build/example/run.log

started=$SECONDS
bash scripts/setup.sh --example

# dbt's and the driver's progress go to the terminal; Spark's JVM log (stderr) to run.log.
export DBT_MULTIJOIN_JAR="$(.venv/bin/dbt-multijoin jar)"
if ! .venv/bin/python example/run_example.py 2>"$run_log"; then
  echo "the example failed; the end of $run_log:" >&2
  tail -n 40 "$run_log" >&2
  exit 1
fi
echo "(total $((SECONDS - started)) s; Spark's log: $run_log)"
