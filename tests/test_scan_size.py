"""multijoin_scan_size(sql): what a query's scans will read, from its plan, on parquet tables; and
multijoin_cached_scan_size(name): what they read when a cached view's rows were computed.

The changed_keys materialization logs it for each input's changes (docs/dbt_package.md); Delta's
data skipping and change feed and Iceberg's changelog are covered in
pipeline_tests/test_scan_size.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException, IllegalArgumentException

DAYS = 30


def scan_size(spark, sql: str) -> tuple[int, int, int]:
    literal = sql.replace("\\", "\\\\").replace("'", "\\'")
    row = spark.sql(f"select multijoin_scan_size('{literal}') as size").first().size
    return row.files, row.bytes, row.estimated_scans


def data_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.parquet"))


@pytest.fixture(scope="module")
def daily(spark, tmp_path_factory) -> dict[str, Path]:
    """Two parquet tables written in 30 batches, one file a day: `daily_parts` partitioned by
    day, `daily_flat` not."""
    root = tmp_path_factory.mktemp("daily")
    for name, partitioned in (("daily_parts", True), ("daily_flat", False)):
        for day in range(DAYS):
            frame = spark.range(day * 100, day * 100 + 100, numPartitions=1).selectExpr("id AS k", f"{day} AS day")
            writer = frame.write.mode("append").format("parquet")
            (writer.partitionBy("day") if partitioned else writer).save(str(root / name))
        spark.sql(f"create or replace temporary view {name} as select * from parquet.`{root / name}`")
    yield {"daily_parts": root / "daily_parts", "daily_flat": root / "daily_flat"}
    for name in ("daily_parts", "daily_flat"):
        spark.catalog.dropTempView(name)


def test_the_whole_table_is_every_file(spark, daily):
    files = data_files(daily["daily_parts"])
    assert len(files) == DAYS
    assert scan_size(spark, "select * from daily_parts") == (DAYS, sum(f.stat().st_size for f in files), 0)


def test_partition_pruning_reads_one_day_of_thirty(spark, daily):
    last = data_files(daily["daily_parts"] / f"day={DAYS - 1}")
    assert len(last) == 1
    assert scan_size(spark, f"select * from daily_parts where day > {DAYS - 2}") == (1, last[0].stat().st_size, 0)


def test_nothing_above_the_mark_reads_nothing(spark, daily):
    assert scan_size(spark, f"select * from daily_parts where day > {DAYS}") == (0, 0, 0)


def test_row_groups_are_skipped_at_read_time_and_not_counted(spark, daily):
    """Plain parquet has no file statistics outside the files: every file is opened (its footer
    then skips the row groups), so every file counts."""
    files = data_files(daily["daily_flat"])
    assert scan_size(spark, f"select * from daily_flat where day > {DAYS - 2}") == (
        DAYS, sum(f.stat().st_size for f in files), 0)


def test_every_scan_of_a_query_counts(spark, daily):
    last = data_files(daily["daily_parts"] / f"day={DAYS - 1}")[0].stat().st_size
    first = data_files(daily["daily_parts"] / "day=0")[0].stat().st_size
    assert scan_size(
        spark,
        f"select k from daily_parts where day = {DAYS - 1} union all select k from daily_parts where day = 0",
    ) == (2, last + first, 0)


def test_rows_in_memory_read_no_file(spark, daily):
    assert scan_size(spark, "select 1 as one") == (0, 0, 0)
    assert scan_size(spark, "select * from range(10)") == (0, 0, 0)
    assert scan_size(spark, "select * from values (1, 'a'), (2, 'b') as t(k, v)") == (0, 0, 0)
    spark.sql("cache table daily_cached as select * from daily_parts where day = 3")
    try:
        assert scan_size(spark, "select * from daily_cached") == (0, 0, 0)
    finally:
        spark.sql("uncache table daily_cached")
        spark.catalog.dropTempView("daily_cached")


def test_the_query_is_planned_not_run(spark, daily):
    """A query that would fail when it runs is sized all the same."""
    files, _, _ = scan_size(spark, "select assert_true(k < 0) from daily_parts where day = 5")
    assert files == 1


def test_a_command_is_refused_not_run(spark, daily, tmp_path):
    spark.sql(f"create table scan_size_kept (k int) using parquet location '{tmp_path / 'kept'}'")
    try:
        with pytest.raises((IllegalArgumentException, AnalysisException), match="sizes a query, not a command"):
            scan_size(spark, "drop table scan_size_kept")
        with pytest.raises((IllegalArgumentException, AnalysisException), match="sizes a query, not a command"):
            scan_size(spark, "insert into scan_size_kept values (1)")
        assert spark.table("scan_size_kept").count() == 0
    finally:
        spark.sql("drop table scan_size_kept")


def test_the_argument_is_one_constant_string(spark):
    with pytest.raises((IllegalArgumentException, AnalysisException), match="takes one argument"):
        spark.sql("select multijoin_scan_size(concat('select ', id)) from range(1)").collect()
    with pytest.raises((IllegalArgumentException, AnalysisException), match="takes one argument"):
        spark.sql("select multijoin_scan_size()").collect()


@pytest.mark.parametrize("adaptive", ["true", "false"])
def test_a_cached_view_is_sized_by_the_plan_that_ran(spark, daily, adaptive):
    """The same files and bytes as the query's own plan gives, through adaptive execution's
    stages (a window's shuffle, a join of two days), without planning the query again."""
    queries = [
        f"select * from daily_parts where day > {DAYS - 3}",
        "select k, day, row_number() over (partition by day order by k desc) as n from daily_flat where k >= 2900",
        f"select a.k, b.day from daily_parts as a join daily_parts as b on a.k = b.k where a.day = 0 and b.day > {DAYS - 2}",
    ]
    spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    try:
        for index, sql in enumerate(queries):
            view = f"cached_size_{index}"
            # Before it is cached: the query then reads the cache.
            planned = scan_size(spark, sql)
            spark.sql(f"cache table {view} as {sql}")
            try:
                row = spark.sql(f"select multijoin_cached_scan_size('{view}') as size").first().size
                assert (row.files, row.bytes, row.estimated_scans) == planned, sql
                assert row.files > 0, sql
            finally:
                spark.sql(f"drop view {view}")
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")


def test_a_view_not_cached_is_refused(spark, daily):
    spark.sql("create or replace temporary view not_cached as select * from daily_flat")
    try:
        with pytest.raises((IllegalArgumentException, AnalysisException), match="not_cached is not cached"):
            spark.sql("select multijoin_cached_scan_size('not_cached')").collect()
        with pytest.raises((IllegalArgumentException, AnalysisException), match="takes one argument"):
            spark.sql("select multijoin_cached_scan_size(concat('x', id)) from range(1)").collect()
    finally:
        spark.catalog.dropTempView("not_cached")
