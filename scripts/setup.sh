#!/usr/bin/env bash
# Sets up everything from a fresh clone with only Python 3.11 and Java 17: a virtualenv with the
# package, dbt, Spark (pyspark) and the test tools, then the extension jar (compiled with the
# Scala compiler that ships in the pyspark wheel). Safe to run again: it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,bench]"
echo "extension jar: $(.venv/bin/dbt-multijoin jar)"
