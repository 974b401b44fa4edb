"""Input generation: each input written once as parquet, then read back as the benchmark's input.

Input i (1-based) of a DataSpec is a function of the spec and i only, so inputs are generated
lazily, reused across runs and across k (k=8 reads inputs 1..8 of the same directory), and every
strategy of a run reads the same files.

- Keys: a universe of rows/overlap ids; input i keeps each id with probability `overlap`
  (a hash of the id, i and the seed), so two inputs share ~overlap of their keys. The key is the
  id multiplied by an odd constant modulo 2^64 (a bijection, so keys stay unique), which also
  scatters the key order in the files: no strategy gets pre-sorted runs for free.
- string16: the same 64-bit value as 16 hexadecimal characters (unique, random-looking prefixes).
- Duplicates: a `dup_rate` fraction of each input's keys (chosen independently per input) appear
  `dup_copies` times, each copy with its own column values.
- NULL keys: a `null_rate` fraction of rows get a NULL key.
- Columns: `columns` doubles per input, named c<i>_<j>, uniformly random.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.config import DataSpec

GENERATOR_VERSION = 1  # bump when the generated data changes
_SCRAMBLE = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed long: odd, so a bijection mod 2^64
_FILES_PER_INPUT = 2


def dataset_dir(work_dir: Path, spec: DataSpec) -> Path:
    fingerprint = json.dumps({"v": GENERATOR_VERSION, **asdict(spec)}, sort_keys=True)
    digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:12]
    return work_dir / "data" / f"{spec.key_type}-{spec.rows}-{digest}"


def input_columns(i: int, spec: DataSpec) -> list[str]:
    return [f"c{i}_{j}" for j in range(spec.columns)]


def _input_df(spark, spec: DataSpec, i: int):
    from pyspark.sql import functions as F

    universe = max(1, round(spec.rows / spec.overlap))
    seed = spec.seed
    ids = spark.range(0, universe, 1, _FILES_PER_INPUT)
    keep_per_million = int(round(spec.overlap * 1_000_000))
    df = ids.where(F.expr(f"pmod(xxhash64(id, {i}, {seed}), 1000000) < {keep_per_million}"))
    if spec.dup_rate > 0 and spec.dup_copies > 1:
        dup_per_million = int(round(spec.dup_rate * 1_000_000))
        df = df.withColumn("copy", F.explode(F.expr(
            f"sequence(1, CASE WHEN pmod(xxhash64(id, {i}, {seed}, 1), 1000000) < {dup_per_million} "
            f"THEN {spec.dup_copies} ELSE 1 END)"))).drop("copy")
    scrambled = f"(id * CAST({_SCRAMBLE} AS BIGINT))"
    key = scrambled if spec.key_type == "bigint" else f"lpad(hex({scrambled}), 16, '0')"
    if spec.null_rate > 0:
        null_per_million = int(round(spec.null_rate * 1_000_000))
        key = f"CASE WHEN pmod(xxhash64(id, {i}, {seed}, 2), 1000000) < {null_per_million} THEN NULL ELSE {key} END"
    columns = [F.expr(key).alias("k")] + [
        F.rand(seed * 100_003 + i * 1_009 + j).alias(name)
        for j, name in enumerate(input_columns(i, spec))
    ]
    return df.select(*columns)


def ensure_inputs(spark, work_dir: Path, spec: DataSpec, count: int, log=None) -> dict:
    """Generates the missing inputs 1..count of `spec`; returns {"dir", "rows": [rows per input]}."""
    log = log or (lambda message: print(message, file=sys.stderr, flush=True))
    directory = dataset_dir(work_dir, spec)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "spec.json").write_text(json.dumps({"v": GENERATOR_VERSION, **asdict(spec)}, indent=2))
    rows = []
    # The scrambled key relies on wrapping 64-bit multiplication: make sure ANSI mode is off.
    previous = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        for i in range(1, count + 1):
            path = directory / f"t{i}"
            meta = directory / f"t{i}.json"
            if not (meta.exists() and (path / "_SUCCESS").exists()):
                started = time.perf_counter()
                _input_df(spark, spec, i).write.mode("overwrite").parquet(str(path))
                written = spark.read.parquet(str(path)).count()
                meta.write_text(json.dumps({"rows": written}))
                log(f"  generated {path.relative_to(work_dir)}: {written:,} rows "
                    f"in {time.perf_counter() - started:.1f} s")
            rows.append(json.loads(meta.read_text())["rows"])
    finally:
        spark.conf.set("spark.sql.ansi.enabled", previous)
    return {"dir": str(directory), "rows": rows}


def register_inputs(spark, work_dir: Path, spec: DataSpec, k: int) -> list[str]:
    """Temp views t1..tk over the parquet files of inputs 1..k; returns their names."""
    directory = dataset_dir(work_dir, spec)
    names = []
    for i in range(1, k + 1):
        name = f"t{i}"
        spark.read.parquet(str(directory / name)).createOrReplaceTempView(name)
        names.append(name)
    return names
