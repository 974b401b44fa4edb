"""Hand probe: what a reader's full scan of the merge-on-read view pays at 2M, part by part, on the
tables a benchmark run kept (--keep): the store at its compaction threshold, partitioned by key
bucket or not, with fewer delta rows, and with none.

    probe.py <the run's --work-dir> <this directory> [rounds]

Copies the store as the change day's refresh left it (Iceberg time travel to the snapshot holding
the most rows) and points the view's SQL, as that refresh wrote it (its text from the dbt log), at
each copy. Each copy keeps the store's one-task-per-file property."""
import json, re, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, for testkit and benchmarks
from benchmarks.partial_update import fingerprint_query, planning_seconds
from testkit.formats import build_format_session

work, out = Path(sys.argv[1]), Path(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
schema = json.loads((out / "results.json").read_text())["sizes"][0]["schema"]
spark = build_format_session("iceberg", work, "probe", {"spark.driver.memory": "8g", "spark.sql.shuffle.partitions": "4"})
sql = spark.sql
sql(f"show tables in {schema}").collect()  # Spark's metastore client first, then Iceberg's
store, parts, table = f"{schema}.wide__dbt_mj_store", f"{schema}.wide__dbt_mj_store_parts", f"{schema}.wide_rebuild"

# The view as the change day's refresh wrote it (with the changed input's delta columns).
log = next(work.glob("keys-*/project/logs/dbt.log")).read_text()
head = f"create or replace view {schema}.wide tblproperties"
view_text = log[log.rindex(head):]
view_text = view_text[view_text.index(" as\n") + 4:]
view_text = view_text[:re.search(r"^\d\d:\d\d:\d\d\.\d+ ", view_text, re.M).start()]

snapshot = sql(f"select snapshot_id from {store}.snapshots order by cast(summary['total-records'] as bigint) desc limit 1").first()[0]
src = f"(select * from {store} version as of {snapshot}) as src"
counts = {("base" if r.base else "delta"): r.n for r in sql(f"select dbt_multijoin_seq = 0 as base, count(*) as n from {src} group by 1").collect()}
print(f"store at snapshot {snapshot}: {counts}, delta share {counts['delta'] / counts['base']:.1%}", flush=True)
buckets = int(sql(f"show tblproperties {store} ('dbt_multijoin.mor.buckets')").first().value)
props = "'read.split.open-file-cost' = '1073741824'"
# The parts view as the refresh left it: delta rows, and NULL-keyed rows if the store holds any.
null_keyed = sql(f"select count(*) from {src} where k is null").first()[0] > 0
sql(f"create or replace view {schema}.probe_parts as select * from values (true, {str(null_keyed).lower()}) "
    "as parts(dbt_multijoin_delta_rows, dbt_multijoin_null_keyed_rows)")

copies = {
    # name: (partitioned, the share of the delta rows kept: one in every n keys' buckets of 4)
    "bucketed": (True, 4), "flat": (False, 4), "flat_half": (False, 2), "flat_quarter": (False, 1),
}
for name, (partitioned, kept) in copies.items():
    sql(f"drop table if exists {schema}.probe_{name}")
    layout = (f"partitioned by (dbt_multijoin_bucket) tblproperties ({props}, 'write.distribution-mode' = 'none', "
              f"'write.spark.fanout.enabled' = 'true')") if partitioned else f"tblproperties ({props})"
    order = "dbt_multijoin_bucket, k" if partitioned else "k"
    sql(f"create table {schema}.probe_{name} using iceberg {layout} as select * from {src} where dbt_multijoin_seq = 0 order by {order}")
    sql(f"insert into {schema}.probe_{name} select * from {src} where dbt_multijoin_seq > 0 and pmod(hash(k), 4) < {kept}")
    sql(f"create or replace view {schema}.view_{name} as "
        + view_text.replace(store + " ", f"{schema}.probe_{name} ").replace(parts + " ", f"{schema}.probe_parts "))
    print(f"probe_{name}: {sql(f'select count(*) from {schema}.probe_{name}.files').first()[0]} files", flush=True)
# No delta rows at all: the parts view's flag false, so the optimizer removes the view's join.
sql(f"create or replace view {schema}.probe_parts_none as select * from values (false, false) as parts(dbt_multijoin_delta_rows, dbt_multijoin_null_keyed_rows)")
sql(f"create or replace view {schema}.view_no_delta as "
    + view_text.replace(store + " ", f"{schema}.probe_flat ").replace(parts + " ", f"{schema}.probe_parts_none "))
columns = ", ".join(f"`{c}`" for c in spark.table(table).columns)
sql(f"create or replace view {schema}.base_rows as select {columns} from {schema}.probe_flat where dbt_multijoin_seq = 0")

expected = spark.sql(fingerprint_query(spark, table)).first()
for name in ("bucketed", "flat"):
    assert spark.sql(fingerprint_query(spark, f"{schema}.view_{name}")).first() == expected, f"view_{name} reads other rows"
print("the bucketed and the flat copies' views give the rebuilt table's rows", flush=True)

names = [f"{schema}.{n}" for n in ("view_bucketed", "view_flat", "view_flat_half", "view_flat_quarter", "view_no_delta", "base_rows")] + [table]
queries = {n: fingerprint_query(spark, n) for n in names}
scans, plans = {n: [] for n in names}, {n: [] for n in names}
for n in names:
    sql(queries[n]).first()  # the first of each: planned and compiled once
for _ in range(rounds):
    for n in names:
        plans[n].append(planning_seconds(spark, n))
        start = time.perf_counter()
        sql(queries[n]).first()
        scans[n].append(time.perf_counter() - start)
base = statistics.median(scans[table])
print(f"\n{rounds} rounds, alternating; medians\n")
print("| scan of | s | ÷ table | planning s | all rounds s |\n|---|---|---|---|---|")
for n in names:
    m = statistics.median(scans[n])
    print(f"| {n.split('.')[1]} | {m:.2f} | {m / base:.2f} | {statistics.median(plans[n]):.2f} | {' '.join(f'{s:.2f}' for s in scans[n])} |")
for name in copies:
    sql(f"drop view {schema}.view_{name}")
    sql(f"drop table {schema}.probe_{name}")
sql(f"drop view {schema}.view_no_delta")
sql(f"drop view {schema}.probe_parts_none")
sql(f"drop view {schema}.probe_parts")
sql(f"drop view {schema}.base_rows")
spark.stop()
