"""Where the CPU of a strategy goes: Java Flight Recorder samples of Spark's task threads.

    python -m benchmarks.profile --strategies multiway,floor --rows 1m --k 8

For each strategy: one untimed run, then JFR (`jcmd <pid> JFR.start settings=profile`) over
`--reps` runs, then the execution samples of the executor task threads, bucketed by the innermost
frame that belongs to a known component (MultiJoin merge, sort, shuffle read/write, parquet
scan, codegen'd stage code, ...) plus the hottest methods. Writes profile.md and profile.json to
--out; the recordings stay in benchmarks/work/jfr/.
Needs `jcmd` and `jfr` from the JDK that runs Spark.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from benchmarks import data as datagen
from benchmarks import machine, measure
from benchmarks.config import SHAPES, STRATEGIES, WORK_DIR, RunSpec, _int_list, _names, _rows
from benchmarks.strategies import Inputs, build

# (bucket, substrings of "package.Class.method"). A sample goes to the bucket of its innermost
# frame that names an operator-level component; generic frames (row copies, generated
# projections, compression, streams) are skipped, so their cost lands on the component that
# called them (e.g. the MultiJoin's result projection and row copies count as "MultiJoin merge").
# A Sort runs inside its parent's first hasNext(), so sort frames are matched before MultiJoin.
BUCKETS = (
    ("sort", ("UnsafeExternalSorter", "UnsafeInMemorySorter", "RadixSort", "UnsafeSorterSpill",
              "collection.TimSort", "UnsafeExternalRowSorter", "PrefixComparator",
              "RecordComparator")),
    ("shuffle write", ("ShuffleWriter", "ShuffleExternalSorter", "ShuffleWriteProcessor",
                       "DiskBlockObjectWriter")),
    ("shuffle read", ("ShuffleBlockFetcherIterator", "BlockStoreShuffleReader", "ShuffledRowRDD",
                      "UnsafeRowSerializer", "ShuffleReader", "AQEShuffleRead")),
    ("parquet scan", ("parquet", "Parquet", "FileScanRDD", "ColumnarBatch", "ColumnVector")),
    ("MultiJoin merge", ("sql.multijoin.",)),
    ("sort-merge join", ("SortMergeJoin", "SortMergeFullOuterJoinScanner")),
    ("hash aggregate", ("HashAggregate", "UnsafeFixedWidthAggregationMap", "BytesToBytesMap",
                        "TungstenAggregationIterator")),
    ("stage code above the join + noop sink", ("WritingSparkTask", "V2TableWriteExec",
                                               "NoopWriter")),
)


def _bucket(frames: list[str]) -> str:
    for frame in frames:
        for name, needles in BUCKETS:
            if any(needle in frame for needle in needles):
                return name
    return "other"


def _frames(event) -> list[str]:
    stack = event["values"].get("stackTrace") or {}
    out = []
    for frame in stack.get("frames") or []:
        method = frame.get("method") or {}
        cls = (method.get("type") or {}).get("name", "?")
        out.append(f"{cls.replace('/', '.')}.{method.get('name', '?')}")
    return out


def analyse(jfr_file: Path, top: int = 25) -> dict:
    printed = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events",
                              "jdk.ExecutionSample", str(jfr_file)],
                             capture_output=True, text=True, check=True).stdout
    events = json.loads(printed)["recording"]["events"]
    buckets, hottest = Counter(), Counter()
    samples = 0
    for event in events:
        thread = (event["values"].get("sampledThread") or {}).get("javaName") or ""
        if not thread.startswith("Executor task launch worker"):
            continue
        frames = _frames(event)
        if not frames:
            continue
        samples += 1
        buckets[_bucket(frames)] += 1
        hottest[frames[0]] += 1
    return {
        "task_thread_samples": samples,
        "buckets": {k: v / samples for k, v in buckets.most_common()} if samples else {},
        "hottest_methods": [(m, n / samples) for m, n in hottest.most_common(top)] if samples else [],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__.split("\n")[0])
    p.add_argument("--strategies", type=_names(STRATEGIES), default=("multiway", "floor"))
    p.add_argument("--shape", choices=tuple(SHAPES), default="unique")
    p.add_argument("--rows", type=_rows, default=1_000_000)
    p.add_argument("--k", type=_int_list, default=(8,), help="one k, e.g. 8")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--shuffle-partitions", type=int, default=200)
    p.add_argument("--driver-memory", default="4g")
    p.add_argument("--operator-rev", metavar="REV", help="profile the extension of this git revision")
    p.add_argument("--out", type=Path, default=WORK_DIR / "results" / "profile")
    args = p.parse_args(argv)
    for tool in ("jcmd", "jfr"):
        if not shutil.which(tool):
            p.error(f"{tool} (from the JDK) is not on PATH")
    k = args.k[0]
    data_spec = replace(SHAPES[args.shape], rows=args.rows)
    spec = RunSpec(preset="profile", configs=[], shuffle_partitions=args.shuffle_partitions,
                   driver_memory=args.driver_memory)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    if args.operator_rev:
        from benchmarks.run import use_operator_rev

        use_operator_rev(args.operator_rev, spec.work_dir)
    from testkit.session import build_session

    spark = build_session(master=spec.master, app_name="dbt-multijoin-profile", conf=spec.spark_conf())
    capture = None
    results = {"shape": args.shape, "rows": args.rows, "k": k, "reps": args.reps,
               "operator_rev": args.operator_rev, "strategies": {}}
    try:
        spark.sparkContext.setLogLevel("ERROR")
        capture = measure.QueryCapture(spark)
        pid = machine.jvm_pid(spark)
        datagen.ensure_inputs(spark, spec.work_dir, data_spec, k)
        views = datagen.register_inputs(spark, spec.work_dir, data_spec, k)
        inputs = Inputs(views, [datagen.input_columns(i, data_spec) for i in range(1, k + 1)])
        for strategy in args.strategies:
            measure.measure(spark, capture, lambda: build(spark, strategy, inputs), f"warm-{strategy}")
            jfr_dir = spec.work_dir / "jfr"
            jfr_dir.mkdir(parents=True, exist_ok=True)
            jfr_file = jfr_dir / f"{strategy}.jfr"
            subprocess.run(["jcmd", str(pid), "JFR.start", f"name={strategy}", "settings=profile",
                            f"filename={jfr_file}"], check=True, capture_output=True)
            times, cpu = [], []
            for rep in range(args.reps):
                m = measure.measure(spark, capture, lambda: build(spark, strategy, inputs),
                                    f"profile-{strategy}-{rep}")
                times.append(m["seconds"])
                cpu.append(m["task_totals"]["executor_cpu_ms"] / 1000)
                print(f"{strategy} rep {rep + 1}: {m['seconds']:.2f} s, task CPU {cpu[-1]:.2f} s",
                      file=sys.stderr, flush=True)
            subprocess.run(["jcmd", str(pid), "JFR.stop", f"name={strategy}"], check=True,
                           capture_output=True)
            time.sleep(0.5)
            results["strategies"][strategy] = {"seconds": times, "task_cpu_s": cpu,
                                               **analyse(jfr_file)}
    finally:
        if capture is not None:
            capture.close()
        spark.stop()

    (out / "profile.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = [f"# CPU profile: {args.shape}, {args.rows:,} rows/input, k={k}, {args.reps} runs each", "",
             f"Command: `python -m benchmarks.profile {' '.join(argv if argv is not None else sys.argv[1:])}`",
             "",
             "JFR execution samples of the executor task threads; share of samples per component "
             "(innermost recognised frame).", ""]
    names = list(results["strategies"])
    all_buckets = sorted({b for s in results["strategies"].values() for b in s["buckets"]},
                         key=lambda b: -max(s["buckets"].get(b, 0) for s in results["strategies"].values()))
    lines += ["| component | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for bucket in all_buckets:
        lines.append(f"| {bucket} | " + " | ".join(
            f"{results['strategies'][n]['buckets'].get(bucket, 0):.0%}" for n in names) + " |")
    lines.append("| task CPU s (median) | " + " | ".join(
        f"{sorted(results['strategies'][n]['task_cpu_s'])[len(results['strategies'][n]['task_cpu_s']) // 2]:.2f}"
        for n in names) + " |")
    lines.append("")
    for n in names:
        lines += [f"## {n}: hottest methods (self)", ""]
        lines += [f"- {share:.1%} `{method}`" for method, share in results["strategies"][n]["hottest_methods"]]
        lines.append("")
    (out / "profile.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'profile.md'} and {out / 'profile.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
