"""Reading costs what changed: an input of 30 files, one a day, the last days committed a day at a time.

multijoin_scan_size(sql) sizes what a query's scans will read from its plan: a changed_since
filter on the day column keeps one file of 30 (Delta's data skipping, Iceberg's file
statistics), and the change feed (Delta's table_changes, Iceberg's changelog) reads only the
versions or snapshots asked for. A changed_keys run logs it for each input before it reads the
changes (docs/dbt_package.md): an input that did not change reads nothing, the day column's
refresh reads the new day's file and compares the mark's day's rows now with the version the
last run read, the change feed reads the new version's or snapshot's.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from testkit.formats import delta_version

DAYS = 30
# The days written a commit each, at the end; the ones before them are one commit of a file per
# day (a commit is seconds on 2 cores, and what is sized here is files, not commits).
DAILY_COMMITS = 3


def scan_size(spark, sql: str) -> tuple[int, int, int]:
    literal = sql.replace("\\", "\\\\").replace("'", "\\'")
    row = spark.sql(f"select multijoin_scan_size('{literal}') as size").first().size
    return row.files, row.bytes, row.estimated_scans


def write_days(spark, table: str, days: range, value: str = "v") -> None:
    """One commit of one file per day, 100 rows each: `range` makes one task per day, and the
    write keeps its partitioning, a file per task."""
    spark.sql(f"insert into {table} select id as k, cast(id div 100 as int) as day, id * 2 as {value} "
              f"from range({days.start * 100}, {days.stop * 100}, 1, {len(days)})")


def write_daily(spark, table: str, days: range, value: str = "v") -> None:
    """One commit a day, each one file of 100 rows whose `day` is that day."""
    for day in days:
        write_days(spark, table, range(day, day + 1), value)


def create_daily(spark, table: str, table_format: str, days: int = DAYS, value: str = "v") -> None:
    """`table` with the change feed on (Delta; an Iceberg table always has its changelog): a file
    per day, the last DAILY_COMMITS days a commit each (versions 2 to `days - DAILY_COMMITS + 2`
    in Delta, after the CREATE's version 0 and the first days' version 1)."""
    properties = " tblproperties ('delta.enableChangeDataFeed' = 'true')" if table_format == "delta" else ""
    spark.sql(f"create table {table} (k bigint, day int, {value} bigint) using {table_format}{properties}")
    first = max(days - DAILY_COMMITS, 1)
    write_days(spark, table, range(0, first), value)
    write_daily(spark, table, range(first, days), value)


def file_bytes(spark, table: str, where: str = "true") -> dict[int, int]:
    """{day: bytes of the one file holding that day's rows}, for the days `where` selects."""
    files = {}
    for row in spark.sql(f"select distinct day, input_file_name() as path from {table} where {where}").collect():
        assert row.day not in files, f"day {row.day} is in more than one file"
        files[row.day] = Path(unquote(urlparse(row.path).path)).stat().st_size
    return files


def human(size: int) -> str:
    """A size as the run's log writes it (_mj_bytes_text)."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    power = max(p for p in range(len(units)) if p == 0 or size >= 1024**p)
    return f"{size} B" if power == 0 else "%.1f %s" % (size / 1024**power, units[power])


def snapshots(spark, table: str) -> list[int]:
    return [row.snapshot_id for row in spark.sql(f"select snapshot_id from {table}.snapshots order by committed_at").collect()]


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


MODEL = """{{{{ config(materialized='multijoin', incremental_strategy='changed_keys'{declared}) }}}}
{{{{ dbt_multijoin.multi_join([source('inputs', 'days'), source('inputs', 'feed'), source('inputs', 'quiet')], key='k',
    columns={{'days': ['v'], 'feed': ['w'], 'quiet': ['q']}},
    changed_since={{'days': 'day', 'feed': 'change_feed', 'quiet': 'day'}}) }}}}
"""


def scan_lines(log: str, model: str) -> dict[str, str]:
    """{input: what the run's log says the changes of `model`'s input read}."""
    found = dict(re.findall(rf"dbt_multijoin: {model}: input '(\w+)' \([^)]*\): (.*)", log))
    assert set(found) == {"days", "feed", "quiet"}, log
    return found


def read_line(sizes: list[int], reads: str) -> str:
    """What the log says an input reads: the files of `sizes`, or nothing."""
    if not sizes:
        return f"reads nothing ({reads})"
    return f"reads {len(sizes)} file{'' if len(sizes) == 1 else 's'}, {human(sum(sizes))} ({reads})"


def column_line(sizes: dict[int, int], mark: int, since, now) -> str:
    """What the log says an input tracked by its day column reads after its table moved from
    version `since` to `now`, its files `sizes` by day: the files of the days above the mark, and
    the mark's day's file twice, now and at `since`, to tell which of its rows changed."""
    read = [size for day, size in sizes.items() if day > mark] + [sizes[mark]] * 2
    assert len(read) < len(sizes)
    return read_line(read, f"changed_since day above {mark}, and the rows at {mark} that changed since version {since} (now {now})")


def appended_lines(sizes: dict[int, int], mark: int, since, now) -> list[str]:
    """What the log may say a Delta input tracked by its day column reads after one append of a
    day above the mark: the new day's file (the rows above the mark), and the mark's day's file
    at most once, at the version read now (the rows at the mark, kept where they are in the
    appended file: a filter of rows, so the file its statistics place at the mark may be opened,
    as the query's plan has it), never at the version the last run read."""
    new = [size for day, size in sizes.items() if day > mark]
    assert len(new) == 1
    reads = f"changed_since day above {mark}, and the rows at {mark} in the 1 file appended since version {since} (now {now}; only appends since)"
    return [read_line(new, reads), read_line(new + [sizes[mark]], reads)]


def unchanged_line(version) -> str:
    """What the log says an input tracked by a column reads when its table has not moved."""
    return read_line([], f"its table is at version {version}, as at the last run")


# The two refresh paths, each a model over the same inputs: one_row_per_key or not.
PATHS = {"recompute": False, "partial_update": True}


@pytest.fixture(scope="module")
def runs(spark, table_format, tmp_path_factory) -> dict:
    """Three inputs: `days` (changed_since day) and `feed` (its change feed) of 30 files, a day
    each; `quiet` (changed_since day) of 5, and never written again. A model per refresh path
    over them, built and refreshed by the same dbt runs: (a) with no change, (b) after a new day
    of `days` and a new commit of `feed`, (c) with no change again. What each run logged, and
    the inputs' files, versions and snapshots the assertions need."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("scan-size"), table_format)
    table = project.table
    create_daily(spark, table("days"), table_format)
    create_daily(spark, table("feed"), table_format, value="w")
    create_daily(spark, table("quiet"), table_format, days=5, value="q")
    project.sources("days", "feed", "quiet")
    for path, one_row_per_key in PATHS.items():
        project.model(f"wide_{path}", MODEL.format(declared=", one_row_per_key=true" if one_row_per_key else ""))
    log_file = project.root / "logs" / "dbt.log"

    def run() -> str:
        start = log_file.stat().st_size if log_file.exists() else 0
        result = project.dbt("run")
        assert result.success, result.describe()
        with open(log_file) as log:
            log.seek(start)
            return log.read()

    def position(name: str) -> int:
        return delta_version(spark, table(name)) if table_format == "delta" else snapshots(spark, table(name))[-1]

    built = project.dbt("run")
    assert built.success, built.describe()
    facts = {"quiet": position("quiet"), "days_before": position("days"),
             "unchanged": run(), "feed_before": position("feed")}
    write_daily(spark, table("days"), range(DAYS, DAYS + 1))
    write_daily(spark, table("feed"), range(DAYS, DAYS + 1), value="w")
    facts.update(days=file_bytes(spark, table("days")), feed=file_bytes(spark, table("feed")),
                 changed=run(), days_after=position("days"), feed_after=position("feed"), again=run())
    return facts


@pytest.mark.parametrize("path", PATHS)
def test_a_run_logs_what_each_input_reads(runs, table_format, path):
    """(a) A run with no change reads nothing: an input whose table has not moved is not read, nor
    a change feed with no new version.
    (b) After a new day, `days` reads the new day's file, one of 31, and the mark's day's file now
    and at the version the last run read (Iceberg); on Delta, whose table was only appended to,
    the rows at the mark in the appended file, and no older version; `quiet` still reads nothing.
    (c) After a new commit, `feed` reads that commit's file, one of 31.
    (d) The next run, with no change, reads nothing again."""
    model = f"wide_{path}"
    unchanged = scan_lines(runs["unchanged"], model)
    assert unchanged["days"] == unchanged_line(runs["days_before"])
    assert unchanged["quiet"] == unchanged_line(runs["quiet"])
    if table_format == "delta":
        assert unchanged["feed"] == f"reads nothing (no change feed version after {runs['feed_before']})"
        reads = f"change feed, versions {runs['feed_after']} to {runs['feed_after']}"
    else:
        assert unchanged["feed"] == f"reads nothing (no snapshot after {runs['feed_before']})"
        reads = f"changelog, the snapshots after {runs['feed_before']} up to {runs['feed_after']}"

    changed = scan_lines(runs["changed"], model)
    if table_format == "delta":
        assert changed["days"] in appended_lines(runs["days"], DAYS - 1, runs["days_before"], runs["days_after"]), changed["days"]
    else:
        assert changed["days"] == column_line(runs["days"], DAYS - 1, runs["days_before"], runs["days_after"])
    assert len(runs["feed"]) == DAYS + 1
    assert changed["feed"] == read_line([runs["feed"][DAYS]], reads)
    assert changed["quiet"] == unchanged_line(runs["quiet"])
    again = scan_lines(runs["again"], model)
    assert again["days"] == unchanged_line(runs["days_after"])
