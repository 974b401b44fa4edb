#!/usr/bin/env bash
# Sets up everything from a fresh clone with only Python 3.11 and Java 17, for the Spark versions
# of spark-versions.toml (read through scripts/spark-versions.sh): a virtualenv per minor that has
# one (.venv, .venv-spark4), with the package and all its extras at the versions of its
# constraints file and that minor's pyspark; a pyspark-only Spark home .spark/<version> for each
# other minor; the extension jar for .venv. Safe to run again: it only does what is missing or
# what a changed pyproject.toml, constraints file or tested version needs. It prints one line per
# step; pip's and the build backend's output goes to build/setup-<part>.log, whose end is printed
# when a step fails.
#
#   bash scripts/setup.sh             # everything the tests and scripts/dist.sh use
#   bash scripts/setup.sh --example   # .venv and its jar only: what scripts/example.sh runs
#   bash scripts/setup.sh --others    # everything but .venv and its jar (scripts/test.sh runs it
#                                     # beside --example)
#
# The parts depend on nothing but the system's Python (the pyspark-only homes are installed with
# its pip, not .venv's), so they run side by side: each is mostly one pip process on one core,
# waiting on the network and the disk as much.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/spark-versions.sh
python=${PYTHON:-python3}
part=all
case "${1:-}" in
  "") ;;
  --example) part=main ;;
  --others) part=others ;;
  *)
    echo "usage: bash scripts/setup.sh [--example | --others]" >&2
    exit 2
    ;;
esac
# A read that stalls for a minute, not pip's default 15 s, counts as a network failure: on two busy
# cores a download that is only slow must not fail.
pip=(--quiet --disable-pip-version-check --timeout 60)
# pyspark is published as a source distribution only, so pip builds a wheel of it (all of Spark's
# jars) before installing it, and a fresh machine (CI's) builds one per Spark version. The jars are
# zip files already: stored in the wheel rather than deflated again, the build and the unpacking
# take a fraction of the CPU (measured: docs/development.md, "What CI runs").
pyspark_wheel_stored=(--config-settings=--build-option=--compression=stored)
mkdir -p build
log=build/setup-$part.log
: >"$log"

# step <description> <command...>: runs the command with its output in $log, one line here.
step() {
  run_step 1 "$@"
}

# fetch_step <description> <command...>: the same for a command that downloads from the package
# index: a failure is tried twice more, 20 seconds apart, before the step fails. CI sets up the
# other Spark versions beside its first test runs, several pip processes pulling pyspark wheels of
# hundreds of megabytes on two busy cores, where one dropped or slow connection would otherwise
# fail the whole run. The command must be safe to run again (pip is).
fetch_step() {
  run_step 3 "$@"
}

# run_step <attempts> <description> <command...>
run_step() {
  local attempts=$1 description=$2 started=$SECONDS attempt=1
  shift 2
  echo "set-up: $description" >>"$log"
  until "$@" >>"$log" 2>&1; do
    if [ "$attempt" -ge "$attempts" ]; then
      echo "set-up: $description FAILED; the end of $log:" >&2
      tail -n 40 "$log" >&2
      exit 1
    fi
    echo "set-up: $description failed (attempt $attempt of $attempts); trying again in 20 s" | tee -a "$log"
    attempt=$((attempt + 1))
    sleep 20
  done
  echo "set-up: $description ($((SECONDS - started)) s)"
}

# in_parallel <name> <command...>: runs the command (a function of this script) in the
# background, its steps logged to build/setup-<name>.log; wait_parallel waits for every one and
# fails if one did.
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
  fetch_step "upgrade pip in $venv" "$venv/bin/python" -m pip install "${pip[@]}" --upgrade pip
  # pyspark first, alone: the build option is meant for its wheel, not for this package's
  # editable install.
  fetch_step "install $pyspark into $venv" \
    "$venv/bin/python" -m pip install "${pip[@]}" "${pyspark_wheel_stored[@]}" -c "$constraints" "$pyspark"
  fetch_step "install the package and its extras into $venv ($constraints, $pyspark)" \
    "$venv/bin/python" -m pip install "${pip[@]}" -c "$constraints" -e ".[dev]" "$pyspark"
  echo "$wanted" >"$stamp"
}

# The main part: .venv and the extension jar for its Spark.
setup_main() {
  setup_venv .venv "${SPARK_CONSTRAINTS[$SPARK_MAIN]}" "$SPARK_MAIN"
  step "build the extension jar for Spark $SPARK_MAIN" .venv/bin/dbt-multijoin jar
}

# install_home <version> <home>: pyspark alone into a Spark home, with the system Python's pip.
install_home() {
  fetch_step "install pyspark $1 into $2" install_pyspark_only "$1" "$2.partial"
  mv "$2.partial" "$2"
}

# install_pyspark_only <version> <directory>: into an empty directory (what an interrupted run or a
# failed attempt left goes first).
install_pyspark_only() {
  rm -rf "$2"
  "$python" -m pip install "${pip[@]}" "${pyspark_wheel_stored[@]}" --no-deps --target "$2" "pyspark==$1"
}

# The other parts: the other minors' virtualenvs and pyspark-only homes, side by side.
start_others() {
  local version venv home
  for version in "${SPARK_VERSIONS[@]}"; do
    venv=$(spark_venv "$version")
    if [ -n "${SPARK_CONSTRAINTS[$version]:-}" ] && [ "$venv" != .venv ]; then
      in_parallel "${venv#.}" setup_venv "$venv" "${SPARK_CONSTRAINTS[$version]}" "$version"
    fi
  done
  for version in "${SPARK_VERSIONS[@]}"; do
    home=$(spark_extra_home "$version")
    if [ -n "$home" ] && [ ! -d "$home/pyspark/jars" ]; then
      in_parallel "spark-$version" install_home "$version" "$home"
    fi
  done
}

case $part in
  main) setup_main ;;
  others) start_others ;;
  all)
    in_parallel main setup_main
    start_others
    ;;
esac
wait_parallel
if [ "$part" != others ]; then
  echo "extension jar (Spark $SPARK_MAIN): $(.venv/bin/dbt-multijoin jar 2>>"$log")"
fi
