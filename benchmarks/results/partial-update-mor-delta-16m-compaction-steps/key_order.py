"""Hand check: are the Delta store's base files in key order after a compaction's step and after the
whole compaction, on the tables the benchmark run kept (--keep)?

    key_order.py <the run's --work-dir> <this directory>

A compaction on Delta writes through Spark's concurrent writers, one per bucket a task meets, with
no sort (macros/changed_keys/merge_on_read.sql): each base file must come out holding a range of
keys in order. Reads each file of the store, at the step's version and at the last, as one task
(a split per file) and counts the rows whose key is below the row before it in the file."""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, for testkit
from testkit.formats import build_format_session

work, out = Path(sys.argv[1]), Path(sys.argv[2])
schema = json.loads((out / "results.json").read_text())["sizes"][0]["schema"]
spark = build_format_session("delta", work, "key-order", {"spark.driver.memory": "8g", "spark.sql.files.maxPartitionBytes": "4g",
                                                          "spark.sql.files.openCostInBytes": "4g"})
spark.sql(f"show tables in {schema}").collect()
store = f"{schema}.wide__dbt_mj_store"
history = spark.sql(f"describe history {store}").collect()
for h in sorted(history, key=lambda h: h.version):
    metrics = {k: v for k, v in h.operationMetrics.items() if k in ("numFiles", "numOutputRows", "numRemovedFiles")}
    print(f"version {h.version}: {h.operation} {h.operationParameters.get('predicate', '')} {metrics}")
step = min(h.version for h in history if "dbt_multijoin_bucket" in h.operationParameters.get("predicate", ""))
last = max(h.version for h in history)
for label, version in (("the step's", step), ("the last", last)):
    files = spark.sql(f"""
        with read as (
          select input_file_name() as file, k, dbt_multijoin_seq as seq, dbt_multijoin_bucket as bucket,
                 monotonically_increasing_id() as position
          from {store} version as of {version}),
        ordered as (select *, lag(k) over (partition by file order by position) as before from read)
        select file, count(*) as n, count_if(k < before) as descents, max(seq) as seq, min(bucket) as bucket,
               count(distinct bucket) as buckets
        from ordered group by file""").collect()
    base = [f for f in files if f.seq == 0]
    print(f"\n{label} version ({version}): {len(files)} files; {len(base)} of base rows ({sum(f.n for f in base):,} rows), "
          f"{sum(1 for f in base if f.descents)} of them out of key order, {sum(1 for f in base if f.buckets > 1)} holding "
          f"more than one bucket; {len(files) - len(base)} of delta rows (unordered by design: "
          f"{sum(1 for f in files if f.seq > 0 and f.descents)} with a descent)")
spark.stop()
