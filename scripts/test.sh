#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), then runs the whole test suite on Spark 3.5.9 and 4.3.0,
# the pipeline tests on 3.5.9 and 4.1.4 (once per table format) and the smoke subset on the other supported minors (scripts/spark-versions.sh). Extra arguments
# go to every pytest run. Fails if any run fails or collects no tests (pytest exit 5), and ends
# with one line per Spark version: its result and duration. JUnit XML: build/test-results/.
set -uo pipefail
cd "$(dirname "$0")/.."
# What runs on the minors without a whole-suite run: pytest paths or node ids. (Not
# test_operator_version_guard.py: it runs the other line's venv, which would inherit PYTHONPATH.)
SMOKE_TESTS=(tests/test_operator_plans.py tests/test_operator_differential.py)
# The minors share the source and shims of the lines around them: the smoke subset checks that
# they build and behave, with a third of the property tests' examples; the deep search (150
# examples a property) runs on the two whole-suite versions. Keeps the run well inside CI's bound.
SMOKE_EXAMPLES=50
# The pipeline tests (pipeline_tests/: dbt in-process over Delta and Iceberg tables) run in one
# pytest process per table format, on the Spark versions both formats publish runtimes for
# (testkit/formats.py: 3.5 and 4.1; 4.2 and 4.3 have none on Maven Central yet).
PIPELINE_VERSIONS=(3.5.9 4.1.4)
source scripts/spark-versions.sh
bash scripts/setup.sh || exit 1
mkdir -p build/test-results

whole=() smoke=()
for version in "${SPARK_VERSIONS[@]}"; do
  if [ -z "$(spark_extra_home "$version")" ]; then whole+=("$version"); else smoke+=("$version"); fi
done
summary=() failed=0
# run_suite <version> <label> [pytest arguments...]
run_suite() {
  local version=$1 label=$2 start=$SECONDS status result
  shift 2
  echo "=== Spark $version: $label"
  with_spark "$version" python -m pytest "$@" --junitxml="build/test-results/spark-$version-${label// /-}.xml"
  status=$?
  case $status in
    0) result=passed ;;
    5) result="FAILED (no tests collected)" ;;
    *) result="FAILED (pytest exit $status)" ;;
  esac
  [ "$status" -eq 0 ] || failed=1
  summary+=("Spark $version, $label: $result in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s")
}
for version in "${whole[@]}"; do run_suite "$version" "whole suite" "$@"; done
for version in "${PIPELINE_VERSIONS[@]}"; do
  for format in delta iceberg; do run_suite "$version" "pipelines on $format" pipeline_tests --table-format "$format" "$@"; done
done
for version in "${smoke[@]}"; do
  MULTIJOIN_DIFFERENTIAL_EXAMPLES=$SMOKE_EXAMPLES run_suite "$version" "smoke subset" "${SMOKE_TESTS[@]}" "$@"
done
printf '%s\n' "${summary[@]}"
exit "$failed"
