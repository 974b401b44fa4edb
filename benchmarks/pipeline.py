"""What a dbt user waits for: `dbt run` of a k-input wide model, in one process and one session
(dbt in-process on the session method, Delta or Iceberg beside the extension).

1. Full rebuilds through the multijoin materialization, parquet output: strategy multiway
   against the same model on the vanilla chain.
2. Changed keys: the inputs in Delta (or Iceberg: --table-format), a changed_keys model built
   once; then 1% of the keys change in one input and the model is refreshed with changed_keys,
   against a full rebuild of the same model (the same output format, rebuilt by CREATE OR
   REPLACE).

Each timing is one `dbt run -s <model>`, repeated `--reps` times, interleaved; shuffle bytes are
the sum of the run's stages' shuffle writes. A `dbt run` of a one-row view is timed alongside: the
fixed cost every run pays (dbt's parsing and compiling, the session's metadata queries), which
bounds how much faster than a full rebuild any refresh can be at a given size. Writes `benchmarks/results/<name>/results.md` and
`results.json`.

    .venv/bin/python -m benchmarks.pipeline --rows 2m --k 8 --reps 3
    .venv/bin/python -m benchmarks.pipeline --rows 2m --k 8 --reps 3 --table-format iceberg
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
from benchmarks.stages import shuffle_bytes
from benchmarks.workload import SCRAMBLE
from testkit.dbt import PipelineProject

RESULTS = Path(__file__).resolve().parent / "results"


def timed(spark, project: PipelineProject, *args: str) -> tuple[float, int]:
    before = shuffle_bytes(spark)
    start = time.perf_counter()
    result = project.dbt("run", *args)
    elapsed = time.perf_counter() - start
    assert result.success, result.describe()
    return elapsed, shuffle_bytes(spark) - before


def make_inputs(spark, project: PipelineProject, rows: int, k: int, table_format: str = "delta") -> list[str]:
    """k inputs in `table_format`: each keeps an id of a universe of 2 x rows with probability 1/2, a double and
    updated_at = 1. Keys scattered (the id times an odd constant)."""
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")  # the scrambled key wraps around 64 bits
    names = []
    for i in range(1, k + 1):
        name = f"t{i}"
        spark.sql(
            f"create or replace table {project.table(name)} using {table_format} as "
            f"select id * {SCRAMBLE} as k, rand({i}) as v{i}, cast(1 as bigint) as updated_at "
            f"from range({2 * rows}) where rand({100 + i}) < 0.5"
        )
        names.append(name)
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    project.sources(*names)
    return names


def multi_join(names: list[str], extra: str = "") -> str:
    sources = ", ".join(f"source('inputs', '{n}')" for n in names)
    columns = ", ".join(f"'{n}': ['v{n[1:]}']" for n in names)
    return f"{{{{ dbt_multijoin.multi_join([{sources}], key='k', columns={{{columns}}}{extra}) }}}}\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=rows_arg, default=2_000_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--changed", type=float, default=0.01, help="fraction of one input's keys changed")
    parser.add_argument("--table-format", choices=["delta", "iceberg"], default="delta",
                        help="format of the inputs and of the changed_keys model")
    parser.add_argument("--name", default=None)
    parser.add_argument("--work-dir", type=Path, default=Path(__file__).resolve().parent / "work" / "pipeline")
    args = parser.parse_args(argv)
    table_format = args.table_format
    name = args.name or f"pipeline-{table_format}-spark{pyspark.__version__}"

    from testkit.formats import build_format_session

    shutil.rmtree(args.work_dir, ignore_errors=True)
    args.work_dir.mkdir(parents=True)
    spark = build_format_session(table_format, args.work_dir, "dbt-multijoin-pipeline-bench",
                                 {"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "200"})

    project = PipelineProject.create(spark, args.work_dir, table_format)
    names = make_inputs(spark, project, args.rows, args.k, table_format)
    full = "{{ config(materialized='multijoin', file_format='parquet', strategy='%s') }}\n"
    project.model("wide_multiway", full % "multiway" + multi_join(names))
    project.model("wide_chain", full % "chain" + multi_join(names))
    project.model("wide_full", f"{{{{ config(materialized='multijoin', file_format='{table_format}') }}}}\n" + multi_join(names))
    project.model("fixed_cost", "{{ config(materialized='view') }}\nselect 1 as x\n")
    project.model("wide_changed_keys", f"{{{{ config(materialized='multijoin', file_format='{table_format}', incremental_strategy='changed_keys') }}}}\n"
                  + multi_join(names, ", changed_since='updated_at'"))

    full_builds = ["fixed_cost", "wide_multiway", "wide_chain", "wide_full"]
    runs: dict[str, list[tuple[float, int]]] = {m: [] for m in [*full_builds, "wide_changed_keys"]}
    project.dbt("run", "-s", "wide_changed_keys")  # the first build of the changed_keys model
    for rep in range(args.reps):
        for model in full_builds:
            runs[model].append(timed(spark, project, "-s", model))
        # Change 1% of the keys of t1 (new payload, newer updated_at), then refresh.
        modulus = round(1 / args.changed)
        spark.sql(f"update {project.table('t1')} set v1 = v1 + 1, updated_at = {rep + 2} where pmod(k, {modulus}) = {rep}")
        runs["wide_changed_keys"].append(timed(spark, project, "-s", "wide_changed_keys"))
    project.dbt("run", "-s", "wide_full")  # a full rebuild over the inputs as they are now
    same = project.rows("select * from " + project.table("wide_changed_keys")) == project.rows(
        "select * from " + project.table("wide_full"))

    def median(model, index=0):
        return statistics.median(r[index] for r in runs[model])

    fixed = median("fixed_cost")
    refresh_ratio_net = (median("wide_full") - fixed) / max(median("wide_changed_keys") - fixed, 1e-9)
    out = RESULTS / name
    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "spark": pyspark.__version__, "table_format": table_format, "rows": args.rows, "k": args.k, "reps": args.reps, "changed": args.changed,
        "runs": runs, "changed_keys_equals_full_rebuild": same, "refresh_ratio_without_fixed_cost": refresh_ratio_net,
    }
    (out / "results.json").write_text(json.dumps(summary, indent=1))
    mib = 1 << 20
    lines = [
        f"# dbt run of a k={args.k} wide model, {args.rows:,} keys per input, Spark {pyspark.__version__}",
        "", f"Median of {args.reps} interleaved runs, one process (dbt in-process, session method, local[2]).", "",
        "| model | what | median s | shuffle MiB |", "|---|---|---|---|",
        f"| wide_multiway | full build, parquet, strategy multiway | {median('wide_multiway'):.1f} | {median('wide_multiway', 1) / mib:.0f} |",
        f"| wide_chain | full build, parquet, strategy chain (vanilla) | {median('wide_chain'):.1f} | {median('wide_chain', 1) / mib:.0f} |",
        f"| wide_full | full build, {table_format} (CREATE OR REPLACE) | {median('wide_full'):.1f} | {median('wide_full', 1) / mib:.0f} |",
        f"| wide_changed_keys | changed_keys refresh, {args.changed:.0%} of t1's keys changed | {median('wide_changed_keys'):.1f} | {median('wide_changed_keys', 1) / mib:.0f} |",
        f"| fixed_cost | a one-row view: what every `dbt run` costs here | {median('fixed_cost'):.1f} | |",
        "",
        f"- chain / multiway (full build, parquet): **{median('wide_chain') / median('wide_multiway'):.2f}x**",
        f"- full rebuild / changed_keys refresh ({table_format}): **{median('wide_full') / median('wide_changed_keys'):.1f}x**; "
        f"without the fixed cost of a run: {refresh_ratio_net:.1f}x",
        f"- the refreshed table equals the full rebuild: {same}",
    ]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    spark.stop()


if __name__ == "__main__":
    main()
