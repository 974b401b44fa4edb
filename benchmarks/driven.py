"""LEFT multi-join with the bloom filter against the vanilla LEFT chain (issue 5's shape).

A driver holding 5% of the keys, k feature inputs of N rows each (every key once, 3 doubles):

    .venv/bin/python -m benchmarks.driven                 # 2M rows, k = 6, 3 repetitions
    .venv/bin/python -m benchmarks.driven --rows 200k --reps 1

The vanilla chain runs with Spark's own runtime bloom filter at its defaults. Reported: median
wall time and shuffle bytes written per strategy (from each ShuffleExchangeExec's metric, the
bloom filter's own aggregation included), and the ratios. Writes results.json and results.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks import machine
from testkit.plans import node_metrics, plan_nodes
from benchmarks.config import _rows as parse_rows

HERE = Path(__file__).resolve().parent


def _shuffle_bytes(plan) -> int:
    """Shuffle bytes written by every exchange of an executed plan, subqueries included."""
    return sum(node_metrics(node)["shuffleBytesWritten"] for node in plan_nodes(plan, subqueries=True)
               if node.getClass().getSimpleName() == "ShuffleExchangeExec")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="2m", help="rows per feature input (default 2m)")
    parser.add_argument("--k", type=int, default=6, help="feature inputs (default 6)")
    parser.add_argument("--driver-fraction", type=float, default=0.05, help="share of keys in the driver")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--shuffle-partitions", type=int, default=200)
    parser.add_argument("--out", default=str(HERE / "results" / "driven"))
    parser.add_argument("--work-dir", default=str(HERE / "work" / "driven"))
    args = parser.parse_args(argv)
    rows, k = parse_rows(args.rows), args.k
    step = round(1 / args.driver_fraction)

    from testkit.session import build_session

    spark = build_session(app_name="dbt-multijoin-bench-driven", conf={
        "spark.sql.shuffle.partitions": str(args.shuffle_partitions),
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.driver.memory": "4g",
        "spark.ui.showConsoleProgress": "false",
        "spark.multijoin.failOnFallback": "true",
    })
    spark.sparkContext.setLogLevel("ERROR")
    try:
        data = Path(args.work_dir) / f"rows{rows}_k{k}_step{step}"
        if not data.exists():
            print(f"generating inputs in {data}", file=sys.stderr)
            spark.range(rows // step).selectExpr(f"id * {step} AS k", "rand(1) AS d").write.parquet(str(data / "driver"))
            for i in range(k):
                spark.range(rows).selectExpr("id AS k", *[f"rand({i * 10 + c}) AS f{i}_{c}" for c in range(3)]) \
                    .write.parquet(str(data / f"f{i}"))
        spark.read.parquet(str(data / "driver")).createOrReplaceTempView("driver")
        for i in range(k):
            spark.read.parquet(str(data / f"f{i}")).createOrReplaceTempView(f"f{i}")
        columns = ", ".join(f"f{i}_{c}" for i in range(k) for c in range(3))
        joins = " ".join(f"LEFT JOIN f{i} ON driver.k = f{i}.k" for i in range(k))
        sql = f"SELECT {{hint}} driver.k, d, {columns} FROM driver {joins}"
        strategies = {"chain": "", "multiway": "/*+ MULTI_JOIN */"}

        measured = {name: {"seconds": [], "shuffle_bytes": None, "rows": None} for name in strategies}
        for rep in range(args.reps + 1):  # the first repetition warms up and is not kept
            for name, hint in strategies.items():
                df = spark.sql(sql.format(hint=hint))
                start = time.perf_counter()
                count = df._jdf.queryExecution().toRdd().count()
                seconds = time.perf_counter() - start
                plan = df._jdf.queryExecution().executedPlan()
                if rep > 0:
                    measured[name]["seconds"].append(seconds)
                measured[name]["shuffle_bytes"] = _shuffle_bytes(plan)
                measured[name]["rows"] = count
                measured[name]["bloom_filter"] = "might_contain" in plan.toString() or "bloom_filter" in plan.toString()
                print(f"rep {rep} {name:9s} {seconds:7.2f} s  shuffle {measured[name]['shuffle_bytes'] / 2**20:9.1f} MiB  "
                      f"rows {count}", file=sys.stderr)
        machine_description = machine.describe(spark)
    finally:
        spark.stop()

    for m in measured.values():
        m["median_seconds"] = statistics.median(m["seconds"])
    chain, multiway = measured["chain"], measured["multiway"]
    assert chain["rows"] == multiway["rows"], "strategies disagree on the row count"
    result = {
        "shape": {"rows_per_feature_input": rows, "k": k, "driver_rows": rows // step, "doubles_per_input": 3},
        "strategies": measured,
        "ratios": {
            "time_chain_over_multiway": chain["median_seconds"] / multiway["median_seconds"],
            "shuffle_bytes_chain_over_multiway": chain["shuffle_bytes"] / max(multiway["shuffle_bytes"], 1),
        },
        "targets": {"shuffle_bytes_3x_fewer": None, "time_2x_faster": None},
        "machine": machine_description,
        "command": "python -m benchmarks.driven " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    result["targets"]["shuffle_bytes_3x_fewer"] = result["ratios"]["shuffle_bytes_chain_over_multiway"] >= 3
    result["targets"]["time_2x_faster"] = result["ratios"]["time_chain_over_multiway"] >= 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=2, default=str))
    lines = [
        f"# LEFT multi-join with bloom filter: driver {rows // step:,} rows, {k} inputs x {rows:,} rows",
        "",
        f"Command: `{result['command']}`",
        "",
        "| strategy | median seconds | shuffle bytes written | rows | bloom filter in plan |",
        "|---|---|---|---|---|",
    ]
    for name, m in measured.items():
        lines.append(f"| {name} | {m['median_seconds']:.2f} | {m['shuffle_bytes']:,} | {m['rows']:,} | {m['bloom_filter']} |")
    lines += [
        "",
        f"- chain / multiway time: **{result['ratios']['time_chain_over_multiway']:.2f}x** (target >= 2: "
        f"{'met' if result['targets']['time_2x_faster'] else 'missed'})",
        f"- chain / multiway shuffle bytes: **{result['ratios']['shuffle_bytes_chain_over_multiway']:.1f}x** "
        f"(target >= 3: {'met' if result['targets']['shuffle_bytes_3x_fewer'] else 'missed'})",
        f"- machine: {json.dumps(result['machine'], default=str)}",
    ]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
