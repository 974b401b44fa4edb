"""The runner behind `python -m benchmarks [options]` (see --help and benchmarks/README.md).

One Spark session (local[2], AQE on, broadcast off, the extension loaded, failOnFallback on).
For each shape, rows and k: the inputs are generated once as parquet and reused; then every
strategy runs once per repetition, the order rotated each repetition so that drift hits all
strategies alike. Each measurement is the wall time of building, planning and running the query
(counting its rows); the executed plan then gives the shuffle bytes and the operator's metrics.
Writes results.json (the per-repetition times and plan facts), results.md and plot.png.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import report, stages, workload
from testkit.plans import node_metrics, plan_nodes

HERE = Path(__file__).resolve().parent


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(spark, strategy: str, shape: str, k: int) -> dict:
    confs = {**workload.SHAPE_CONFS.get(shape, {}), **workload.STRATEGY_CONFS.get(strategy, {})}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        before = stages.last_stage_id(spark)
        started = time.perf_counter()
        execution = workload.build(spark, strategy, shape, k)._jdf.queryExecution()
        rows = execution.toRdd().count()
        seconds = time.perf_counter() - started
    finally:
        for key in confs:
            spark.conf.unset(key)
    plan = execution.executedPlan()
    nodes = list(plan_nodes(plan, subqueries=True))
    kinds = [node.getClass().getSimpleName() for node in nodes]
    exchanges = [node_metrics(n) for n, kind in zip(nodes, kinds) if kind == "ShuffleExchangeExec"]
    multijoin = [n for n, kind in zip(nodes, kinds) if kind == "MultiJoinExec"]
    return {
        "seconds": seconds,
        "rows": rows,
        "shuffle_bytes": sum(m["shuffleBytesWritten"] for m in exchanges),
        "exchanges": len(exchanges),
        "sort_merge_joins": kinds.count("SortMergeJoinExec"),
        "multijoin_input_rows": _input_rows(multijoin[0]) if multijoin else None,
        "bloom_filter": "might_contain" in plan.toString(),
        "skew_split": "skew=true" in plan.toString(),
        **stages.stages_since(spark, before),
    }


def _input_rows(node) -> list[int]:
    """Rows the operator read from each input: metrics numInputRows1..N (0..N-1 in older jars)."""
    metrics, n = node_metrics(node), node.children().size()
    first = 1 if f"numInputRows{n}" in metrics else 0
    return [metrics[f"numInputRows{i}"] for i in range(first, first + n)]


def target_groups(scale: float) -> list[tuple[str, int, tuple[int, ...], tuple[str, ...]]]:
    """Exactly the measurements the targets need: per (shape, rows) its k and strategies (plus
    the floor wherever the shape has one: multiway should shuffle exactly its bytes)."""
    grouped: dict[tuple[str, int], list[report.Target]] = {}
    for target in report.TARGETS:
        grouped.setdefault((target.shape, target.rows), []).append(target)
    groups = []
    for (shape, rows), targets in grouped.items():
        wanted = {s for t in targets for s in (t.numerator, t.denominator)} | {"floor"}
        groups.append((shape, max(1, round(rows * scale)), tuple(sorted({t.k for t in targets})),
                       tuple(s for s in workload.SHAPES[shape] if s in wanted)))
    return groups


def conf_arg(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not (key.strip() and equals):
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def rows_arg(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def rows_list_arg(text: str) -> list[int]:
    return [rows_arg(item) for item in list_arg(text)]


def list_arg(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def parse(argv: list[str] | None):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--targets", action="store_true", help="run exactly what the targets need")
    p.add_argument("--scale", type=float, default=1.0, help="multiply the targets' rows (quick checks)")
    p.add_argument("--shapes", type=list_arg, default=["unique"],
                   help="comma list of unique, dups, left, left_compact, grouped")
    p.add_argument("--rows", type=rows_list_arg, default=[1_000_000],
                   help="comma list of rows per input: 50k, 2m, ... (several: a scale run)")
    p.add_argument("--k", type=lambda t: tuple(int(v) for v in list_arg(t)), default=(2, 4, 8),
                   help="comma list of input counts (the LEFT shape: inputs besides the driver)")
    p.add_argument("--strategies", type=list_arg, help="comma list (default: all the shape has)")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed repetitions first (default 1)")
    p.add_argument("--shuffle-partitions", type=int, default=200)
    p.add_argument("--driver-memory", default="4g")
    p.add_argument("--name", help="results go to benchmarks/results/NAME (default: "
                                  "targets-spark<version> or custom-spark<version>)")
    p.add_argument("--out", type=Path, help="results directory (instead of --name)")
    p.add_argument("--seed", type=int, default=0,
                   help="draw a fresh data set: other keys per input, driver keys and values "
                        "(default 0: the data of the committed results)")
    p.add_argument("--work-dir", type=Path, default=HERE / "work",
                   help="generated inputs (and Spark's local files unless --local-dir)")
    p.add_argument("--local-dir", type=Path,
                   help="Spark's shuffle and spill files (default: WORK_DIR/spark-local). Every map "
                        "task of a 200-partition shuffle creates 200 files: on a disk slow to create "
                        "files that fixed cost per stage swamps small queries (the LEFT shapes); "
                        "a memory-backed directory (/dev/shm/...) measures the joins without it")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", type=conf_arg,
                   help="a Spark conf for the whole session, for every strategy (repeatable; "
                        "recorded in the results' confs)")
    args = p.parse_args(argv)
    unknown = [s for s in args.shapes if s not in workload.SHAPES]
    if unknown or args.reps < 1 or args.warmup < 0 or args.seed < 0:
        p.error(f"shapes are {', '.join(workload.SHAPES)}; --reps >= 1, --warmup >= 0, --seed >= 0")
    if args.targets:
        groups = target_groups(args.scale)
    else:
        groups = [(shape, rows, args.k, tuple(s for s in workload.SHAPES[shape]
                                              if not args.strategies or s in args.strategies))
                  for shape in args.shapes for rows in args.rows]
    return args, groups


def drop_schema(spark, project, table_format: str) -> None:
    """A measured size's dbt project schema dropped with its tables' files, for the next size's
    disk: an Iceberg table is dropped with PURGE (a DROP alone leaves its files, and a table a
    build replaced in place keeps the files of every snapshot it replaced); a Delta table's DROP
    deletes a managed table's files already."""
    purge = " purge" if table_format == "iceberg" else ""
    # Listed by SQL, not spark.catalog: Spark 3.5 decodes the catalog API's rows into its Table
    # class with generated code only, and the pipeline tests run this harness with expressions
    # interpreted (testkit/formats.py). Views (the fixed-cost model) go with the schema; the
    # session's temporary views (a harness's inputs) are listed with any schema's tables and are
    # not the schema's.
    views = {row.viewName for row in spark.sql(f"show views in {project.schema}").collect()}
    for row in spark.sql(f"show tables in {project.schema}").collect():
        if not row.isTemporary and row.tableName not in views:
            spark.sql(f"drop table {project.table(row.tableName)}{purge}")
    spark.sql(f"drop database {project.schema} cascade")


def rotated(strategies, warmup: int, reps: int):
    """(repetition, strategy) in the order they run: the untimed repetitions first (negative),
    every strategy once per repetition, the order rotated each time so that drift hits all
    strategies alike."""
    strategies = list(strategies)
    for rep in range(-warmup, reps):
        shift = rep % len(strategies)
        for strategy in strategies[shift:] + strategies[:shift]:
            yield rep, strategy


def measure_group(spark, shape: str, rows: int, k: int, strategies: tuple[str, ...], args) -> dict:
    """Every strategy once per repetition, the order rotated each time; the seconds and stage
    timings of every timed repetition and the plan facts of the last. Fails if the joins
    disagree on their rows."""
    measured: dict[str, dict] = {}
    for rep, strategy in rotated(strategies, args.warmup, args.reps):
        m = measure(spark, strategy, shape, k)
        timings = m["stage_timings"]
        log(f"{shape} {rows:,} rows k={k} {'warm-up' if rep < 0 else f'rep {rep + 1}'} "
            f"{strategy:<11} {m['seconds']:7.2f} s  "
            f"task cpu {sum(t['cpu_seconds'] for t in timings):6.2f} s  "
            f"gc {sum(t['gc_seconds'] for t in timings):5.2f} s  "
            f"shuffle {m['shuffle_bytes'] / 2**20:8.1f} MiB  rows {m['rows']:,}")
        if rep >= 0:
            earlier = measured.get(strategy, {})
            measured[strategy] = {**m, "seconds": earlier.get("seconds", []) + [m["seconds"]],
                                  "stage_timings": earlier.get("stage_timings", []) + [timings]}
    join_rows = {strategy: m["rows"] for strategy, m in measured.items() if strategy != "floor"}
    if len(set(join_rows.values())) > 1:
        raise RuntimeError(f"{shape} {rows:,} rows k={k}: the strategies disagree on the rows: {join_rows}")
    return measured


def _machine(spark) -> dict:
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=HERE,
                            capture_output=True, text=True).stdout.strip()
    return {"spark": spark.version, "java": spark.sparkContext._jvm.System.getProperty("java.version"),
            "python": platform.python_version(), "cores": os.cpu_count(), "commit": commit}


def main(argv: list[str] | None = None) -> int:
    import pyspark
    from testkit.session import build_session

    args, groups = parse(argv)
    name = args.name or f"{'targets' if args.targets else 'custom'}-spark{pyspark.__version__}"
    out = (args.out or HERE / "results" / name).resolve()
    work = args.work_dir.resolve()
    confs = {
        "spark.driver.memory": args.driver_memory,
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.sql.shuffle.partitions": str(args.shuffle_partitions),
        "spark.multijoin.failOnFallback": "true",  # multiway is always the operator, never vanilla
        "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": str((args.local_dir or work / "spark-local").resolve()),
        "spark.sql.warehouse.dir": str(work / "spark-warehouse"),
        **dict(args.conf),
    }
    command = "python -m benchmarks " + shlex.join(sys.argv[1:] if argv is None else argv)
    run = {"name": name, "command": command,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "reps": args.reps, "warmup": args.warmup, "confs": confs, "groups": []}
    spark = build_session(app_name="dbt-multijoin-benchmarks", conf=confs)
    try:
        spark.sparkContext.setLogLevel("ERROR")
        run["machine"] = _machine(spark)
        for shape, rows, ks, strategies in groups:
            for k in ks:
                inputs = workload.register_inputs(spark, work, shape, rows, k, args.seed)
                run["groups"].append({"shape": shape, "rows": rows, "k": k, "input_rows": inputs,
                                      "strategies": measure_group(spark, shape, rows, k, strategies, args)})
    finally:
        spark.stop()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(run, indent=1) + "\n")
    for path in [out / "results.json"] + report.write(out, [run]):
        log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
