"""The layout benchmark (benchmarks/layout.py) at its smallest, in this process's session: it
writes the bucketed and the unbucketed Iceberg tables, runs every strategy, and they agree on the
rows; the multi-join over the bucketed tables reads every input grouped by key and shuffles
nothing, the one over the unbucketed tables shuffles every input, the vanilla chain is no
multi-join. Nothing about time: benchmarks/README.md gives the sizes for that. Runs with
`--table-format iceberg` (the benchmark's tables are in the `ice` catalog either way)."""

from __future__ import annotations

import pytest

from benchmarks import layout


def test_the_layout_benchmark_runs_and_the_bucketed_multi_join_shuffles_nothing(spark, table_format, tmp_path):
    if table_format != "iceberg":
        pytest.skip("run once per Spark line, with the Iceberg pipelines")
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    results = layout.main(["--rows", "2000", "--k", "3", "--buckets", "4", "--reps", "1", "--warmup", "0",
                           "--work-dir", str(tmp_path / "work"), "--out", str(tmp_path / "out")], spark=spark)
    assert spark.conf.get("spark.sql.shuffle.partitions") == partitions  # the session's confs are back
    (size,) = results["sizes"]
    measured = size["strategies"]
    bucketed, unbucketed, chain = (measured[s] for s in ("multiway_bucketed", "multiway_unbucketed", "chain_bucketed"))
    assert bucketed["multijoin"] and bucketed["grouped_by_key"], bucketed
    assert bucketed["shuffle_bytes"] == 0 and bucketed["exchanges"] == 0, bucketed
    assert unbucketed["multijoin"] and not unbucketed["grouped_by_key"], unbucketed
    assert unbucketed["exchanges"] == 3 and unbucketed["shuffle_bytes"] > 0, unbucketed
    assert not chain["multijoin"] and chain["shuffle_bytes"] > 0, chain
    report = (tmp_path / "out" / "results.md").read_text()
    assert "multiway on bucketed inputs shuffles 0 bytes | 0 bytes | yes" in report, report
