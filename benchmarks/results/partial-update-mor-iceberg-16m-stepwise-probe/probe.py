"""Hand probe: a merge-on-read store partitioned by a key bucket, compacted a few partitions at a
time, against today's whole-store compaction, on the tables a benchmark run kept."""
import json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, for testkit
from testkit.formats import build_format_session

work, out, buckets, step = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
res = json.loads((out / "results.json").read_text())
schema = res["sizes"][0]["schema"]
spark = build_format_session("iceberg", work, "probe", {"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "200", "spark.hadoop.hive.metastore.schema.verification": "false"})
sql = spark.sql
store, parts = f"{schema}.wide__dbt_mj_store", f"{schema}.wide__dbt_mj_store_parts"
snaps = sql(f"select snapshot_id from {store}.snapshots order by committed_at").collect()
before = snaps[-2].snapshot_id
src = f"(select * from {store} version as of {before}) as src"
S = sql(f"select max(dbt_multijoin_seq) from {src}").first()[0]
counts = sql(f"select dbt_multijoin_seq = 0 as base, count(*) n from {src} group by 1").collect()
print("store before its compaction:", {("base" if r.base else "delta"): r.n for r in counts}, "highest seq", S, flush=True)
view_text = [r.data_type for r in sql(f"describe extended {schema}.wide").collect() if r.col_name == "View Text"][0]
store_columns = [(r.col_name, r.data_type) for r in sql(f"describe {store}").collect() if r.col_name and not r.col_name.startswith("#")]
model_columns = [f.name for f in sql(f"select * from {schema}.wide limit 0").schema.fields]
items = ", ".join(c if c in model_columns else ("0" if c == "dbt_multijoin_seq" else f"cast(null as {t})") + f" as {c}" for c, t in store_columns)
bucket = f"pmod(hash(k), {buckets})"
props = "'read.split.open-file-cost'='1073741824'"

sql(f"create or replace view {schema}.probe_parts as select true as dbt_multijoin_delta_rows, false as dbt_multijoin_null_keyed_rows")
for t in ("probe_u", "probe_p"):
    sql(f"drop table if exists {schema}.{t}")
t0 = time.perf_counter()
sql(f"create table {schema}.probe_u using iceberg tblproperties({props}) as select * from {src} where dbt_multijoin_seq = 0 order by k")
sql(f"insert into {schema}.probe_u select * from {src} where dbt_multijoin_seq > 0")
sql(f"create table {schema}.probe_p using iceberg partitioned by (p) tblproperties({props}, 'write.distribution-mode'='none') "
    f"as select *, {bucket} as p from {src} where dbt_multijoin_seq = 0 order by p, k")
sql(f"insert into {schema}.probe_p select *, {bucket} as p from {src} where dbt_multijoin_seq > 0 order by p")
print(f"copies written in {time.perf_counter() - t0:.1f} s", flush=True)
for t in ("probe_u", "probe_p"):
    print(t, "files", sql(f"select count(*) from {schema}.{t}.files").first()[0], flush=True)


def view_over(table, only=None):
    text = view_text.replace(parts, f"{schema}.probe_parts").replace(store, f"{schema}.{table}")
    if only is not None:
        limited = f"(select * from {schema}.{table} where p in ({', '.join(map(str, only))}))"
        text = text.replace(f"from {schema}.{table} as delta_row", f"from {limited} as delta_row")
        text = text.replace(f"from {schema}.{table} as b", f"from {limited} as b")
    return text


def fingerprint(text):
    return tuple(sql(f"select count(*), sum(hash(*)) from ({text}) as v").first())


def snapshot(table):
    return sql(f"select snapshot_id from {schema}.{table}.history where is_current_ancestor order by made_current_at desc limit 1").first()[0]


def timed(label, statement, table, keep=False):
    start_snapshot = snapshot(table)
    t = time.perf_counter()
    sql(statement)
    seconds = time.perf_counter() - t
    print(f"{label}: {seconds:.2f} s", flush=True)
    if not keep:
        sql(f"call spark_catalog.system.rollback_to_snapshot('{schema}.{table}', {start_snapshot})")
    return seconds


expected = fingerprint(view_over("probe_u"))
assert fingerprint(view_over("probe_p")) == expected, "the partitioned copy reads other rows"
print("view rows", expected, flush=True)
chosen = list(range(step))
compact_u = f"insert into {schema}.probe_u replace where dbt_multijoin_seq <= {S} select {items} from ({view_over('probe_u')}) as v"
compact_p_all = (f"insert into {schema}.probe_p replace where dbt_multijoin_seq <= {S} "
                 f"select {items}, {bucket} as p from ({view_over('probe_p')}) as v")
compact_p_step = (f"insert into {schema}.probe_p replace where dbt_multijoin_seq <= {S} and p in ({', '.join(map(str, chosen))}) "
                  f"select {items}, {bucket} as p from ({view_over('probe_p', chosen)}) as v")
results = {"u_all": [], "p_all": [], "p_step": [], "scan_u": [], "scan_p": []}
for r in range(rounds):
    results["u_all"].append(timed(f"round {r + 1} whole store, unpartitioned", compact_u, "probe_u"))
    results["p_all"].append(timed(f"round {r + 1} whole store, {buckets} partitions", compact_p_all, "probe_p"))
    results["p_step"].append(timed(f"round {r + 1} {step} of {buckets} partitions", compact_p_step, "probe_p"))
    for t, key in (("probe_u", "scan_u"), ("probe_p", "scan_p")):
        t0 = time.perf_counter()
        fingerprint(view_over(t))
        results[key].append(time.perf_counter() - t0)
        print(f"round {r + 1} reader scan over {t}: {results[key][-1]:.2f} s", flush=True)
# Correctness of one step: fold the chosen partitions, then the view over the store equals the view before.
timed("the step, kept", compact_p_step, "probe_p", keep=True)
assert fingerprint(view_over("probe_p")) == expected, "a step changed what readers see"
delta_left = sql(f"select count(*) from {schema}.probe_p where dbt_multijoin_seq > 0").first()[0]
print("after one step: the view's rows unchanged; delta rows left", delta_left, flush=True)
for label, statement in (("whole store, unpartitioned", compact_u), ("whole store, partitioned", compact_p_all), ("step", compact_p_step)):
    plan = "\n".join(r[0] for r in sql("explain " + statement).collect())
    shuffles = [line.strip() for line in plan.splitlines() if "Exchange" in line and "BroadcastExchange" not in line]
    print(f"{label}: shuffles in its plan: {shuffles or 'none'}", flush=True)
print(json.dumps(results))
spark.stop()
