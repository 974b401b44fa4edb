"""One command for the whole comparison: `python -m benchmarks.run [options]` (see --help).

Starts one Spark session (local[2], AQE on, broadcast off, the extension loaded,
spark.multijoin.failOnFallback=true), generates or reuses the parquet inputs, warms the JVM up,
then times every strategy on every k, repetitions interleaved (the order rotates each
repetition), and writes results.json, results.md and plot.png to the output directory.
"""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/run.py`: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import data as datagen  # noqa: E402
from benchmarks import machine, measure, report  # noqa: E402
from benchmarks.config import REPO_ROOT, Config, RunSpec, config_to_json, spec_from_args  # noqa: E402
from benchmarks.strategies import Inputs, build  # noqa: E402

# The load of other processes (fraction of all CPUs) above which a run is marked provisional.
BUSY_THRESHOLD = 0.10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def skipped_strategies(config: Config) -> dict[str, str]:
    if "union_group" in config.strategies and not config.data.unique_keys:
        return {"union_group": "GROUP BY k with max() is the FULL multi-join only for unique, "
                               "non-NULL keys: it would merge duplicates (and NULL keys) into one row"}
    return {}


def _inputs(spark, spec: RunSpec, data_spec, k: int) -> Inputs:
    views = datagen.register_inputs(spark, spec.work_dir, data_spec, k)
    return Inputs(views=views, columns=[datagen.input_columns(i, data_spec) for i in range(1, k + 1)])


def _measure_one(spark, capture, meter, strategy: str, inputs: Inputs, label: str) -> dict:
    before = meter.reading()
    result = measure.measure(spark, capture, lambda: build(spark, strategy, inputs), label)
    result["other_load"] = meter.others(before, meter.reading())
    if strategy == "floor":
        result["output_rows"] = None  # not a join: it emits every input row once
    return result


def use_operator_rev(rev: str, work_dir) -> str:
    """Points dbt_multijoin.jar at the jvm/ sources of git revision `rev` (exported into the work
    dir, compiled there on first use), so a run measures a fixed operator whatever the worktree
    holds. Must run before dbt_multijoin.jar is imported."""
    if "dbt_multijoin.jar" in sys.modules:
        raise RuntimeError("use_operator_rev must run before dbt_multijoin.jar is imported")
    sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=REPO_ROOT,
                         capture_output=True, text=True, check=True).stdout.strip()
    root = Path(work_dir) / "operator" / sha[:12]
    sources = root / "jvm" / "src" / "main" / "scala"
    if not sources.exists():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "jvm/src/main/scala"], cwd=REPO_ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    os.environ["DBT_MULTIJOIN_SOURCES"] = str(sources)
    os.environ["DBT_MULTIJOIN_TARGET"] = str(root / "target")
    return sha


def run(spec: RunSpec) -> dict:
    operator_sha = use_operator_rev(spec.operator_rev, spec.work_dir) if spec.operator_rev else None
    from testkit.session import build_session

    started_at = datetime.datetime.now(datetime.timezone.utc)
    plan = []  # (config, k, rep, strategy)
    for config in spec.configs:
        runnable = [s for s in config.strategies if s not in skipped_strategies(config)]
        for k in config.ks:
            for rep in range(spec.reps):
                shift = rep % len(runnable)
                for strategy in runnable[shift:] + runnable[:shift]:
                    plan.append((config, k, rep, strategy))
    log(f"benchmark '{spec.preset}': {len(plan)} timed measurements, output in {spec.out_dir}")

    spark = build_session(master=spec.master, app_name="dbt-multijoin-benchmarks",
                          conf=spec.spark_conf())
    capture = None
    failures = []
    try:
        spark.sparkContext.setLogLevel("ERROR")
        capture = measure.QueryCapture(spark)
        machine_info = machine.describe(spark)
        operator_info = {**machine.operator(), "git_rev": spec.operator_rev, "git_sha": operator_sha}
        meter = machine.LoadMeter(machine.jvm_pid(spark))
        log(f"machine: {machine_info['cores']} cores, {machine_info['cpu_model']}, "
            f"{(machine_info['memory_bytes'] or 0) / 2**30:.0f} GiB, {machine_info['java']}, "
            f"Spark {machine_info['spark']}")

        inputs_info = {}
        for config in spec.configs:
            log(f"inputs of {config.name}: {config.describe()}")
            inputs_info[config.name] = datagen.ensure_inputs(
                spark, spec.work_dir, config.data, max(config.ks), log=log)

        if spec.warmup_rows > 0:
            warm_started = time.perf_counter()
            for config in spec.configs:
                warm_data = replace(config.data, rows=spec.warmup_rows)
                warm_k = min(max(config.ks), 4)  # same code paths as larger k, far fewer stages
                datagen.ensure_inputs(spark, spec.work_dir, warm_data, warm_k, log=log)
                warm_inputs = _inputs(spark, spec, warm_data, warm_k)
                for strategy in config.strategies:
                    if strategy not in skipped_strategies(config):
                        measure.measure(spark, capture, lambda: build(spark, strategy, warm_inputs),
                                        f"warmup-{strategy}")
            log(f"warm-up done in {time.perf_counter() - warm_started:.1f} s")

        measurements = []
        timed_start = meter.reading()
        registered = None
        for index, (config, k, rep, strategy) in enumerate(plan, start=1):
            if registered != (config.name, k):
                inputs = _inputs(spark, spec, config.data, k)
                registered = (config.name, k)
            label = f"{config.name}-k{k}-r{rep}-{strategy}"
            record = {"config": config.name, "k": k, "rep": rep, "strategy": strategy}
            try:
                record.update(_measure_one(spark, capture, meter, strategy, inputs, label))
            except Exception as error:  # noqa: BLE001 - recorded, reported, and the run fails at the end
                record["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:500]
                failures.append(record)
                log(traceback.format_exc())
            measurements.append(record)
            if "error" in record:
                line = f"FAILED {record['error']}"
            else:
                used = " MultiJoin" if record.get("multijoin") else ""
                load = record.get("other_load")
                line = (f"{record['seconds']:7.2f} s  shuffle {record['shuffle_bytes_written'] / 2**20:8.1f} MiB"
                        f"  rows {record['output_rows'] if record['output_rows'] is not None else '-'}"
                        f"{used}" + (f"  others' load {load:.0%}" if load is not None else ""))
            log(f"[{index}/{len(plan)}] {config.name} k={k} rep {rep + 1}/{spec.reps} {strategy:<11} {line}")
        other_load = meter.others(timed_start, meter.reading())
    finally:
        if capture is not None:
            capture.close()
        spark.stop()

    busy = other_load is not None and other_load > BUSY_THRESHOLD
    reasons = []
    if spec.provisional:
        reasons.append("marked provisional on the command line")
    if busy:
        reasons.append(f"other processes used {other_load:.0%} of the machine's CPU during the "
                       f"timed measurements (threshold {BUSY_THRESHOLD:.0%})")
    results = {
        "schema": 1,
        "created": started_at.isoformat(timespec="seconds"),
        "duration_s": round((datetime.datetime.now(datetime.timezone.utc) - started_at).total_seconds(), 1),
        "command": "python -m benchmarks.run " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "run": spec.to_json(),
        "spark_conf": spec.spark_conf(),
        "machine": machine_info,
        "operator": operator_info,
        "other_load": other_load,
        "provisional": bool(reasons),
        "provisional_reasons": reasons,
        "configs": [
            {**config_to_json(config), "inputs": inputs_info[config.name],
             "skipped": skipped_strategies(config)}
            for config in spec.configs
        ],
        "measurements": measurements,
        "failures": len(failures),
    }
    report.summarise(results)
    return results


def main(argv: list[str] | None = None) -> int:
    spec = spec_from_args(argv)
    results = run(spec)
    paths = report.write_all(results, spec.out_dir)
    for path in paths:
        log(f"wrote {path}")
    if results["failures"]:
        log(f"{results['failures']} measurement(s) failed; see 'error' in {spec.out_dir / 'results.json'}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
