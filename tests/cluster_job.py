"""Run by test_operator_cluster.py in its own process: a hinted query on local-cluster[2,1,1024],
where the executors are separate JVMs that get the extension jar only through spark.jars.

Every external sorter there spills after 1,000 rows (a static conf, hence this session of its
own): the operator's sorts of its inputs must spill and still merge into vanilla's rows."""

import json
import sys

from testkit.plans import node_metrics, plan_nodes
from testkit.session import build_session

spark = build_session(
    master="local-cluster[2,1,1024]",
    app_name="dbt-multijoin-cluster-test",
    conf={"spark.sql.shuffle.partitions": "4", "spark.multijoin.failOnFallback": "true",
          "spark.executor.memory": "1g", "spark.sql.autoBroadcastJoinThreshold": "-1",
          "spark.shuffle.spill.numElementsForceSpillThreshold": "1000"},
)
try:
    for i in range(1, 5):
        spark.range(0, 20000, i).selectExpr(
            f"CASE WHEN id % 97 = 0 THEN NULL ELSE id % 5000 END AS k", f"id AS v{i}"
        ).createOrReplaceTempView(f"t{i}")
    sql = ("SELECT {hint} coalesce(t1.k, t2.k, t3.k, t4.k) AS k, v1, v2, v3, v4 FROM t1 "
           "FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k "
           "FULL JOIN t4 ON coalesce(t1.k, t2.k, t3.k) = t4.k")
    hinted = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    # Compare inside Spark: rows of one side missing from the other, both ways, as multisets.
    hinted.createOrReplaceTempView("hinted")
    spark.sql(sql.format(hint="")).createOrReplaceTempView("vanilla")
    difference = spark.sql(
        "SELECT count(*) AS n FROM ((SELECT * FROM hinted EXCEPT ALL SELECT * FROM vanilla) "
        "UNION ALL (SELECT * FROM vanilla EXCEPT ALL SELECT * FROM hinted))").first().n
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    hinted.collect()
    operator = [node for node in plan_nodes(hinted._jdf.queryExecution().executedPlan())
                if node.getClass().getSimpleName() == "MultiJoinExec"]
    print(json.dumps({
        "multijoin_planned": "MultiJoin" in hinted._jdf.queryExecution().optimizedPlan().toString(),
        "rows": hinted.count(),
        "vanilla_rows": spark.sql(sql.format(hint="")).count(),
        "difference": difference,
        "executors": executors,
        "sort_spill_bytes": node_metrics(operator[0])["sortSpillSize"] if operator else None,
    }))
finally:
    spark.stop()
sys.exit(0)
