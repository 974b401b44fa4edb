"""dbt-multijoin: a Spark SQL extension and dbt package for k-way sort-merge FULL/LEFT/INNER joins on one key."""

__version__ = "0.1.0"

# The class users put in spark.sql.extensions; a stable interface (`dbt-multijoin extension`).
EXTENSION_CLASS = "org.apache.spark.sql.multijoin.MultiJoinExtensions"

# The DataFrame API. dataframe.py imports pyspark only when called, so the package imports
# without pyspark (the thrift method of dbt needs none).
from dbt_multijoin.dataframe import MultiJoinNotAppliedError, MultiJoinNotAppliedWarning, multi_join  # noqa: E402

__all__ = ["EXTENSION_CLASS", "MultiJoinNotAppliedError", "MultiJoinNotAppliedWarning", "__version__", "multi_join"]
