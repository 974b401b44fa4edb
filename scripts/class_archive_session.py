"""Run by scripts/test.sh (write_class_archive) in a JVM that writes a class-data-sharing archive
as it exits: a session with Hive support through the statements the tests' sessions send first,
so that the archive holds the classes every test JVM loads. Its state (metastore, warehouse) goes
under the directory given as the only argument."""

import sys

from pyspark import SparkContext
from pyspark.sql import SparkSession

state = sys.argv[1]
spark = (
    SparkSession.builder.master("local[2]").appName("dbt-multijoin-class-archive").enableHiveSupport()
    .config("spark.ui.enabled", "false")
    .config("spark.sql.warehouse.dir", f"file:{state}/warehouse")
    .config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={state}/metastore_db;create=true")
    .getOrCreate()
)
spark.range(100).selectExpr("id % 7 as k", "id as v").createOrReplaceTempView("t")
spark.sql("create table archived using parquet as "
          "select coalesce(t.k, u.k) as k, sum(u.v) as s from t full outer join t as u on t.k = u.k group by 1").collect()
spark.sql("explain extended select * from archived where k > 1").collect()
spark.sql("select k, count(*) from archived group by k order by k").collect()
spark.sql("describe table extended archived").collect()
gateway = SparkContext._gateway.proc
spark.stop()
# The JVM exits when its end of the gateway's stdin closes, and writes the archive as it exits.
gateway.stdin.close()
gateway.wait()
