#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh: the other Spark versions beside the first runs), then runs
# every test of the project on the Spark versions spark-versions.toml names for each suite: the
# whole suite, the pipeline tests (once per table format), the smoke subset, the tests needing a
# JVM of their own, the JVM unit tests. Extra arguments go to every pytest run. Fails if any run
# fails or collects no tests (pytest exit 5).
#
#   bash scripts/test.sh            # everything: what CI runs
#   bash scripts/test.sh --quick    # day to day: the suite without the slow tests on the quick version, the smoke subset's examples
#
# Two workers run the runs side by side, each taking the next from one queue when its run ends:
# a run alone leaves a core idle much of the time (JVM start-ups, dbt parsing its project,
# thousands of small Spark jobs whose tasks wait on the driver). Each worker has its own Ivy
# cache, so two workers never resolve Delta or Iceberg into one directory at once, and its own
# pytest temporary directory; the JVMs of a whole-suite version share a class-data-sharing
# archive (use_spark_environment). Each run's output goes to
# build/test-results/<run>.log and is printed at the end; JUnit XML beside it. Each run's start
# and result are printed as they happen; the last lines: each run's result and duration, then the
# total over every run.
#
# CI stops a run that takes too long with nothing printed, so the runs have a deadline of their
# own, MULTIJOIN_CI_MINUTES (85) after the start (CI's limit is 90: five minutes for the tests
# under way to end and the results to print): no run and no test starts after it
# (testkit/deadline.py), each run ends as pytest does when interrupted, and the results and logs
# are printed as usual; a test that started before it runs to its end. The JVM unit tests, a
# Maven run that no deadline stops, come before the queue's tail. A run still going 90 seconds
# after the deadline has its log's last lines printed.
set -uo pipefail
cd "$(dirname "$0")/.."
# What runs on the minors without a whole-suite run: pytest paths or node ids. The operator's plan
# tests (its plans, spills, the worked example's rows) and its main differential property against
# vanilla Spark; the other differential properties (ANSI mode, every column type, key spellings,
# self joins) run on the two whole-suite lines. (Not test_operator_version_guard.py: it runs the
# other line's venv, which would inherit PYTHONPATH.)
SMOKE_TESTS=(tests/test_operator_plans.py tests/test_operator_differential.py::test_hinted_chain_returns_the_vanilla_rows)
# The main differential property's examples on the two whole-suite lines (the other properties
# take shares of it: testkit/properties.py). Each CI run draws new random examples, so the search
# deepens run by run (MULTIJOIN_DIFFERENTIAL_EXAMPLES=1000 searches deeper by hand). What each
# setting here costs and saves: docs/development.md, "What CI runs".
WHOLE_SUITE_EXAMPLES=60
# The minors share the source and shims of the lines around them: the smoke subset checks that
# they build and behave, with fewer examples than the whole suites draw.
SMOKE_EXAMPLES=12
# The pipeline tests (pipeline_tests/: dbt in-process over Delta and Iceberg tables) run in one
# pytest process per table format (a session's catalog holds one format), on the Spark versions
# whose suites include pipelines in spark-versions.toml (PIPELINE_VERSIONS, below): both formats
# must publish runtimes for them.
# Random examples of each pipeline property (besides the pinned ones) on each line and format it
# runs on (testkit/properties.py; DELTA_FIRST and ICEBERG_FIRST, below). An example is a sequence
# of dbt runs over Delta or Iceberg tables: the pinned examples hold the cases that must always run
# (ties at the mark, a key leaving one input, a batch that writes no input), and each CI run draws
# three new random ones per refresh path: one in a session on each format, one through a Thrift
# server.
# MULTIJOIN_PIPELINE_EXAMPLES=20 searches deeper by hand.
PIPELINE_EXAMPLES=1
# Tests whose work is the same whichever line runs them (pytest paths or node ids): the wheel
# test builds the jars of every minor and installs the wheel without pyspark; the jar tests
# compile a changed copy of the sources (buildtools/jar_build.py's rebuild logic). They run on the
# second line only. And the integration project (integration_tests/, tests/test_dbt_integration.py)
# is built through one connection method per whole-suite line: over a Thrift Server on the second
# (the build, its --empty build, the confs restored, the bad configs, `dbt show`, a build again),
# in a session on the first (the build with its unit tests, which only the session method runs,
# its --empty build at threads 4, the confs restored; the lint of its compiled SQL reads that
# build). What each build costs and what the split gives up: docs/development.md, "What CI runs".
THRIFT_BUILD_TESTS=(tests/test_dbt_integration.py::test_build_thrift
  tests/test_dbt_integration.py::test_confs_restored_after_failures_thrift
  tests/test_dbt_integration.py::test_bad_config_fails_before_any_ddl
  tests/test_dbt_integration.py::test_show_thrift
  tests/test_dbt_integration.py::test_build_thrift_again_on_the_same_server
  tests/test_dbt_integration.py::test_build_empty_thrift)
ONCE_ONLY=(tests/test_dist.py
  tests/test_cli.py::test_jar_is_rebuilt_only_when_a_source_changes
  tests/test_cli.py::test_jar_compile_error_exits_non_zero_with_the_compiler_message
  "${THRIFT_BUILD_TESTS[@]}")
# Tests whose subject is the same on either whole-suite line, run on the first only: the session
# build of the integration project (above) and dbt's --empty builds over it, the missing-extension
# checks (what the macros do with a session or server that has no extension), the benchmarks'
# harness and the lint of the rendered SQL.
FIRST_WHOLE_LINE_ONLY=(tests/test_dbt_integration.py::test_build_session
  tests/test_dbt_integration.py::test_confs_restored_after_failures_session
  tests/test_dbt_integration.py::test_build_empty_session
  tests/test_dbt_integration.py::test_missing_extension_session
  tests/test_dbt_integration.py::test_missing_extension_thrift
  tests/test_benchmarks.py tests/test_sqlfluff.py)
# The pipeline tests run once per table format, and each line runs some of each format's: a
# test runs on both lines only where its subject depends on the line or the format's release (the
# MERGE condition of Delta 3 and 4, bucketed layouts, scans of both formats, scan sizing in the
# JVM, the change feeds each release refuses). The SQL the macros write is the same on every line,
# and a pipeline run's time is its dbt runs over Delta and Iceberg tables: CI runs on two cores,
# and on the machine's slow days (a third of its fast days' speed) the queue ran into CI's
# 90-minute limit with every test running on both lines. What this saves and what it gives up:
# docs/development.md, "What CI runs".
#
# The example tests of the macros over a table format (one dbt project each, built and refreshed
# once: what SQL the macros write for key types, schema changes, strategies, plans, logged scan
# sizes and merge-on-read models as inputs): Delta's on the first line, Iceberg's on the second.
MACRO_EXAMPLES=(pipeline_tests/test_changed_keys_key_types.py pipeline_tests/test_changed_keys_plan.py
  pipeline_tests/test_changed_keys_schema_change.py pipeline_tests/test_incremental_strategies.py
  pipeline_tests/test_scan_size.py::test_a_run_logs_what_each_input_reads pipeline_tests/test_merge_on_read_inputs.py)
# The refresh properties (the changed_keys and partial-update refreshes against a full rebuild
# after every run, pinned examples and a random one each) and the fault tests (every write path
# failed, then run again, against the expected rows) run once per format, the two formats on
# different lines: key recompute (test_changed_keys) on the first line's Delta and the second's
# Iceberg; partial update and the fault tests on the first line's Iceberg and the second's Delta.
# The first line's Thrift tests (tests/test_pipeline_thrift.py) run each refresh property through
# a server on the format it does not run on there in a session (partial update on Delta, key
# recompute on Iceberg), and kill the server in each path's writes.
DELTA_FIRST=(pipeline_tests/test_changed_keys.py::test_changed_keys_equals_full_rebuild)
ICEBERG_FIRST=(pipeline_tests/test_partial_update.py pipeline_tests/test_rebuild_safety.py)
# Pipeline tests on the first pipeline line only: the benchmarks' harnesses at their smallest
# (the partial-update one takes minutes of dbt runs per format; what it checks of the macros,
# the properties check; the layout one's zero-shuffle plans, the bucketed tests).
FIRST_PIPELINE_LINE_ONLY=(pipeline_tests/test_partial_update_benchmark.py pipeline_tests/test_layout_benchmark.py)
# Of those, on Iceberg only: the partial-update benchmark's harness is the same on either format
# (the refresh path it requires, the properties check on both), and its dbt runs cost several
# times as much on Delta. And of the examples, on Iceberg only: the merge-on-read layout's (a
# model as another model's input, pruning by key, composite keys, a switch of layouts), where the
# merge-on-read store over Delta runs in the partial-update property on every refresh and
# compaction of its examples, against a full rebuild; and the key types (the MERGE's filter by the
# changed keys' hash buckets is Spark's hashing of the key columns, the same over either format;
# the changed rows come from a changed_since column, read alike from both). Each of their
# statements costs several times as much on Delta, which plans every scan with a Spark job over
# the table's state.
ICEBERG_ONLY=(pipeline_tests/test_partial_update_benchmark.py pipeline_tests/test_merge_on_read_inputs.py
  pipeline_tests/test_changed_keys_key_types.py)
# Tests that need a JVM of their own (the Iceberg runtime on the class path, which the suite's
# shared session does not have): one pytest process each, on the versions whose suites include
# own-jvm in spark-versions.toml (they need an Iceberg runtime), outside the whole-suite runs.
OWN_JVM=(tests/test_operator_bucketed.py)
source scripts/spark-versions.sh || exit 1
PIPELINE_VERSIONS=("${SPARK_SUITE_PIPELINES[@]}")
quick=false
if [ "${1:-}" = "--quick" ]; then
  quick=true
  shift
fi
# The quick suite sets everything up first. The whole run sets up .venv and its jar (the main part
# of scripts/setup.sh) with the other Spark versions (.venv-spark4, the pyspark-only homes) beside
# it and beside its first runs, which need the main part alone (MAIN_ONLY_RUNS, below): each part
# is mostly one pip process building and unpacking a pyspark wheel, and the cores would wait for it.
if $quick; then
  bash scripts/setup.sh || exit 1
fi
results=build/test-results
rm -rf "$results"
mkdir -p "$results"
# The runs that need nothing but .venv and its jar (pytest runs on the main Spark version): the
# pipelines and the tests needing a JVM of their own. The whole suite is not among them: its tests
# start the other line's virtualenv and build the other minors' jars.
MAIN_ONLY_RUNS=("pipelines on delta" "pipelines on iceberg" "own JVM")

# run_name <version> <label>: the name of a run's files in $results ("jvm": the JVM unit tests').
run_name() {
  if [ "$1" = jvm ]; then echo jvm-unit-tests; else echo "spark-$1-${2// /-}"; fi
}

# run_title <version> <label>: a run as its result line names it.
run_title() {
  if [ "$1" = jvm ]; then echo "JVM unit tests (Spark $2)"; else echo "Spark $1, $2"; fi
}

# not_run <version> <label> <why>: the result of a run the worker did not start, printed and in
# $results/<run>.result.
not_run() {
  echo "$(run_title "$1" "$2"): not run ($3)" | tee "$results/$(run_name "$1" "$2").result"
}

# run_suite <worker> <version> <label> [pytest arguments...]: one pytest run, its output in
# $results/<run>.log (with its 25 slowest tests, where the next minutes of CI are found), its
# result line in $results/<run>.result.
run_suite() {
  local worker=$1 version=$2 label=$3 start=$SECONDS status result name
  shift 3
  name=$(run_name "$version" "$label")
  mkdir -p "$work_tmp/$worker"  # the parent of the run's pytest temporary directory
  with_spark "$version" python -m pytest "$@" --durations=25 --junitxml="$results/$name.xml" \
    --basetemp="$work_tmp/$worker/$name" >"$results/$name.log" 2>&1
  status=$?
  case $status in
    0) result=passed ;;
    5) result="FAILED (no tests collected)" ;;
    2) if grep -q "stopped at the CI deadline" "$results/$name.log"; then result="STOPPED at the CI deadline"
       else result="FAILED (pytest exit 2)"; fi ;;
    *) result="FAILED (pytest exit $status)" ;;
  esac
  echo "Spark $version, $label: $result in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s" | tee "$results/$name.result"
  [ "$status" -eq 0 ]
}

# run_jvm_tests <versions...>: the JVM unit tests (scripts/jvm-tests.sh), output and result
# as run_suite's.
run_jvm_tests() {
  local start=$SECONDS status name
  name=$(run_name jvm)
  bash scripts/jvm-tests.sh "$@" >"$results/$name.log" 2>&1
  status=$?
  echo "$(run_title jvm "$*"): $([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s" | tee "$results/$name.result"
  [ "$status" -eq 0 ]
}

# The JVM options of every JVM the runs start (sessions, dbt's sessions, Thrift and Connect
# servers, local-cluster executors). Only the JIT's first tier: a test JVM lives for minutes and
# runs thousands of small queries over different code, so C2's compiles cost more CPU than they
# give back. And the serial collector: a test JVM's heap is small and the two workers keep both
# cores busy, where G1's concurrent threads only add CPU. And that tier compiles a method only
# after ten times the calls and loop iterations it waits for by default: most of a test JVM's code
# runs a few hundred times (each query's analysis, planning and generated classes), and compiling
# it cost more than interpreting it. The measurements: docs/development.md, "What CI runs".
JVM_OPTIONS="-XX:TieredStopAtLevel=1 -XX:Tier3InvocationThreshold=2000 -XX:Tier3MinInvocationThreshold=1000 -XX:Tier3CompileThreshold=20000 -XX:Tier3BackEdgeThreshold=600000 -XX:+UseSerialGC"
# No log of class-data sharing: a JVM whose class path an archive does not match (a server with
# jars before Spark's, the other line's JVM) starts without it, and says nothing.
CDS_QUIET="-Xlog:cds=off -Xlog:cds+dynamic=off"

# use_spark_environment <worker> <version>: exports the environment of a run's JVMs. The options
# reach every driver through spark-submit's SPARK_SUBMIT_OPTS, and the executors through
# spark.executor.defaultJavaOptions, a system property there; not through a spark-defaults.conf:
# Spark puts SPARK_CONF_DIR first on the class path, and the JVM refuses a class-data-sharing
# archive when a directory on its class path holds a file. So SPARK_CONF_DIR is an empty
# directory, the same for both workers (an archive records the class path it was written with).
# Besides the JVM options: a larger cache of the classes Spark generates for its queries (a test
# JVM plans thousands of different small queries, and the default cache of 100 evicts code that
# the next statement of the same kind generates again); the version's class-data-sharing archive,
# once written (write_class_archive): each JVM then maps Spark's classes, already parsed and
# verified, instead of loading them from the jars. And the worker's own Ivy cache for the sessions
# that resolve Delta and Iceberg (testkit/formats.py), so two workers never resolve into one
# directory at once.
use_spark_environment() {
  local archive
  archive=$(class_archive "$2")
  export SPARK_CONF_DIR="$empty_spark_conf" MULTIJOIN_TEST_IVY="$HOME/.ivy2-dbt-multijoin-worker-$1"
  SPARK_SUBMIT_OPTS="$JVM_OPTIONS -Dspark.sql.codegen.cache.maxEntries=2000 -Dspark.executor.defaultJavaOptions='$JVM_OPTIONS'"
  [ -f "$archive" ] && SPARK_SUBMIT_OPTS+=" -XX:SharedArchiveFile=$archive $CDS_QUIET"
  export SPARK_SUBMIT_OPTS
}

# class_archive <version>: where the version's class-data-sharing archive is written.
class_archive() {
  echo "$work_tmp/class-archives/spark-$1.jsa"
}

# write_class_archive <version>: a JVM of the version runs a session with Hive support through
# the statements the tests' sessions send first (a join, an aggregate, a table written and read,
# an EXPLAIN, a DESCRIBE) and, as it exits, writes the classes it loaded into the version's
# archive (JDK 17's dynamic archive). For the versions of the whole suites, whose runs start a
# JVM per dbt session and Thrift server. Renamed into place once whole: a run that starts before
# runs without it.
write_class_archive() {
  local archive state
  archive=$(class_archive "$1")
  state=$work_tmp/class-archives/state-$1
  mkdir -p "$state"
  SPARK_CONF_DIR="$empty_spark_conf" SPARK_SUBMIT_OPTS="$JVM_OPTIONS -XX:ArchiveClassesAtExit=$archive.partial $CDS_QUIET" \
    with_spark "$1" python scripts/class_archive_session.py "$state" || return 1
  [ -s "$archive.partial" ] && mv "$archive.partial" "$archive"
}

# worker <n>: takes the next run from the queue ($runs, in order) until none is left, with its
# own Ivy cache and temporary directory. Each run a "version|label|pytest arguments" line (or
# "jvm|versions" for the JVM unit tests).
worker() {
  local n=$1 index version label args examples failed=0
  while true; do
    index=$(next_run) || break
    IFS='|' read -r version label args <<<"${runs[$index]}"
    if [ "$(date +%s)" -gt "$MULTIJOIN_TEST_DEADLINE" ]; then
      not_run "$version" "$label" "past the CI deadline"
      failed=1
      continue
    fi
    echo "started: $(run_title "$version" "$label") (worker $n, $((SECONDS / 60))m$((SECONDS % 60))s)"
    echo "$results/$(run_name "$version" "$label").log" >"$work_tmp/started-$index"
    if ! needs_main_only "$version" "$label" && ! await_setup; then
      not_run "$version" "$label" "the set-up failed: $results/setup.log"
      failed=1
      continue
    fi
    if [ "$version" = jvm ]; then
      # shellcheck disable=SC2086
      run_jvm_tests $label || failed=1
      continue
    fi
    examples=${MULTIJOIN_DIFFERENTIAL_EXAMPLES:-$WHOLE_SUITE_EXAMPLES}
    [ "$label" = "smoke subset" ] && examples=$SMOKE_EXAMPLES
    use_spark_environment "$n" "$version"
    # shellcheck disable=SC2086  # the arguments are words
    MULTIJOIN_DIFFERENTIAL_EXAMPLES=$examples MULTIJOIN_PIPELINE_EXAMPLES=${MULTIJOIN_PIPELINE_EXAMPLES:-$PIPELINE_EXAMPLES} \
      run_suite "$n" "$version" "$label" $args "${extra[@]}" || failed=1
  done
  return $failed
}

# report_late_runs: 90 seconds past the deadline, the last lines of the log of each
# run that is still going (a test that ignores the deadline: one that hangs prints the stacks
# of its threads there, pyproject.toml's faulthandler_timeout), before CI stops the whole job.
report_late_runs() {
  local started log
  while [ "$(date +%s)" -lt $((MULTIJOIN_TEST_DEADLINE + 90)) ]; do
    sleep 10  # in short sleeps: killed at the end of the script, it leaves no long sleep behind
  done
  for started in "$work_tmp"/started-*; do
    [ -e "$started" ] || continue
    log=$(cat "$started")
    [ -e "${log%.log}.result" ] && continue
    echo "=== still running 90 seconds past the CI deadline, the last lines of ${log#"$results"/}:"
    tail -n 80 "$log"
  done
}

# needs_main_only <version> <label>: whether the run needs only .venv and its jar (MAIN_ONLY_RUNS
# on the main Spark version), and so need not wait for the rest of the set-up.
needs_main_only() {
  local run
  [ "$1" = "$SPARK_MAIN" ] || return 1
  for run in "${MAIN_ONLY_RUNS[@]}"; do
    [ "$2" = "$run" ] && return 0
  done
  return 1
}

# await_setup: waits for the rest of the set-up, which runs in the background; fails if it failed.
await_setup() {
  while [ ! -s "$work_tmp/setup.status" ]; do
    sleep 1
  done
  [ "$(cat "$work_tmp/setup.status")" = 0 ]
}

# next_run: prints the index of the next run of the queue and claims it, under a lock the two
# workers share; fails when every run is claimed.
next_run() {
  (
    flock 9
    local index
    index=$(cat "$work_tmp/next")
    [ "$index" -lt "${#runs[@]}" ] || exit 1
    echo $((index + 1)) >"$work_tmp/next"
    echo "$index"
  ) 9>"$work_tmp/queue.lock"
}

extra=("$@")
export MULTIJOIN_TEST_DEADLINE=$(($(date +%s) + ${MULTIJOIN_CI_MINUTES:-85} * 60))
work_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbt-multijoin-tests.XXXXXX")
# The SPARK_CONF_DIR of every run (use_spark_environment): empty.
empty_spark_conf=$work_tmp/spark-conf
mkdir -p "$empty_spark_conf"
setup_pid= reporter_pid=
# However the script ends, the background set-up has ended before its directory goes, and the
# late runs' reporter is stopped.
trap '[ -z "$reporter_pid" ] || kill "$reporter_pid" 2>/dev/null; [ -z "$setup_pid" ] || wait "$setup_pid"; rm -rf "$work_tmp"' EXIT

if $quick; then
  use_spark_environment 1 "${SPARK_SUITE_QUICK[0]}"
  MULTIJOIN_DIFFERENTIAL_EXAMPLES=$SMOKE_EXAMPLES run_suite 1 "${SPARK_SUITE_QUICK[0]}" "quick suite" tests -m "not slow" \
    "--ignore=${OWN_JVM[@]}" "${extra[@]}"
  status=$?
  cat "$results"/*.log
  cat "$results"/*.result
  exit $status
fi

whole=("${SPARK_SUITE_WHOLE[@]}") smoke=("${SPARK_SUITE_SMOKE[@]}")
# One queue of runs, and two workers that take the next run as each finishes: the two cores stay
# busy to the end whatever each run's length. First the two runs that need only .venv (the
# main line's pipelines: both workers start while the rest of the set-up runs), then the others
# longest first (as measured in CI on 2 cores). The Thrift pipeline tests (which need a Delta and
# Iceberg runtime) run in the first whole-suite line, the tests whose work is the same on every
# line in the second.
deselect_once=() ignore_own=() first_line_only=() iceberg_only=() no_examples=() delta_first=() iceberg_first=()
for path in "${ONCE_ONLY[@]}"; do deselect_once+=("--deselect=$path"); done
for path in "${FIRST_PIPELINE_LINE_ONLY[@]}"; do first_line_only+=("--deselect=$path"); done
for path in "${ICEBERG_ONLY[@]}"; do iceberg_only+=("--deselect=$path"); done
for path in "${MACRO_EXAMPLES[@]}"; do no_examples+=("--deselect=$path"); done
for path in "${DELTA_FIRST[@]}"; do delta_first+=("--deselect=$path"); done
for path in "${ICEBERG_FIRST[@]}"; do iceberg_first+=("--deselect=$path"); done
for path in "${OWN_JVM[@]}"; do ignore_own+=("--ignore=$path"); done
deselect_first_whole=()
for path in "${FIRST_WHOLE_LINE_ONLY[@]}"; do deselect_first_whole+=("--deselect=$path"); done
runs=("${PIPELINE_VERSIONS[0]}|pipelines on delta|pipeline_tests --table-format delta ${iceberg_only[*]} ${iceberg_first[*]}"
  "${PIPELINE_VERSIONS[0]}|pipelines on iceberg|pipeline_tests --table-format iceberg ${no_examples[*]} ${delta_first[*]}"
  "${whole[0]}|whole suite|tests ${ignore_own[*]} ${deselect_once[*]}"
  "${whole[1]}|whole suite|tests ${ignore_own[*]} ${deselect_first_whole[*]}"
  "${PIPELINE_VERSIONS[1]}|pipelines on iceberg|pipeline_tests --table-format iceberg ${first_line_only[*]} ${iceberg_first[*]}"
  "${PIPELINE_VERSIONS[1]}|pipelines on delta|pipeline_tests --table-format delta ${first_line_only[*]} ${no_examples[*]} ${delta_first[*]}")
# The JVM unit tests before the queue's tail: a Maven run, which the deadline does not stop.
runs+=("jvm|${SPARK_SUITE_JVM_UNIT[*]}")
for version in "${SPARK_SUITE_OWN_JVM[@]}"; do
  runs+=("$version|own JVM|${OWN_JVM[*]}")
done
# The smoke subsets last: the shortest runs, so the worker that finishes first waits least.
for version in "${smoke[@]}"; do
  runs+=("$version|smoke subset|${SMOKE_TESTS[*]}")
done
echo 0 >"$work_tmp/next"
# The other parts of the set-up, started first, then (once the main part is there too) the
# class-data-sharing archives of the whole suites' versions (write_class_archive; a run without
# one is only slower). Then the main part, which the first runs wait for.
(
  bash scripts/setup.sh --others >"$results/setup.log" 2>&1
  status=$?
  while [ ! -s "$work_tmp/main-setup.status" ]; do
    sleep 1
  done
  if [ "$status" -eq 0 ] && [ "$(cat "$work_tmp/main-setup.status")" = 0 ]; then
    for version in "${whole[@]}"; do
      write_class_archive "$version" >>"$results/setup.log" 2>&1 || echo "no class-data-sharing archive for Spark $version" >>"$results/setup.log"
    done
  fi
  echo $status >"$work_tmp/setup.status"
) &
setup_pid=$!
bash scripts/setup.sh --example
status=$?
echo $status >"$work_tmp/main-setup.status"
[ "$status" -eq 0 ] || exit 1

report_late_runs &
reporter_pid=$!
worker 1 &
pid1=$!
worker 2 &
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
# A failed set-up of the other Spark versions again at the very end, where an excerpt of the
# output that keeps only its last lines (CI's) still shows why the runs above did not run.
if [ -s "$work_tmp/setup.status" ] && [ "$(cat "$work_tmp/setup.status")" != 0 ]; then
  echo "=== the set-up of the other Spark versions failed; the end of $results/setup.log:"
  tail -n 60 "$results/setup.log"
fi
exit "$failed"
