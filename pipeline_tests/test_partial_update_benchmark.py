"""The partial-update benchmark (benchmarks/partial_update.py) at its smallest, in this process's
session: its history, both change shapes and the full rebuilds run to the end (the benchmark
itself fails when a refresh does not take the partial-update path, or when the refreshed table's
row count and hash sums differ from the rebuild's), and the refreshed table equals the full
rebuild of the same model row for row. Nothing about time: the sizes of benchmarks/README.md
are for that."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import partial_update


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
