#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), then runs every test of the project: the whole suite on
# Spark 3.5.9 and 4.3.0, the pipeline tests on 3.5.9 and 4.1.4 (once per table format), the
# smoke subset on the other supported minors (scripts/spark-versions.sh). Extra arguments go to
# every pytest run. Fails if any run fails or collects no tests (pytest exit 5).
#
#   bash scripts/test.sh            # everything: what CI runs
#   bash scripts/test.sh --quick    # day to day: the 3.5.9 suite without the slow tests, 50 examples a property
#
# The runs go in two lanes side by side, one Spark line's runs after another in each. Most of a
# run's time is latency, not CPU: JVM start-ups, dbt parsing its project, thousands of small Spark
# jobs whose tasks wait on the driver. Two lanes keep both cores busy. Each lane has its own Ivy
# cache (spark.jars.ivy), so two lanes never resolve Delta or Iceberg into one directory at
# once, and its own pytest temporary directory. Each run's output goes to
# build/test-results/<run>.log and is printed when its lane ends; JUnit XML beside it. The last
# lines: each run's result and duration, then the total over every run.
set -uo pipefail
cd "$(dirname "$0")/.."
# What runs on the minors without a whole-suite run: pytest paths or node ids. (Not
# test_operator_version_guard.py: it runs the other line's venv, which would inherit PYTHONPATH.)
SMOKE_TESTS=(tests/test_operator_plans.py tests/test_operator_differential.py)
# The minors share the source and shims of the lines around them: the smoke subset checks that
# they build and behave, with a sixth of the property tests' examples (their share of the CI's
# CPU time was 13 of about 130 minutes at a third); the deep search (150 examples a property)
# runs on the two whole-suite versions.
SMOKE_EXAMPLES=25
# The pipeline tests (pipeline_tests/: dbt in-process over Delta and Iceberg tables) run in one
# pytest process per table format (a session's catalog holds one format), on the Spark versions
# both formats publish runtimes for (testkit/formats.py: 3.5 and 4.1).
PIPELINE_VERSIONS=(3.5.9 4.1.4)
# Random examples of each pipeline property (besides the pinned ones) on the first pipeline line;
# the second draws half as many, at least one (testkit/properties.py). An example is a sequence
# of dbt runs over Delta or Iceberg tables, about a minute on 2 cores in CI: the pinned examples
# hold the cases that must always run (ties at the mark, a key leaving one input), and each CI
# run draws new random ones. MULTIJOIN_PIPELINE_EXAMPLES=20 searches deeper by hand.
PIPELINE_EXAMPLES=2
# Tests whose work is the same whichever line runs them (pytest paths or node ids): the wheel
# test builds the jars of every minor and installs the wheel without pyspark; the jar tests
# compile a changed copy of the sources (jar.py's rebuild logic). They run on the second line
# only (whose lane is otherwise the shorter).
ONCE_ONLY=(tests/test_dist.py
  tests/test_cli.py::test_jar_is_rebuilt_only_when_a_source_changes
  tests/test_cli.py::test_jar_compile_error_exits_non_zero_with_the_compiler_message)
# Pipeline tests on the first pipeline line only: the benchmarks' harnesses at their smallest
# (the partial-update one takes minutes of dbt runs per format; what it checks of the macros,
# the properties check on both lines; the layout one's zero-shuffle plans, the bucketed tests).
FIRST_PIPELINE_LINE_ONLY=(pipeline_tests/test_partial_update_benchmark.py pipeline_tests/test_layout_benchmark.py)
# Tests that need a JVM of their own (the Iceberg runtime on the class path, which the suite's
# shared session does not have): one pytest process each, on the lines that have an Iceberg
# runtime (3.5 and 4.1), outside the whole-suite runs.
OWN_JVM=(tests/test_operator_bucketed.py)
source scripts/spark-versions.sh
bash scripts/setup.sh || exit 1
results=build/test-results
rm -rf "$results"
mkdir -p "$results"

quick=false
if [ "${1:-}" = "--quick" ]; then
  quick=true
  shift
fi

# run_suite <lane> <version> <label> [pytest arguments...]: one pytest run, its output in
# $results/<run>.log, its result line in $results/<run>.result.
run_suite() {
  local lane=$1 version=$2 label=$3 start=$SECONDS status result name
  shift 3
  name="spark-$version-${label// /-}"
  with_spark "$version" python -m pytest "$@" --junitxml="$results/$name.xml" \
    --basetemp="$lane_tmp/$lane/$name" >"$results/$name.log" 2>&1
  status=$?
  case $status in
    0) result=passed ;;
    5) result="FAILED (no tests collected)" ;;
    *) result="FAILED (pytest exit $status)" ;;
  esac
  echo "Spark $version, $label: $result in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s" >"$results/$name.result"
  [ "$status" -eq 0 ]
}

# run_jvm_tests <versions...>: the JVM unit tests (scripts/jvm-tests.sh), output and result
# as run_suite's.
run_jvm_tests() {
  local start=$SECONDS status
  bash scripts/jvm-tests.sh "$@" >"$results/jvm-unit-tests.log" 2>&1
  status=$?
  echo "JVM unit tests (Spark $*): $([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s" >"$results/jvm-unit-tests.result"
  [ "$status" -eq 0 ]
}

# write_spark_defaults <lane>: the spark-defaults.conf of every JVM the lane's runs start
# (sessions, dbt's sessions, Thrift and Connect servers, local-cluster executors), in
# $lane_tmp/<lane>/conf, which the runs name as SPARK_CONF_DIR. Its own Ivy cache. And only the
# JIT's first tier: a test JVM lives for minutes and runs thousands of small queries over
# different code, so C2's compiles cost more CPU than they give back (on 2 cores, a pipeline
# property run took 25-30% less time with C1 alone). And the serial collector: a test JVM's
# heap is small and the two lanes keep both cores busy, where G1's concurrent threads only add
# CPU (a pipeline module: 128 and 135 CPU seconds against 146 and 155 with G1, alternating).
write_spark_defaults() {
  mkdir -p "$lane_tmp/$1/conf"
  cat >"$lane_tmp/$1/conf/spark-defaults.conf" <<EOF
spark.jars.ivy $HOME/.ivy2-dbt-multijoin-lane-$1
spark.driver.defaultJavaOptions -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
spark.executor.defaultJavaOptions -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
EOF
}

# lane <n> <run>...: each run a "version|label|pytest arguments" line (or "jvm|versions" for the
# JVM unit tests), run in order with the lane's own Ivy cache and temporary directory.
lane() {
  local n=$1 spec version label args examples pipeline_examples failed=0
  shift
  write_spark_defaults "$n"
  for spec in "$@"; do
    IFS='|' read -r version label args <<<"$spec"
    if [ "$version" = jvm ]; then
      # shellcheck disable=SC2086
      run_jvm_tests $label || failed=1
      continue
    fi
    examples=${MULTIJOIN_DIFFERENTIAL_EXAMPLES:-150} pipeline_examples=$PIPELINE_EXAMPLES
    [ "$label" = "smoke subset" ] && examples=$SMOKE_EXAMPLES
    [ "$version" = "${PIPELINE_VERSIONS[1]}" ] && pipeline_examples=$(((PIPELINE_EXAMPLES + 1) / 2))
    # shellcheck disable=SC2086  # the arguments are words
    MULTIJOIN_DIFFERENTIAL_EXAMPLES=$examples MULTIJOIN_PIPELINE_EXAMPLES=$pipeline_examples SPARK_CONF_DIR="$lane_tmp/$n/conf" \
      run_suite "$n" "$version" "$label" $args "${extra[@]}" || failed=1
  done
  return $failed
}

extra=("$@")
lane_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbt-multijoin-tests.XXXXXX")
trap 'rm -rf "$lane_tmp"' EXIT

if $quick; then
  write_spark_defaults 1
  SPARK_CONF_DIR="$lane_tmp/1/conf" MULTIJOIN_DIFFERENTIAL_EXAMPLES=$SMOKE_EXAMPLES run_suite 1 3.5.9 "quick suite" tests -m "not slow" \
    "--ignore=${OWN_JVM[@]}" "${extra[@]}"
  status=$?
  cat "$results"/*.log
  cat "$results"/*.result
  exit $status
fi

whole=() smoke=()
for version in "${SPARK_VERSIONS[@]}"; do
  if [ -z "$(spark_extra_home "$version")" ]; then whole+=("$version"); else smoke+=("$version"); fi
done
# Lane 1: the first whole-suite line (without the once-only tests; with the Thrift pipeline
# tests, which need a Delta and Iceberg runtime: 20 minutes), its pipelines. Lane 2: the other
# whole-suite line, the other pipelines (half the pipeline examples), the smoke minors, the JVM
# unit tests. Measured on 2 cores, the lanes then take about as long as each other.
deselect_once=() ignore_own=()
for path in "${ONCE_ONLY[@]}"; do deselect_once+=("--deselect=$path"); done
first_line_only=()
for path in "${FIRST_PIPELINE_LINE_ONLY[@]}"; do first_line_only+=("--deselect=$path"); done
for path in "${OWN_JVM[@]}"; do ignore_own+=("--ignore=$path"); done
lane1=("${whole[0]}|whole suite|tests ${ignore_own[*]} ${deselect_once[*]}")
lane2=("${whole[1]}|whole suite|tests ${ignore_own[*]}")
for format in delta iceberg; do
  lane1+=("${PIPELINE_VERSIONS[0]}|pipelines on $format|pipeline_tests --table-format $format")
  lane2+=("${PIPELINE_VERSIONS[1]}|pipelines on $format|pipeline_tests --table-format $format ${first_line_only[*]}")
done
lane1+=("${PIPELINE_VERSIONS[0]}|own JVM|${OWN_JVM[*]}")
lane2+=("${PIPELINE_VERSIONS[1]}|own JVM|${OWN_JVM[*]}")
for version in "${smoke[@]}"; do
  lane2+=("$version|smoke subset|${SMOKE_TESTS[*]}")
done
lane2+=("jvm|${whole[*]}")

lane 1 "${lane1[@]}" &
pid1=$!
lane 2 "${lane2[@]}" &
pid2=$!
failed=0
wait "$pid1" || failed=1
wait "$pid2" || failed=1

for log in "$results"/*.log; do
  echo "=== ${log#"$results"/}"
  cat "$log"
done
cat "$results"/*.result
# The total over every run, as one closing line.
python3 - "$results" <<'EOF'
import pathlib, re, sys, xml.etree.ElementTree as ET
results = pathlib.Path(sys.argv[1])
totals = dict(tests=0, failures=0, errors=0, skipped=0)
for path in results.glob("*.xml"):
    for suite in ET.parse(path).getroot().iter("testsuite"):
        for key in totals:
            totals[key] += int(suite.get(key, 0))
failed = totals["failures"] + totals["errors"]
passed = totals["tests"] - failed - totals["skipped"]
jvm = results / "jvm-unit-tests.log"
counted = re.findall(r"^(\d+) passed, (\d+) failed$", jvm.read_text(), re.M) if jvm.exists() else []
if counted:
    passed, failed = passed + int(counted[-1][0]), failed + int(counted[-1][1])
print(f"{passed} passed, {failed} failed, {totals['skipped']} skipped")
EOF
exit "$failed"
