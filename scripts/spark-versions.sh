# The Spark versions this package supports and where each one lives in a checkout, as
# spark-versions.toml says (read by buildtools/versions.py, with the system Python: this runs
# before any virtualenv exists); sourced by setup.sh, test.sh, dist.sh and jvm-tests.sh.
# It sets:
#   SPARK_VERSIONS            the tested patch of each minor, oldest first
#   SPARK_MAIN                the one of .venv, the checkout's main virtualenv
#   SPARK_PATCH[v]            the tested patch of v, a supported minor ("4.1") or patch
#   SPARK_PYTHON[patch]       the virtualenv whose Python runs it
#   SPARK_CONSTRAINTS[patch]  the constraints file of its own virtualenv (none: a pyspark-only home)
#   SPARK_PYSPARK_HOME[patch] its pyspark-only home, .spark/<patch> (pip install --no-deps --target)
#   SPARK_SUITE_<SUITE>       the patches a suite runs on (WHOLE, QUICK, PIPELINES, SMOKE, OWN_JVM, JVM_UNIT)
_spark_versions=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && "${PYTHON:-python3}" -m buildtools.versions --bash) || {
  echo "spark-versions.sh: could not read spark-versions.toml" >&2
  return 1
}
eval "$_spark_versions"
unset _spark_versions

# The tested patch of <version> (a minor or a patch); fails for a version that is not supported.
spark_patch() {
  [ -n "$1" ] && [ -n "${SPARK_PATCH[$1]:-}" ] && echo "${SPARK_PATCH[$1]}"
}

# The virtualenv whose Python runs Spark <version>.
spark_venv() {
  local patch
  patch=$(spark_patch "$1") && echo "${SPARK_PYTHON[$patch]}"
}

# The pyspark-only home of Spark <version>, or nothing when its virtualenv has that pyspark.
spark_extra_home() {
  local patch
  patch=$(spark_patch "$1") && echo "${SPARK_PYSPARK_HOME[$patch]:-}"
}

# The Spark home (the pyspark directory) of <version>.
spark_home() {
  local extra venv
  extra=$(spark_extra_home "$1") || return 1
  if [ -n "$extra" ]; then
    echo "$extra/pyspark"
  else
    venv=$(spark_venv "$1")
    "$venv/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
  fi
}

# Runs <command> of <version>'s virtualenv with that Spark's pyspark: with_spark 4.0 python -m pytest
# The home goes on PYTHONPATH as an absolute path: tests start subprocesses (dbt, spark-submit) in
# other directories, and they must import the same pyspark.
with_spark() {
  local version=$1 command=$2 home venv
  shift 2
  home=$(spark_extra_home "$version") && venv=$(spark_venv "$version") || {
    echo "Spark $version is not supported (spark-versions.toml: ${SPARK_VERSIONS[*]})" >&2
    return 1
  }
  PYTHONPATH="${home:+$(realpath "$home")}" "$venv/bin/$command" "$@"
}
