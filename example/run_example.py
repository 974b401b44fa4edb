"""Builds the example project in this process and prints what happened: `dbt deps`, `dbt build`
of the eight inputs, then `dbt build` of each wide model on its own, so that the shuffle bytes
Spark's status store counts between two builds are that model's. dbt's session method builds the
SparkSession (profiles.yml: the extension loaded) in this process; this script reads it afterwards.

    python example/run_example.py     # scripts/example.sh runs it after the set-up
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from benchmarks.stages import shuffle_bytes  # noqa: E402

WIDE = ("device_wide_multiway", "device_wide_chain")
OPERATOR_LOG = "physical join operator"


def step(text: str) -> None:
    print(f"==> {text}", flush=True)


def dbt(*args: str, log_lines: list[str] | None = None):
    """One in-process dbt command on the example project; exits with dbt's messages on failure."""
    from dbt.cli.main import dbtRunner

    def listen(event) -> None:
        if log_lines is not None and OPERATOR_LOG in event.info.msg:
            log_lines.append(event.info.msg)

    started = time.monotonic()
    outcome = dbtRunner(callbacks=[listen]).invoke(
        [*args, "--project-dir", str(HERE), "--profiles-dir", str(HERE), "--quiet",
         "--no-use-colors", "--log-path", str(HERE / "logs")])
    results = list(getattr(outcome.result, "results", None) or [])
    if not outcome.success:
        print(f"dbt {' '.join(args)} failed: {outcome.exception or ''}", file=sys.stderr)
        for result in results:
            if str(result.status) not in ("success", "pass"):
                print(f"  {result.node.name}: {result.status} {result.message}", file=sys.stderr)
        print(f"  (dbt's log: {HERE / 'logs' / 'dbt.log'})", file=sys.stderr)
        sys.exit(1)
    return results, time.monotonic() - started


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def main() -> None:
    from dbt_multijoin.jar import extension_jar

    spark_dir = Path(os.environ.setdefault("DBT_MULTIJOIN_EXAMPLE_DIR", str(REPO / "build" / "example")))
    os.environ.setdefault("DBT_MULTIJOIN_JAR", str(extension_jar()))
    spark_dir.mkdir(parents=True, exist_ok=True)
    os.chdir(spark_dir)  # Derby's derby.log lands here, not in the caller's directory

    step("dbt deps")
    dbt("deps")
    step("dbt build: 8 inputs of 1,000,000 keys each (parquet tables)")
    _, seconds = dbt("build", "--select", "path:models/inputs")
    print(f"    {seconds:.0f} s", flush=True)

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()  # the session dbt built (no new confs)
    spark.sparkContext.setLogLevel("ERROR")
    measured = {}
    for model in WIDE:
        step(f"dbt build: {model}")
        log_lines: list[str] = []
        before = shuffle_bytes(spark)
        results, _ = dbt("build", "--select", model, log_lines=log_lines)
        shuffled = shuffle_bytes(spark) - before
        run = next(r for r in results if r.node.name == model)
        measured[model] = {"seconds": run.execution_time, "shuffle": shuffled, "log": log_lines}
        print(f"    {run.execution_time:.1f} s, shuffle written {human_bytes(shuffled)}", flush=True)

    # The physical plan of the multiway model's compiled SQL: the MultiJoin node.
    compiled = next((HERE / "target" / "compiled").rglob("device_wide_multiway.sql")).read_text()
    plan = spark.sql("explain " + compiled).collect()[0][0]
    plan_line = next((line.strip() for line in plan.splitlines() if "MultiJoin" in line), "(no MultiJoin node)")
    rows = spark.table("multijoin_example.device_wide_multiway").count()
    warehouse = spark.conf.get("spark.sql.warehouse.dir")

    multiway, chain = (measured[m] for m in WIDE)
    print()
    print("Summary: one wide table over 8 inputs x 1,000,000 keys, joined on device_id "
          f"({rows:,} rows, 25 columns), local[2]")
    print(f"  {'model':<22} {'build time':>10}  {'shuffle written':>15}")
    for model in WIDE:
        print(f"  {model:<22} {measured[model]['seconds']:>8.1f} s  {human_bytes(measured[model]['shuffle']):>15}")
    print(f"  chain / multiway: {chain['seconds'] / multiway['seconds']:.2f}x the time, "
          f"{chain['shuffle'] / max(multiway['shuffle'], 1):.2f}x the shuffle bytes")
    print("  MultiJoin ran (multiway):")
    for line in multiway["log"]:
        print(f"    dbt log:  {line}")
    print(f"    EXPLAIN:  {plan_line}")
    print(f"  tables: {warehouse}/multijoin_example.db/ (schema multijoin_example; "
          f"Derby metastore {spark_dir / 'metastore_db'})")


if __name__ == "__main__":
    main()
