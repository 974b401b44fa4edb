#!/usr/bin/env bash
# Sets up everything from a fresh clone with only Python 3.11 and Java 17, for the Spark versions
# of spark-versions.toml (read through scripts/spark-versions.sh): a virtualenv per minor that has
# one (.venv, .venv-spark4), with the package and all its extras at the versions of its
# constraints file and that minor's pyspark; a pyspark-only Spark home .spark/<version> for each
# other minor; then the extension jar for .venv. Safe to run again: it only does what is missing
# or what a changed pyproject.toml, constraints file or tested version needs. It prints one line
# per step; pip's and the build backend's output goes to build/setup.log (build/setup-<name>.log
# for the steps after .venv, which run side by side), whose end is printed when a step fails.
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

# in_parallel <name> <command...>: runs the command (a function of this script) in the
# background, its steps logged to build/setup-<name>.log; wait_parallel waits for every one and
# fails if one did. After .venv, the steps depend on it alone, not on each other, and they wait on
# the network and the disk as much as on a core: side by side they take the longest one's time.
parallel=()
in_parallel() {
  local name=$1
  shift
  (log=build/setup-$name.log; : >"$log"; "$@") &
  parallel+=($!)
}
wait_parallel() {
  local pid failed=0
  for pid in "${parallel[@]}"; do
    wait "$pid" || failed=1
  done
  parallel=()
  [ "$failed" -eq 0 ] || exit 1
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

# .venv first: the pyspark-only homes are installed with its pip, and it builds the jar.
setup_venv .venv "${SPARK_CONSTRAINTS[$SPARK_MAIN]}" "$SPARK_MAIN"
for version in "${SPARK_VERSIONS[@]}"; do
  venv=$(spark_venv "$version")
  if [ -n "${SPARK_CONSTRAINTS[$version]:-}" ] && [ "$venv" != .venv ] && ! skipped "$version"; then
    in_parallel "${venv#.}" setup_venv "$venv" "${SPARK_CONSTRAINTS[$version]}" "$version"
  fi
done

# install_home <version> <home>: pyspark alone into a Spark home, with .venv's pip.
install_home() {
  rm -rf "$2.partial"  # what an interrupted run left
  step "install pyspark $1 into $2" \
    .venv/bin/python -m pip install "${pip[@]}" --no-deps --target "$2.partial" "pyspark==$1"
  mv "$2.partial" "$2"
}
for version in "${SPARK_VERSIONS[@]}"; do
  home=$(spark_extra_home "$version")
  if [ -n "$home" ] && ! skipped "$version" && [ ! -d "$home/pyspark/jars" ]; then
    in_parallel "spark-$version" install_home "$version" "$home"
  fi
done
in_parallel jar step "build the extension jar for Spark $SPARK_MAIN" .venv/bin/dbt-multijoin jar
wait_parallel
echo "extension jar (Spark $SPARK_MAIN): $(.venv/bin/dbt-multijoin jar 2>>"$log")"
