"""What a benchmark run measures: data shapes, presets, the targets of issue 4, and the CLI."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
WORK_DIR = BENCH_DIR / "work"  # gitignored: generated inputs, spill, default output

# In the order they appear in tables and plots.
STRATEGIES = ("chain", "balanced", "union_group", "multiway", "floor")
JOIN_STRATEGIES = ("chain", "balanced", "union_group", "multiway")  # produce the join's rows
KEY_TYPES = ("bigint", "string16")


@dataclass(frozen=True)
class DataSpec:
    """How each input is generated. Input i keeps each key of a universe of rows/overlap keys with
    probability `overlap`, so any two inputs share ~`overlap` of their keys."""

    rows: int = 1_000_000  # per input, before duplication
    columns: int = 3  # double columns per input
    key_type: str = "bigint"
    dup_rate: float = 0.0  # fraction of each input's keys that appear `dup_copies` times
    dup_copies: int = 3
    null_rate: float = 0.0  # fraction of each input's rows with a NULL key
    overlap: float = 0.5
    seed: int = 42

    @property
    def unique_keys(self) -> bool:
        """Whether a key is unique within each input (and never NULL): what union_group needs."""
        return self.dup_rate == 0 and self.null_rate == 0


@dataclass(frozen=True)
class Config:
    """One panel of the report: one data shape, several k, the strategies to run on it."""

    name: str
    data: DataSpec
    ks: tuple[int, ...]
    strategies: tuple[str, ...] = STRATEGIES

    def describe(self) -> str:
        d = self.data
        parts = [f"{d.rows:,} rows/input", f"{d.columns} doubles/input", f"{d.key_type} keys"]
        parts.append(f"{d.dup_rate:.0%} of keys x{d.dup_copies}" if d.dup_rate else "unique keys")
        if d.null_rate:
            parts.append(f"{d.null_rate:.0%} NULL keys")
        parts.append(f"~{d.overlap:.0%} key overlap between inputs")
        return ", ".join(parts)


# The shapes of issue 4; each changes one thing from `unique`.
SHAPES: dict[str, DataSpec] = {
    "unique": DataSpec(),
    "dups": DataSpec(dup_rate=0.1, dup_copies=3),
    "wide": DataSpec(columns=20),
    "string16": DataSpec(key_type="string16"),
}


@dataclass(frozen=True)
class Target:
    """A goal of issue 4: `numerator/denominator` of the median times, compared to `bound`."""

    id: str
    text: str
    shape: str
    rows: int
    k: int
    numerator: str
    denominator: str
    op: str  # ">=" or "<="
    bound: float

    @property
    def ratio(self) -> str:
        return f"{self.numerator}/{self.denominator}"

    def met(self, value: float) -> bool:
        return value >= self.bound if self.op == ">=" else value <= self.bound

    def strategies(self) -> set[str]:
        return {self.numerator, self.denominator}


# local[2], 3 doubles per input, noop sink for all of them.
TARGETS: tuple[Target, ...] = (
    Target("T1", "k=8, 2M rows: multiway >= 2.5x faster than chain",
           "unique", 2_000_000, 8, "chain", "multiway", ">=", 2.5),
    Target("T2", "k=8, 2M rows: multiway >= 1.8x faster than balanced",
           "unique", 2_000_000, 8, "balanced", "multiway", ">=", 1.8),
    Target("T3", "k=8, 2M rows: multiway within 1.3x of floor",
           "unique", 2_000_000, 8, "multiway", "floor", "<=", 1.3),
    Target("T4", "k=4, 2M rows: multiway >= 1.3x faster than chain",
           "unique", 2_000_000, 4, "chain", "multiway", ">=", 1.3),
    Target("T5", "k=16, 1M rows: multiway within 1.3x of floor",
           "unique", 1_000_000, 16, "multiway", "floor", "<=", 1.3),
    Target("T6", "duplicated keys, k=8, 2M rows: multiway >= 2x faster than chain",
           "dups", 2_000_000, 8, "chain", "multiway", ">=", 2.0),
)


def rows_label(rows: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if rows >= size:
            return f"{rows / size:g}{unit}"
    return str(rows)


def target_configs() -> list[Config]:
    """Exactly the measurements the targets need: one config per (shape, rows), its ks, the
    strategies its targets compare (plus floor everywhere, for the profile)."""
    grouped: dict[tuple[str, int], list[Target]] = {}
    for target in TARGETS:
        grouped.setdefault((target.shape, target.rows), []).append(target)
    configs = []
    for (shape, rows), targets in grouped.items():
        wanted = set().union(*(t.strategies() for t in targets)) | {"floor"}
        configs.append(Config(
            name=f"{shape}-{rows_label(rows)}",
            data=replace(SHAPES[shape], rows=rows, columns=3),
            ks=tuple(sorted({t.k for t in targets})),
            strategies=tuple(s for s in STRATEGIES if s in wanted)))
    return configs


@dataclass
class RunSpec:
    """Everything one invocation does; recorded in the JSON so the run can be repeated."""

    preset: str
    configs: list[Config]
    reps: int = 3
    warmup_rows: int = 100_000
    master: str = "local[2]"
    driver_memory: str = "4g"
    shuffle_partitions: int = 200
    aqe: bool = True
    out_dir: Path = WORK_DIR / "results" / "default"
    work_dir: Path = WORK_DIR
    provisional: bool = False
    note: str = ""
    extra_conf: dict[str, str] = field(default_factory=dict)
    operator_rev: str | None = None  # build the extension from this git revision, not the worktree

    def spark_conf(self) -> dict[str, str]:
        """The confs every strategy runs with (static ones included)."""
        return {
            "spark.driver.memory": self.driver_memory,
            "spark.sql.adaptive.enabled": str(self.aqe).lower(),
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            # The hinted query must never run the vanilla plan silently.
            "spark.multijoin.failOnFallback": "true",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.local.dir": str(self.work_dir / "spark-local"),
            "spark.sql.warehouse.dir": str(self.work_dir / "spark-warehouse"),
            **self.extra_conf,
        }

    def to_json(self) -> dict:
        return {
            "preset": self.preset,
            "reps": self.reps,
            "warmup_rows": self.warmup_rows,
            "master": self.master,
            "driver_memory": self.driver_memory,
            "shuffle_partitions": self.shuffle_partitions,
            "aqe": self.aqe,
            "sink": "noop",
            "input_format": "parquet",
            "provisional": self.provisional,
            "note": self.note,
            "extra_conf": self.extra_conf,
            "operator_rev": self.operator_rev,
        }


def _int_list(text: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in text.split(",") if v.strip())
    if not values or any(v < 2 for v in values):
        raise argparse.ArgumentTypeError("a comma-separated list of integers >= 2, e.g. 2,4,8")
    return values


def _names(allowed):
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(v.strip() for v in text.split(",") if v.strip())
        unknown = [n for n in names if n not in allowed]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {', '.join(allowed)}")
        return names
    return parse


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError("a fraction in [0, 1)")
    return value


def _rows(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    value = int(float(text[:-1]) * scale) if scale != 1 else int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("a positive number of rows, e.g. 2000, 500k, 2m")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Time chain / balanced / union_group / multiway / floor side by side on the "
                    "same parquet inputs, in one Spark session (DESIGN.md section 6).")
    p.add_argument("--targets", action="store_true",
                   help="run exactly the measurements of the issue-4 targets (2M rows k=4,8; "
                        "1M rows k=16; duplicated keys k=8) and judge them")
    p.add_argument("--shapes", type=_names(tuple(SHAPES)), default=("unique",),
                   help=f"comma-separated data shapes: {', '.join(SHAPES)} (default: unique)")
    p.add_argument("--rows", type=_rows, help="rows per input, e.g. 2000, 500k, 2m (default 1m)")
    p.add_argument("--k", type=_int_list, help="numbers of inputs, e.g. 2,4,8 (default 2,4,8)")
    p.add_argument("--columns", type=int, help="double columns per input (shape default)")
    p.add_argument("--dup-rate", type=_fraction, help="fraction of keys duplicated (shape default)")
    p.add_argument("--dup-copies", type=int, help="copies of a duplicated key (default 3)")
    p.add_argument("--key-type", choices=KEY_TYPES, help="bigint or string16 (shape default)")
    p.add_argument("--null-rate", type=_fraction, help="fraction of rows with a NULL key (default 0)")
    p.add_argument("--overlap", type=float, help="expected shared fraction of keys between two inputs "
                                                 "(default 0.5)")
    p.add_argument("--scale", type=float,
                   help="multiply every config's rows (e.g. --targets --scale 0.05 for a quick check)")
    p.add_argument("--strategies", type=_names(STRATEGIES),
                   help=f"comma-separated subset of {', '.join(STRATEGIES)} (default: all)")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions per measurement (default 3)")
    p.add_argument("--warmup-rows", type=int, default=100_000,
                   help="rows per input of the untimed warm-up pass over every strategy (0: none)")
    p.add_argument("--shuffle-partitions", type=int, default=200,
                   help="spark.sql.shuffle.partitions (default 200; AQE coalesces them)")
    p.add_argument("--aqe", choices=("on", "off"), default="on", help="adaptive query execution")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="4g")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Spark conf for every strategy (repeatable)")
    p.add_argument("--seed", type=int, help="data generator seed (default 42)")
    p.add_argument("--operator-rev", metavar="REV",
                   help="compile the extension from jvm/ at this git revision (e.g. HEAD) into the "
                        "work dir instead of using the worktree's sources")
    p.add_argument("--out", type=Path, help="output directory (default benchmarks/work/results/<preset>)")
    p.add_argument("--work-dir", type=Path, default=WORK_DIR,
                   help="where inputs are generated and reused (default benchmarks/work)")
    p.add_argument("--provisional", action="store_true",
                   help="mark the results provisional (e.g. the machine was busy)")
    p.add_argument("--note", default="", help="free text recorded with the results")
    return p


def spec_from_args(argv: list[str] | None = None) -> RunSpec:
    p = parser()
    args = p.parse_args(argv)
    overrides = {
        name: value
        for name, value in {
            "rows": args.rows, "columns": args.columns, "dup_rate": args.dup_rate,
            "dup_copies": args.dup_copies, "key_type": args.key_type, "null_rate": args.null_rate,
            "overlap": args.overlap, "seed": args.seed,
        }.items()
        if value is not None
    }
    if args.targets:
        if overrides or args.k or args.strategies or args.shapes != ("unique",):
            p.error("--targets fixes the shapes, sizes, k and strategies; drop the data options")
        preset, configs = "targets", target_configs()
    else:
        preset = "custom" if (overrides or args.k or args.strategies or args.shapes != ("unique",)) \
            else "default"
        configs = [
            Config(name=shape, data=replace(SHAPES[shape], **overrides), ks=args.k or (2, 4, 8),
                   strategies=args.strategies or STRATEGIES)
            for shape in args.shapes
        ]
    if args.scale is not None:
        if args.scale <= 0:
            p.error("--scale must be positive")
        configs = [replace(c, data=replace(c.data, rows=max(1, round(c.data.rows * args.scale))))
                   for c in configs]
        if args.targets:
            configs = [replace(c, name=f"{c.name.split('-')[0]}-{rows_label(c.data.rows)}")
                       for c in configs]
        preset += f"-scale{args.scale:g}"
    for config in configs:
        if config.data.columns < 1 or config.data.dup_copies < 1 or not 0 < config.data.overlap <= 1:
            p.error("columns and dup-copies must be >= 1, overlap in (0, 1]")
    if args.reps < 1:
        p.error("--reps must be >= 1")
    extra = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            p.error(f"--conf takes KEY=VALUE, got {item!r}")
        extra[key.strip()] = value.strip()
    return RunSpec(
        preset=preset,
        configs=configs,
        reps=args.reps,
        warmup_rows=args.warmup_rows,
        master=args.master,
        driver_memory=args.driver_memory,
        shuffle_partitions=args.shuffle_partitions,
        aqe=args.aqe == "on",
        out_dir=(args.out or WORK_DIR / "results" / preset).resolve(),
        work_dir=args.work_dir.resolve(),
        provisional=args.provisional,
        note=args.note,
        extra_conf=extra,
        operator_rev=args.operator_rev,
    )


def config_to_json(config: Config) -> dict:
    return {"name": config.name, "description": config.describe(), "ks": list(config.ks),
            "strategies": list(config.strategies), "data": asdict(config.data)}
