"""The partial-update refresh of a changed_keys model declared `one_row_per_key=true`
(docs/dbt_package.md, "the partial-update refresh") against the full rebuild of the same model,
as a dbt user runs them: `dbt run` in-process on the session method, one Spark session (local[2]),
inputs and model in Delta or Iceberg (--table-format).

Per size (--rows: keys per input), a k-input wide model `wide` over inputs t1..tk, each holding
one row per key (`k` bigint scattered by an odd 64-bit constant, `v<i>` double, `c<i>` int: the
day the row was written, `ds` date), each input keeping about half of a universe of 2 x rows ids:

1. History: day 1 loads every input (one CREATE TABLE AS SELECT), then each of days 2..--days is
   a daily upsert of shape all_inputs (below): one MERGE per input. So each input has --days
   versions (Delta) or snapshots (Iceberg) and the files each day wrote, as a table loaded daily
   has. The odd inputs are read through their date column (changed_since='ds'), the even ones
   through their change feed (Delta's change data feed, Iceberg's changelog). Updates write
   deletion vectors (Delta) or position delete files (Iceberg, merge-on-read), but for the
   Iceberg inputs read through the changelog, which refuses delete files: those are
   copy-on-write, so each day's MERGE rewrites every file holding a key it updates. `wide` is
   built after day 2 and refreshed after each later day, as a daily job would (with
   --no-daily-refresh: built once, after the last day). With --days 1 (a one-shot load) it is
   built on day 1, so that every row of every `ds` input ties its mark: the next refresh must
   read and apply only the rows that changed since (the rows at the mark that the build applied
   are told apart by the input's version or snapshot), and its changed keys are the changed rows.
2. Change days, each timed: `dbt run -s wide` (the refresh), then `dbt run -s wide_rebuild
   --full-refresh` (the same model's SQL, rebuilt whole), whose rows the refreshed table must
   equal: the same row count and the same two sums of row hashes over every column, the
   presence columns included. Every change day follows a day of shape all_inputs (one is added,
   refreshed untimed, where the previous change day was of another shape): the refresh reads
   the rows of that day whose `ds` ties the recorded mark again, as after any daily load.
3. A `dbt run` of a one-row view, once per repetition: the fixed cost of any run.

With --layout merge_on_read, `wide` is in that layout (a view over base and delta rows; its full
rebuild `wide_rebuild` stays a table): after each change day a reader's full scan of the view is
timed against the same scan of the rebuilt table, with the delta rows' share then; after the last,
one more day of t1 alone fills the delta rows to just under the share at which a run compacts
(THRESHOLD_FILL of the default compaction_share), timed as a change day, its reader's scans the
most a reader pays for the delta; then a compaction's step as a run folds one when due (a `dbt run` with `dbt_multijoin_compact: step`),
then a compaction on demand of what is left (`dbt run-operation dbt_multijoin.compact`) are timed,
and what readers see must not change. Beside it, the same model in the default layout (`wide_table_layout`, a table
whose refresh MERGEs the changes into it) is built and refreshed on the same days, each refresh
timed after `wide`'s and its rows checked against the rebuild: today's refresh, which the
compaction (the same rewrite of every file, done once for many refreshes) is compared with.

With --small-refreshes N, at the end (in the merge-on-read layout after the compaction on demand, so
from an empty delta), N days of t1 alone, a tenth of a change day's rows each (--small-rows), each
refreshed with no day of every input between, as a model whose runs change few keys is, with many
refreshes between two compactions: per refresh its time, its MERGE's and its state query's,
and the default layout's refresh of the same day; every SMALL_CHECK_EVERY of them the rows checked
against a full rebuild, a reader's warm scans, and the files that hold the store's delta rows.

With --table-format delta,iceberg, each format runs in a process of its own, one after the other
(each format's runtime goes on its JVM's class path), into <results>/<format>/, and
<results>/results.md reports them side by side.

Every refresh, of the history or timed, must log that it took the partial-update path
("partial update" in the dbt log, macros/changed_keys/plan.sql); the run fails otherwise.
Bytes read, shuffled and written are summed over the stages each `dbt run` ran (Spark's status store,
benchmarks/stages.py). Writes results.json and results.md (targets, tables, notes generated from
the results) to benchmarks/results/<name>/ (--out DIR for any other place).

    .venv/bin/python -m benchmarks.partial_update --rows 2m,4m,8m,16m --table-format delta --reps 3
    .venv/bin/python -m benchmarks.partial_update --rows 2m,16m --changed-rows 20k --table-format delta   # as many rows changed at every size
    .venv/bin/python -m benchmarks.partial_update --rows 500k,4m --k 4 --days 1 --shapes one_input --changed-rows 20k --reps 1 --name partial-update-one-shot-delta   # a one-shot load, then 20,000 rows of one input
    .venv/bin/python -m benchmarks.partial_update --rows 500k,4m --k 4 --days 1 --shapes one_input --changed-rows 20k --reps 1 --row-tracking --name partial-update-one-shot-delta-row-tracking   # the same, the ds inputs with row tracking
    .venv/bin/python -m benchmarks.partial_update --rows 500k,4m --k 4 --days 3 --shapes one_input,late_rows --changed-rows 20k --reps 1 --name partial-update-late-rows-delta   # late rows at the mark appended to one input, beside as many updated
    .venv/bin/python -m benchmarks.partial_update --rows 2m,4m --days 5 --layout merge_on_read --table-format iceberg --reps 2 --name partial-update-mor-iceberg
    .venv/bin/python -m benchmarks.partial_update --rows 2m,4m,8m,16m --table-format delta,iceberg --layout merge_on_read --shapes one_input,same_rows --reps 1 --no-daily-refresh   # both formats, both layouts, 1% and 20,000 rows of one input
    .venv/bin/python -m benchmarks.partial_update --rows 2m --table-format iceberg,delta --layout merge_on_read --shapes one_input --reps 1 --days 3 --no-daily-refresh --small-refreshes 30   # 30 refreshes of 0.1% of t1 each
    .venv/bin/python -m benchmarks.partial_update --rows 50k --days 5 --reps 1 --out /tmp/pu-check   # a check
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.report import _table, rows_label, write_results
from benchmarks.run import _machine, drop_schema, list_arg, log, rows_arg, rows_list_arg
from benchmarks.stages import executions_since, io_since, last_stage_id, stages_since
from benchmarks.workload import SCRAMBLE
from testkit.executions import last_execution_id

HERE = Path(__file__).resolve().parent

# The change shapes, each changing `changed` x rows input rows in one day. Both change as many
# rows, so what differs is where they are: one input read against every input read.
SHAPES = {
    # Every input lands a day (the history's days are of this shape): per input, 1/(2k) of
    # `changed` of its keys updated, and changed x rows / 2 new keys over the inputs (each new key
    # in one input, so a new row of the wide table). Eight change sources read, four through the
    # change feed; the MERGE both updates and inserts.
    "all_inputs": "every input changes: each updates changed/(2k) of its keys and gets its share of changed/2 x rows new keys",
    # One input lands a day: t1 (read through `ds`) updates `changed` of its keys. The partial
    # update's claim: the other inputs are not read (a change feed with no new version is not
    # read at all; an input read through `ds` is scanned through that filter, whose file
    # statistics skip every file older than the mark).
    "one_input": "only t1 (read through ds) changes: it updates changed of its keys",
    # Late rows: t1 gets changed x rows new keys by an append, stamped with the day before (the
    # mark's day, as rows of yesterday that arrive today are). Every new row ties the mark: on
    # Delta without --row-tracking, t1 only appended to, the refresh reads the rows at the mark in
    # the appended files once (no read of the older version), where one_input's refresh compares
    # the mark's day in both versions.
    "late_rows": "only t1 (read through ds) changes: changed x rows new keys appended with the mark's ds",
    # As one_input, with as many rows changed at every size (--same-rows): what a refresh that
    # costs the change, not the table, must take about as long for at every size.
    "same_rows": "only t1 (read through ds) changes: it updates --same-rows of its keys, as many at every size",
}
STANDARD_DAY = "all_inputs"
# The shapes a run measures unless --shapes names others (late_rows on demand: a Delta input's
# appends-only read, measured beside one_input's compare).
DEFAULT_SHAPES = ["all_inputs", "one_input"]
FIRST_DAY = datetime.date(2024, 1, 1)
# The MERGE prunes its target to the replaced rows by their listed key hashes up to this many
# changed keys (the default of dbt_multijoin_hash_list_limit, _mj_replaced_rows_filter in
# macros/changed_keys/target_filter.sql); above, by a bloom filter of them.
HASH_FILTER_KEYS = 50_000
MIB = 1 << 20


@dataclass(frozen=True)
class Target:
    name: str
    op: str  # ">=" or "<="
    bound: float

    def met(self, value: float) -> bool:
        return value >= self.bound if self.op == ">=" else value <= self.bound


SPEEDUP = Target("full rebuild ÷ refresh at 16M >= 10", ">=", 10.0)
SCALING = Target("refresh at 16M ÷ refresh at 2M <= 1.5", "<=", 1.5)
# The merge-on-read layout's refresh reads no column of the table but its key, so it is held to a
# flatter bound.
SCALING_MERGE_ON_READ = Target("refresh at 16M ÷ refresh at 2M <= 1.2", "<=", 1.2)
# A compaction rewrites every file, as today's refresh (the default layout's MERGE) does each day.
COMPACTION = Target("compaction ÷ the default layout's refresh at 16M <= 1", "<=", 1.0)
# A reader of the merge-on-read view pays for the join of the delta rows, most with as many as the
# store holds before a run compacts them: measured once the delta is just under that share.
READER = Target("a reader's warm full scan, view ÷ the rebuilt table, delta at the threshold <= 1.25", "<=", 1.25)
# The default compaction_share (macros/changed_keys/merge_on_read.sql), which the benchmark's model
# leaves as it is; the threshold day fills the delta to THRESHOLD_FILL of it, short of a compaction.
COMPACTION_SHARE, THRESHOLD_FILL = 0.03, 0.9
TARGET_LARGE, TARGET_SMALL = 16_000_000, 2_000_000
# Many small refreshes: the view checked against a full rebuild, and readers timed, every this many.
SMALL_CHECK_EVERY = 10


def tracking(i: int) -> str:
    """How input t<i> shows its changes: the odd inputs by their date column, the even ones by
    their change feed."""
    return "ds" if i % 2 == 1 else "change_feed"


def model_sql(k: int, table_format: str, layout: str = "table") -> str:
    """The wide model: the multi_join call itself (as the partial update requires), declared
    one_row_per_key=true, in `layout` ('merge_on_read': a view over base and delta rows, compacted
    when the delta passes the default share)."""
    names = [f"t{i}" for i in range(1, k + 1)]
    sources = ", ".join(f"source('inputs', '{n}')" for n in names)
    columns = ", ".join(f"'t{i}': ['v{i}', 'c{i}']" for i in range(1, k + 1))
    changed_since = ", ".join(f"'t{i}': '{tracking(i)}'" for i in range(1, k + 1))
    return (
        f"{{{{ config(materialized='multijoin', file_format='{table_format}', incremental_strategy='changed_keys', one_row_per_key=true"
        f"{'' if layout == 'table' else f', layout={layout!r}'}) }}}}\n"
        f"{{{{ dbt_multijoin.multi_join([{sources}], key='k',\n"
        f"    columns={{{columns}}},\n"
        f"    changed_since={{{changed_since}}}) }}}}\n"
    )


@dataclass
class Inputs:
    """The k input tables of one size, and the days written to them."""

    spark: object
    schema: str
    table_format: str
    rows: int
    k: int
    changed: float
    # Delta: the inputs read through `ds` track their rows (delta.enableRowTracking), so that a
    # refresh tells their rows at the mark apart by row tracking, not by the compare.
    row_tracking: bool = False
    # The rows a same_rows day updates.
    same_rows: int = 20_000

    def table(self, i: int) -> str:
        return f"{self.schema}.t{i}"

    def _properties(self, i: int) -> str:
        if self.table_format == "delta":
            properties = {"delta.enableDeletionVectors": "true"}
            if tracking(i) == "change_feed":
                properties["delta.enableChangeDataFeed"] = "true"
            elif self.row_tracking:
                properties["delta.enableRowTracking"] = "true"
        elif tracking(i) == "ds":
            properties = {"format-version": "2", **{f"write.{op}.mode": "merge-on-read" for op in ("delete", "update", "merge")}}
        else:
            # Iceberg's changelog refuses delete files ("Delete files are currently not supported
            # in changelog scans", 1.12.0, format 2 and 3): an input read through it is
            # copy-on-write, each MERGE rewriting the files it touches.
            properties = {"format-version": "2", **{f"write.{op}.mode": "copy-on-write" for op in ("delete", "update", "merge")}}
        return ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())

    def _held(self, i: int) -> str:
        """Whether input i holds the id (of the universe 0 .. 2 x rows): about half of them."""
        return f"pmod(xxhash64(id, {i}), 2) = 0"

    def _columns(self, i: int, day: int) -> str:
        return (f"id * {SCRAMBLE} as k, cast(pmod(xxhash64(id, {i}, {day}), 1000000) as double) / 1000 as v{i}, "
                f"{day} as c{i}, date'{FIRST_DAY + datetime.timedelta(days=day - 1)}' as ds")

    def _sql(self, statement: str) -> None:
        # The scrambled key wraps around 64 bits: not an error without ANSI mode.
        ansi = self.spark.conf.get("spark.sql.ansi.enabled")
        self.spark.conf.set("spark.sql.ansi.enabled", "false")
        try:
            self.spark.sql(statement)
        finally:
            self.spark.conf.set("spark.sql.ansi.enabled", ansi)

    def create(self) -> None:
        """Day 1: every input loaded in one statement."""
        for i in range(1, self.k + 1):
            self._sql(f"create table {self.table(i)} using {self.table_format} tblproperties ({self._properties(i)}) as "
                      f"select {self._columns(i, 1)} from range({2 * self.rows}) where {self._held(i)}")

    def late_rows(self) -> int:
        """The rows a late_rows day appends to t1."""
        return max(1, round(self.changed * self.rows))

    def _batch(self, i: int, day: int, shape: str, rows: int | None = None) -> str | None:
        """Input i's rows of `day` in `shape`, or None when it does not change that day; `rows`:
        about as many rows of a one_input day, instead of `changed` of the keys."""
        if shape == "late_rows":
            if i != 1:
                return None
            late_ids = self.late_rows()
            first_late = 2 * self.rows + day * late_ids
            return f"select {self._columns(i, day - 1)} from range({first_late}, {first_late + late_ids})"
        if shape in ("one_input", "same_rows"):
            if i != 1:
                return None
            # t1 holds about `rows` of the universe's ids: one in `every` of them.
            wanted = self.same_rows if shape == "same_rows" else rows
            every = round(1 / self.changed) if wanted is None else max(1, round(self.rows / wanted))
            return (f"select {self._columns(i, day)} from range({2 * self.rows}) "
                    f"where {self._held(i)} and pmod(xxhash64(id, {i}, {day}), {every}) = 0")
        # all_inputs: updates of changed / (2k) of the input's keys, and its share of the day's
        # new ids (changed x rows / 2 of them, after the universe and the earlier days' new ids).
        new_ids = max(1, round(self.changed * self.rows / 2))
        first_new = 2 * self.rows + day * new_ids
        return (f"select {self._columns(i, day)} from range({2 * self.rows}) "
                f"where {self._held(i)} and pmod(xxhash64(id, {i}, {day}), {round(2 * self.k / self.changed)}) = 0 "
                f"union all select {self._columns(i, day)} from range({first_new}, {first_new + new_ids}) "
                f"where pmod(xxhash64(id), {self.k}) = {i - 1}")

    def apply_day(self, day: int, shape: str, rows: int | None = None) -> dict[str, int]:
        """One MERGE per input that changes on `day` (its day's rows: updates and new keys), or
        for late_rows one append; returns the rows written per input. `rows`: _batch's."""
        written = {}
        for i in range(1, self.k + 1):
            batch = self._batch(i, day, shape, rows)
            if batch is None:
                continue
            if shape == "late_rows":
                self._sql(f"insert into {self.table(i)} (k, v{i}, c{i}, ds) {batch}")
                written[f"t{i}"] = self.late_rows()
                continue
            ansi = self.spark.conf.get("spark.sql.ansi.enabled")
            self.spark.conf.set("spark.sql.ansi.enabled", "false")
            frame = self.spark.sql(batch).cache()
            try:
                written[f"t{i}"] = frame.count()
                frame.createOrReplaceTempView("partial_update_day")
                self.spark.sql(
                    f"merge into {self.table(i)} as t using partial_update_day as s on t.k = s.k "
                    f"when matched then update set v{i} = s.v{i}, c{i} = s.c{i}, ds = s.ds "
                    f"when not matched then insert (k, v{i}, c{i}, ds) values (s.k, s.v{i}, s.c{i}, s.ds)")
            finally:
                self.spark.catalog.dropTempView("partial_update_day")
                frame.unpersist()
                self.spark.conf.set("spark.sql.ansi.enabled", ansi)
        return written

    def tie_rows(self, written: dict[str, int]) -> int:
        """Of a day's rows, those a refresh after the next day reads again: the rows of the
        inputs read through `ds` (they tie the mark that refresh starts from)."""
        return sum(n for name, n in written.items() if tracking(int(name[1:])) == "ds")


def table_facts(spark, table_format: str, table: str) -> dict:
    """Files, bytes and versions (Delta) or snapshots (Iceberg) of a table as it stands."""
    if table_format == "delta":
        detail = spark.sql(f"describe detail {table}").first()
        return {"files": int(detail.numFiles), "bytes": int(detail.sizeInBytes),
                "versions": spark.sql(f"describe history {table}").count()}
    files = spark.sql(f"select count(*) as n, coalesce(sum(file_size_in_bytes), 0) as b, "
                      f"count_if(content > 0) as deletes from {table}.files").first()
    return {"files": int(files.n), "bytes": int(files.b), "delete_files": int(files.deletes),
            "versions": spark.sql(f"select count(*) from {table}.snapshots").first()[0]}


def fingerprint_query(spark, table: str) -> str:
    """The query of fingerprint(table)."""
    columns = ", ".join(f"`{c}`, `{c}` is null" for c in spark.table(table).columns)
    return (f"select count(*) as n, sum(cast(xxhash64({columns}) as decimal(38, 0))) as h1, "
            f"sum(cast(hash({columns}) as decimal(38, 0))) as h2 from {table}")


def fingerprint(spark, table: str) -> list:
    """The rows of `table` as a multiset, in three numbers: the row count and two sums of a hash
    of every column (each with whether it is NULL, which a hash skips)."""
    row = spark.sql(fingerprint_query(spark, table)).first()
    return [int(row.n), str(row.h1), str(row.h2)]


def planning_seconds(spark, table: str) -> float:
    """The seconds Spark takes to plan fingerprint(table) without running it: parsing, the catalog
    lookups of every table and view it names, analysis, optimization and the physical plan (with
    the formats' file planning for their statistics). A reader pays it on every query, whatever
    rows it reads."""
    query = fingerprint_query(spark, table)
    start = time.perf_counter()
    spark.sql(query)._jdf.queryExecution().executedPlan()
    return time.perf_counter() - start


def timed_fingerprint(spark, table: str) -> tuple[list, float]:
    """fingerprint(table) and the seconds it took: a reader's full scan of every column."""
    start = time.perf_counter()
    found = fingerprint(spark, table)
    return found, time.perf_counter() - start


def warm_scans(spark, view: str, table: str, reps: int = 3) -> dict:
    """The median seconds of a reader's full scan (fingerprint) of `view` and of `table`, warm:
    `reps` scans of each, alternating, run after the first scan of each (the caller's). The first
    scan of a session over a new store state also plans and compiles the view's query for the
    first time, and varies by a second or more: a reader that scans the table again pays the warm
    figure. With the medians of each query's planning alone (planning_seconds), timed before each
    scan: the part of a scan that is the same whatever the rows."""
    scans, plans = {view: [], table: []}, {view: [], table: []}
    for _ in range(reps):
        for name in (view, table):
            plans[name].append(planning_seconds(spark, name))
            scans[name].append(timed_fingerprint(spark, name)[1])
    return {"reader_scan_warm_seconds": statistics.median(scans[view]), "table_scan_warm_seconds": statistics.median(scans[table]),
            "reader_planning_warm_seconds": statistics.median(plans[view]), "table_planning_warm_seconds": statistics.median(plans[table])}


def store_table(project) -> str:
    """The merge-on-read model's store: base and delta rows (macros/changed_keys/merge_on_read.sql)."""
    return project.table("wide__dbt_mj_store")


def delta_share(spark, project, layout: str) -> float | None:
    """In the merge-on-read layout, the store's delta rows as a share of its base rows (what
    compaction_share is compared with); None in the table layout."""
    if layout != "merge_on_read":
        return None
    row = store_rows(spark, project)
    return row.delta / max(row.base, 1)


def store_rows(spark, project):
    """The merge-on-read store's delta rows and base rows (`delta`, `base`)."""
    return spark.sql(f"select count_if(dbt_multijoin_seq > 0) as delta, count_if(dbt_multijoin_seq = 0) as base "
                     f"from {store_table(project)}").first()


def compaction_step(spark, project) -> dict:
    """A compaction's step as a run folds one when due: `dbt run -s wide --vars
    '{dbt_multijoin_compact: step}'` with no input changed, timed as a run and by its one rewrite
    statement, the key buckets it folded, the delta rows' share before and after it, and the view's
    rows, which it must not change."""
    share = delta_share(spark, project, "merge_on_read")
    before = fingerprint(spark, project.table("wide"))
    run = dbt_run(spark, project, "wide", "--vars", "{dbt_multijoin_compact: step}")
    folded = next((re.search(r"key bucket\(s\) ([\d, ]+),", line) for line in run["log"] if "folds the delta rows of key bucket" in line), None)
    if folded is None:
        raise RuntimeError("the run folded no compaction step:\n" + "\n".join(run["log"]))
    after = fingerprint(spark, project.table("wide"))
    if after != before:
        raise RuntimeError(f"the compaction step changed what readers see: {before} against {after}")
    rewrite = next((seconds for seconds, statement in run["statements"] if " replace where " in statement), None)
    return {"seconds": run["seconds"], "statement_seconds": rewrite, "buckets": [int(b) for b in folded.group(1).split(", ")],
            "delta_share": share, "delta_share_after": delta_share(spark, project, "merge_on_read"),
            **{key: run[key] for key in ("input_bytes", "shuffle_write_bytes", "statements", "executions") if key in run}}


def compact(spark, project) -> dict:
    """A timed compaction on demand (`dbt run-operation dbt_multijoin.compact`), with a reader's
    full scan of the view before and after it, whose rows it must not change, and where its time
    went (its statements by the dbt log, its SQL executions by Spark)."""
    share = delta_share(spark, project, "merge_on_read")
    before, scan = timed_fingerprint(spark, project.table("wide"))
    dbt_log = project.root / "logs" / "dbt.log"
    offset = dbt_log.stat().st_size if dbt_log.exists() else 0
    io_before, before_execution = last_stage_id(spark), last_execution_id(spark)
    start = time.perf_counter()
    result = project.dbt("run-operation", "dbt_multijoin.compact", "--args", "{model_name: wide}")
    seconds = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"the compaction failed:\n{result.describe()}")
    io = io_since(spark, io_before)
    statements = statement_seconds(_new_log_text(dbt_log, offset), "macro_compact")
    executions = executions_since(spark, before_execution)
    after, after_scan = timed_fingerprint(spark, project.table("wide"))
    if after != before:
        raise RuntimeError(f"the compaction changed what readers see: {before} against {after}")
    return {"seconds": seconds, **io, "delta_share": share, "delta_share_after": delta_share(spark, project, "merge_on_read"),
            "reader_scan_seconds": scan, "after_scan_seconds": after_scan,
            "statements": statements, "executions": executions}


def _new_log_text(path: Path, offset: int) -> str:
    """What dbt appended to its log since `offset` (dbt rotates the file at 10 MB: then the
    rest of the rotated file, and the new one)."""
    if not path.exists():
        return ""
    if path.stat().st_size >= offset:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    rotated = path.with_name(path.name + ".1")
    text = ""
    if rotated.exists():
        with open(rotated, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
    return text + path.read_text(errors="replace")


def dbt_run(spark, project, model: str, *extra: str) -> dict:
    """One timed `dbt run -s model`: its seconds, what its stages read and shuffled, the path a
    changed_keys run took and its changed keys (from the dbt log), its longest statements by the
    dbt log and its longest SQL executions by Spark, and its longest stages' task, CPU and GC
    seconds (what tells a statement's own work from the client's, or from the JIT's)."""
    dbt_log = project.root / "logs" / "dbt.log"
    offset = dbt_log.stat().st_size if dbt_log.exists() else 0
    before, before_execution = last_stage_id(spark), last_execution_id(spark)
    start = time.perf_counter()
    result = project.dbt("run", "-s", model, *extra)
    seconds = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"dbt run -s {model} {' '.join(extra)} failed:\n{result.describe()}")
    io = io_since(spark, before)
    text = _new_log_text(dbt_log, offset)
    marker = f"dbt_multijoin: {model}: "
    lines = [line[line.index(marker):] for line in text.splitlines() if marker in line]
    keys = [int(m.group(1)) for line in lines if (m := re.search(r": (\d+) changed keys", line))]
    return {"seconds": seconds, **io, "path": path_taken(lines), "changed_keys": keys[-1] if keys else None,
            "log": lines, "statements": statement_seconds(text, f"model.pipelines.{model}"),
            "executions": executions_since(spark, before_execution),
            "stage_timings": sorted(stages_since(spark, before)["stage_timings"], key=lambda t: -(t["wall_seconds"] or 0))[:8]}


_STAMP = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) ")


def statement_seconds(text: str, connection: str, most: int = 8) -> list[list]:
    """Where a dbt command's time went, from its dbt log: the statements of one connection (a
    model's, `model.pipelines.<model>`, or a run-operation's, `macro_<name>`), each from the log
    line that sends it to the next statement's (so a query's fetch and the Jinja after it count
    to it), the longest `most`, as [seconds, the statement's first words]."""
    events: list[tuple[float, str | None]] = []  # (seconds of the day, statement or None: the node ended)
    pending = None
    for line in text.splitlines():
        stamp = _STAMP.match(line)
        if not stamp:
            if pending is not None and line.strip():
                pending[1].append(line.strip())
            continue
        if pending is not None:
            events.append((pending[0], " ".join(pending[1])))
            pending = None
        at = int(stamp.group(1)) * 3600 + int(stamp.group(2)) * 60 + float(stamp.group(3))
        if f"On {connection}: " in line:
            pending = (at, [re.sub(r"^/\*.*?\*/", "", line.split(f"On {connection}: ", 1)[1]).strip()])
        elif "Finished running node" in line or f"OK created sql" in line:
            events.append((at, None))
    if pending is not None:
        events.append((pending[0], " ".join(pending[1])))
    spans = []
    for (at, sql), (after, _) in zip(events, events[1:]):
        if sql is not None:
            words = re.sub(r"/\*.*?\*/", "", sql)
            spans.append([round(after - at, 3), re.sub(r"\s+", " ", words).strip()[:90]])
    return sorted(spans, key=lambda span: -span[0])[:most]


def path_taken(lines: list[str]) -> str:
    """The path a changed_keys run took, from its dbt_multijoin log lines."""
    if any(": partial update:" in line for line in lines):
        return "partial update"
    if any(": recomputing the changed keys" in line for line in lines):
        return "key recompute"
    return "full build"


def require_partial_update(run: dict, what: str) -> None:
    if run["path"] != "partial update":
        raise RuntimeError(f"{what}: the refresh did not take the partial-update path (it took: {run['path']}). "
                           "Its dbt_multijoin log lines:\n  " + "\n  ".join(run["log"] or ["(none)"]))


def refresh_beside(spark, project, models: list[str], when: str, first_build: bool = False) -> dict:
    """`dbt run` of each of `models`, as `wide`'s just ran: its first build, or a refresh, which
    must take the partial-update path. Returns {"<model>_refresh": its run} of each refresh."""
    runs = {}
    for name in models:
        run = dbt_run(spark, project, name)
        if not first_build:
            require_partial_update(run, f"{when}: {name}")
            runs[f"{name}_refresh"] = _brief(run)
        log(f"{when}: {name} {run['path']} {run['seconds']:.1f} s")
    return runs


def measure_size(spark, args, rows: int, directory: Path) -> dict:
    """History, then the timed change days and fixed-cost runs of one size; the tables are
    dropped at the end unless --keep."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, directory, args.table_format)
    inputs = Inputs(spark, project.schema, args.table_format, rows, args.k, changed_fraction(args, rows), args.row_tracking,
                    args.same_rows)
    started = time.perf_counter()
    inputs.create()
    project.sources(*[f"t{i}" for i in range(1, args.k + 1)])
    project.model("wide", model_sql(args.k, args.table_format, args.layout))
    project.model("wide_rebuild", model_sql(args.k, args.table_format))
    # Today's refresh beside the merge-on-read one: the same model in the default layout.
    beside = ["wide_table_layout"] if args.layout == "merge_on_read" else []
    for name in beside:
        project.model(name, model_sql(args.k, args.table_format))
    project.model("fixed_cost", "{{ config(materialized='view') }}\nselect 1 as x\n")

    size: dict = {"rows": rows, "schema": project.schema, "history": [], "between": [], "fixed_cost": [], "shapes": {s: [] for s in args.shapes}}
    first_build_day = min(2 if args.daily_refresh else args.days, args.days)
    written = {}
    if first_build_day == 1:
        size["first_build"] = _brief(dbt_run(spark, project, "wide"))
        refresh_beside(spark, project, beside, f"{rows_label(rows)} day 1 (one-shot load)", first_build=True)
        log(f"{rows_label(rows)} day 1 (one-shot load): first build of wide {size['first_build']['seconds']:.1f} s")
    for day in range(2, args.days + 1):
        wrote = time.perf_counter()
        written = inputs.apply_day(day, STANDARD_DAY)
        write_seconds = time.perf_counter() - wrote
        if day == first_build_day:
            size["first_build"] = _brief(dbt_run(spark, project, "wide"))
            log(f"{rows_label(rows)} day {day}: first build of wide {size['first_build']['seconds']:.1f} s")
            refresh_beside(spark, project, beside, f"{rows_label(rows)} day {day}", first_build=True)
        elif day > first_build_day:
            refresh = dbt_run(spark, project, "wide")
            require_partial_update(refresh, f"{rows_label(rows)} history day {day}")
            refresh_beside(spark, project, beside, f"{rows_label(rows)} history day {day}")
            size["history"].append({"day": day, "rows_written": sum(written.values()), "write_seconds": write_seconds, **_brief(refresh)})
            log(f"{rows_label(rows)} day {day}: the inputs' MERGEs {write_seconds:.1f} s, refresh {refresh['seconds']:.1f} s, "
                f"{refresh['changed_keys']:,} changed keys")
    size["setup_seconds"] = time.perf_counter() - started
    size["inputs_at_change"] = {f"t{i}": table_facts(spark, args.table_format, inputs.table(i)) for i in (1, 2)}
    size["input_rows"] = {f"t{i}": spark.table(inputs.table(i)).count() for i in range(1, args.k + 1)}

    day, previous = args.days, STANDARD_DAY
    for rep in range(args.reps):
        fixed = dbt_run(spark, project, "fixed_cost")
        size["fixed_cost"].append(fixed["seconds"])
        log(f"{rows_label(rows)} rep {rep + 1}: dbt run of a one-row view {fixed['seconds']:.1f} s")
        for shape in args.shapes:
            if previous != STANDARD_DAY:
                day += 1
                written = inputs.apply_day(day, STANDARD_DAY)
                between = dbt_run(spark, project, "wide")
                require_partial_update(between, f"{rows_label(rows)} day {day} ({STANDARD_DAY}, untimed)")
                refresh_beside(spark, project, beside, f"{rows_label(rows)} day {day} ({STANDARD_DAY}, untimed)")
                size["between"].append({"day": day, **_brief(between)})
            day += 1
            measured, written = change_day(spark, args, project, inputs, day, shape, written, beside)
            size["shapes"][shape].append(measured)
            log(f"{rows_label(rows)} rep {rep + 1} {shape}: {day_text(measured)}")
            previous = shape
    if args.layout == "merge_on_read":
        # The delta rows filled to just under the share at which a run compacts, then readers
        # timed: the most a reader pays for the delta's join. The day's refresh is timed too.
        fill = threshold_rows(spark, project, size["input_rows"]["t1"])
        if fill:
            day += 1
            size["at_threshold"], written = change_day(spark, args, project, inputs, day, "one_input", written, beside, fill)
            log(f"{rows_label(rows)} at the threshold ({fill:,} rows of t1): {day_text(size['at_threshold'])}")
        size["compaction_step"] = compaction_step(spark, project)
        step = size["compaction_step"]
        log(f"{rows_label(rows)}: a compaction step folded key buckets {step['buckets']} in {step['seconds']:.1f} s "
            f"(its rewrite {step['statement_seconds'] or float('nan'):.1f} s), delta rows {step['delta_share']:.1%} "
            f"of the base before, {step['delta_share_after']:.1%} after")
        size["compaction"] = compact(spark, project)
        log(f"{rows_label(rows)}: compaction of {size['compaction']['delta_share']:.1%} delta rows "
            f"{size['compaction']['seconds']:.1f} s; a full scan of the view {size['compaction']['reader_scan_seconds']:.1f} s "
            f"before it, {size['compaction']['after_scan_seconds']:.1f} s after")
    if args.small_refreshes:
        # After the compaction on demand: from an empty delta, as after any compaction.
        size["small_refreshes"] = small_refreshes(spark, args, project, inputs, day + 1, beside)
    stored = {"wide": store_table(project) if args.layout == "merge_on_read" else project.table("wide"),
              "wide_rebuild": project.table("wide_rebuild"), **{name: project.table(name) for name in beside}}
    size["tables_at_end"] = {name: table_facts(spark, args.table_format, table) for name, table in stored.items()}
    size["inputs_at_end"] = {f"t{i}": table_facts(spark, args.table_format, inputs.table(i)) for i in (1, 2)}
    if not args.keep:
        drop_schema(spark, project, args.table_format)
        shutil.rmtree(directory, ignore_errors=True)
    return size


def change_day(spark, args, project, inputs: Inputs, day: int, shape: str, written: dict, beside: list[str],
               rows: int | None = None) -> tuple[dict, dict]:
    """One timed change day of `shape` (`rows`: Inputs.apply_day's): the inputs' writes, the
    refresh of `wide` and of the models `beside` it, the full rebuild, whose rows each must equal,
    and a reader's scans of each. `written`: the rows the day before wrote (their ties). Returns
    the day's measurements and the rows it wrote."""
    when = f"{rows_label(inputs.rows)} day {day} ({shape})"
    tie_rows = inputs.tie_rows(written)
    written = inputs.apply_day(day, shape, rows)
    refresh = dbt_run(spark, project, "wide")
    require_partial_update(refresh, when)
    refreshed_beside = refresh_beside(spark, project, beside, when)
    rebuild = dbt_run(spark, project, "wide_rebuild", "--full-refresh")
    (refreshed, scan), (rebuilt, table_scan) = (timed_fingerprint(spark, project.table(t)) for t in ("wide", "wide_rebuild"))
    if refreshed != rebuilt:
        raise RuntimeError(f"{when}: the refreshed table is not the full rebuild: rows and hash sums {refreshed} against {rebuilt}")
    require_rebuild_rows(spark, project, beside, rebuilt, when)
    # After the first scans above, which warm both.
    warm = (warm_scans(spark, project.table("wide"), project.table("wide_rebuild"))
            if args.layout == "merge_on_read" else {"reader_scan_warm_seconds": None, "table_scan_warm_seconds": None})
    return {"day": day, "rows_written": sum(written.values()), "tie_rows": tie_rows,
            "refresh": _brief(refresh), "rebuild": _brief(rebuild), **refreshed_beside,
            "equals_rebuild": True, "rows": refreshed[0], "reader_scan_seconds": scan, "table_scan_seconds": table_scan, **warm,
            "compacted": any(": compacting" in line for line in refresh["log"]),
            "delta_share": delta_share(spark, project, args.layout)}, written


def require_rebuild_rows(spark, project, models: list[str], rebuilt: list, when: str) -> None:
    """Fails unless each of `models` holds the full rebuild's rows (`rebuilt`: its fingerprint)."""
    for name in models:
        if (found := fingerprint(spark, project.table(name))) != rebuilt:
            raise RuntimeError(f"{when}: {name} is not the full rebuild: rows and hash sums {found} against {rebuilt}")


def day_text(measured: dict) -> str:
    refresh, rebuild = measured["refresh"], measured["rebuild"]
    return (f"refresh {refresh['seconds']:.1f} s ({refresh['changed_keys']:,} changed keys, read {refresh['input_bytes'] / MIB:.1f} MiB, "
            f"shuffled {refresh['shuffle_write_bytes'] / MIB:.1f} MiB, wrote {refresh.get('output_bytes', 0) / MIB:.1f} MiB), "
            f"full rebuild {rebuild['seconds']:.1f} s (read {rebuild['input_bytes'] / MIB:.1f} MiB, shuffled "
            f"{rebuild['shuffle_write_bytes'] / MIB:.1f} MiB); equal rows: {measured['rows']:,}"
            + ("" if measured["delta_share"] is None else f"; delta rows {measured['delta_share']:.2%} of the base"))


def small_refreshes(spark, args, project, inputs: Inputs, first_day: int, beside: list[str]) -> list[dict]:
    """--small-refreshes days of t1 alone, about --small-rows rows each, one after the other with no
    day of every input between: a model whose runs change few keys, with many refreshes between two
    compactions (in the merge-on-read layout they start after one). Per refresh: its seconds, its
    longest statements' (the MERGE into the store, the state query after it, the rewrite of the
    delta's files into a file per key bucket), whether it rewrote them or compacted, the delta share
    after it, and the default layout's refresh of the same day. Every SMALL_CHECK_EVERY refreshes
    and after the last: the view and the default layout's table checked against a full rebuild, a
    reader's warm scans (warm_scans), and the files holding the store's delta rows (and, on
    Iceberg, its delete files)."""
    store = store_table(project) if args.layout == "merge_on_read" else None
    rows = small_rows(args, inputs.rows)
    out = []
    for n in range(1, args.small_refreshes + 1):
        day = first_day + n - 1
        when = f"{rows_label(inputs.rows)} small refresh {n} (day {day})"
        written = inputs.apply_day(day, "one_input", rows)
        run = dbt_run(spark, project, "wide")
        require_partial_update(run, when)

        def statement(prefix: str) -> float | None:
            found = [seconds for seconds, text in run["statements"] if text.startswith(prefix)]
            return round(sum(found), 3) if found else None

        measured = {"n": n, "day": day, "rows_written": sum(written.values()), "changed_keys": run["changed_keys"],
                    "seconds": run["seconds"], "input_bytes": run["input_bytes"],
                    "merge_seconds": statement("merge into "),
                    "state_seconds": statement("select count_if(dbt_multijoin_seq > 0)"),
                    "rewrite_seconds": statement(f"insert into {store} replace where dbt_multijoin_seq > 0") if store else None,
                    "rewrote": any("rewritten into a file per key bucket" in line for line in run["log"]),
                    "compacted": any(": compacting" in line for line in run["log"]),
                    "delta_share": delta_share(spark, project, args.layout)}
        # Today's refresh of the same day: "wide_table_layout_refresh_seconds".
        measured.update({f"{name}_seconds": r["seconds"] for name, r in refresh_beside(spark, project, beside, when).items()})
        if n % SMALL_CHECK_EVERY == 0 or n == args.small_refreshes:
            rebuild = dbt_run(spark, project, "wide_rebuild", "--full-refresh")
            rebuilt = fingerprint(spark, project.table("wide_rebuild"))
            require_rebuild_rows(spark, project, ["wide", *beside], rebuilt, when)
            measured.update({"rebuild_seconds": rebuild["seconds"], "equals_rebuild": True, "rows": rebuilt[0]})
            if store:
                measured.update(warm_scans(spark, project.table("wide"), project.table("wide_rebuild")))
                measured.update(delta_files(spark, args.table_format, store))
        out.append(measured)
        log(f"{when}: refresh {measured['seconds']:.1f} s ({measured['changed_keys']:,} changed keys"
            + (", rewrote the delta's files" if measured["rewrote"] else "") + (", compacted" if measured["compacted"] else "") + ")"
            + ("" if measured["delta_share"] is None else f", delta rows {measured['delta_share']:.2%} of the base"))
    return out


def delta_files(spark, table_format: str, store: str) -> dict:
    """The files holding the merge-on-read store's delta rows, and on Iceberg the store's delete
    files (the position deletes a MERGE writes for the delta rows it replaces; Delta keeps one
    deletion vector per file instead)."""
    found = {"delta_files": spark.sql(f"select count(distinct file) from (select input_file_name() as file from {store} "
                                      "where dbt_multijoin_seq > 0)").first()[0]}
    if table_format == "iceberg":
        found["delete_files"] = spark.sql(f"select count(*) from {store}.files where content > 0").first()[0]
    return found


def threshold_rows(spark, project, t1_rows: int) -> int:
    """The rows of t1 a one_input day updates to bring the store's delta rows to THRESHOLD_FILL
    of the compaction share (0: they are there already). A changed key already in the delta adds
    no row: of t1's keys, the delta holds about its share of them."""
    row = store_rows(spark, project)
    missing = max(0.0, THRESHOLD_FILL * COMPACTION_SHARE * row.base - row.delta)
    # The day's rows are a hash sample of t1's keys: three standard deviations of its size are
    # kept short of the share, which only a small table notices (at 300 keys per input a sample
    # of 13 rows came out at 15 and the refresh compacted).
    wanted = missing - 3 * math.sqrt(missing)
    return max(0, round(wanted / max(1e-9, 1 - row.delta / t1_rows)))


def _brief(run: dict) -> dict:
    """A run for results.json: its log lines that say which path it took, what each input's
    changes read (where the macros log it) and how many keys changed."""
    said = ("changed keys", "partial update", "whole", ": input '")
    return {key: value for key, value in run.items() if key != "log"} | {
        "log": [line for line in run["log"] if any(words in line for words in said)]}


# --- the report --------------------------------------------------------------------------------


def _mib(n: float) -> str:
    mib = n / MIB
    return f"{mib:,.0f}" if mib >= 100 else f"{mib:.1f}" if mib >= 1 else f"{mib:.2f}"


def _median(values) -> float:
    return statistics.median(values)


def _of(size: dict, shape: str, run: str, key: str = "seconds") -> float:
    return _median(m[run][key] for m in size["shapes"][shape])


def _written(size: dict, shape: str, run: str) -> str:
    """The median bytes a run wrote to files, in MiB ("-" for runs from before they were counted)."""
    if any("output_bytes" not in m[run] for m in size["shapes"][shape]):
        return "-"
    return _mib(_of(size, shape, run, "output_bytes"))


def evaluate(results: dict, shape: str) -> dict:
    """The two targets for `shape`: their values, and the sizes they were measured at (the
    targets' sizes, or the largest and smallest the run has)."""
    sizes = sorted(results["sizes"], key=lambda s: s["rows"])
    large = next((s for s in sizes if s["rows"] == TARGET_LARGE), sizes[-1])
    small = next((s for s in sizes if s["rows"] == TARGET_SMALL), sizes[0])
    found = {"speedup": (_of(large, shape, "rebuild") / _of(large, shape, "refresh"), large["rows"])}
    if small is not large:
        found["scaling"] = (_of(large, shape, "refresh") / _of(small, shape, "refresh"), large["rows"], small["rows"])
    return found


def history_text(results: dict) -> str:
    if results["days"] == 1:
        return "a one-shot load (every row of every input written on day 1, the model built on it)"
    built = "the model refreshed after each" if results["daily_refresh"] else "the model built after the last"
    return f"{results['days']} daily batches of history ({built})"


def target_rows(results: dict) -> list[list[str]]:
    """The targets of one format's run, as [target, shape, value] rows: per shape the rebuild ÷
    refresh at 16M and the 16M ÷ 2M refresh (or why it is not measured), then in the
    merge-on-read layout the compaction's and the reader's."""
    sizes = sorted(results["sizes"], key=lambda s: s["rows"])
    scaling = SCALING_MERGE_ON_READ if results.get("layout") == "merge_on_read" else SCALING
    rows = []
    for shape in results["shapes"]:
        found = evaluate(results, shape)
        value, at = found["speedup"]
        rows.append([SPEEDUP.name, shape, f"{value:.2f} {'met' if SPEEDUP.met(value) else 'MISSED'}"
                     + ("" if at == TARGET_LARGE else f" (at {rows_label(at)})")])
        if "scaling" in found and not (results.get("changed_rows") or shape == "same_rows"):
            rows.append([scaling.name, shape, "not measured: the changed rows grew with the size (--changed-rows holds them equal)"])
        elif "scaling" in found:
            value, large, small = found["scaling"]
            measured = "" if (large, small) == (TARGET_LARGE, TARGET_SMALL) else f" ({rows_label(large)} ÷ {rows_label(small)})"
            rows.append([scaling.name, shape, f"{value:.2f} {'met' if scaling.met(value) else 'MISSED'}{measured}"])
        else:
            rows.append([scaling.name, shape, "not measured (one size)"])
    if results.get("layout") == "merge_on_read":
        rows += compaction_target(sizes) + reader_target(sizes)
    return rows


def markdown(results: dict) -> str:
    sizes = sorted(results["sizes"], key=lambda s: s["rows"])
    shapes = results["shapes"]
    k, fmt = results["k"], results["table_format"]
    layout = "" if results.get("layout", "table") == "table" else f", {results['layout']} layout"
    lines = [f"# Partial-update refresh against full rebuild: k = {k} inputs, {fmt}{layout}, Spark {results['machine']['spark']}", "",
             f"`dbt run` in-process (session method, local[2]). Per size: {history_text(results)}, "
             f"then change days of {changed_text(results)}; "
             f"{results['reps']} repetitions of each shape, interleaved. Odd inputs read through `ds`"
             + (" (with Delta's row tracking)" if results.get("row_tracking") else "") + ", even ones through "
             "their change feed. Medians; read = bytes read from files, shuffle = shuffle bytes written, over every "
             "stage of the `dbt run`.", ""]
    lines += [f"- `{shape}`: {SHAPES[shape]}" for shape in shapes] + [""]

    lines += ["## Targets", ""]
    lines += _table(["target", "shape", "value"], target_rows(results))

    lines += ["## Refresh and full rebuild", ""]
    rows = []
    for size in sizes:
        fixed = _median(size["fixed_cost"])
        for shape in shapes:
            runs = size["shapes"][shape]
            refresh, rebuild = _of(size, shape, "refresh"), _of(size, shape, "rebuild")
            net = (rebuild - fixed) / max(refresh - fixed, 1e-9)
            rows.append([f"{size['rows']:,}", shape, f"{_median(m['rows_written'] for m in runs):,.0f}",
                         f"{_median(m['refresh']['changed_keys'] for m in runs):,.0f}",
                         f"{refresh:.2f}", f"{rebuild:.2f}", f"{rebuild / refresh:.2f}", f"{net:.2f}",
                         _mib(_of(size, shape, "refresh", "input_bytes")), _mib(_of(size, shape, "rebuild", "input_bytes")),
                         _mib(_of(size, shape, "refresh", "shuffle_write_bytes")), _mib(_of(size, shape, "rebuild", "shuffle_write_bytes")),
                         _written(size, shape, "refresh"), _written(size, shape, "rebuild"),
                         "yes" if all(m["equals_rebuild"] for m in runs) else "NO"])
    lines += _table(["keys/input", "shape", "rows changed", "changed keys", "refresh s", "full rebuild s", "rebuild ÷ refresh",
                     "less the fixed cost", "refresh read MiB", "rebuild read MiB", "refresh shuffle MiB",
                     "rebuild shuffle MiB", "refresh written MiB", "rebuild written MiB", "equals the rebuild"], rows)

    if results.get("layout") == "merge_on_read":
        lines += merge_on_read_section(sizes, shapes)
    if any(size.get("small_refreshes") for size in sizes):
        lines += small_refreshes_section(sizes)
    lines += ["## Fixed cost, history and tables", ""]
    rows = []
    for size in sizes:
        history = [h["seconds"] for h in size["history"]]
        t1, t2, wide = size["inputs_at_change"]["t1"], size["inputs_at_change"]["t2"], size["tables_at_end"]["wide"]
        rows.append([f"{size['rows']:,}", f"{_median(size['fixed_cost']):.2f}", f"{size['first_build']['seconds']:.1f}",
                     " / ".join(f"{s:.1f}" for s in (history[0], _median(history), history[-1])) if history else "-",
                     f"{t1['files']} / {t1['versions']}", f"{t2['files']} / {t2['versions']}",
                     _mib((t1["bytes"] + t2["bytes"]) / 2 * k), _mib(wide["bytes"]),
                     f"{size['setup_seconds'] / 60:.1f}"])
    lines += _table(["keys/input", "dbt run of a one-row view s", "first build of wide s",
                     "history refreshes: first / median / last s", "t1 (ds) files / versions", "t2 (feed) files / versions",
                     "inputs MiB (about)", "wide MiB at the end", "set-up min"], rows)

    large = sizes[-1]
    lines += [f"## Where a refresh's time goes, {large['rows']:,} keys per input", "",
              "The longest statements of the median refresh of each shape, each timed in the dbt log from "
              "the line sending it to the next statement's (a query's fetch and the Jinja after it count to it).", ""]
    rows, execution_rows = [], []
    for shape in shapes:
        runs = sorted((m["refresh"] for m in large["shapes"][shape]), key=lambda run: run["seconds"])
        median_run = runs[len(runs) // 2]
        for seconds, statement in median_run.get("statements", [])[:6]:
            rows.append([shape, f"{seconds:.2f}", f"{seconds / median_run['seconds']:.0%}", f"`{statement}`"])
        for seconds, root in median_run.get("executions", [])[:3]:
            execution_rows.append([shape, f"{seconds:.2f}", f"`{root}`"])
    lines += _table(["shape", "s", "of the refresh", "statement"], rows)
    if execution_rows:
        lines += ["The same refreshes' longest SQL executions as Spark timed them (from submission to completion, "
                  "without the client's parsing and its work after the statement), by the root of their plan "
                  "(`WriteDelta`/`ReplaceData`: a MERGE's write).", ""]
        lines += _table(["shape", "s", "plan root"], execution_rows)
    lines += compaction_time(large)

    lines += ["## Notes", ""] + [f"- {note}" for note in notes(results)]
    return "\n".join(lines).rstrip() + "\n"


def compaction_time(size: dict) -> list[str]:
    """Where the compaction's time went at `size`, beside the median refresh of the default
    layout's model that it is compared with (nothing for runs from before both were timed)."""
    compaction = size.get("compaction", {})
    today = [m["wide_table_layout_refresh"] for shape in size["shapes"].values() for m in shape if "wide_table_layout_refresh" in m]
    if "statements" not in compaction or not today:
        return []
    today = sorted(today, key=lambda run: run["seconds"])[len(today) // 2]
    rows = []
    for what, run in (("compaction", compaction), ("default layout's refresh", today)):
        for seconds, statement in run["statements"][:5]:
            rows.append([what, "statement", f"{seconds:.2f}", f"{seconds / run['seconds']:.0%}", f"`{statement}`"])
        for seconds, root in run["executions"][:3]:
            rows.append([what, "Spark execution", f"{seconds:.2f}", f"{seconds / run['seconds']:.0%}", f"`{root}`"])
    return [f"## Where the compaction's time goes, {size['rows']:,} keys per input", "",
            f"The compaction on demand ({compaction['seconds']:.1f} s) and the median refresh of the same change in the "
            f"default layout ({today['seconds']:.1f} s): their longest statements by the dbt log, and their longest SQL "
            "executions as Spark timed them.", ""] + _table(["run", "timed as", "s", "of the run", "statement or plan root"], rows)


def table_layout_refresh(size: dict) -> float | None:
    """The median seconds of the default layout's refreshes run beside the merge-on-read model's
    at `size` (None in runs from before they were)."""
    runs = [m["wide_table_layout_refresh"]["seconds"] for shape in size["shapes"].values() for m in shape
            if "wide_table_layout_refresh" in m]
    return _median(runs) if runs else None


def compaction_target(sizes: list[dict]) -> list[list[str]]:
    """The compaction's target row, at 16M or the largest size measured."""
    large = next((s for s in sizes if s["rows"] == TARGET_LARGE), sizes[-1])
    today = table_layout_refresh(large)
    if today is None or "compaction" not in large:
        return [[COMPACTION.name, "all", "not measured (no default-layout refresh beside it)"]]
    at = "" if large["rows"] == TARGET_LARGE else f" (at {rows_label(large['rows'])})"
    rows = []
    # What a run pays when a compaction is due is a step (runs from before steps: the whole one).
    if "compaction_step" in large:
        value = large["compaction_step"]["seconds"] / today
        rows.append([COMPACTION.name, "a run's step", f"{value:.2f} {'met' if COMPACTION.met(value) else 'MISSED'}{at}"])
    value = large["compaction"]["seconds"] / today
    if "compaction_step" in large:
        return rows + [[COMPACTION.name, "the whole store, on demand", f"{value:.2f}{at}, after the step (what a run pays is the step)"]]
    return [[COMPACTION.name, "all", f"{value:.2f} {'met' if COMPACTION.met(value) else 'MISSED'}{at}"]]


def reader_warm_ratio(size: dict) -> tuple[float, float] | None:
    """A reader's warm full scan at the threshold, view ÷ the rebuilt table, and the delta share
    then (None in runs from before the threshold day, or where a change day had filled it)."""
    day = size.get("at_threshold")
    if not day or day.get("reader_scan_warm_seconds") is None:
        return None
    return day["reader_scan_warm_seconds"] / day["table_scan_warm_seconds"], day["delta_share"]


def reader_target(sizes: list[dict]) -> list[list[str]]:
    """The reader's target row per size measured at the threshold."""
    rows = []
    for size in sizes:
        if (found := reader_warm_ratio(size)) is not None:
            value, share = found
            rows.append([READER.name, f"at {rows_label(size['rows'])}",
                         f"{value:.2f} {'met' if READER.met(value) else 'MISSED'} (delta rows {share:.1%} of the base)"])
    return rows


def merge_on_read_section(sizes: list[dict], shapes: list[str]) -> list[str]:
    """What readers of the merge-on-read view pay against readers of the rebuilt table, and the
    compaction's cost, per size."""
    lines = ["## Merge-on-read: readers and compaction", "",
             "A reader's full scan: every column of every row (the benchmark's fingerprint query), of the view against the "
             "full rebuild's table, after each change day: the first scan of each (the session's first over the new store "
             "state, which also plans and compiles the view's query) and, warm, the median of three more of each, "
             "alternating, with the median time Spark took to plan each query (what a reader pays on every query, whatever "
             "rows it reads); the delta rows' share of the base rows then (the model compacts in a run past 0.03, the default "
             "compaction_share). After the last change day, a compaction's step as a run folds one when due (a `dbt run` "
             "with `dbt_multijoin_compact: step`: the key buckets it folded, the run's seconds), then the compaction of "
             "what is left, `dbt run-operation dbt_multijoin.compact`; each against the median refresh of the same model "
             "in the default layout on the same days (today's refresh: a MERGE that rewrites every file holding a "
             "changed key).", ""]
    rows = []
    for size in sizes:
        days = [m for shape in shapes for m in size["shapes"][shape]]
        view, table = _median(m["reader_scan_seconds"] for m in days), _median(m["table_scan_seconds"] for m in days)
        warm = [m for m in days if m.get("reader_scan_warm_seconds") is not None]
        warm_view, warm_table = (_median(m["reader_scan_warm_seconds"] for m in warm), _median(m["table_scan_warm_seconds"] for m in warm)) if warm else (None, None)
        warm_cells = [f"{warm_view:.2f} / {warm_table:.2f}", f"{warm_view / warm_table:.2f}"] if warm else ["-", "-"]
        # Runs before the planning was timed have none.
        planned = [m for m in warm if m.get("reader_planning_warm_seconds") is not None]
        warm_cells.append(f"{_median(m['reader_planning_warm_seconds'] for m in planned):.2f} / "
                          f"{_median(m['table_planning_warm_seconds'] for m in planned):.2f}" if planned else "-")
        compaction = size.get("compaction", {})
        rows.append([f"{size['rows']:,}", f"{view:.2f}", f"{table:.2f}", f"{view / table:.2f}", *warm_cells,
                     f"{_median(m['delta_share'] for m in days):.1%}", str(sum(m["compacted"] for m in days)),
                     f"{compaction.get('seconds', float('nan')):.1f}", f"{compaction.get('delta_share', float('nan')):.1%}",
                     f"{compaction.get('reader_scan_seconds', float('nan')):.2f} / {compaction.get('after_scan_seconds', float('nan')):.2f}",
                     f"{_median(m['refresh']['seconds'] for m in days):.1f}"])
        today = table_layout_refresh(size)
        rows[-1] += ([f"{today:.1f}", f"{compaction['seconds'] / today:.2f}" if compaction else "-"] if today else ["-", "-"])
        # Runs from before the compaction's steps have none.
        step = size.get("compaction_step")
        rows[-1] += ([f"{step['seconds']:.1f} ({len(step['buckets'])} bucket(s), {step['delta_share']:.1%} to {step['delta_share_after']:.1%})",
                      f"{step['seconds'] / today:.2f}" if today else "-"] if step else ["-", "-"])
    lines += _table(["keys/input", "view scan s", "table scan s", "view ÷ table", "warm view / table scan s", "warm view ÷ table",
                     "of which planning, view / table s",
                     "delta share", "refreshes that compacted",
                     "compaction s", "delta share compacted", "view scan before / after compaction s", "refresh s",
                     "default layout's refresh s", "compaction ÷ it", "step s (buckets folded, delta share)", "step ÷ it"], rows)
    rows = []
    for size in sizes:
        day = size.get("at_threshold")
        if not day:
            continue
        today = day.get("wide_table_layout_refresh", {}).get("seconds")
        rows.append([f"{size['rows']:,}", f"{day['rows_written']:,}", f"{day['refresh']['changed_keys']:,}", f"{day['delta_share']:.2%}",
                     "yes" if day["compacted"] else "no", f"{day['refresh']['seconds']:.1f}", f"{today:.1f}" if today else "-",
                     f"{day['rebuild']['seconds']:.1f}",
                     f"{day['reader_scan_warm_seconds']:.2f} / {day['table_scan_warm_seconds']:.2f}",
                     f"{day['reader_scan_warm_seconds'] / day['table_scan_warm_seconds']:.2f}"])
    if rows:
        lines += ["At the threshold: after the change days, one more day of t1 alone, as many rows as fill the delta rows "
                  f"to {THRESHOLD_FILL:.0%} of the share at which a run compacts ({COMPACTION_SHARE}), then a reader's scans "
                  "as above: the most a reader pays for the delta's join.", ""]
        lines += _table(["keys/input", "rows changed", "changed keys", "delta share after", "the refresh compacted", "refresh s",
                         "default layout's refresh s", "full rebuild s", "warm view / table scan s", "warm view ÷ table"], rows)
    return lines


def _median_of(runs: list[dict], key: str) -> str:
    values = [run[key] for run in runs if run.get(key) is not None]
    return f"{_median(values):.2f}" if values else "-"


def _reader_ratio_after(small: dict) -> str:
    """A checked small refresh's warm reader scan, view ÷ the rebuilt table ("-" unchecked)."""
    if not small.get("reader_scan_warm_seconds"):
        return "-"
    return f"{small['reader_scan_warm_seconds'] / small['table_scan_warm_seconds']:.2f}"


def small_refreshes_section(sizes: list[dict]) -> list[str]:
    """The small refreshes (--small-refreshes), SMALL_CHECK_EVERY at a time: what they took beside
    today's refresh of the same days, and where the store stood after the last of each group."""
    lines = ["## Many small refreshes", "",
             "At the end (in the merge-on-read layout after the compaction on demand: from an empty delta), days of t1 "
             "alone, each a tenth of a change day's rows (or --small-rows), each refreshed, with no day of every input "
             "between: a model whose runs change few keys, with many refreshes between two compactions. Per group of "
             f"{SMALL_CHECK_EVERY}: the medians of the refresh, of the default layout's refresh of the same days, of the refresh's MERGE into the store and its state query after (each where "
             "among the run's longest statements), the runs that rewrote the delta's files into a file per key bucket "
             "(past compaction_max_delta_files) and that compacted; after the group's last, checked against a full "
             "rebuild: the delta rows' share, the files holding them (and on Iceberg the store's delete files), and a "
             "reader's warm full scan, view ÷ the rebuilt table.", ""]
    rows = []
    for size in sizes:
        runs = size.get("small_refreshes") or []
        for first in range(0, len(runs), SMALL_CHECK_EVERY):
            group = runs[first:first + SMALL_CHECK_EVERY]
            last = group[-1]
            rows.append([f"{size['rows']:,}", f"{group[0]['n']}-{last['n']}", f"{_median(r['changed_keys'] for r in group):,.0f}",
                         _median_of(group, "seconds"), _median_of(group, "wide_table_layout_refresh_seconds"),
                         _median_of(group, "merge_seconds"), _median_of(group, "state_seconds"),
                         f"{sum(r['rewrote'] for r in group)} / {sum(r['compacted'] for r in group)}",
                         "-" if last.get("delta_share") is None else f"{last['delta_share']:.2%}",
                         str(last.get("delta_files", "-")), str(last.get("delete_files", "-")), _reader_ratio_after(last),
                         "yes" if last.get("equals_rebuild") else "-"])
    lines += _table(["keys/input", "refreshes", "changed keys", "refresh s", "default layout's refresh s", "MERGE s",
                     "state query s", "rewrote the delta's files / compacted", "delta share after", "delta files after",
                     "delete files after", "warm view ÷ table after", "equals the rebuild"], rows)
    return lines


def notes(results: dict) -> list[str]:
    """What the results say, in sentences computed from them."""
    sizes = sorted(results["sizes"], key=lambda s: s["rows"])
    small, large = sizes[0], sizes[-1]
    at = f"{rows_label(large['rows'])} keys per input"
    out = []
    fixed = _median(large["fixed_cost"])
    for shape in results["shapes"]:
        refresh, rebuild = _of(large, shape, "refresh"), _of(large, shape, "rebuild")
        out.append(f"At {at}, the `{shape}` refresh took {refresh:.1f} s against {rebuild:.1f} s for the full rebuild: "
                   f"{rebuild / refresh:.1f}x ({(rebuild - fixed) / max(refresh - fixed, 1e-9):.1f}x without the "
                   f"{fixed:.1f} s any `dbt run` costs here). It read {_mib(_of(large, shape, 'refresh', 'input_bytes'))} MiB "
                   f"({_of(large, shape, 'refresh', 'input_bytes') / max(_of(large, shape, 'rebuild', 'input_bytes'), 1):.0%} of the "
                   f"rebuild's) and shuffled {_mib(_of(large, shape, 'refresh', 'shuffle_write_bytes'))} MiB "
                   f"({_of(large, shape, 'refresh', 'shuffle_write_bytes') / max(_of(large, shape, 'rebuild', 'shuffle_write_bytes'), 1):.0%}).")
    if small is not large:
        for shape in results["shapes"]:
            grew = _of(large, shape, "refresh") / _of(small, shape, "refresh")
            out.append(f"From {rows_label(small['rows'])} to {rows_label(large['rows'])} keys per input "
                       f"({large['rows'] / small['rows']:.0f}x the keys, "
                       f"{'as many rows changed' if results.get('changed_rows') or shape == 'same_rows' else 'and as many more changed'}), the `{shape}` refresh grew "
                       f"{grew:.2f}x, the full rebuild {_of(large, shape, 'rebuild') / _of(small, shape, 'rebuild'):.2f}x.")
    runs = [m for shape in results["shapes"] for m in large["shapes"][shape]]
    ties = _median(m["tie_rows"] for m in runs)
    extra = _median(m["refresh"]["changed_keys"] - m["rows_written"] for m in runs)
    if extra > ties / 10:
        out.append(f"At {at}, a refresh replaced about {extra:,.0f} keys more than the rows the day changed (the previous "
                   f"day wrote {ties:,.0f} rows to the inputs read through `ds`): rows whose `ds` ties the recorded mark "
                   "were applied again (docs/dbt_package.md: rows that tie the mark).")
    else:
        # Fewer keys than rows where a day's rows share keys (several inputs updating one key).
        out.append(f"At {at}, a refresh's changed keys were within {abs(extra):,.0f} of the rows the day changed: the "
                   f"rows whose `ds` ties the recorded mark (the previous day wrote {ties:,.0f} to the inputs read through "
                   "`ds`) were told apart by the input's version and not applied again (docs/dbt_package.md: rows that "
                   "tie the mark).")
    over = [(s, shape) for s in sizes for shape in results["shapes"]
            if _median(m["refresh"]["changed_keys"] for m in s["shapes"][shape]) > HASH_FILTER_KEYS]
    if over:
        listed = ", ".join(f"`{shape}` at {rows_label(s['rows'])}" for s, shape in over)
        out.append(f"Above {HASH_FILTER_KEYS:,} changed keys the MERGE prunes its target before its join by a bloom "
                   f"filter of the changed keys' hashes instead of their list (`_mj_replaced_rows_filter`), which lets "
                   f"about 1% of the other rows through: {listed} (compare their bytes shuffled with the sizes under it).")
    else:
        out.append(f"Every refresh stayed under the {HASH_FILTER_KEYS:,} changed keys up to which the MERGE prunes "
                   "its target to the replaced rows by key hash.")
    history = large["history"]
    if len(history) > 1:
        out.append(f"At {at}, the history's daily refreshes took {history[0]['seconds']:.1f} s on day {history[0]['day']} "
                   f"and {history[-1]['seconds']:.1f} s on day {history[-1]['day']} (median "
                   f"{_median(h['seconds'] for h in history):.1f} s, {_median(h['changed_keys'] for h in history):,.0f} changed "
                   "keys), as the target gathered the "
                   f"{'deletion vectors' if results['table_format'] == 'delta' else 'delete files'} of its MERGEs.")
    for size in sizes:
        runs = size.get("small_refreshes") or []
        today = [r["wide_table_layout_refresh_seconds"] for r in runs if "wide_table_layout_refresh_seconds" in r]
        if runs:
            out.append(f"At {rows_label(size['rows'])} keys per input, {len(runs)} small refreshes of "
                       f"{_median(r['changed_keys'] for r in runs):,.0f} changed keys each took {sum(r['seconds'] for r in runs):.0f} s "
                       f"in all (the first {runs[0]['seconds']:.1f} s, the last {runs[-1]['seconds']:.1f} s)"
                       + (f", the default layout's refreshes of the same days {sum(today):.0f} s" if len(today) == len(runs) else "") + ".")
    measured = sum(len(m) for s in sizes for m in s["shapes"].values())
    out.append(f"The refreshed table equalled the full rebuild after each of the {measured} change days "
               "(row count and two sums of row hashes over every column, presence columns included).")
    return out


# --- the command -------------------------------------------------------------------------------


def changed_fraction(args, rows: int) -> float:
    """The fraction of an input's keys a change day changes at `rows` keys per input."""
    return args.changed_rows / rows if args.changed_rows else args.changed


def small_rows(args, rows: int) -> int:
    """The rows of t1 a small refresh's day updates at `rows` keys per input: --small-rows, or a
    tenth of a change day's."""
    return args.small_rows or max(1, round(changed_fraction(args, rows) * rows / 10))


def changed_text(results: dict) -> str:
    if results.get("changed_rows"):
        return f"{results['changed_rows']:,} rows of an input at every size"
    return f"{results['changed']:.1%} of an input's rows"


def parse(argv: list[str] | None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.partial_update", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=rows_list_arg, default=[2_000_000, 4_000_000, 8_000_000, 16_000_000],
                   help="comma list of keys per input (default 2m,4m,8m,16m)")
    p.add_argument("--table-format", type=list_arg, default=["delta"],
                   help="the inputs' and the model's format: delta or iceberg, or a comma list of both, each then run in a "
                        "process of its own, one after the other, with one report of them all (default delta)")
    p.add_argument("--k", type=int, default=8, help="inputs (default 8)")
    p.add_argument("--days", type=int, default=30, help="daily batches of history before the change days (default 30; 1: a one-shot load)")
    p.add_argument("--changed", type=float, default=0.01, help="rows changed on a change day, as a fraction of the keys per input (default 0.01)")
    p.add_argument("--changed-rows", type=rows_arg,
                   help="rows changed on a change day, the same number at every size (e.g. 20k; instead of --changed)")
    p.add_argument("--same-rows", type=rows_arg, default=20_000, help="rows a same_rows day updates at every size (default 20k)")
    p.add_argument("--row-tracking", action="store_true",
                   help="Delta: the inputs read through ds track their rows (delta.enableRowTracking)")
    p.add_argument("--layout", choices=["table", "merge_on_read"], default="table",
                   help="the refreshed model's layout (the full rebuild it is compared with is always a table)")
    p.add_argument("--shapes", type=list_arg, default=DEFAULT_SHAPES, help=f"comma list of {', '.join(SHAPES)} (default: {', '.join(DEFAULT_SHAPES)})")
    p.add_argument("--reps", type=int, default=3, help="timed change days per shape (default 3)")
    p.add_argument("--small-refreshes", type=int, default=0,
                   help="after the change days, this many days of t1 alone, --small-rows rows each, each refreshed, with no "
                        "day of every input between (default 0)")
    p.add_argument("--small-rows", type=rows_arg,
                   help="rows a small refresh's day updates (default: a tenth of a change day's)")
    p.add_argument("--daily-refresh", action=argparse.BooleanOptionalAction, default=True,
                   help="refresh the model after every day of the history (default), or build it after the last")
    p.add_argument("--name", help="results go to benchmarks/results/NAME (default partial-update-<format>-spark<version>)")
    p.add_argument("--out", type=Path, help="results directory (instead of --name)")
    p.add_argument("--work-dir", type=Path, default=HERE / "work" / "partial-update",
                   help="the session's metastore, warehouse and dbt projects (emptied first)")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--shuffle-partitions", type=int, default=200)
    p.add_argument("--keep", action="store_true", help="keep each size's tables (default: dropped once measured)")
    args = p.parse_args(argv)
    unknown = [s for s in args.shapes if s not in SHAPES]
    fractions = [changed_fraction(args, rows) for rows in args.rows]
    if unknown or args.days < 1 or args.reps < 1 or args.k < 2 or not all(0 < f <= 0.5 for f in fractions) \
            or ("same_rows" in args.shapes and not 0 < args.same_rows <= min(args.rows) / 2) \
            or args.small_refreshes < 0 or (args.small_rows is not None and not 0 < args.small_rows <= min(args.rows) / 2):
        p.error(f"shapes are {', '.join(SHAPES)}; --days >= 1, --reps >= 1, --k >= 2, 0 < --changed <= 0.5, "
                "--small-refreshes >= 0, --changed-rows, --same-rows and --small-rows at most half of the smallest --rows")
    formats = list(dict.fromkeys(args.table_format))
    if not formats or any(f not in ("delta", "iceberg") for f in formats):
        p.error("--table-format: delta, iceberg, or both")
    if args.row_tracking and "delta" not in formats:
        p.error("--row-tracking is Delta's (an Iceberg input's ties are told apart by the compare)")
    args.table_format = formats[0] if len(formats) == 1 else formats
    return args


def main(argv: list[str] | None = None, spark=None) -> dict:
    """Run the benchmark and write its results; with `spark`, in that session (its spark_catalog
    of --table-format), which is left running, and the work directory is not emptied."""
    import pyspark

    args = parse(argv)
    formats = "-".join(args.table_format) if isinstance(args.table_format, list) else args.table_format
    name = args.name or f"partial-update-{formats}-spark{pyspark.__version__}"
    out = (args.out or HERE / "results" / name).resolve()
    work = args.work_dir.resolve()
    if isinstance(args.table_format, list):
        return run_formats(args, name, out, work, argv)
    own_session = spark is None
    if own_session:
        from testkit.formats import build_format_session

        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        spark = build_format_session(args.table_format, work, "dbt-multijoin-partial-update-bench",
                                     {"spark.driver.memory": args.driver_memory,
                                      "spark.sql.shuffle.partitions": str(args.shuffle_partitions)})
    command = "python -m benchmarks.partial_update " + shlex.join(sys.argv[1:] if argv is None else argv)
    confs = {key: spark.conf.get(key, None) for key in ("spark.driver.memory", "spark.sql.shuffle.partitions",
                                                   "spark.sql.adaptive.enabled", "spark.master")}
    results = {"name": name, "command": command,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "reps": args.reps, "warmup": 0, "confs": confs, "machine": _machine(spark),
               "table_format": args.table_format, "layout": args.layout, "k": args.k, "days": args.days, "changed": args.changed,
               "changed_rows": args.changed_rows, "same_rows": args.same_rows, "row_tracking": args.row_tracking,
               "shapes": args.shapes, "daily_refresh": args.daily_refresh, "small_refreshes": args.small_refreshes,
               "sizes": []}
    try:
        for rows in args.rows:
            results["sizes"].append(measure_size(spark, args, rows, work / f"keys-{rows}"))
    finally:
        if own_session:
            spark.stop()
    write_results(out, results, markdown(results))
    return results


def format_argv(args, table_format: str, out: Path, work: Path) -> list[str]:
    """The command line of one format's run of a run over several (run_formats)."""
    argv = ["--rows", ",".join(str(rows) for rows in args.rows), "--table-format", table_format, "--k", str(args.k),
            "--days", str(args.days), "--changed", str(args.changed), "--same-rows", str(args.same_rows),
            "--layout", args.layout, "--shapes", ",".join(args.shapes), "--reps", str(args.reps),
            "--small-refreshes", str(args.small_refreshes),
            "--daily-refresh" if args.daily_refresh else "--no-daily-refresh", "--driver-memory", args.driver_memory,
            "--shuffle-partitions", str(args.shuffle_partitions), "--out", str(out), "--work-dir", str(work)]
    if args.changed_rows:
        argv += ["--changed-rows", str(args.changed_rows)]
    if args.small_rows:
        argv += ["--small-rows", str(args.small_rows)]
    if args.row_tracking and table_format == "delta":
        argv.append("--row-tracking")
    return argv + (["--keep"] if args.keep else [])


def run_formats(args, name: str, out: Path, work: Path, argv: list[str] | None) -> dict:
    """Each format of --table-format run in a process of its own, one after the other (each
    format's runtime goes on the JVM's class path as its session starts), into out/<format>/ with
    its own report; then one report of them all in out/."""
    runs = {}
    for table_format in args.table_format:
        child = [sys.executable, "-m", "benchmarks.partial_update",
                 *format_argv(args, table_format, out / table_format, work / table_format)]
        log("running " + shlex.join(child[1:]))
        subprocess.run(child, check=True, cwd=HERE.parent)
        runs[table_format] = json.loads((out / table_format / "results.json").read_text())
    first = runs[args.table_format[0]]
    results = {"name": name, "command": "python -m benchmarks.partial_update " + shlex.join(sys.argv[1:] if argv is None else argv),
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "reps": args.reps, "warmup": 0, "confs": first["confs"], "machine": first["machine"],
               "layout": args.layout, "k": args.k, "days": args.days, "shapes": args.shapes, "formats": runs}
    write_results(out, results, formats_markdown(results))
    return results


def formats_markdown(results: dict) -> str:
    """One report of a run over several formats: per format, size and shape the refresh against
    the rebuild (and, in the merge-on-read layout, today's refresh, a reader's scan and the
    compaction), then the targets; each format's own report holds the rest."""
    runs = results["formats"]
    first = next(iter(runs.values()))
    lines = [f"# Partial-update refresh, {', '.join(runs)}: k = {results['k']} inputs, {results['layout']} layout, "
             f"Spark {results['machine']['spark']}", "",
             f"Each format in a process of its own, one after the other, with the same arguments; each format's own "
             f"report (its set-up, history, where each run's time went) is in its directory: "
             + ", ".join(f"[{f}/results.md]({f}/results.md)" for f in runs) + ". Per size: "
             f"{history_text(first)}, then change days of {changed_text(first)}"
             + (f" (`same_rows`: {first.get('same_rows', 20_000):,} rows at every size)" if "same_rows" in results["shapes"] else "")
             + ". Medians of each run's repetitions; read = bytes read from files, shuffle = shuffle bytes written, "
             "written = bytes written to files, over every stage of the `dbt run`.", ""]
    lines += [f"- `{shape}`: {SHAPES[shape]}" for shape in results["shapes"]] + [""]
    mor = results["layout"] == "merge_on_read"
    rows = []
    for table_format, run in runs.items():
        for size in sorted(run["sizes"], key=lambda s: s["rows"]):
            for shape in run["shapes"]:
                refresh, rebuild = _of(size, shape, "refresh"), _of(size, shape, "rebuild")
                today = [m["wide_table_layout_refresh"]["seconds"] for m in size["shapes"][shape] if "wide_table_layout_refresh" in m]
                cells = [table_format, rows_label(size["rows"]), shape, f"{_of(size, shape, 'refresh', 'changed_keys'):,.0f}",
                         f"{refresh:.1f}"]
                if mor:
                    cells.append(f"{_median(today):.1f}" if today else "-")
                cells += [f"{rebuild:.1f}", f"{rebuild / refresh:.2f}",
                          " / ".join((_mib(_of(size, shape, "refresh", "input_bytes")), _mib(_of(size, shape, "refresh", "shuffle_write_bytes")),
                                      _written(size, shape, "refresh"))),
                          " / ".join((_mib(_of(size, shape, "rebuild", "input_bytes")), _mib(_of(size, shape, "rebuild", "shuffle_write_bytes")),
                                      _written(size, shape, "rebuild")))]
                if mor:
                    cells += [f"{_median(m['reader_scan_warm_seconds'] / m['table_scan_warm_seconds'] for m in size['shapes'][shape]):.2f}",
                              f"{_median(m['delta_share'] for m in size['shapes'][shape]):.2%}"]
                rows.append(cells)
    header = ["format", "keys per input", "shape", "changed keys", "refresh s" + (" (merge-on-read)" if mor else "")]
    header += ["default layout's refresh s"] if mor else []
    header += ["full rebuild s", "rebuild ÷ refresh", "refresh read / shuffled / written MiB", "rebuild read / shuffled / written MiB"]
    header += ["reader's warm scan, view ÷ table", "delta share"] if mor else []
    lines += ["## Refresh, full rebuild and readers", ""] + _table(header, rows)
    if mor:
        rows = []
        for table_format, run in runs.items():
            for size in sorted(run["sizes"], key=lambda s: s["rows"]):
                today = table_layout_refresh(size)
                step, compaction, threshold = size.get("compaction_step"), size.get("compaction"), reader_warm_ratio(size)
                day = size.get("at_threshold")
                rows.append([table_format, rows_label(size["rows"]),
                             f"{threshold[1]:.2%} / {threshold[0]:.2f}" if threshold else "-",
                             f"{day['refresh']['seconds']:.1f}" if day else "-",
                             f"{step['seconds']:.1f} ({step['delta_share']:.1%} to {step['delta_share_after']:.1%})" if step else "-",
                             f"{step['seconds'] / today:.2f}" if step and today else "-",
                             f"{compaction['seconds']:.1f}" if compaction else "-",
                             f"{compaction['seconds'] / today:.2f}" if compaction and today else "-",
                             " / ".join((_mib(compaction["input_bytes"]), _mib(compaction["shuffle_write_bytes"]),
                                         _mib(compaction["output_bytes"]) if "output_bytes" in compaction else "-")) if compaction else "-"])
        lines += ["## Merge-on-read: at the threshold, and compaction", "",
                  f"After the change days, one day of t1 alone fills the delta rows to {THRESHOLD_FILL:.0%} of the share at "
                  f"which a run compacts ({COMPACTION_SHARE}, the default), then a reader's warm full scan of the view against "
                  "the rebuilt table; then a run's compaction step (`dbt_multijoin_compact: step`) and the compaction of what is "
                  "left on demand (`dbt run-operation dbt_multijoin.compact`), each against the median refresh of the same "
                  "model in the default layout (today's refresh).", ""]
        lines += _table(["format", "keys per input", "at the threshold: delta share / warm view ÷ table", "that day's refresh s",
                         "compaction step s (delta share)", "step ÷ today's refresh", "compaction on demand s", "÷ today's refresh",
                         "compaction read / shuffled / written MiB"], rows)
    rows = []
    for table_format, run in runs.items():
        for size in sorted(run["sizes"], key=lambda s: s["rows"]):
            small = size.get("small_refreshes") or []
            if not small:
                continue
            last = small[-1]
            rows.append([table_format, rows_label(size["rows"]), str(len(small)), f"{_median(r['changed_keys'] for r in small):,.0f}",
                         _median_of(small, "seconds"), _median_of(small, "wide_table_layout_refresh_seconds"),
                         f"{sum(r['rewrote'] for r in small)} / {sum(r['compacted'] for r in small)}",
                         f"{last['delta_share']:.2%}" if last.get("delta_share") is not None else "-",
                         _reader_ratio_after(last)])
    if rows:
        lines += ["## Many small refreshes", "",
                  "After the compaction on demand, days of t1 alone of a tenth of a change day's rows, each refreshed "
                  "(--small-refreshes): the medians of the refresh and of the default layout's refresh of the same days, "
                  "the runs that rewrote the delta's files or compacted, and after the last the delta share and a reader's "
                  "warm scan of the view ÷ the rebuilt table; each format's report has them ten at a time.", ""]
        lines += _table(["format", "keys per input", "refreshes", "changed keys", "refresh s", "default layout's refresh s",
                         "rewrote the delta's files / compacted", "delta share after", "warm view ÷ table after"], rows)
    # Each format's targets as its own report gives them, but for the ones it did not measure.
    rows = [[table_format, *row] for table_format, run in runs.items() for row in target_rows(run)
            if not row[2].startswith("not measured")]
    lines += ["## Targets", ""] + _table(["format", "target", "shape", "value"], rows)
    equal = all(m["equals_rebuild"] for run in runs.values() for size in run["sizes"] for shape in size["shapes"].values() for m in shape)
    lines += ["## Notes", "", f"- Every refresh's rows equalled the full rebuild's: {'yes' if equal else 'NO'} (row count and two sums "
              "of row hashes over every column; the benchmark stops at the first that does not)."]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    main()
