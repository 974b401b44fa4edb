"""The partial-update benchmark (benchmarks/partial_update.py) at its smallest, in this process's
session: its history, both change shapes and the full rebuilds run to the end (the benchmark
itself fails when a refresh does not take the partial-update path, or when the refreshed table's
row count and hash sums differ from the rebuild's), and the refreshed table equals the full
rebuild of the same model row for row; and the same with the model in the merge-on-read layout,
its readers' scans and its compaction. Nothing about time: the sizes of benchmarks/README.md are
for that."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from benchmarks import partial_update
from benchmarks.run import drop_schema


def test_the_partial_update_benchmark_runs_and_equals_a_full_rebuild(spark, table_format, tmp_path):
    out = tmp_path / "results"
    results = partial_update.main(
        ["--rows", "300", "--k", "4", "--days", "2", "--reps", "1", "--table-format", table_format,
         "--keep", "--work-dir", str(tmp_path / "work"), "--out", str(out)], spark=spark)
    (size,) = results["sizes"]
    try:
        assert sorted(size["shapes"]) == ["all_inputs", "one_input"]
        for shape, (measured,) in size["shapes"].items():
            refresh = measured["refresh"]
            assert refresh["path"] == "partial update", (shape, refresh["log"])
            # The day's rows, and the rows of the day before that tie the mark of the inputs read
            # through ds.
            assert 0 < measured["rows_written"] <= refresh["changed_keys"], (shape, measured)
            assert measured["equals_rebuild"] and measured["rebuild"]["path"] == "full build"
            assert refresh["input_bytes"] > 0 and measured["rebuild"]["shuffle_write_bytes"] > 0

        def rows(table: str) -> Counter:
            return Counter(tuple(row) for row in spark.sql(f"select * from {size['schema']}.{table}").collect())

        refreshed = rows("wide")
        assert refreshed == rows("wide_rebuild")
        # Every key of every input, each with its presence column per input.
        assert len(refreshed) == measured["rows"] > 300
        assert json.loads((out / "results.json").read_text())["sizes"][0]["rows"] == 300
        markdown = (out / "results.md").read_text()
        assert "## Targets" in markdown and "## Notes" in markdown and "not measured (one size)" in markdown
    finally:
        spark.sql(f"drop database if exists {size['schema']} cascade")


def test_the_merge_on_read_benchmark_runs_and_its_view_equals_a_full_rebuild(spark, table_format, tmp_path):
    """The same harness with the model in the merge-on-read layout, at its smallest: the refresh
    takes the partial-update path, the view equals the full rebuild's table, a reader's scan of
    each and its planning are timed, the same model in the default layout is refreshed beside it,
    a last day fills the delta rows to the threshold for the reader's target, the compaction at
    the end leaves what readers see as it was, and two small refreshes follow (the last checked
    against a rebuild)."""
    out = tmp_path / "results"
    results = partial_update.main(
        ["--rows", "300", "--k", "4", "--days", "2", "--reps", "1", "--shapes", "one_input", "--layout", "merge_on_read",
         "--small-refreshes", "2", "--small-rows", "5",
         "--table-format", table_format, "--keep", "--work-dir", str(tmp_path / "work"), "--out", str(out)], spark=spark)
    (size,) = results["sizes"]
    try:
        (measured,) = size["shapes"]["one_input"]
        assert measured["refresh"]["path"] == "partial update" and measured["equals_rebuild"], measured["refresh"]["log"]
        assert measured["reader_scan_seconds"] > 0 and measured["table_scan_seconds"] > 0
        # The warm scans, and each query's planning within them.
        assert all(measured[f"{who}_{what}_warm_seconds"] > 0 for who in ("reader", "table") for what in ("scan", "planning")), measured
        assert 0 < measured["delta_share"] < 0.03 and not measured["compacted"], measured
        # Today's refresh beside it: the same model in the default layout, refreshed the same day
        # (the benchmark checks its rows against the rebuild's too).
        assert measured["wide_table_layout_refresh"]["path"] == "partial update", measured
        # The threshold day: one more day of t1 fills the delta rows to just under the share at
        # which a run compacts, with no compaction, and readers are timed there.
        threshold = size["at_threshold"]
        assert threshold["equals_rebuild"] and threshold["refresh"]["path"] == "partial update", threshold["refresh"]["log"]
        assert measured["delta_share"] < threshold["delta_share"] < 0.03 and not threshold["compacted"], threshold
        assert threshold["reader_scan_warm_seconds"] > 0 and threshold["table_scan_warm_seconds"] > 0, threshold
        # A compaction's step as a run folds one: some key buckets, part of the delta rows.
        step = size["compaction_step"]
        assert step["buckets"] and step["seconds"] > 0 and step["statement_seconds"] > 0, step
        assert 0 < step["delta_share_after"] < step["delta_share"], step
        compaction = size["compaction"]
        assert compaction["delta_share"] > 0 and compaction["delta_share_after"] == 0 and compaction["seconds"] > 0, compaction
        # Where its time went: its statement by the dbt log, its write by Spark.
        assert any("replace where dbt_multijoin_seq" in statement for _, statement in compaction["statements"]), compaction
        assert compaction["executions"] and all(seconds > 0 for seconds, _ in compaction["executions"]), compaction
        view = spark.sql(f"show create table {size['schema']}.wide").first()[0]
        assert view.lstrip().lower().startswith("create view"), view
        # Two small refreshes after the compaction (which left no delta row), today's refresh of
        # each beside; the last is checked against a full rebuild, with a reader's scans and the
        # files that hold the delta rows.
        first, last = size["small_refreshes"]
        for small in (first, last):
            assert small["seconds"] > 0 and small["wide_table_layout_refresh_seconds"] > 0 and small["changed_keys"] > 0, small
            assert not small["compacted"] and 0 < small["delta_share"] < 0.03, small
        assert first["delta_share"] < last["delta_share"]
        assert "equals_rebuild" not in first and last["equals_rebuild"] and last["rows"] == measured["rows"], last
        assert last["reader_scan_warm_seconds"] > 0 and last["delta_files"] > 0, last
        assert ("delete_files" in last) == (table_format == "iceberg"), last
        report = (out / "results.md").read_text()
        assert "## Merge-on-read: readers and compaction" in report
        assert re.search(r"\| 300 \| 1-2 \| \d+ \| \d+\.\d\d \| \d+\.\d\d \|", report.split("## Many small refreshes")[1]), report
        assert "## Where the compaction's time goes, 300 keys per input" in report
        assert re.search(r"\| a reader's warm full scan, view ÷ the rebuilt table, delta at the threshold <= 1.25 \| at 300 \| \d+\.\d\d (met|MISSED) \(delta rows \d\.\d% of the base\) \|", report), report
        assert re.search(r"\| compaction ÷ the default layout's refresh at 16M <= 1 \| a run's step \| \d+\.\d\d (met|MISSED) \(at 300\) \|", report), report
        assert re.search(r"\| compaction ÷ the default layout's refresh at 16M <= 1 \| the whole store, on demand \| \d+\.\d\d \(at 300\), after the step", report), report
    finally:
        spark.sql(f"drop database if exists {size['schema']} cascade")


def test_a_measured_size_is_dropped_with_its_files(spark, table_format, tmp_path, request):
    """What the harnesses do after a size (without --keep): every table dropped with its files,
    views and the schema with them, so that the next size has the disk; the session's temporary
    views (a harness's inputs, which the catalog lists with the schema's tables) left alone."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path, table_format)
    spark.sql(f"create table {project.table('t')} using {table_format} as select 1 as k")
    spark.sql(f"create view {project.table('v')} as select * from {project.table('t')}")
    spark.range(1).createOrReplaceTempView("a_harness_input")
    request.addfinalizer(lambda: spark.catalog.dropTempView("a_harness_input"))
    location = spark.sql(f"describe detail {project.table('t')}").first()["location"] if table_format == "delta" else \
        spark.sql(f"select file_path from {project.table('t')}.files").first()[0]
    path = Path(location.removeprefix("file:"))
    assert path.exists(), path
    drop_schema(spark, project, table_format)
    assert project.schema not in [row.namespace for row in spark.sql("show databases").collect()]
    assert not path.exists(), path
    assert spark.catalog.tableExists("a_harness_input")
