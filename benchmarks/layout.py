"""Inputs laid out by key (docs/table_formats.md, "Inputs bucketed on the key"): a k-input FULL
multi-join over Iceberg tables bucketed alike on the key (`bucket(N, k)`), against the same data
unbucketed and against Spark's own chain of joins over the bucketed tables.

One Spark session (local[2], the extension, the Iceberg runtime; testkit.formats), with Spark's
storage-partitioned reads on (`spark.sql.sources.v2.bucketing.enabled`,
`spark.sql.iceberg.planning.preserve-data-grouping`), broadcast joins off, and as many shuffle
partitions as buckets, so that every strategy runs as many tasks per stage. Per size (--rows: keys
per input), k inputs of the benchmarks' `unique` shape (benchmarks/workload.py: each input keeps
half of a universe of 2 x rows ids, the key scattered by an odd 64-bit constant, 3 doubles),
written once into Iceberg tables `ice.layout.b<rows>_t<i>` (bucketed) and `u<rows>_t<i>`
(unbucketed), reused by later runs. Each strategy then runs once per repetition, the order
rotated each time:

- `chain_bucketed`: the vanilla FULL chain over the bucketed tables (Spark's storage-partitioned
  join helps its first join only);
- `multiway_unbucketed`: the MULTI_JOIN hint over the unbucketed tables (every input shuffled
  and sorted once);
- `multiway_bucketed`: the hint over the bucketed tables (nothing shuffled; every input sorted).

A measurement is the wall time of planning and running the query (counting its rows); the
stages it ran give the shuffle bytes, the executed plan its exchanges. The strategies must agree
on the row count. Writes results.json and results.md (the targets, then the table) to
benchmarks/results/<name>/.

    .venv/bin/python -m benchmarks.layout --rows 2m,8m --k 8 --buckets 16 --reps 3
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import statistics
import sys
import time
from pathlib import Path

from benchmarks import stages, workload
from benchmarks.report import _table, rows_label, write_results
from benchmarks.run import _machine, log, rotated, rows_list_arg
from testkit.chains import join_chain_sql
from testkit.plans import plan_nodes

HERE = Path(__file__).resolve().parent
NAMESPACE = "ice.layout"
# strategy -> (which tables, whether the query carries the hint)
STRATEGIES = {
    "chain_bucketed": ("b", False),
    "multiway_unbucketed": ("u", True),
    "multiway_bucketed": ("b", True),
}
# (numerator, denominator, at least): the time ratios the issue asks for.
SPEEDUPS = [("multiway_unbucketed", "multiway_bucketed", 1.5), ("chain_bucketed", "multiway_bucketed", 3.0)]
MIB = 1 << 20


def layout_confs(buckets: int) -> dict[str, str]:
    """What the layout needs (docs/table_formats.md), and the same parallelism for every strategy."""
    return {
        "spark.sql.sources.v2.bucketing.enabled": "true",
        "spark.sql.iceberg.planning.preserve-data-grouping": "true",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.sql.shuffle.partitions": str(buckets),
        "spark.multijoin.failOnFallback": "true",
    }


def table(kind: str, rows: int, i: int, buckets: int) -> str:
    return f"{NAMESPACE}.{kind}{rows}_{buckets if kind == 'b' else 0}_t{i}"


def write_inputs(spark, work: Path, rows: int, k: int, buckets: int) -> dict[str, int]:
    """The bucketed and unbucketed Iceberg tables of every input (from the workload's parquet
    inputs, generated on first use), unless a run before wrote them; their row counts."""
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {NAMESPACE}")
    counts = workload.register_inputs(spark, work, "unique", rows, k)  # temp views t1..tk
    for i in range(1, k + 1):
        for kind, spec in (("b", f" PARTITIONED BY (bucket({buckets}, k))"), ("u", "")):
            name = table(kind, rows, i, buckets)
            if not spark.catalog.tableExists(name) or spark.table(name).count() != counts[f"t{i}"]:
                spark.sql(f"DROP TABLE IF EXISTS {name}")
                spark.sql(f"CREATE TABLE {name} USING iceberg{spec} AS SELECT * FROM t{i}")
    return counts


def query(strategy: str, rows: int, k: int, buckets: int) -> str:
    kind, hint = STRATEGIES[strategy]
    tables = [table(kind, rows, i, buckets) for i in range(1, k + 1)]
    values = [workload.columns("unique", i) for i in range(1, k + 1)]
    return join_chain_sql("full", tables, ["k"], values, hint=hint, aliases=[f"t{i}" for i in range(1, k + 1)])


def measure(spark, strategy: str, rows: int, k: int, buckets: int) -> dict:
    before = stages.last_stage_id(spark)
    started = time.perf_counter()
    execution = spark.sql(query(strategy, rows, k, buckets))._jdf.queryExecution()
    count = execution.toRdd().count()
    seconds = time.perf_counter() - started
    plan = execution.executedPlan()
    kinds = [node.getClass().getSimpleName() for node in plan_nodes(plan, subqueries=True)]
    io = stages.io_since(spark, before)
    return {"seconds": seconds, "rows": count, "shuffle_bytes": io["shuffle_write_bytes"],
            "input_bytes": io["input_bytes"], "exchanges": kinds.count("ShuffleExchangeExec"),
            "multijoin": "MultiJoinExec" in kinds, "sorts": kinds.count("SortExec"),
            # The operator says so in the plan when it reads its inputs grouped by key.
            "grouped_by_key": "inputs grouped by key" in plan.toString()}


def measure_size(spark, args, rows: int) -> dict:
    counts = write_inputs(spark, args.work_dir.resolve(), rows, args.k, args.buckets)
    measured: dict[str, dict] = {}
    for rep, strategy in rotated(STRATEGIES, args.warmup, args.reps):
        m = measure(spark, strategy, rows, args.k, args.buckets)
        log(f"{rows_label(rows)} keys k={args.k} {'warm-up' if rep < 0 else f'rep {rep + 1}'} {strategy:<20} "
            f"{m['seconds']:7.2f} s  shuffle {m['shuffle_bytes'] / MIB:8.1f} MiB  exchanges {m['exchanges']}  rows {m['rows']:,}")
        if rep >= 0:
            seconds = measured.get(strategy, {}).get("seconds", []) + [m["seconds"]]
            measured[strategy] = {**m, "seconds": seconds}
    agreed = {m["rows"] for m in measured.values()}
    if len(agreed) != 1:
        raise RuntimeError(f"{rows:,} keys: the strategies disagree on the rows: "
                           f"{ {s: m['rows'] for s, m in measured.items()} }")
    return {"rows": rows, "input_rows": counts, "strategies": measured}


def evaluate(size: dict) -> list[tuple[str, str, bool]]:
    """Each target at one size: its name, the measured figure, whether it holds."""
    s = size["strategies"]
    median = {name: statistics.median(m["seconds"]) for name, m in s.items()}
    out = [("multiway on bucketed inputs shuffles 0 bytes", f"{s['multiway_bucketed']['shuffle_bytes']:,} bytes",
            s["multiway_bucketed"]["shuffle_bytes"] == 0)]
    for numerator, denominator, at_least in SPEEDUPS:
        ratio = median[numerator] / median[denominator]
        out.append((f"{numerator} / {denominator} >= {at_least}", f"{ratio:.2f}", ratio >= at_least))
    return out


def markdown(results: dict) -> str:
    lines = [f"# {results['name']}", "", f"`{results['command']}`", "",
             f"Spark {results['machine']['spark']}, {results['machine']['cores']} cores, commit "
             f"{results['machine']['commit']}; k = {results['k']}, {results['buckets']} buckets, "
             f"{results['reps']} repetitions (median seconds), {results['warmup']} warm-up.", "", "## Targets", ""]
    lines += _table(["keys/input", "target", "measured", "met"],
                    [[rows_label(size["rows"]), name, figure, "yes" if held else "**no**"]
                     for size in results["sizes"] for name, figure, held in evaluate(size)])
    lines += ["", "## Measurements", ""]
    lines += _table(["keys/input", "strategy", "seconds (median)", "shuffle MiB", "exchanges", "sorts",
                     "inputs grouped by key", "input MiB"],
                    [[rows_label(size["rows"]), name, f"{statistics.median(m['seconds']):.2f}",
                      f"{m['shuffle_bytes'] / MIB:.1f}", m["exchanges"], m["sorts"], "yes" if m["grouped_by_key"] else "no",
                      f"{m['input_bytes'] / MIB:.1f}"]
                     for size in results["sizes"] for name, m in size["strategies"].items()])
    return "\n".join(lines) + "\n"


def parse(argv: list[str] | None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.layout", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=rows_list_arg, default=[2_000_000, 8_000_000], help="keys per input (default 2m,8m)")
    p.add_argument("--k", type=int, default=8, help="inputs (default 8)")
    p.add_argument("--buckets", type=int, default=16, help="bucket(N, k) of the bucketed tables (default 16)")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed repetitions first (default 1)")
    p.add_argument("--name", help="results go to benchmarks/results/NAME (default layout-spark<version>)")
    p.add_argument("--out", type=Path, help="results directory (instead of --name)")
    p.add_argument("--work-dir", type=Path, default=HERE / "work" / "layout",
                   help="generated inputs and the session's warehouse (kept between runs)")
    p.add_argument("--driver-memory", default="6g")
    args = p.parse_args(argv)
    if args.k < 2 or args.buckets < 1 or args.reps < 1 or args.warmup < 0:
        p.error("--k >= 2, --buckets >= 1, --reps >= 1, --warmup >= 0")
    return args


def main(argv: list[str] | None = None, spark=None) -> dict:
    """Run the benchmark and write its results; with `spark` (a session with the Iceberg runtime
    and the `ice` catalog, testkit.formats), in that session, whose confs are put back after."""
    import pyspark

    args = parse(argv)
    name = args.name or f"layout-spark{pyspark.__version__}"
    out = (args.out or HERE / "results" / name).resolve()
    own_session = spark is None
    confs = layout_confs(args.buckets)
    if own_session:
        from testkit.formats import build_format_session

        spark = build_format_session("iceberg", args.work_dir.resolve() / "state", "dbt-multijoin-layout-bench",
                                     {"spark.driver.memory": args.driver_memory, **confs})
    previous = {key: spark.conf.get(key, None) for key in confs}
    command = "python -m benchmarks.layout " + shlex.join(sys.argv[1:] if argv is None else argv)
    results = {"name": name, "command": command,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "k": args.k, "buckets": args.buckets, "reps": args.reps, "warmup": args.warmup,
               "confs": confs, "machine": _machine(spark), "sizes": []}
    try:
        for key, value in confs.items():
            spark.conf.set(key, value)
        for rows in args.rows:
            results["sizes"].append(measure_size(spark, args, rows))
    finally:
        if own_session:
            spark.stop()
        else:
            for key, value in previous.items():
                spark.conf.unset(key) if value is None else spark.conf.set(key, value)
    write_results(out, results, markdown(results))
    return results


if __name__ == "__main__":
    main()
