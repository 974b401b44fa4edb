"""What is measured: the data shapes (parquet inputs generated once, reused) and the strategies
that compute the same multi-join (the join semantics: docs/semantics.md).

Shapes (k inputs t1..tk of `rows` rows each, key `k`, 3 doubles per input):
- `unique`: each input keeps every id of a universe of 2 x rows ids with probability 1/2, so two
  inputs share about half their keys; FULL joins.
- `dups`: `unique` where 10% of each input's keys appear 3 times; FULL joins.
- `left`: a driver t0 holding 5% of the keys, LEFT-joined to k inputs that hold every key.
- `left_compact`: `left` as a user wrote it: the key is the id itself, the driver has one bigint
  column (`id % 100`) and every other input one bigint column. Its parquet driver compresses to
  about 4 bytes a row, so its file size / 8 is half its row count: the case where a bloom filter
  sized from the file size lets through far more rows than configured.
- `grouped`: the `unique` inputs and FULL join, then GROUP BY the coalesced key (a count and one
  sum per input): what a FULL multi-join saves when it reports its output partitioning.
- `left_skewed`: a hot key. The driver t0 holds every key of `rows` once plus `rows` more rows of
  one key, in 16 files; k inputs hold every key once; LEFT joins. Measured under confs that let Spark's AQE
  split the hot partition of the vanilla chain (SHAPE_CONFS; the plan records whether it did).
Except in `left_compact`, the key is the id times an odd 64-bit constant: unique, and scattered in
the files, so no strategy gets pre-sorted input for free.
"""

from __future__ import annotations

from functools import reduce
from pathlib import Path

from testkit.chains import join_chain_sql

FULL_STRATEGIES = ("chain", "balanced", "union_group", "multiway", "floor")
SHAPES = {  # shape -> the strategies that compute its join (or, for floor, bound its cost)
    "unique": FULL_STRATEGIES + ("multiway_concat",),
    # GROUP BY k with max() merges duplicated keys: it is the FULL join only for unique keys.
    "dups": tuple(s for s in FULL_STRATEGIES if s != "union_group"),
    # The vanilla LEFT chain runs with Spark's own runtime filter at its defaults.
    "left": ("chain", "multiway"),
    "left_compact": ("chain", "multiway"),
    "grouped": ("chain", "multiway", "multiway_unreported"),
    "left_skewed": ("chain", "multiway"),
}
DRIVEN_SHAPES = ("left", "left_compact", "left_skewed")  # t0 drives a LEFT chain
# Confs every strategy of a shape runs under.
SHAPE_CONFS = {
    # AQE splits a skewed partition of a sort-merge join only if it is 5x the median and over a
    # threshold (256 MB by default; the hot partition is ~40 MB at 2M rows), into pieces of the
    # advisory size (64 MB) cut between map tasks' blocks (a file split is 128 MB: the driver is
    # read by 2 map tasks), and only where the split adds no shuffle, which in a chain of joins on
    # the driver's key it does (a split join's output loses the driver's partitioning). All four
    # are lifted, so the vanilla chain gets AQE's split at every join.
    "left_skewed": {
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "16m",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16m",
        "spark.sql.files.maxPartitionBytes": "16m",
        "spark.sql.adaptive.forceOptimizeSkewedJoin": "true",
    },
}
# Strategies that run the multiway SQL under confs of their own, set while they are measured.
STRATEGY_CONFS = {
    # The operator without reporting its output partitioning: GROUP BY k shuffles again.
    "multiway_unreported": {"spark.multijoin.fullOuter.outputPartitioning": "false"},
    # The operator outside whole-stage codegen: it concatenates each combination's rows into one,
    # which the projection above copies again (each output row written twice).
    "multiway_concat": {"spark.multijoin.codegen.enabled": "false"},
}
STRATEGIES = FULL_STRATEGIES + tuple(STRATEGY_CONFS)
_DATA_OF = {"grouped": "unique"}  # shapes that read another shape's inputs
COLUMNS = 3
SCRAMBLE = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed long: odd, a bijection mod 2^64
_DATA_VERSION = 2  # bump when the generated data changes: old directories are then not reused


def columns(shape: str, i: int) -> list[str]:
    return [f"c{i}_{j}" for j in range(COLUMNS if i > 0 and shape != "left_compact" else 1)]


def _input_df(spark, shape: str, rows: int, i: int, seed: int = 0):
    """Input i (t0 is a LEFT shape's driver): a function of (shape, rows, i, seed) only. Seed 0
    is the data of the committed results; another seed draws a fresh data set of the same shape:
    other keys in each input, another 5% of them in the driver, another hot key, other values."""
    salt = f", {seed}" if seed else ""
    driver_keys = f"pmod(xxhash64(id{salt}), 20) = 0" if seed else "pmod(id, 20) = 0"
    if shape == "left_compact":
        ids = spark.range(rows).where(driver_keys) if i == 0 else spark.range(rows)
        return ids.selectExpr("id AS k", "id % 100 AS c0_0" if i == 0 else f"id * {i} AS c{i}_0")
    if shape == "left":
        ids = spark.range(rows).where(driver_keys) if i == 0 else spark.range(rows)
    elif shape == "left_skewed":
        # The hot key is one id's: `rows` more driver rows of it, spread over 16 files as a big
        # table's rows are (AQE splits a partition only between map tasks' blocks).
        hot = 1 + seed % rows
        ids = (spark.range(2 * rows).selectExpr(f"IF(id < {rows}, id, {hot}) AS id").repartition(16)
               if i == 0 else spark.range(rows))
    else:
        ids = spark.range(2 * rows).where(f"pmod(xxhash64(id, {i}{salt}), 2) = 0")
        if shape == "dups":
            ids = ids.selectExpr(
                f"explode(sequence(1, IF(pmod(xxhash64(id, {i}, 1{salt}), 10) = 0, 3, 1))) AS copy", "id")
    values = [f"rand({seed * 10_000 + i * 100 + j}) AS {name}" for j, name in enumerate(columns(shape, i))]
    return ids.selectExpr(f"id * CAST({SCRAMBLE} AS BIGINT) AS k", *values)


def register_inputs(spark, work_dir: Path, shape: str, rows: int, k: int, seed: int = 0) -> dict[str, int]:
    """Temp views over inputs of the shape (generated on first use); returns rows per view."""
    shape = _DATA_OF.get(shape, shape)
    directory = work_dir / "data" / f"v{_DATA_VERSION}-{shape}-{rows}{f'-seed{seed}' if seed else ''}"
    # The scrambled key relies on wrapping 64-bit multiplication (Spark 4 turns ANSI mode on).
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    counts = {}
    try:
        for i in range(0 if shape in DRIVEN_SHAPES else 1, k + 1):
            path = directory / f"t{i}"
            if not (path / "_SUCCESS").exists():
                _input_df(spark, shape, rows, i, seed).write.mode("overwrite").parquet(str(path))
            df = spark.read.parquet(str(path))
            df.createOrReplaceTempView(f"t{i}")
            counts[f"t{i}"] = df.count()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)
    return counts


def chain_sql(shape: str, k: int, hint: bool = False) -> str:
    """The flat chain the hint rewrites (testkit.chains): FULL, input j joins on the coalesce of
    the keys before it; LEFT (the driven shapes), every input joins on the driver t0's key."""
    driven = shape in DRIVEN_SHAPES
    first = 0 if driven else 1
    views = [f"t{i}" for i in range(first, k + 1)]
    values = [columns(shape, i) for i in range(first, k + 1)]
    return join_chain_sql("left" if driven else "full", views, ["k"], values, hint=hint)


def balanced_sql(shape: str, lo: int, hi: int) -> str:
    """Inputs lo..hi-1 FULL-joined as a balanced tree; each node outputs coalesce(l.k, r.k)."""
    if hi - lo == 1:
        return f"SELECT * FROM t{lo}"
    mid = (lo + hi) // 2
    values = [f"{side}.{c}" for side, (a, b) in (("l", (lo, mid)), ("r", (mid, hi)))
              for i in range(a, b) for c in columns(shape, i)]
    return (f"SELECT coalesce(l.k, r.k) AS k, {', '.join(values)} FROM ({balanced_sql(shape, lo, mid)}) l "
            f"FULL OUTER JOIN ({balanced_sql(shape, mid, hi)}) r ON l.k = r.k")


def union_group_sql(shape: str, k: int) -> str:
    """UNION ALL of every input padded with NULLs, then GROUP BY k with max()."""
    every = [c for i in range(1, k + 1) for c in columns(shape, i)]
    branches = [f"SELECT k, " + ", ".join(c if c in columns(shape, i) else f"CAST(NULL AS DOUBLE) AS {c}"
                                           for c in every) + f" FROM t{i}" for i in range(1, k + 1)]
    return (f"SELECT k, {', '.join(f'max({c}) AS {c}' for c in every)} "
            f"FROM ({' UNION ALL '.join(branches)}) u GROUP BY k")


def grouped_sql(join_sql: str, k: int) -> str:
    """GROUP BY the join's key: a count and the sum of each input's first column."""
    sums = ", ".join(f"sum(c{i}_0) AS s{i}" for i in range(1, k + 1))
    return f"SELECT k, count(*) AS n, {sums} FROM ({join_sql}) j GROUP BY k"


def build(spark, strategy: str, shape: str, k: int):
    """The DataFrame of one strategy. `floor` is not a join: every input shuffled by key once and
    sorted, the work no strategy avoids (repartition without a number, like the joins' shuffles)."""
    if strategy == "floor":
        parts = [spark.table(f"t{i}").repartition("k").sortWithinPartitions("k") for i in range(1, k + 1)]
        return reduce(lambda a, b: a.unionAll(b), parts)
    sql = {"chain": lambda: chain_sql(shape, k), "multiway": lambda: chain_sql(shape, k, hint=True),
           "multiway_unreported": lambda: chain_sql(shape, k, hint=True),
           "multiway_concat": lambda: chain_sql(shape, k, hint=True),
           "balanced": lambda: balanced_sql(shape, 1, k + 1), "union_group": lambda: union_group_sql(shape, k)}
    query = sql[strategy]()
    return spark.sql(grouped_sql(query, k) if shape == "grouped" else query)
