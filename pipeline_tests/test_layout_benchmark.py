"""The layout benchmarks at their smallest, in this process's session. benchmarks/layout.py: it
writes the bucketed and the unbucketed Iceberg tables, runs every strategy, and they agree on the
rows; the multi-join over the bucketed tables reads every input grouped by key and shuffles
nothing, the one over the unbucketed tables shuffles every input, the vanilla chain is no
multi-join. benchmarks/bucketed_build.py: its dbt builds agree on the rows, and the build of a
table bucketed like its inputs shuffles nothing, write and GROUP BY included. Nothing about time:
benchmarks/README.md gives the sizes for that. Runs with `--table-format iceberg`."""

from __future__ import annotations

import pytest

from benchmarks import bucketed_build, layout


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


def test_the_bucketed_build_benchmark_runs_and_its_grouped_write_shuffles_nothing(spark, table_format, tmp_path):
    if table_format != "iceberg":
        pytest.skip("run once per Spark line, with the Iceberg pipelines")
    results = bucketed_build.main(["--rows", "2000", "--k", "2", "--buckets", "4", "--join-types", "full",
                                   "--work-dir", str(tmp_path / "work"), "--out", str(tmp_path / "out")], spark=spark)
    (size,) = results["sizes"]
    builds = size["builds"]
    # The zero-shuffle target is Spark 4's (docs/table_formats.md); this harness runs on the
    # first pipeline line, Spark 3.5, where a build of such a model still shuffles a few KiB
    # outside its write (its plan has no Exchange): there the rows, the plan and the write's log
    # are checked.
    spark4 = int(spark.version.split(".")[0]) >= 4
    for model in ("full_a", "full_a_group"):
        assert builds[model]["exchanges"] == 0, builds[model]
        assert builds[model]["shuffle_bytes"] == 0 or not spark4, builds[model]
        assert "written with no redistribution" in builds[model]["write"], builds[model]
    assert builds["full_a_before"]["exchanges"] > 0 and builds["full_a_before"]["shuffle_bytes"] > 0
    assert "own write distribution applies" in builds["full_a_before"]["write"], builds["full_a_before"]
    report = (tmp_path / "out" / "results.md").read_text()
    assert ("full a: 0 shuffle bytes, write included | 0 bytes | yes" in report) or not spark4, report
