"""Hand probe: what planning and a warm full scan of the merge-on-read view cost a reader, with the
view's SQL of the store's shape (this release) against the earlier release's view, which held
every part and let Spark's optimizer drop a part by the flags of a one-row view. On the tables a
benchmark run kept (--keep), at two store states: with the change day's delta rows (the store
time-travelled to the refresh's snapshot) and with none (the base rows alone, after a compaction).

    view_shape_probe.py <the run's --work-dir> <this directory> [rounds]

The earlier release's view is its text as a run of the release before wrote it for this benchmark
(earlier_view.sql here, from that run's dbt log; the same model, schema and names), created
beside the model's view over the same store."""
import json, re, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, for testkit and benchmarks
from benchmarks.partial_update import fingerprint_query, planning_seconds
from testkit.formats import build_format_session

work, out = Path(sys.argv[1]), Path(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
schema = json.loads((out / "results.json").read_text())["sizes"][0]["schema"]
spark = build_format_session("iceberg", work, "probe", {"spark.driver.memory": "8g", "spark.sql.shuffle.partitions": "4"})
sql = spark.sql
sql(f"show tables in {schema}").collect()  # Spark's metastore client first, then Iceberg's
store, table = f"{schema}.wide__dbt_mj_store", f"{schema}.wide_rebuild"
parts = f"{store}_parts"
earlier = (out / "earlier_view.sql").read_text()
assert f"{schema}.wide__dbt_mj_store_parts " in earlier

# This release's view as the change day's refresh wrote it (its last widening before the MERGE).
log = next(work.glob("keys-*/project/logs/dbt.log")).read_text()
head = f"create or replace view {schema}.wide tblproperties"
widened = log[log.rindex(head, 0, log.rindex(f"merge into {store}")):]
widened = widened[widened.index(" as\n") + 4:]
widened = widened[:re.search(r"^\d\d:\d\d:\d\d\.\d+ ", widened, re.M).start()]
columns = ", ".join(f"`{c}`" for c in spark.table(table).columns)


def measure(names: list[str]) -> dict:
    queries = {n: fingerprint_query(spark, n) for n in names}
    for n in names:
        sql(queries[n]).first()  # the first of each: planned and compiled once
    scans, plans = {n: [] for n in names}, {n: [] for n in names}
    for _ in range(rounds):
        for n in names:
            plans[n].append(planning_seconds(spark, n))
            start = time.perf_counter()
            sql(queries[n]).first()
            scans[n].append(time.perf_counter() - start)
    return {n: (statistics.median(scans[n]), statistics.median(plans[n])) for n in names}


def report(title: str, results: dict) -> None:
    base = results[table][0]
    print(f"\n{title}: {rounds} rounds, alternating; medians\n")
    print("| view | warm scan s | ÷ table | planning s |\n|---|---|---|---|")
    for n, (scan, plan) in results.items():
        print(f"| {n.split('.')[1]} | {scan:.2f} | {scan / base:.2f} | {plan:.3f} |")


expected_now = spark.sql(fingerprint_query(spark, f"{schema}.wide")).first()
snapshot = sql(f"select snapshot_id from {store}.snapshots order by cast(summary['total-records'] as bigint) desc limit 1").first()[0]
current = sql(f"select snapshot_id from {store}.snapshots order by committed_at desc limit 1").first()[0]
sql(f"create or replace view {parts} as select * from values (true, false) as parts(dbt_multijoin_delta_rows, dbt_multijoin_null_keyed_rows)")
try:
    sql(f"CALL spark_catalog.system.rollback_to_snapshot('{store}', {snapshot})").collect()
    counts = {("base" if r.base else "delta"): r.n for r in sql(f"select dbt_multijoin_seq = 0 as base, count(*) as n from {store} group by 1").collect()}
    print(f"store at snapshot {snapshot}: {counts}, delta share {counts['delta'] / counts['base']:.1%}", flush=True)
    sql(f"create or replace view {schema}.shaped_view as {widened}")
    sql(f"create or replace view {schema}.earlier_view as {earlier}")
    found = [spark.sql(fingerprint_query(spark, f"{schema}.{n}")).first() for n in ("shaped_view", "earlier_view")]
    assert found[0] == found[1], found
    report("With the change day's delta rows", measure([f"{schema}.shaped_view", f"{schema}.earlier_view", table]))
finally:
    sql(f"CALL spark_catalog.system.set_current_snapshot('{store}', {current})").collect()
# No delta row (the store as the run's last compaction left it): this release's view is the base
# rows' scan; the earlier one's flags say neither part.
sql(f"create or replace view {parts} as select * from values (false, false) as parts(dbt_multijoin_delta_rows, dbt_multijoin_null_keyed_rows)")
sql(f"create or replace view {schema}.shaped_view as select {columns} from {store} where dbt_multijoin_seq = 0")
assert spark.sql(fingerprint_query(spark, f"{schema}.shaped_view")).first() == expected_now == spark.sql(fingerprint_query(spark, f"{schema}.earlier_view")).first()
report("After the compaction (no delta row)", measure([f"{schema}.shaped_view", f"{schema}.earlier_view", table]))
for name in ("shaped_view", "earlier_view"):
    sql(f"drop view {schema}.{name}")
sql(f"drop view {parts}")
spark.stop()
