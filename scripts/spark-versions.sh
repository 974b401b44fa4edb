# The Spark versions this package supports and where each one lives in a checkout; sourced by
# setup.sh, test.sh and dist.sh. The wheel ships one ready jar per minor.
# - 3.5.9 and 4.3.0 have their own virtualenv (.venv, .venv-spark4, versions pinned by
#   constraints/spark-<minor>.txt): the whole suite runs on them.
# - 4.0.5, 4.1.4 and 4.2.1 are pyspark-only Spark homes under .spark/<version>
#   (pip install --no-deps --target), run with .venv-spark4 and that home first on PYTHONPATH.
SPARK_VERSIONS=(3.5.9 4.0.5 4.1.4 4.2.1 4.3.0)

# The virtualenv whose Python runs Spark <version>.
spark_venv() {
  case "$1" in
    3.*) echo .venv ;;
    *) echo .venv-spark4 ;;
  esac
}

# The pyspark-only home of Spark <version>, or nothing when its virtualenv has that pyspark.
spark_extra_home() {
  case "$1" in
    3.5.9 | 4.3.0) ;;
    *) echo ".spark/$1" ;;
  esac
}

# The Spark home (the pyspark directory) of <version>.
spark_home() {
  local extra
  extra=$(spark_extra_home "$1")
  if [ -n "$extra" ]; then
    echo "$extra/pyspark"
  else
    "$(spark_venv "$1")/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
  fi
}

# Runs <command> of <version>'s virtualenv with that Spark's pyspark: with_spark 4.0.5 python -m pytest
# The home goes on PYTHONPATH as an absolute path: tests start subprocesses (dbt, spark-submit) in
# other directories, and they must import the same pyspark.
with_spark() {
  local version=$1 command=$2 home
  shift 2
  home=$(spark_extra_home "$version")
  PYTHONPATH="${home:+$(realpath "$home")}" "$(spark_venv "$version")/bin/$command" "$@"
}
