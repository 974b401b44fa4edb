#!/usr/bin/env bash
# Builds the sdist and the wheel into dist/ (or the directory given as $1). `dbt-multijoin jar`
# (buildtools/jar_build.py) builds one jar per supported Spark minor against that minor's pyspark
# (spark-versions.toml) through the Maven build jvm/pom.xml, into a staging copy of the package;
# `python -m build` makes the sdist from it (jars and Scala sources included) and then the wheel
# from that sdist, so both ship the same jars, and neither the build's tooling (buildtools/).
# Runs scripts/setup.sh first (a no-op once done), so it works from a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/spark-versions.sh
# Setup's own output (pip, the first jar) goes to stderr: stdout is the build's.
bash scripts/setup.sh >&2
out=$(realpath -m "${1:-dist}")
stage=$(mktemp -d "${TMPDIR:-/tmp}/dbt-multijoin-dist.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage/jvm" "$stage/dbt_multijoin/jars"
cp pyproject.toml README.md MANIFEST.in "$stage/"
# The sources the jars are built from, not the unit tests.
mkdir -p "$stage/jvm/src"
cp -r jvm/src/main jvm/src/shims "$stage/jvm/src/"
cp dbt_multijoin/*.py "$stage/dbt_multijoin/"
for version in "${SPARK_VERSIONS[@]}"; do
  home=$(spark_home "$version")
  [ -d "$home/jars" ] || { echo "no Spark $version at $home: run scripts/setup.sh" >&2; exit 1; }
  jar=$(.venv/bin/dbt-multijoin jar --spark-home "$home")
  case "$(basename "$jar")" in
    "dbt-multijoin-spark${version%.*}_"*) ;;
    *) echo "the jar for Spark $version is named $(basename "$jar")" >&2; exit 1 ;;
  esac
  cp "$jar" "$stage/dbt_multijoin/jars/"
  echo "Spark $version: $(basename "$jar")"
done
.venv/bin/python -m build --outdir "$out" "$stage" >"$stage/build.log" 2>&1 || { cat "$stage/build.log" >&2; exit 1; }
ls -l "$out"/dbt_multijoin-*
