#!/usr/bin/env bash
# Runs the JVM unit tests (ScalaTest suites in jvm/src/test/scala, through jvm/pom.xml) against the
# jars of each given Spark version, a supported minor or its tested patch (default: the versions
# whose suites include jvm-unit in spark-versions.toml), the extension's classes as its jar for that
# version holds them (buildtools/jar_build.py builds the jar first if it is out of date). Needs
# scripts/setup.sh first.
#
#   bash scripts/jvm-tests.sh                 # the jvm-unit versions of spark-versions.toml
#   bash scripts/jvm-tests.sh 4.1             # any supported version
#   SUITES=org.apache.spark.sql.multijoin.recognition.KeyTypesSuite bash scripts/jvm-tests.sh
#
# Prints ScalaTest's report per version, a line per version, and ends with "N passed, N failed"
# over all of them (counted from the JUnit XML reports in jvm/target/spark-<minor>/surefire-reports).
# Exits non-zero if a test fails, or a version's tests could not be built or run.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/spark-versions.sh
python=.venv/bin/python
[ -x "$python" ] || { echo "no .venv: run scripts/setup.sh first" >&2; exit 1; }
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("${SPARK_SUITE_JVM_UNIT[@]}")

summary=() passed=0 failed=0 status=0
counts=$(mktemp "${TMPDIR:-/tmp}/jvm-tests.XXXXXX")
trap 'rm -f "$counts"' EXIT
for version in "${versions[@]}"; do
  home=$(spark_home "$version" 2>/dev/null)
  if [ ! -d "$home/jars" ]; then
    echo "no Spark $version at ${home:-?}: run scripts/setup.sh (supported: ${SPARK_VERSIONS[*]})" >&2
    status=1 summary+=("Spark $version: not run (no Spark home)")
    continue
  fi
  echo "=== JVM unit tests, Spark $version"
  start=$SECONDS
  # Python runs Maven (through buildtools/jar_build.py, which holds the build lock and passes the
  # build what it reads off the Spark home) and counts the reports: "passed failed exit-code" into $counts, so
  # that a build failure (no reports) and a test failure are told apart.
  : >"$counts"
  "$python" - "$home" "${SUITES:-}" "$counts" <<'PYTHON'
import sys
import xml.etree.ElementTree as ElementTree

from buildtools.jar_build import run_unit_tests
from dbt_multijoin.errors import DbtMultijoinError
from dbt_multijoin.jar import SparkInstall

home, suites, counts = sys.argv[1:]
try:
    returncode, reports = run_unit_tests(SparkInstall.from_home(home), [f"-Dsuites={suites}"] if suites else [])
except DbtMultijoinError as error:
    print(error, file=sys.stderr)
    returncode, reports = 1, None
passed = failed = 0
for report in sorted(reports.glob("TEST-*.xml")) if reports and reports.is_dir() else []:
    suite = ElementTree.parse(report).getroot()
    tests, broken = int(suite.get("tests", 0)), int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    passed, failed = passed + tests - broken, failed + broken
with open(counts, "w") as out:
    print(passed, failed, returncode, file=out)
PYTHON
  read -r version_passed version_failed returncode <"$counts" || true
  elapsed="$(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s"
  if [ "${returncode:-1}" != 0 ] && [ "${version_failed:-0}" = 0 ]; then
    summary+=("Spark $version: FAILED (the build or the test run failed, exit ${returncode:-?}; see above) in $elapsed")
    status=1
    continue
  fi
  [ "$returncode" = 0 ] || status=1
  passed=$((passed + version_passed)) failed=$((failed + version_failed))
  summary+=("Spark $version: $version_passed passed, $version_failed failed in $elapsed")
done
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
exit "$status"
