"""dbt-multijoin: a Spark SQL extension and dbt package for k-way sort-merge FULL/LEFT/INNER joins on one key."""

__version__ = "0.1.0"

# The class users put in spark.sql.extensions; a stable interface (`dbt-multijoin extension`).
EXTENSION_CLASS = "org.apache.spark.sql.multijoin.MultiJoinExtensions"
