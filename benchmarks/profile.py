"""Where a strategy's CPU goes: Java Flight Recorder samples of Spark's task threads.

    python -m benchmarks.profile --shape unique --rows 2m --k 8 --strategies multiway,floor

Each strategy runs once untimed, then `--reps` times under JFR (`jcmd <pid> JFR.start`); its
task threads' execution samples are counted per component (the innermost frame that names one)
and per method. Writes profile.md and the .jfr recordings to --out. Needs the JDK's jcmd and jfr.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from benchmarks import workload
from benchmarks.run import HERE, list_arg, measure, rows_arg

# (component, substrings of "package.Class.method"). Generic frames (row copies, streams) match
# nothing, so their samples count for the component that called them. A Sort runs inside its
# parent's first hasNext(): sort frames are matched before the MultiJoin's.
COMPONENTS = (
    ("sort", ("UnsafeExternalSorter", "UnsafeInMemorySorter", "RadixSort", "UnsafeSorterSpill",
              "TimSort", "UnsafeExternalRowSorter", "PrefixComparator", "RecordComparator")),
    ("shuffle write", ("ShuffleWriter", "ShuffleExternalSorter", "ShuffleWriteProcessor",
                       "DiskBlockObjectWriter")),
    ("shuffle read", ("ShuffleBlockFetcherIterator", "BlockStoreShuffleReader", "ShuffledRowRDD",
                      "UnsafeRowSerializer", "AQEShuffleRead")),
    ("parquet scan", ("parquet", "Parquet", "FileScanRDD", "ColumnarBatch", "ColumnVector")),
    ("MultiJoin merge", ("sql.multijoin.",)),
    ("sort-merge join", ("SortMergeJoin", "SortMergeFullOuterJoinScanner")),
    ("hash aggregate", ("HashAggregate", "BytesToBytesMap", "TungstenAggregationIterator")),
)


def samples(recording: Path) -> tuple[Counter, Counter]:
    """Task-thread samples per component and per innermost method."""
    command = ["jfr", "print", "--json", "--stack-depth", "64",
               "--events", "jdk.ExecutionSample", str(recording)]
    printed = subprocess.run(command, capture_output=True, text=True, check=True)
    components, methods = Counter(), Counter()
    for event in json.loads(printed.stdout)["recording"]["events"]:
        values = event["values"]
        # Spark 3.5 names task threads "Executor task launch worker ..."; Spark 4 renames an idle
        # one "Executor task idle worker ...", and JFR may keep either name for the thread.
        if not ((values.get("sampledThread") or {}).get("javaName") or "").startswith("Executor task"):
            continue
        frames = [f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
                  for f in (values.get("stackTrace") or {}).get("frames") or []]
        if frames:
            methods[frames[0]] += 1
            components[next((name for frame in frames for name, needles in COMPONENTS
                             if any(n in frame for n in needles)), "other")] += 1
    return components, methods


def main(argv: list[str] | None = None) -> int:
    from testkit.session import build_session

    p = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", choices=tuple(workload.SHAPES), default="unique")
    p.add_argument("--rows", type=rows_arg, default=2_000_000)
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--strategies", type=list_arg, default=["multiway", "floor"])
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--out", type=Path, default=HERE / "results" / "profile")
    p.add_argument("--seed", type=int, default=0, help="data set, as for python -m benchmarks")
    p.add_argument("--work-dir", type=Path, default=HERE / "work")
    p.add_argument("--local-dir", type=Path,
                   help="Spark's shuffle and spill files, as for python -m benchmarks "
                        "(default: WORK_DIR/spark-local)")
    args = p.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = build_session(app_name="dbt-multijoin-profile", conf={
        "spark.driver.memory": "4g", "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.multijoin.failOnFallback": "true", "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": str((args.local_dir or args.work_dir / "spark-local").resolve())})
    profiles = {}
    try:
        spark.sparkContext.setLogLevel("ERROR")
        pid = str(spark.sparkContext._jvm.ProcessHandle.current().pid())
        workload.register_inputs(spark, args.work_dir.resolve(), args.shape, args.rows, args.k, args.seed)
        for strategy in args.strategies:
            measure(spark, strategy, args.shape, args.k)  # untimed: JIT and caches warm
            recording = out / f"{strategy}.jfr"
            subprocess.run(["jcmd", pid, "JFR.start", f"name={strategy}", "settings=profile",
                            f"filename={recording}"], check=True, capture_output=True)
            for _ in range(args.reps):
                measure(spark, strategy, args.shape, args.k)
            subprocess.run(["jcmd", pid, "JFR.stop", f"name={strategy}"], check=True, capture_output=True)
            profiles[strategy] = samples(recording)
    finally:
        spark.stop()

    command = "python -m benchmarks.profile " + " ".join(sys.argv[1:] if argv is None else argv)
    lines = [f"# CPU profile: {args.shape}, {args.rows:,} rows/input, k={args.k}, {args.reps} runs each", "",
             f"Command: `{command}`",
             "", "Share of the task threads' JFR samples per component (innermost frame that names one).", "",
             "| component | " + " | ".join(profiles) + " |", "|---|" + "---|" * len(profiles)]
    for name in dict.fromkeys(c for components, _ in profiles.values() for c, _ in components.most_common()):
        lines.append(f"| {name} | " + " | ".join(
            f"{c[name] / max(sum(c.values()), 1):.0%}" for c, _ in profiles.values()) + " |")
    for strategy, (components, methods) in profiles.items():
        lines += ["", f"## {strategy}: hottest methods (self)", ""]
        lines += [f"- {n / sum(methods.values()):.1%} `{m}`" for m, n in methods.most_common(20)]
    (out / "profile.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'profile.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
