"""Hand probe: where a reader's full scan of the merge-on-read view over Delta goes at 2M keys per
input, against the same scan of the rebuilt table. On the tables a benchmark run of the 2M size kept
(--keep): the store restored to the change day's refresh (its delta rows at the threshold), then
as the run's last compaction left it (no delta row). Per query, alternating, medians of `rounds`:
the warm scan, the planning (benchmarks.partial_update.planning_seconds) and the Spark jobs and
tasks it ran, with each stage's wall and task seconds (one run); and the store's files.

    reader_probe.py <the run's --work-dir> <its --out directory> [rounds]

Queries, all with the benchmark's fingerprint of every column:
- table: the full rebuild's table;
- view: the model's view, as the change day's refresh left it (its SQL from the dbt log), over
  the store as it was then;
- base rows: the base rows alone (`dbt_multijoin_seq = 0`) of that store: the view without its
  delta rows, to tell the store's scan from the delta join.
(With Delta's data skipping off, `spark.databricks.delta.stats.skipping`, Delta (the runtime of the Spark 3.5 line) refuses to plan
the view: "Cannot work with a non-pinned table snapshot of the TahoeFileIndex".)"""
import json, re, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, for testkit and benchmarks
from benchmarks.partial_update import fingerprint_query, planning_seconds
from benchmarks.stages import last_stage_id, stages_since
from testkit.formats import build_format_session

work, out = Path(sys.argv[1]), Path(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
schema = json.loads((out / "results.json").read_text())["sizes"][0]["schema"]
spark = build_format_session("delta", work, "probe", {"spark.driver.memory": "6g"})
sql, tracker = spark.sql, spark.sparkContext.statusTracker()
store, table = f"{schema}.wide__dbt_mj_store", f"{schema}.wide_rebuild"
columns = ", ".join(f"`{c}`" for c in spark.table(table).columns)

# The view as the change day's refresh left it: its last replacement before the MERGE of that day.
log = next(work.glob("keys-*/project/logs/dbt.log")).read_text()
head = f"create or replace view {schema}.wide tblproperties"
view_sql = log[log.rindex(head, 0, log.rindex(f"merge into {store}")):]
view_sql = view_sql[view_sql.index(" as\n") + 4:]
view_sql = view_sql[:re.search(r"^\d\d:\d\d:\d\d\.\d+ ", view_sql, re.M).start()]


def jobs_and_stages(query: str, group: str) -> tuple[int, int, str]:
    """The jobs, tasks and stages (wall / task seconds each) of one run of `query`."""
    before = last_stage_id(spark)
    spark.sparkContext.setJobGroup(group, group)
    sql(query).first()
    jobs = tracker.getJobIdsForGroup(group)
    spark.sparkContext.setJobGroup("probe", "probe")
    stages = stages_since(spark, before)["stage_timings"]
    return len(jobs), sum(s["tasks"] for s in stages), ", ".join(
        f"{s['tasks']} task(s) {s['wall_seconds']:.2f} / {s['task_seconds']:.2f}" for s in stages)


def measure(title: str, names: dict[str, tuple[str, dict]]) -> dict:
    """names: label -> (relation, confs set while it runs)."""
    queries = {label: fingerprint_query(spark, relation) for label, (relation, _) in names.items()}
    results = {label: {"scan": [], "plan": []} for label in names}
    for round_index in range(rounds + 1):
        for label, (relation, confs) in names.items():
            for key, value in confs.items():
                spark.conf.set(key, value)
            try:
                plan = planning_seconds(spark, relation)
                start = time.perf_counter()
                sql(queries[label]).first()
                scan = time.perf_counter() - start
                if round_index == 0:  # the first of each: planned and compiled once
                    results[label]["jobs"] = jobs_and_stages(queries[label], f"{title}: {label}")
                    continue
                results[label]["scan"].append(scan)
                results[label]["plan"].append(plan)
            finally:
                for key in confs:
                    spark.conf.unset(key)
    return {label: (statistics.median(r["scan"]), statistics.median(r["plan"]), *r["jobs"]) for label, r in results.items()}


def report(title: str, results: dict) -> None:
    base = results["table"][0]
    print(f"\n{title}: {rounds} rounds, alternating; medians\n")
    print("| query | warm scan s | ÷ table | planning s | jobs | tasks | stages: tasks, wall / task s |\n|---|---|---|---|---|---|---|")
    for label, (scan, plan, jobs, tasks, stages) in results.items():
        print(f"| {label} | {scan:.2f} | {scan / base:.2f} | {plan:.3f} | {jobs} | {tasks} | {stages} |")


def files(relation: str) -> str:
    detail = sql(f"describe detail {relation}").first()
    return f"{detail.numFiles} files, {detail.sizeInBytes / 2**20:.0f} MiB"


history = sql(f"describe history {store}").collect()
current = history[0].version
merged = max(h.version for h in history if h.operation == "MERGE")
expected_now = sql(fingerprint_query(spark, f"{schema}.wide")).first()
print(f"table: {files(table)}; store now (version {current}): {files(store)}")
sql(f"restore table {store} to version as of {merged}").collect()
try:
    counts = {("base" if r.base else "delta"): r.n for r in sql(f"select dbt_multijoin_seq = 0 as base, count(*) as n from {store} group by 1").collect()}
    print(f"store restored to version {merged} (the change day's MERGE): {files(store)}, {counts}, "
          f"delta share {counts['delta'] / counts['base']:.1%}", flush=True)
    sql(f"create or replace view {schema}.probe_view as {view_sql}")
    sql(f"create or replace view {schema}.probe_base_rows as select {columns} from {store} where dbt_multijoin_seq = 0")
    report("With the change day's delta rows", measure("threshold", {
        "table": (table, {}), "view": (f"{schema}.probe_view", {}), "base rows": (f"{schema}.probe_base_rows", {})}))
finally:
    sql(f"restore table {store} to version as of {current}").collect()
print(f"\nstore back at its last compaction's state: {files(store)}")
assert sql(fingerprint_query(spark, f"{schema}.wide")).first() == expected_now
report("After the compaction (no delta row; the view is the base rows' scan)", measure("compacted", {
    "table": (table, {}), "view": (f"{schema}.wide", {})}))
for name in ("probe_view", "probe_base_rows"):
    sql(f"drop view if exists {schema}.{name}")
spark.stop()
