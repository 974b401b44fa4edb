"""Reading costs what changed: an input written in 30 batches, one file a day.

multijoin_scan_size(sql) sizes what a query's scans will read from its plan: a changed_since
filter on the day column keeps one file of 30 (Delta's data skipping, Iceberg's file
statistics), and the change feed (Delta's table_changes, Iceberg's changelog) reads only the
versions or snapshots asked for.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

DAYS = 30


def scan_size(spark, sql: str) -> tuple[int, int, int]:
    literal = sql.replace("\\", "\\\\").replace("'", "\\'")
    row = spark.sql(f"select multijoin_scan_size('{literal}') as size").first().size
    return row.files, row.bytes, row.estimated_scans


def write_daily(spark, table: str, table_format: str, days: range) -> None:
    """One commit a day, each one file of 100 rows whose `day` is that day."""
    for day in days:
        spark.sql(f"insert into {table} select id as k, {day} as day, id * 2 as v "
                  f"from range({day * 100}, {day * 100 + 100}, 1, 1)")


def create_daily(spark, table: str, table_format: str) -> None:
    properties = " tblproperties ('delta.enableChangeDataFeed' = 'true')" if table_format == "delta" else ""
    spark.sql(f"create table {table} (k bigint, day int, v bigint) using {table_format}{properties}")
    write_daily(spark, table, table_format, range(DAYS))


def file_bytes(spark, table: str, where: str = "true") -> dict[int, int]:
    """{day: bytes of the one file holding that day's rows}, for the days `where` selects."""
    files = {}
    for row in spark.sql(f"select distinct day, input_file_name() as path from {table} where {where}").collect():
        assert row.day not in files, f"day {row.day} is in more than one file"
        files[row.day] = Path(unquote(urlparse(row.path).path)).stat().st_size
    return files


def snapshots(spark, table: str) -> list[int]:
    return [row.snapshot_id for row in spark.sql(f"select snapshot_id from {table}.snapshots order by committed_at").collect()]


def delta_version(spark, table: str) -> int:
    return spark.sql(f"describe history {table} limit 1").first().version


@pytest.fixture(scope="module")
def daily(spark, table_format, tmp_path_factory) -> str:
    spark.sql("create database if not exists scan_size")
    table = "scan_size.daily"
    spark.sql(f"drop table if exists {table}")
    create_daily(spark, table, table_format)
    yield table
    spark.sql(f"drop table if exists {table}")


def test_the_whole_input_is_thirty_files(spark, daily):
    files = file_bytes(spark, daily)
    assert len(files) == DAYS
    assert scan_size(spark, f"select * from {daily}") == (DAYS, sum(files.values()), 0)


def test_changed_since_skips_the_files_older_than_the_mark(spark, daily):
    """The changed rows' filter as the changed_keys materialization writes it (`_mj_newer_than`):
    the files whose day statistics are all at or below the mark are not read."""
    last = file_bytes(spark, daily, f"day = {DAYS - 1}")
    assert scan_size(spark, f"select * from {daily} where (day > cast('{DAYS - 2}' as int) or day is null)") == (
        1, last[DAYS - 1], 0)


def test_nothing_newer_than_the_mark_reads_nothing(spark, daily):
    assert scan_size(spark, f"select * from {daily} where (day > cast('{DAYS - 1}' as int) or day is null)") == (0, 0, 0)


def test_the_change_feed_reads_the_versions_since_the_mark(spark, table_format, daily):
    files = file_bytes(spark, daily)
    if table_format == "delta":
        version = delta_version(spark, daily)
        assert scan_size(spark, f"select * from table_changes('{daily}', {version}, {version})") == (
            1, files[DAYS - 1], 0)
        assert scan_size(spark, f"select * from table_changes('{daily}', {version - 2}, {version})") == (
            3, sum(files[day] for day in range(DAYS - 3, DAYS)), 0)
    else:
        ids = snapshots(spark, daily)
        for start, days in ((ids[-2], [DAYS - 1]), (ids[-4], [DAYS - 3, DAYS - 2, DAYS - 1])):
            spark.sql(f"call spark_catalog.system.create_changelog_view(table => '{daily}', options => "
                      f"map('start-snapshot-id', '{start}', 'end-snapshot-id', '{ids[-1]}'), changelog_view => 'daily_changes')")
            try:
                assert scan_size(spark, "select * from daily_changes") == (len(days), sum(files[d] for d in days), 0)
            finally:
                spark.catalog.dropTempView("daily_changes")
