"""A merge-on-read model composes: its view is an input of another multi-join model, on a full
build and on changed_keys runs that track it by one of its columns, before and after compactions;
a change feed over it is refused naming the model, the input and its relation; and dbt's generic
tests run on it unchanged. After every run the downstream model equals Spark's vanilla join of
what readers of the merge-on-read model see with its other input. And a reader's filter on the key
still prunes the base files the view reads. A composite key with NULL parts compacts to the
vanilla rows. A model switched between the layouts is rebuilt once, says so, and leaves no data
file of the relation it replaced.
"""

from __future__ import annotations

import os
import re

# wide_mor: a partial-update model in the merge-on-read layout over inputs a and c (a row per key
# each), carrying a's updated_at as a column; it compacts only when a run asks.
WIDE_MOR = (
    "{{ config(materialized='multijoin', incremental_strategy='changed_keys', one_row_per_key=true,\n"
    "          layout='merge_on_read', compaction_share=1000) }}\n"
    "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'c')], key='k',\n"
    "    columns={'a': ['v', 'updated_at'], 'c': ['v']},\n"
    "    changed_since={'a': 'updated_at', 'c': 'updated_at'}) }}\n"
)
# downstream: the key-recompute path over wide_mor (tracked by updated_at: only input a changes
# in this test, so a's updated_at moves whenever a row of wide_mor does) and input d. A column
# name unique among the inputs keeps its name (updated_at); v is a_v and c_v.
DOWNSTREAM = (
    "{{ config(materialized='multijoin', incremental_strategy='changed_keys') }}\n"
    "{{ dbt_multijoin.multi_join([ref('wide_mor'), source('inputs', 'd')], key='k',\n"
    "    columns={'wide_mor': ['a_v', 'updated_at', 'c_v'], 'd': ['w']},\n"
    "    changed_since={'wide_mor': 'updated_at', 'd': 'updated_at'}) }}\n"
)
FEED_OVER_MOR = DOWNSTREAM.replace("'wide_mor': 'updated_at'", "'wide_mor': 'change_feed'")
SCHEMA_YML = """version: 2
models:
  - name: wide_mor
    columns:
      - name: k
        data_tests: [unique]
      - name: a_v
        data_tests:
          - accepted_values:
              arguments:
                values: [11, 21, 30, 40, 60]
                quote: false
"""


def vanilla(project) -> str:
    """downstream from scratch: Spark's own full outer join of wide_mor's view and d."""
    return (
        "select coalesce(m.k, d.k) as k, m.a_v, m.updated_at, m.c_v, d.w "
        f"from {project.table('wide_mor')} as m full outer join {project.table('d')} as d on m.k = d.k"
    )


def assert_downstream_is_vanilla(project, run) -> None:
    assert run.statuses.get("downstream") == "success", run.describe()
    built, expected = project.rows("downstream"), project.rows(vanilla(project))
    assert built == expected, f"missing: {expected - built}, extra: {built - expected}"


def view_parts(project, model: str) -> tuple[bool, bool]:
    """What Spark's optimizer keeps of the model's view for a reader: (the join with the delta
    rows, the branch of NULL-keyed rows). Each is left out while the store holds none of its rows
    (macros/changed_keys/merge_on_read.sql)."""
    from testkit.plans import optimized_plan

    plan = optimized_plan(project.spark.sql(f"select * from {project.table(model)}"))
    return "Join LeftOuter" in plan, "Window [" in plan


def changed_keys(run, model: str) -> int:
    """The changed-key count the run logged for `model`."""
    counts = re.findall(rf"{model}: (\d+) changed keys", run.output)
    assert counts, run.output
    return int(counts[-1])


def test_a_merge_on_read_model_is_an_input_of_another_model(project, table_format):
    spark, table = project.spark, project.table
    for name, column in (("a", "v"), ("c", "v"), ("d", "w")):
        spark.sql(f"create table {table(name)} (k int, {column} int, updated_at bigint) using {table_format}")
    spark.sql(f"insert into {table('a')} values (1, 10, 1000), (2, 20, 1000), (3, 30, 1000), (null, 40, 1000)")
    spark.sql(f"insert into {table('c')} values (2, 200, 1000), (4, 400, 1000)")
    spark.sql(f"insert into {table('d')} values (1, 7, 1000), (4, 8, 1000), (5, 9, 1000), (null, 6, 1000)")
    project.sources("a", "c", "d")
    project.model("wide_mor", WIDE_MOR)
    project.model("downstream", DOWNSTREAM)
    project.model("feed_over_mor", FEED_OVER_MOR)
    (project.root / "models" / "schema.yml").write_text(SCHEMA_YML)
    built = project.dbt("run")
    assert_downstream_is_vanilla(project, built)
    assert spark.sql(f"show create table {table('wide_mor')}").first()[0].lstrip().lower().startswith("create view")
    # A change feed over it is refused before anything is written, naming the model, the input,
    # its relation, and that it is a view.
    assert built.statuses["feed_over_mor"] == "error", built.describe()
    message = built.messages["feed_over_mor"]
    assert "change_feed" in message and "'wide_mor'" in message and table("wide_mor") in message and "view" in message, message
    assert not project.exists("feed_over_mor")
    (project.root / "models" / "feed_over_mor.sql").unlink()

    # A refresh of wide_mor writes delta rows for the keys a changed; downstream reads them
    # through the view, by updated_at above its mark.
    spark.sql(f"update {table('a')} set v = 21, updated_at = 1001 where k = 2")
    spark.sql(f"insert into {table('a')} values (6, 60, 1001)")
    spark.sql(f"insert into {table('d')} values (7, 10, 1001)")
    refreshed = project.dbt("run")
    assert refreshed.success, refreshed.describe()
    assert_downstream_is_vanilla(project, refreshed)
    assert "wide_mor: partial update" in refreshed.output, refreshed.output
    # k 2 and 6 through wide_mor, 7 through d. A view has no versions to tell which rows at the
    # mark changed since the last run, so wide_mor's rows at its mark (k 1 and 3) are applied
    # again, and the run says so; d's (an Iceberg or Delta table) are not.
    assert changed_keys(refreshed, "downstream") >= 3
    assert "every row at the mark is read and applied again, as the table has no versions" in refreshed.output, refreshed.output

    # A compaction folds the delta rows into the base in the same run as more changes: downstream
    # still sees each change once. And dbt's generic tests run on the view as on a table.
    spark.sql(f"update {table('a')} set v = 11, updated_at = 1002 where k = 1")
    compacting = project.dbt("build", "--vars", "{dbt_multijoin_compact: true}")
    assert compacting.success, compacting.describe()
    assert_downstream_is_vanilla(project, compacting)
    assert "wide_mor: compacting" in compacting.output, compacting.output
    assert changed_keys(compacting, "downstream") >= 1
    tests = [r["status"] for r in compacting.results if r["unique_id"].startswith("test.")]
    assert tests == ["pass", "pass"], compacting.describe()


# A merge-on-read model over 200 keys whose base rows land in 8 files, each a range of keys (the
# store is written sorted by the key; no coalescing of the 8 sort partitions).
PRUNED_MOR = (
    "{{ config(materialized='multijoin', incremental_strategy='changed_keys', one_row_per_key=true,\n"
    "          layout='merge_on_read', compaction_share=0.5,\n"
    "          spark_conf={'spark.sql.shuffle.partitions': '8', 'spark.sql.adaptive.coalescePartitions.enabled': 'false'}) }}\n"
    "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'c')], key='k',\n"
    "    columns={'a': ['v'], 'c': ['v']}, changed_since={'a': 'updated_at', 'c': 'updated_at'}) }}\n"
)


def inputs_a_and_c(project, table_format: str, a_rows: str, c_rows: str) -> None:
    """Inputs a and c (k int, v int, updated_at bigint) holding the rows of `a_rows` and `c_rows`
    (a query or a VALUES list), declared as sources."""
    for name, rows in (("a", a_rows), ("c", c_rows)):
        project.spark.sql(f"create table {project.table(name)} (k int, v int, updated_at bigint) using {table_format}")
        project.spark.sql(f"insert into {project.table(name)} {rows}")
    project.sources("a", "c")


def compacted_sql(project) -> str:
    """The last compaction's statement in the project's dbt log."""
    text = (project.root / "logs" / "dbt.log").read_text()
    return re.split(r"\n\d\d:\d\d:\d\d", text[text.rindex("replace where dbt_multijoin_seq"):], maxsplit=1)[0]


def base_files_out_of_key_order(project, model: str) -> list[str]:
    """The store's base files whose rows, in the order a scan reads them, are not sorted by the
    key `k` (a task reads a file's rows in a row: their ids, in the task's order, are consecutive)."""
    rows = project.spark.sql(
        f"select input_file_name() as file, k, monotonically_increasing_id() as at "
        f"from {project.table(model + '__dbt_mj_store')} where dbt_multijoin_seq = 0").collect()
    keys_by_file: dict[str, list] = {}
    for row in sorted(rows, key=lambda r: r.at):
        keys_by_file.setdefault(row.file, []).append(row.k)
    return [file for file, keys in keys_by_file.items() if keys != sorted(keys)]


def test_a_filter_on_the_key_prunes_what_the_view_reads(project, table_format):
    """Readers of the view who filter on the key read the base files whose key range holds it
    (Delta's data skipping, Iceberg's file metrics), not the whole base: sized from the plan by
    multijoin_scan_size, after a refresh has written delta rows, after a compaction that keeps
    each base file's key range (a new key in a file of its own), and after one that sorts the
    store again (the rows outside a file's range past compaction_share, and at least a tenth)."""
    from pipeline_tests.test_scan_size import scan_size

    spark, table = project.spark, project.table
    inputs_a_and_c(project, table_format, "select id, id, 1000 from range(200)", "select id * 2, id, 1000 from range(100)")
    vanilla = f"select coalesce(a.k, c.k) as k, a.v as a_v, c.v as c_v from {table('a')} as a full outer join {table('c')} as c on a.k = c.k"
    project.model("pruned", PRUNED_MOR)
    assert project.dbt("run").success
    # No delta row and no NULL key yet: a reader scans the base rows alone.
    assert view_parts(project, "pruned") == (False, False)
    spark.sql(f"update {table('a')} set v = -1, updated_at = 1001 where k in (3, 150)")
    refreshed = project.dbt("run")
    assert refreshed.success and "pruned: partial update" in refreshed.output, refreshed.describe()
    assert view_parts(project, "pruned") == (True, False)

    def pruned_by_a_key() -> None:
        whole_files, whole_bytes, _ = scan_size(spark, f"select * from {table('pruned')}")
        one_files, one_bytes, _ = scan_size(spark, f"select * from {table('pruned')} where k = 150")
        # The base is 8 files and a key is in one of them: 7 fewer files read.
        assert whole_files - one_files >= 7 and one_bytes < whole_bytes, (whole_files, whole_bytes, one_files, one_bytes)

    # (The view's join reads the delta rows' file, filter or not: it holds keys 3 to 150.)
    pruned_by_a_key()
    assert project.rows(f"select k, a_v, c_v from {table('pruned')} where k = 150") == \
        project.rows("select 150, -1, 75")
    # A compaction's step, asked for: of the two delta rows (keys 3 and 150, in two of the 8 key
    # buckets), it folds one bucket's, rewrites that bucket's files alone, in key order, and leaves
    # the other's delta row.
    buckets = project.rows(f"select k, dbt_multijoin_bucket from {table('pruned__dbt_mj_store')} where dbt_multijoin_seq > 0")
    files = {row.file for row in spark.sql(f"select input_file_name() as file from {table('pruned__dbt_mj_store')}").collect()}
    step = project.dbt("run", "--vars", "{dbt_multijoin_compact: step}")
    assert step.success and "pruned: compacting 2 delta rows into 200 base rows (asked: dbt_multijoin_compact=step)" in step.output, step.describe()
    folded = re.search(r"pruned: the compaction folds the delta rows of key bucket\(s\) (\d+), keeping each base file's key range", step.output)
    assert folded and len(buckets) == 2 and int(folded.group(1)) in {bucket for _, bucket in buckets}, (buckets, step.output)
    left = project.rows(f"select k, dbt_multijoin_bucket from {table('pruned__dbt_mj_store')} where dbt_multijoin_seq > 0")
    assert len(left) == 1 and next(iter(left))[1] != int(folded.group(1)), left
    rewritten = {row.file for row in spark.sql(f"select input_file_name() as file from {table('pruned__dbt_mj_store')} "
                                                f"where dbt_multijoin_bucket = {folded.group(1)}").collect()}
    untouched = {row.file for row in spark.sql(f"select input_file_name() as file from {table('pruned__dbt_mj_store')} "
                                                f"where dbt_multijoin_bucket <> {folded.group(1)}").collect()}
    assert not rewritten & files and untouched <= files, (rewritten, untouched, files)
    assert base_files_out_of_key_order(project, "pruned") == [] and view_parts(project, "pruned") == (True, False)
    assert project.rows(f"select k, a_v, c_v from {table('pruned')}") == project.rows(vanilla)
    pruned_by_a_key()
    # A compaction folds the delta rows into the base files they belong to, each file read and
    # written back alone: a key is still in one base file of the 8, the new key 1000 is in a file
    # of its own, and no delta file is left to read.
    spark.sql(f"update {table('a')} set v = -2, updated_at = 1002 where k = 151")
    spark.sql(f"insert into {table('a')} values (1000, 7, 1002)")
    compacted = project.dbt("run", "--vars", "{dbt_multijoin_compact: true}")
    assert compacted.success and "pruned: compacting" in compacted.output, compacted.describe()
    assert "pruned: the compaction keeps each base file's key range; 1 new key(s) go to files of their own" in compacted.output, compacted.output
    assert project.rows(f"select count(*) from {table('pruned__dbt_mj_store')} where dbt_multijoin_seq > 0") == project.rows("select 0")
    assert view_parts(project, "pruned") == (False, False)
    pruned_by_a_key()
    # It sorts nothing: each file's rows come out of its task in the file's order, the key's.
    assert "sort by" not in compacted_sql(project) and base_files_out_of_key_order(project, "pruned") == []
    assert project.rows(f"select k, a_v, c_v from {table('pruned')} where k in (150, 151, 1000)") == \
        project.rows("select 150, -1, 75 union all select 151, -2, null union all select 1000, 7, null")
    # 150 new keys (150 delta rows: c's changes hold no NULL-keyed row, so its NULL-keyed rows stay
    # and no marker replaces them), past compaction_share (0.5) of the 201 base rows: the run
    # compacts, and the rows outside a file's range (these and key 1000's) would pass the share
    # too, so it sorts the store again.
    spark.sql(f"insert into {table('c')} select id, id, 1003 from range(2000, 2150)")
    resorted = project.dbt("run")
    assert resorted.success and "pruned: compacting 150 delta rows into 201 base rows" in resorted.output, resorted.describe()
    assert "pruned: the compaction sorts the store by the key: 151 base row(s) would be outside" in resorted.output, resorted.output
    pruned_by_a_key()
    assert project.rows(f"select k, a_v, c_v from {table('pruned')}") == project.rows(vanilla)
    # A compaction_share under a tenth compacts sooner but sorts the store again only once the rows
    # outside a file's range pass a tenth of the base: 10 new keys, past 0.02 of the 351 base rows
    # and under a tenth of them, are folded by a step that keeps the key ranges.
    project.model("pruned", PRUNED_MOR.replace("compaction_share=0.5", "compaction_share=0.02"))
    spark.sql(f"insert into {table('c')} select id, id, 1004 from range(3000, 3010)")
    low_share = project.dbt("run")
    assert low_share.success and "pruned: compacting 10 delta rows into 351 base rows (past compaction_share 0.02)" in low_share.output, low_share.describe()
    assert "keeping each base file's key range; " in low_share.output and "sorts the store" not in low_share.output, low_share.output
    assert project.rows(f"select k, a_v, c_v from {table('pruned')}") == project.rows(vanilla)


# A merge-on-read model keyed on two columns, over inputs a and c with a row per key; a key with a
# NULL part is a row of its own (it equals no key), as in Spark's join. It compacts past 10 delta
# rows, whatever their share of the base.
COMPOSITE_MOR = (
    "{{ config(materialized='multijoin', incremental_strategy='changed_keys', one_row_per_key=true,\n"
    "          layout='merge_on_read', compaction_share=1000, compaction_max_delta_rows=10) }}\n"
    "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'c')], key=['k1', 'k2'],\n"
    "    columns={'a': ['v'], 'c': ['v']}, changed_since={'a': 'updated_at', 'c': 'updated_at'}) }}\n"
)


def test_a_composite_key_with_null_parts_compacts_to_the_vanilla_rows(project, table_format):
    """Delta rows of keys with and without a NULL part are folded into the base by the compaction
    of the run whose changes take them past compaction_max_delta_rows (far below
    compaction_share): readers see Spark's vanilla join of the inputs before and after, and no
    delta row is left in the store. With the bound lowered below half the delta rows, the
    compaction on demand refuses (it would broadcast them) and the run's joins them by a
    shuffle."""
    spark, table = project.spark, project.table
    for name in ("a", "c"):
        spark.sql(f"create table {table(name)} (k1 string, k2 int, v int, updated_at bigint) using {table_format}")
    spark.sql(f"insert into {table('a')} values ('x', 1, 10, 1000), ('x', 2, 20, 1000), (null, 1, 30, 1000), ('y', null, 40, 1000)")
    spark.sql(f"insert into {table('c')} values ('x', 2, 200, 1000), ('y', 1, 300, 1000), (null, null, 400, 1000)")
    project.sources("a", "c")
    project.model("composite", COMPOSITE_MOR)
    vanilla = (
        "select coalesce(a.k1, c.k1) as k1, coalesce(a.k2, c.k2) as k2, a.v as a_v, c.v as c_v "
        f"from {table('a')} as a full outer join {table('c')} as c on a.k1 = c.k1 and a.k2 = c.k2"
    )

    def assert_vanilla(run) -> None:
        assert run.success, run.describe()
        assert project.rows(f"select k1, k2, a_v, c_v from {table('composite')}") == project.rows(vanilla)

    assert_vanilla(project.dbt("run"))
    # Delta rows: a changed key, a new key, a changed and a new NULL-keyed row, a key c drops.
    spark.sql(f"update {table('a')} set v = 21, updated_at = 1001 where k1 = 'x' and k2 = 2")
    spark.sql(f"update {table('a')} set v = 31, updated_at = 1001 where k1 is null")
    spark.sql(f"insert into {table('c')} values ('x', 1, 100, 1001), ('z', null, 500, 1001)")
    spark.sql(f"delete from {table('c')} where k1 = 'y'")
    refreshed = project.dbt("run")
    assert_vanilla(refreshed)
    assert "composite: partial update" in refreshed.output, refreshed.output
    assert "composite: 9 delta rows beside 6 base rows (compaction past 1000 of them or past 10 rows)" in refreshed.output, refreshed.output
    assert view_parts(project, "composite") == (True, True)
    # The bound lowered to 4: the 9 delta rows are more than twice it, which the compaction on
    # demand, reading the view, would broadcast: it refuses and the store stays as it was.
    project.model("composite", COMPOSITE_MOR.replace("compaction_max_delta_rows=10", "compaction_max_delta_rows=4"))
    refused = project.dbt("run-operation", "dbt_multijoin.compact", "--args", "{model_name: composite}")
    assert not refused.success, refused.describe()
    assert "model 'composite' has 9 delta rows, more than twice its compaction_max_delta_rows 4" in refused.output, refused.output
    assert spark.sql(f"select count(*) from {table('composite__dbt_mj_store')} where dbt_multijoin_seq > 0").first()[0] == 9
    # More changes (c's NULL-keyed rows again, with their marker; a's key ('y', 1) merges into the
    # delta row c's delete left), past the bound: the run compacts, joining the delta rows by a
    # shuffle.
    spark.sql(f"update {table('c')} set v = 401, updated_at = 1002 where k1 is null and k2 is null")
    spark.sql(f"insert into {table('a')} values ('y', 1, 50, 1002)")
    compacted = project.dbt("run")
    assert_vanilla(compacted)
    assert "composite: compacting 12 delta rows into 6 base rows (past compaction_max_delta_rows 4)" in compacted.output, compacted.output
    assert "composite: the compaction joins the 12 delta rows to the base by a shuffle, not a broadcast" in compacted.output, compacted.output
    # Its statement reads the view's rows with no broadcast hint (the view's own SQL has one).
    log = (project.root / "logs" / "dbt.log").read_text()
    compaction = log[log.rindex("composite__dbt_mj_store replace where"):]
    assert ") as merged order by dbt_multijoin_bucket, k1, k2" in compaction, compaction[:3000]
    assert "BROADCAST" not in compaction[:compaction.index(") as merged order by dbt_multijoin_bucket, k1, k2")], compaction[:3000]
    store = table("composite__dbt_mj_store")
    assert spark.sql(f"select count(*) from {store} where dbt_multijoin_seq > 0").first()[0] == 0
    # The NULL-keyed rows are base rows now, which the view's scan of the base rows reads with the
    # others: neither the join nor the branch is left.
    assert view_parts(project, "composite") == (False, False)


SWITCHED = (
    "{{{{ config(materialized='multijoin', incremental_strategy='changed_keys', one_row_per_key=true{layout}) }}}}\n"
    "{{{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'c')], key='k',\n"
    "    columns={{'a': ['v'], 'c': ['v']}}, changed_since={{'a': 'updated_at', 'c': 'updated_at'}}) }}}}\n"
)


def data_files(path: str) -> int:
    """How many parquet files are under `path`."""
    return sum(name.endswith(".parquet") for _, _, names in os.walk(path) for name in names)


def location(project, relation: str) -> str:
    row = next(row for row in project.spark.sql(f"describe extended {relation}").collect() if row.col_name == "Location")
    return row.data_type.removeprefix("file:")


def test_a_model_switched_between_layouts_is_rebuilt_once_and_leaves_no_data_files(project, table_format):
    """Table to merge-on-read and back: each switch is one full build that the run names (as is a
    store an earlier release wrote), readers see Spark's vanilla join after it, and the relation it
    replaced is gone with its data files (an Iceberg DROP TABLE keeps them unless purged; Delta's
    go with the table). A bad compaction setting fails the run before it writes anything.

    On Delta it needs a metastore: the Delta pipeline sessions keep their tables in Spark's
    in-memory catalog, which holds a Delta table's schema, where the store's partition column (the
    key bucket) comes before its touched flags, and the store's second replace in one session
    fails Spark's check that a catalog table's partition columns come last
    (`CatalogTable.partitionSchema`). A Hive metastore, which dbt's session method and Thrift
    servers have, holds no Delta schema: with the session's catalog left as Hive, this example
    passes on Delta. An in-memory catalog is forgotten when its session ends, so no dbt project
    refreshes a model across runs in one."""
    spark, table = project.spark, project.table
    inputs_a_and_c(project, table_format, "values (1, 10, 1), (2, 20, 1), (null, 30, 1)", "values (2, 200, 1), (3, 300, 1)")
    vanilla = f"select coalesce(a.k, c.k) as k, a.v as a_v, c.v as c_v from {table('a')} as a full outer join {table('c')} as c on a.k = c.k"

    def run_as(layout: str, says: str | None, settings: str = "") -> None:
        project.model("switched", SWITCHED.format(layout=(f", layout='{layout}'" if layout else "") + settings))
        run = project.dbt("run")
        assert run.success, run.describe()
        if says:
            assert says in run.output, run.output
        assert project.rows(f"select k, a_v, c_v from {table('switched')}") == project.rows(vanilla)

    run_as("", None)
    table_path = location(project, table("switched"))
    assert data_files(table_path) > 0
    run_as("merge_on_read", "becomes a view over")
    store_path = location(project, table("switched__dbt_mj_store"))
    assert data_files(store_path) > 0
    assert data_files(table_path) == 0, table_path
    # A store as an earlier release wrote it (a delta row per key and run, which its view
    # aggregated) records no kind of delta rows: it is built again once, and the run says so.
    spark.sql(f"alter table {table('switched__dbt_mj_store')} unset tblproperties ('dbt_multijoin.mor.delta')")
    spark.sql(f"insert into {table('a')} values (5, 50, 2)")
    run_as("merge_on_read", "holds delta rows as an earlier release wrote them (a row per key and run)")
    # So is a store with no key buckets (an earlier release's), and one whose model changes its
    # compaction_buckets: the store is partitioned by the new count.
    spark.sql(f"alter table {table('switched__dbt_mj_store')} unset tblproperties ('dbt_multijoin.mor.buckets')")
    spark.sql(f"insert into {table('a')} values (6, 60, 3)")
    run_as("merge_on_read", "is not partitioned by key bucket (an earlier release wrote it)")
    spark.sql(f"insert into {table('a')} values (7, 70, 4)")
    run_as("merge_on_read", "compaction_buckets changed from 8 to 3: the store is partitioned again", ", compaction_buckets=3")
    buckets = spark.sql(f"select distinct dbt_multijoin_bucket from {table('switched__dbt_mj_store')}").collect()
    assert {row[0] for row in buckets} <= {0, 1, 2}, buckets
    spark.sql(f"insert into {table('a')} values (8, 80, 5)")
    run_as("merge_on_read", "partial update", ", compaction_buckets=3")
    # A view that records no digest of its columns, as an earlier release's (which pruned by the
    # flags of a view of the store's parts) and whatever its SQL (here the base rows' scan, after
    # the last run's compaction): before the run writes the store it gives way to a view that
    # reads every part, and the flags' view goes.
    spark.sql(f"alter view {table('switched')} unset tblproperties ('dbt_multijoin.mor.columns')")
    spark.sql(f"create view {table('switched__dbt_mj_store_parts')} as select * from values (false, false) as parts(d, n)")
    spark.sql(f"insert into {table('a')} values (9, 90, 6)")
    run_as("merge_on_read", "the view takes the columns of input(s) [0, 1] from delta rows, with the branch of NULL-keyed rows (before this run writes the store)",
           ", compaction_buckets=3")
    assert "switched__dbt_mj_store_parts" not in project.tables()
    log = (project.root / "logs" / "dbt.log").read_text()
    this_run = log[log.rindex("Running with dbt"):]
    assert this_run.index("create or replace view " + table("switched") + " tblproperties") < this_run.index("merge into "), this_run
    # A column the model gains (on_schema_change='append_new_columns'): the store gains it, and
    # the view names it before the run writes the store.
    gained = SWITCHED.replace("columns={{'a': ['v'],", "columns={{'a': ['v', 'updated_at'],")
    project.model("switched", gained.format(layout=", layout='merge_on_read', compaction_buckets=3, on_schema_change='append_new_columns'"))
    spark.sql(f"insert into {table('a')} values (10, 100, 7)")
    grown = project.dbt("run")
    assert grown.success and "switched: partial update" in grown.output, grown.describe()
    assert project.rows(f"select k, a_v, c_v, updated_at from {table('switched')}") == project.rows(
        f"select coalesce(a.k, c.k), a.v, c.v, a.updated_at from {table('a')} as a full outer join {table('c')} as c on a.k = c.k")
    spark.sql(f"insert into {table('c')} values (4, 400, 2)")
    run_as("", "becomes a table (layout table); its store")
    assert not {"switched__dbt_mj_store", "switched__dbt_mj_store_parts"} & project.tables()
    assert data_files(store_path) == 0, store_path
    # A bad compaction setting fails the switch when the run plans, before any write: the table
    # stays as it was.
    project.model("switched", SWITCHED.format(layout=", layout='merge_on_read', compaction_max_delta_rows=0"))
    refused = project.dbt("run")
    assert not refused.success, refused.describe()
    assert "model 'switched': compaction_max_delta_rows must be a whole number of at least 1, got '0'" in refused.output, refused.output
    project.model("switched", SWITCHED.format(layout=", layout='merge_on_read', compaction_max_delta_files=2.5"))
    refused = project.dbt("run")
    assert not refused.success, refused.describe()
    assert "model 'switched': compaction_max_delta_files must be a whole number of at least 1, got '2.5'" in refused.output, refused.output
    # So does a partitioning of the model's own (the store's is the key bucket), and a compaction
    # asked for in words the var does not take.
    project.model("switched", SWITCHED.format(layout=", layout='merge_on_read', partition_by='a_v'"))
    refused = project.dbt("run")
    assert not refused.success and "partitions its store by a bucket of the key (compaction_buckets), so partition_by cannot be set" in refused.output, refused.output
    project.model("switched", SWITCHED.format(layout=", layout='merge_on_read'"))
    refused = project.dbt("run", "--vars", "{dbt_multijoin_compact: now}")
    assert not refused.success and "the var dbt_multijoin_compact must be true, false or 'step', got 'now'" in refused.output, refused.output
    assert project.rows(f"select k, a_v, c_v from {table('switched')}") == project.rows(vanilla)
    assert not {"switched__dbt_mj_store", "switched__dbt_mj_store_parts"} & project.tables()
