"""The end-to-end build on the thrift target: `dbt run` of a k-input wide model (parquet output)
with strategy multiway against the same model with strategy chain (vanilla joins), through a
Spark Thrift Server that this script starts (our jar with --jars, local[2]) and stops.

dbt runs in this process and talks to the server over Thrift, as a user's `dbt run` does; the
inputs are parquet tables the server writes from `range()`. Each timing is one
`dbt run -s <model>`, repeated `--reps` times, interleaved; a `dbt run` of a one-row view is the
fixed cost of a run. Writes `benchmarks/results/<name>/results.md` and `results.json`.

    .venv/bin/python -m benchmarks.thrift_build --rows 2m --k 8 --reps 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

import pyspark

from benchmarks.run import rows_arg
from benchmarks.workload import SCRAMBLE
from testkit import REPO
from dbt_multijoin import thrift
from dbt_multijoin.profiles import render_profile
from testkit.thrift_client import free_port, hive_execute, hive_query

RESULTS = Path(__file__).resolve().parent / "results"
SCHEMA = "thrift_build"


def write_project(root: Path, port: int, names: list[str]) -> None:
    (root / "models").mkdir(parents=True)
    (root / "profiles.yml").write_text(render_profile("thrift", "thrift_build", SCHEMA, port))
    (root / "dbt_project.yml").write_text(
        "name: thrift_build\nversion: '1.0'\nconfig-version: 2\nprofile: thrift_build\n"
        "models:\n  thrift_build:\n    +file_format: parquet\n"
    )
    (root / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(REPO))}\n")
    listed = "\n".join(f"      - name: {n}" for n in names)
    (root / "models" / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: inputs\n    schema: {SCHEMA}\n    tables:\n{listed}\n"
    )
    sources = ", ".join(f"source('inputs', '{n}')" for n in names)
    columns = ", ".join(f"'{n}': ['v{n[1:]}']" for n in names)
    for strategy in ("multiway", "chain"):
        (root / "models" / f"wide_{strategy}.sql").write_text(
            f"{{{{ config(materialized='multijoin', strategy='{strategy}') }}}}\n"
            f"{{{{ dbt_multijoin.multi_join([{sources}], key='k', columns={{{columns}}}) }}}}\n"
        )
    (root / "models" / "fixed_cost.sql").write_text("{{ config(materialized='view') }}\nselect 1 as x\n")


def dbt(root: Path, *args: str) -> None:
    from dbt.cli.main import dbtRunner

    outcome = dbtRunner().invoke(
        [*args, "--project-dir", str(root), "--profiles-dir", str(root), "--no-use-colors",
         "--log-path", str(root / "logs")]
    )
    if not outcome.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {outcome.exception or outcome.result}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=rows_arg, default=2_000_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--name", default=None)
    parser.add_argument("--work-dir", type=Path, default=Path(__file__).resolve().parent / "work" / "thrift_build")
    args = parser.parse_args(argv)
    name = args.name or f"thrift-build-k{args.k}-spark{pyspark.__version__}"

    shutil.rmtree(args.work_dir, ignore_errors=True)
    args.work_dir.mkdir(parents=True)
    port, state_dir = free_port(), args.work_dir / "server"
    thrift.start(port, state_dir, master="local[2]", confs={
        "spark.ui.enabled": "false", "spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "200",
    })
    try:
        hive_execute(port, f"create database {SCHEMA}")
        names = [f"t{i}" for i in range(1, args.k + 1)]
        for i, table in enumerate(names, start=1):
            # Keys scattered over 64 bits (the id times an odd constant; wraps, hence not ANSI,
            # which is Spark 4's default: the SET holds in this statement's session only).
            hive_execute(port, "set spark.sql.ansi.enabled=false",
                         f"create table {SCHEMA}.{table} using parquet as "
                         f"select id * {SCRAMBLE} as k, rand({i}) as v{i} from range({2 * args.rows}) where rand({100 + i}) < 0.5")
        root = args.work_dir / "project"
        write_project(root, port, names)
        dbt(root, "deps")
        models = ["fixed_cost", "wide_multiway", "wide_chain"]
        runs: dict[str, list[float]] = {m: [] for m in models}
        for _ in range(args.reps):
            for model in models:
                start = time.perf_counter()
                dbt(root, "run", "-s", model)
                runs[model].append(time.perf_counter() - start)
        # What each build ran, as the materialization recorded it from the plan it proved.
        operators = {m: hive_query(port, f"show tblproperties {SCHEMA}.{m} ('dbt_multijoin.operator')")[0][-1]
                     for m in ("wide_multiway", "wide_chain")}
    finally:
        thrift.stop(port, state_dir)

    median = {m: statistics.median(t) for m, t in runs.items()}
    out = RESULTS / name
    out.mkdir(parents=True, exist_ok=True)
    ratio = median["wide_chain"] / median["wide_multiway"]
    (out / "results.json").write_text(json.dumps(
        {"spark": pyspark.__version__, "rows": args.rows, "k": args.k, "reps": args.reps, "runs": runs,
         "chain_over_multiway": ratio, "operators": operators}, indent=1))
    lines = [
        f"# dbt run on the thrift target: a k={args.k} wide model, {args.rows:,} keys per input, Spark {pyspark.__version__}",
        "", f"Median of {args.reps} interleaved `dbt run -s <model>`, one Spark Thrift Server (local[2], our jar with --jars), parquet in and out.", "",
        "| model | what | median s |", "|---|---|---|",
        f"| wide_multiway | strategy multiway (recorded operator: {operators['wide_multiway']}) | {median['wide_multiway']:.1f} |",
        f"| wide_chain | strategy chain (recorded operator: {operators['wide_chain']}) | {median['wide_chain']:.1f} |",
        f"| fixed_cost | a one-row view: what every `dbt run` costs here | {median['fixed_cost']:.1f} |",
        "", f"- chain / multiway: **{ratio:.2f}x**",
    ]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
