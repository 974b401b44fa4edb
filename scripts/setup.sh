#!/usr/bin/env bash
# Sets up everything from a fresh clone with only Python 3.11 and Java 17, for both Spark lines
# (scripts/spark-versions.sh): .venv (Spark 3.5.9) and .venv-spark4 (Spark 4.3.0), each with the
# package and all its extras at the versions of constraints/spark-<minor>.txt; pyspark-only Spark
# homes .spark/<version> for the other minors; then the extension jar for .venv. Safe to run
# again: it only does what is missing or what a changed pyproject.toml or constraints file needs.
# It prints one line per step; pip's and the build backend's output goes to build/setup.log,
# whose end is printed when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/spark-versions.sh
python=${PYTHON:-python3}
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

# setup_venv <venv> <constraints file>
setup_venv() {
  local venv=$1 constraints=$2 stamp="$1/.dbt-multijoin-setup" wanted
  wanted=$(cat pyproject.toml "$constraints" | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
    return
  fi
  [ -x "$venv/bin/python" ] || step "create $venv" "$python" -m venv "$venv"
  step "upgrade pip in $venv" "$venv/bin/python" -m pip install "${pip[@]}" --upgrade pip
  step "install the package and its extras into $venv ($constraints)" \
    "$venv/bin/python" -m pip install "${pip[@]}" -c "$constraints" -e ".[dev]"
  echo "$wanted" >"$stamp"
}

for version in "${SPARK_VERSIONS[@]}"; do
  if [ -z "$(spark_extra_home "$version")" ]; then
    setup_venv "$(spark_venv "$version")" "constraints/spark-${version%.*}.txt"
  fi
done
for version in "${SPARK_VERSIONS[@]}"; do
  home=$(spark_extra_home "$version")
  if [ -n "$home" ] && [ ! -d "$home/pyspark/jars" ]; then
    rm -rf "$home.partial"  # what an interrupted run left
    step "install pyspark $version into $home" \
      .venv/bin/python -m pip install "${pip[@]}" --no-deps --target "$home.partial" "pyspark==$version"
    mv "$home.partial" "$home"
  fi
done
step "build the extension jar for Spark 3.5.9" .venv/bin/dbt-multijoin jar
echo "extension jar (Spark 3.5.9): $(.venv/bin/dbt-multijoin jar 2>>"$log")"
