"""Building a wide table bucketed like its inputs (docs/table_formats.md, "Writing a table bucketed
alike"): dbt models of the multijoin materialization over k Iceberg inputs bucketed alike on the
key (`bucket(N, k)`), written as Iceberg tables, each build one `dbt run -s <model>` in this
process's Spark session (dbt's session method), timed from the command to its end.

Per size (--rows: keys per input), k inputs of the benchmarks' `unique` shape (benchmarks/
workload.py: each input keeps half of a universe of 2 x rows ids, the key scattered, 3 doubles),
written once into Iceberg tables of the project's schema, bucketed (`b_t<i>`) and not (`u_t<i>`).
Then, for FULL and for LEFT (driven by the first input), the same wide model built five ways:

- `a`: bucketed inputs to a table `partitioned_by bucket(N, k)`: the multi-join reads the inputs
  with no shuffle and its output is grouped by the table's buckets, so the materialization writes
  it with no redistribution (the run's log says so);
- `a_before`: `a` as the package built it before the key column and the grouped write: with
  `spark.multijoin.fullOuter.outputPartitioning=false` (FULL reports no partitioning) and Iceberg's
  default distribution mode `hash` set in the model's confs (the write redistributes the output);
- `b`: bucketed inputs to an unbucketed table;
- `c`: unbucketed inputs to the bucketed table;
- `d`: Spark's chain of joins (`strategy='chain'`, no hint) over the bucketed inputs, to the
  bucketed table;

and `a_group`: a GROUP BY on the key (a count and a sum) over the FULL multi-join of `a`, to a table
bucketed alike. --warmup untimed repetitions of every model warm the session up (with none, the
first build pays the JVM's warm-up); then every model runs once per repetition, the order rotated
each time. A measurement:
the wall time of the `dbt run` (planning, the materialization's checks, the write), the shuffle
bytes its stages wrote, and the Exchange nodes of the plans that wrote the table. Built tables of
one join type must hold the same number of rows. Writes results.json and results.md to
benchmarks/results/<name>/. Ratios are within one run; the machine's other load lands in them.

    .venv/bin/python -m benchmarks.bucketed_build --rows 2m,8m --k 8 --buckets 16 --reps 3 --warmup 1
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchmarks import workload
from benchmarks.report import _table, rows_label, write_results
from benchmarks.run import _machine, drop_schema, log, rotated, rows_list_arg
from benchmarks.stages import io_since, last_stage_id
from testkit import executions

HERE = Path(__file__).resolve().parent
MIB = 1 << 20
LAYOUT_CONFS = {
    "spark.sql.sources.v2.bucketing.enabled": "true",
    "spark.sql.iceberg.planning.preserve-data-grouping": "true",
}
# Today's build before the key column and the grouped write.
BEFORE_CONFS = {
    "spark.multijoin.fullOuter.outputPartitioning": "false",
    "spark.sql.iceberg.distribution-mode": "hash",
}
# name -> (inputs: b(ucketed) or u(nbucketed), target bucketed, dbt strategy, extra confs)
BUILDS = {
    "a": ("b", True, "multiway", {}),
    "a_before": ("b", True, "multiway", BEFORE_CONFS),
    "b": ("b", False, "multiway", {}),
    "c": ("u", True, "multiway", {}),
    "d": ("b", True, "chain", {}),
}
# (numerator, denominator, at least): the time ratios the issue asks for, per join type.
SPEEDUPS = [("a_before", "a", 1.3), ("d", "a", 4.0)]


def model_sql(join_type: str, build: str, k: int, buckets: int, group: bool = False) -> str:
    kind, bucketed, strategy, extra = BUILDS[build]
    confs = {**LAYOUT_CONFS, "spark.sql.shuffle.partitions": str(buckets), **extra}
    partition = f"partition_by=['bucket({buckets}, k)'], " if bucketed else ""
    conf_text = ", ".join(f"'{key}': '{value}'" for key, value in confs.items())
    tables = [f"{kind}_t{i}" for i in range(1, k + 1)]
    columns = {t: workload.columns("unique", i) for i, t in enumerate(tables, start=1)}
    sources = ", ".join(f"source('inputs', '{t}')" for t in tables)
    join = f"dbt_multijoin.multi_join([{sources}], key='k', join_type='{join_type}', columns={columns})"
    config = (f"{{{{ config(materialized='multijoin', strategy='{strategy}', file_format='iceberg', "
              f"{partition}spark_conf={{{conf_text}}}) }}}}\n")
    if not group:
        return config + "{{ " + join + " }}\n"
    first = columns[tables[0]][0]
    return (config + f"select k, count(*) as n, sum({first}) as s from (\n{{{{ {join} }}}}\n) as joined group by k\n")


def model_name(join_type: str, build: str) -> str:
    return f"{join_type}_{build}"


def create_inputs(spark, project, work: Path, rows: int, k: int, buckets: int) -> dict[str, int]:
    """The bucketed and unbucketed Iceberg tables of every input, in the project's schema."""
    counts = workload.register_inputs(spark, work, "unique", rows, k)  # temp views t1..tk
    for i in range(1, k + 1):
        for kind, spec in (("b", f" PARTITIONED BY (bucket({buckets}, k))"), ("u", "")):
            spark.sql(f"CREATE TABLE {project.table(f'{kind}_t{i}')} USING iceberg{spec} AS SELECT * FROM t{i}")
    project.sources(*[f"{kind}_t{i}" for kind in ("b", "u") for i in range(1, k + 1)])
    return counts


def build(spark, project, model: str) -> dict:
    # The status store is filled asynchronously: settled, so that no stage of the statement
    # before is taken for this build's.
    executions.settle(spark)
    before_stage, before_execution = last_stage_id(spark), executions.last_execution_id(spark)
    started = time.perf_counter()
    result = project.dbt("run", "-s", model)
    seconds = time.perf_counter() - started
    if not result.success:
        raise RuntimeError(f"dbt run -s {model} failed:\n{result.describe()}")
    io = io_since(spark, before_stage)
    executions.settle(spark)
    writes = [str(e.physicalPlanDescription()) for e in executions.executions(spark)
              if int(e.executionId()) > before_execution and "IcebergWrite(" in str(e.physicalPlanDescription())]
    exchanges = sum(final_tree(p).count("Exchange") for p in writes)
    written = [line[line.index(": ", line.index(model)) + 2:] for line in result.output.splitlines()
               if f"dbt_multijoin: {model}: " in line and "distribution" in line]
    rows = spark.table(project.table(model)).count()
    return {"seconds": seconds, "shuffle_bytes": io["shuffle_write_bytes"], "exchanges": exchanges,
            "rows": rows, "write": written[-1] if written else ""}


def final_tree(plan: str) -> str:
    """The tree of a physical plan's description as it ran: the nodes are listed once in the tree,
    then each again in the details below it, and an adaptive plan shows its final and its initial
    tree."""
    tree = plan.split("\n\n")[0]
    if "== Final Plan ==" in tree:
        tree = tree.split("== Final Plan ==")[1].split("== Initial Plan ==")[0]
    return tree


def measure_size(spark, args, rows: int) -> dict:
    from testkit.dbt import PipelineProject

    directory = args.work_dir.resolve() / f"project-{rows}-{time.time_ns()}"
    project = PipelineProject.create(spark, directory, "iceberg")
    counts = create_inputs(spark, project, args.work_dir.resolve(), rows, args.k, args.buckets)
    models = {}
    for join_type in args.join_types:
        for name in BUILDS:
            models[model_name(join_type, name)] = model_sql(join_type, name, args.k, args.buckets)
    if "full" in args.join_types:
        models["full_a_group"] = model_sql("full", "a", args.k, args.buckets, group=True)
    for model, sql in models.items():
        project.model(model, sql)
    # The first builds of a session pay for the JIT and dbt's first parse: two untimed builds of
    # the first model first.
    for _ in range(2):
        build(spark, project, next(iter(models)))
    measured: dict[str, dict] = {}
    for rep, model in rotated(models, args.warmup, args.reps):
        m = build(spark, project, model)
        log(f"{rows_label(rows)} keys k={args.k} {'warm-up' if rep < 0 else f'rep {rep + 1}'} {model:<16} "
            f"{m['seconds']:7.2f} s  shuffle {m['shuffle_bytes'] / MIB:8.1f} MiB  exchanges {m['exchanges']}  rows {m['rows']:,}")
        if rep >= 0:
            seconds = measured.get(model, {}).get("seconds", []) + [m["seconds"]]
            measured[model] = {**m, "seconds": seconds}
    for join_type in args.join_types:
        agreed = {measured[model_name(join_type, b)]["rows"] for b in BUILDS}
        if len(agreed) != 1:
            raise RuntimeError(f"{rows:,} keys, {join_type}: the builds disagree on the rows: {agreed}")
    drop_schema(spark, project, "iceberg")  # bucketed inputs: Iceberg's bucket transforms
    shutil.rmtree(directory, ignore_errors=True)
    return {"rows": rows, "input_rows": counts, "schema": project.schema, "builds": measured}


def evaluate(size: dict, join_types: list[str]) -> list[tuple[str, str, bool]]:
    b = size["builds"]
    median = {name: statistics.median(m["seconds"]) for name, m in b.items()}
    out = []
    for join_type in join_types:
        a = b[model_name(join_type, "a")]
        out.append((f"{join_type} a: 0 shuffle bytes, write included", f"{a['shuffle_bytes']:,} bytes", a["shuffle_bytes"] == 0))
        for numerator, denominator, at_least in SPEEDUPS:
            ratio = median[model_name(join_type, numerator)] / median[model_name(join_type, denominator)]
            out.append((f"{join_type} {numerator} / {denominator} >= {at_least}", f"{ratio:.2f}", ratio >= at_least))
    if "full_a_group" in b:
        g = b["full_a_group"]
        out.append(("full a + GROUP BY: 0 shuffle bytes", f"{g['shuffle_bytes']:,} bytes", g["shuffle_bytes"] == 0))
    return out


def markdown(results: dict) -> str:
    lines = [f"# {results['name']}", "", f"`{results['command']}`", "",
             f"Spark {results['machine']['spark']}, {results['machine']['cores']} cores, commit "
             f"{results['machine']['commit']}; k = {results['k']}, {results['buckets']} buckets, "
             f"{results['reps']} repetitions (median seconds), {results['warmup']} warm-up. Each figure is one "
             "`dbt run -s <model>`; ratios are within this run.", "",
             "a: bucketed inputs to a bucketed table; a_before: a as built before the key column and the "
             "grouped write; b: bucketed inputs to an unbucketed table; c: unbucketed inputs to the bucketed "
             "table; d: Spark's chain on the bucketed inputs; a_group: a GROUP BY on the key over a.", "",
             "## Targets", ""]
    lines += _table(["keys/input", "target", "measured", "met"],
                    [[rows_label(size["rows"]), name, figure, "yes" if held else "**no**"]
                     for size in results["sizes"] for name, figure, held in evaluate(size, results["join_types"])])
    lines += ["", "## Builds", ""]
    lines += _table(["keys/input", "model", "seconds (median)", "shuffle MiB", "write exchanges", "rows", "the write"],
                    [[rows_label(size["rows"]), name, f"{statistics.median(m['seconds']):.2f}",
                      f"{m['shuffle_bytes'] / MIB:.1f}", m["exchanges"], f"{m['rows']:,}", m["write"]]
                     for size in results["sizes"] for name, m in sorted(size["builds"].items())])
    return "\n".join(lines) + "\n"


def parse(argv: list[str] | None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.bucketed_build", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=rows_list_arg, default=[2_000_000, 8_000_000], help="keys per input (default 2m,8m)")
    p.add_argument("--k", type=int, default=8, help="inputs (default 8)")
    p.add_argument("--buckets", type=int, default=16, help="bucket(N, k) of the bucketed tables (default 16)")
    p.add_argument("--join-types", default="full,left", help="comma list of full, left (default both)")
    p.add_argument("--reps", type=int, default=1, help="timed repetitions (default 1)")
    p.add_argument("--warmup", type=int, default=0, help="untimed repetitions first (default 0)")
    p.add_argument("--name", help="results go to benchmarks/results/NAME (default bucketed-build-spark<version>)")
    p.add_argument("--out", type=Path, help="results directory (instead of --name)")
    p.add_argument("--work-dir", type=Path, default=HERE / "work" / "bucketed-build",
                   help="generated inputs, the dbt projects and the session's warehouse")
    p.add_argument("--driver-memory", default="6g")
    args = p.parse_args(argv)
    args.join_types = [j for j in args.join_types.split(",") if j]
    if args.k < 2 or args.buckets < 1 or args.reps < 1 or args.warmup < 0 or not set(args.join_types) <= {"full", "left"}:
        p.error("--k >= 2, --buckets >= 1, --reps >= 1, --warmup >= 0, --join-types of full, left")
    return args


def main(argv: list[str] | None = None, spark=None) -> dict:
    """Run the benchmark and write its results; with `spark` (a session whose spark_catalog is
    Iceberg's, testkit.formats), in that session."""
    import pyspark

    args = parse(argv)
    name = args.name or f"bucketed-build-spark{pyspark.__version__}"
    out = (args.out or HERE / "results" / name).resolve()
    own_session = spark is None
    if own_session:
        from testkit.formats import build_format_session

        state = args.work_dir.resolve() / f"state-{time.time_ns()}"
        spark = build_format_session("iceberg", state,
                                     "dbt-multijoin-bucketed-build-bench",
                                     {"spark.driver.memory": args.driver_memory,
                                      "spark.sql.autoBroadcastJoinThreshold": "-1"})
    command = "python -m benchmarks.bucketed_build " + shlex.join(sys.argv[1:] if argv is None else argv)
    results = {"name": name, "command": command,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "k": args.k, "buckets": args.buckets, "reps": args.reps, "warmup": args.warmup,
               "join_types": args.join_types, "machine": _machine(spark), "sizes": []}
    try:
        for rows in args.rows:
            results["sizes"].append(measure_size(spark, args, rows))
    finally:
        if own_session:
            spark.stop()
            shutil.rmtree(state, ignore_errors=True)
    write_results(out, results, markdown(results))
    return results


if __name__ == "__main__":
    main()
