#!/usr/bin/env bash
# Sets up everything from a fresh clone with only Python 3.11 and Java 17, for the Spark versions
# of spark-versions.toml (read through scripts/spark-versions.sh): a virtualenv per minor that has
# one (.venv, .venv-spark4), with the package and all its extras at the versions of its
# constraints file and that minor's pyspark; a pyspark-only Spark home .spark/<version> for each
# other minor; then the extension jar for .venv. Safe to run again: it only does what is missing
# or what a changed pyproject.toml, constraints file or tested version needs. It prints one line
# per step; pip's and the build backend's output goes to build/setup.log, whose end is printed
# when a step fails.
#
#   bash scripts/setup.sh             # everything the tests and scripts/dist.sh use
#   bash scripts/setup.sh --example   # .venv and its jar only: what scripts/example.sh runs
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/spark-versions.sh
python=${PYTHON:-python3}
example=false
if [ "${1:-}" = "--example" ]; then
  example=true
elif [ $# -gt 0 ]; then
  echo "usage: bash scripts/setup.sh [--example]" >&2
  exit 2
fi
pip=(--quiet --disable-pip-version-check)
mkdir -p build
log=build/setup.log
: >"$log"

# step <description> <command...>: runs the command with its output in $log, one line here.
step() {
  local description=$1 started=$SECONDS
  shift
  echo "set-up: $description" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    echo "set-up: $description FAILED; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  echo "set-up: $description ($((SECONDS - started)) s)"
}

# setup_venv <venv> <constraints file> <Spark version>
setup_venv() {
  local venv=$1 constraints=$2 pyspark="pyspark==$3" stamp="$1/.dbt-multijoin-setup" wanted
  wanted=$({ cat pyproject.toml "$constraints"; echo "$pyspark"; } | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
    return
  fi
  [ -x "$venv/bin/python" ] || step "create $venv" "$python" -m venv "$venv"
  step "upgrade pip in $venv" "$venv/bin/python" -m pip install "${pip[@]}" --upgrade pip
  step "install the package and its extras into $venv ($constraints, $pyspark)" \
    "$venv/bin/python" -m pip install "${pip[@]}" -c "$constraints" -e ".[dev]" "$pyspark"
  echo "$wanted" >"$stamp"
}

# skipped <version>: with --example, every Spark but .venv's (the example runs on .venv alone).
skipped() {
  $example && [ "$1" != "$SPARK_MAIN" ]
}

# The virtualenvs first: a pyspark-only home is installed with .venv's pip.
for version in "${SPARK_VERSIONS[@]}"; do
  if [ -n "${SPARK_CONSTRAINTS[$version]:-}" ] && ! skipped "$version"; then
    setup_venv "$(spark_venv "$version")" "${SPARK_CONSTRAINTS[$version]}" "$version"
  fi
done
for version in "${SPARK_VERSIONS[@]}"; do
  home=$(spark_extra_home "$version")
  if [ -n "$home" ] && ! skipped "$version" && [ ! -d "$home/pyspark/jars" ]; then
    rm -rf "$home.partial"  # what an interrupted run left
    step "install pyspark $version into $home" \
      .venv/bin/python -m pip install "${pip[@]}" --no-deps --target "$home.partial" "pyspark==$version"
    mv "$home.partial" "$home"
  fi
done
step "build the extension jar for Spark $SPARK_MAIN" .venv/bin/dbt-multijoin jar
echo "extension jar (Spark $SPARK_MAIN): $(.venv/bin/dbt-multijoin jar 2>>"$log")"
