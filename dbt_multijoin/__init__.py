"""dbt-multijoin: a Spark SQL extension and dbt package for k-way sort-merge FULL/LEFT/INNER joins on one key."""

__version__ = "0.1.0"

# The class users put in spark.sql.extensions; a stable interface (`dbt-multijoin extension`).
EXTENSION_CLASS = "org.apache.spark.sql.multijoin.MultiJoinExtensions"

# The DataFrame API. dataframe.py imports pyspark only when called, so the package imports
# without pyspark (the thrift method of dbt needs none).
from dbt_multijoin.dataframe import MultiJoinNotAppliedError, MultiJoinNotAppliedWarning, multi_join  # noqa: E402


def __getattr__(name: str):
    # dbt-core's plugin discovery asks every installed `dbt_*` module for `plugins`: ours gives
    # each connection of dbt-spark's session method a Spark session of its own (dbt_plugin.py).
    # Resolved on that first question, so importing the package does not import dbt.
    if name == "plugins":
        from dbt_multijoin.dbt_plugin import SessionPerConnection

        return [SessionPerConnection]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EXTENSION_CLASS", "MultiJoinNotAppliedError", "MultiJoinNotAppliedWarning", "__version__", "multi_join"]
