"""changed_keys with one_row_per_key=true: the partial-update refresh, in both layouts (the table
refreshed by MERGE, and merge-on-read: a view over base and delta rows, compacted now and then).
After every run what readers see equals a full rebuild of the same model, as a multiset, presence
columns included, whatever happened to the inputs in between (testkit/input_changes.py): inserts
and in-place updates of inputs tracked by a column, with values that tie the recorded mark;
deletes and key moves through input b's change feed; NULL keys; several inputs changing one key
in one run; inputs that change nothing; whole compactions at random runs, and a compaction's steps
(the delta rows of some key buckets folded, the others' left) whenever the delta rows pass their
bound, and the delta rows rewritten into a file per key bucket whenever their files pass theirs;
the merge-on-read refresh's lookup of the changed keys among the base rows' by a broadcast and
through each of the MERGE's filters. Every input keeps at most one row per key. And a
merge-on-read model wider than the columns the formats keep file statistics of by default reads its
delta rows without its base files.
"""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from testkit.properties import PIPELINE_EXAMPLES, PIPELINE_SETTINGS
from testkit.input_changes import BATCHES, FIRST_MERGE_FILTER, INPUTS, MERGE_FILTER_WORDS, ONLY_THE_CLOCK, TIES_AT_THE_MARK, Inputs, assert_merge_filter, full_rebuild, merge_filter, model_sql, nth_merge_filter

# A delete of b's NULL-keyed row alone (b's fourth row, its only one): the run reads b's change feed
# only and no changed row has a key (a run that read only change feeds and found no keyed row once
# failed, and so did every run after it), and it leaves the merge-on-read store a marker (b's
# NULL-keyed rows replaced, by none) as its only delta row: the view must still apply it, or
# readers see the row the marker replaced (a view of the base rows alone once did). Then a key
# moved away from b and deleted there while a and c still hold it, a key only b held deleted (its
# row must go), and a new NULL-keyed row of b's beside them; then a change of every input on one
# key in one run. Pinned with the ties at the mark after it, as one sequence of runs (one project
# and full build fewer per CI run): nothing of the clock moves on in between, so the ties still
# tie the mark.
ONLY_A_NULL_KEY_OF_A_FEED = [[("delete", "b", 3, None)]]
KEY_LEAVES_ONE_INPUT = [[("move", "b", 0, 5), ("delete", "b", 1, None), ("insert", "b", None, 6)],
                        [("insert", "a", 2, 8), ("update", "b", 1, 4), ("insert", "c", 2, 9)]]


# Both layouts over the same inputs, refreshed by the same runs. The merge-on-read model compacts
# whole when a run asks (COMPACTIONS), and past 5 delta rows folds the key buckets (of 4) holding
# the most until at most 3 are left (whole past 10, which it would not broadcast): these tables
# are so small that any share of the base would compact on nearly every run, and the delta rows
# of several runs would never be read together. A run that does not compact rewrites the delta
# rows into a file per bucket once they are in more than 2 files (a refresh writes a file per
# bucket and write task), which these runs' changes pass about every other run.
LAYOUTS = {"wide": None, "wide_mor": "merge_on_read"}
MAX_DELTA_FILES, BUCKETS = 2, 4
MOR_COMPACTION = {"compaction_share": 1000, "compaction_max_delta_rows": 5, "compaction_buckets": BUCKETS,
                  "compaction_max_delta_files": MAX_DELTA_FILES}
PINNED = ONLY_A_NULL_KEY_OF_A_FEED + KEY_LEAVES_ONE_INPUT + TIES_AT_THE_MARK + ONLY_THE_CLOCK
# Per run of an example, whether it asks the merge-on-read model to compact.
COMPACTIONS = st.lists(st.booleans(), min_size=3, max_size=3)


def assert_equals_full_rebuild(project, run, models=tuple(LAYOUTS)) -> None:
    assert run.success, run.describe()
    expected = project.rows(full_rebuild(project.schema, one_row_per_key=True))
    for name in models:
        built = project.rows(name)
        assert built == expected, f"{name}: missing: {expected - built}, extra: {built - expected}"


def scratch_objects(project) -> list[str]:
    """The run's own tables and views left behind (the merge-on-read store is not)."""
    tables = [t for t in project.tables() if "__dbt_mj_" in t and not t.endswith("__dbt_mj_store")]
    views = [r.tableName for r in project.spark.sql("show tables").collect() if r.tableName.startswith(f"{project.schema}__")]
    return tables + views


def assert_view_shape_is_the_stores(project) -> tuple[str, bool]:
    """After a run, the merge-on-read view's shape is exactly what the store holds (what it
    records; the rows it gives are checked against the rebuild): it takes from delta rows the
    columns of the inputs some delta row touches, and has the branch of NULL-keyed rows while a
    delta row is NULL-keyed or a marker; none it could miss, none a reader pays for in vain.
    Returns the inputs, comma-separated, and whether it has the branch."""
    spark, store = project.spark, project.table("wide_mor__dbt_mj_store")
    recorded = {row.key: row.value for row in spark.sql(f"show tblproperties {project.table('wide_mor')}").collect()}
    flags = [c for c in spark.table(store).columns if c.startswith("dbt_multijoin_touched_")]
    row = spark.sql("select " + ", ".join(f"coalesce(max(dbt_multijoin_seq > 0 and {c}), false)" for c in flags)
                    + ", coalesce(max(dbt_multijoin_seq > 0 and dbt_multijoin_null_group is not null), false)"
                    + f" from {store}").first()
    touched = ",".join(c.removeprefix("dbt_multijoin_touched_") for c, held in zip(flags, row) if held)
    assert recorded["dbt_multijoin.mor.delta_inputs"] == touched, (recorded, touched)
    assert recorded["dbt_multijoin.mor.null_keyed_rows"] == str(row[-1]).lower(), (recorded, row)
    view_text = spark.sql(f"show create table {project.table('wide_mor')}").first()[0]
    # A marker touches no input's columns: the view then keeps the join and the branch.
    assert ("union all" in view_text) == row[-1] and ("left outer join" in view_text) == (bool(touched) or row[-1]), view_text
    return touched, row[-1]


# The merge-on-read refresh finds which changed keys have a base row by a scan of the base rows'
# keys: with every changed key in each task (a broadcast) up to this many, else through the
# default layout's MERGE filter. The property's runs alternate the two (a limit of 0 on odd runs).
BROADCAST_KEY_LIMIT = 1000000


def assert_base_key_lookup(output: str, kind: str, broadcast: bool) -> None:
    """A merge-on-read refresh that changed keys looked them up among the base rows' keys by a
    broadcast, or else through the MERGE filter `kind` (merge_filter), and said which."""
    found = re.search(r"wide_mor: (\d+) changed keys", output)
    if found is None or int(found.group(1)) == 0:
        return
    broadcasts = "wide_mor: the refresh looks the base rows' keys up among the" in output
    filtered = f"wide_mor: the refresh reads the base rows' keys through {MERGE_FILTER_WORDS[kind]}" in output
    assert (broadcasts, filtered) == (broadcast, not broadcast), output


def delta_files(project) -> int:
    """The data files holding the merge-on-read store's delta rows."""
    store = project.table("wide_mor__dbt_mj_store")
    return project.spark.sql(f"select count(distinct file) from (select input_file_name() as file from {store} "
                             "where dbt_multijoin_seq > 0)").first()[0]


def run_log(project) -> str:
    return (project.root / "logs" / "dbt.log").read_text()


@settings(max_examples=PIPELINE_EXAMPLES, **PIPELINE_SETTINGS)
@given(batches=BATCHES, first_filter=FIRST_MERGE_FILTER, compactions=COMPACTIONS)
@example(batches=PINNED, first_filter=0, compactions=[False, True, False, False, False, False])
def test_partial_update_equals_full_rebuild(spark, table_format, tmp_path_factory, batches, first_filter, compactions):
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("partial-update"), table_format)
    inputs = Inputs(lambda sql: spark.sql(sql), lambda sql: spark.sql(sql).collect(), project.schema,
                    table_format, one_row_per_key=True)
    project.sources(*INPUTS)
    for name, layout in LAYOUTS.items():
        project.model(name, model_sql(one_row_per_key=True, layout=layout, **(MOR_COMPACTION if layout else {})))
    assert_equals_full_rebuild(project, project.dbt("run"))
    widened_runs, touched_after_a_run, steps, markers_alone, gathers = 0, False, 0, False, 0
    for run_index, batch in enumerate(batches):
        writes = inputs.writes
        for op in batch:
            inputs.apply(op)
        kind = nth_merge_filter(first_filter, run_index)
        compact = compactions[run_index % len(compactions)]
        broadcast = run_index % 2 == 0
        with merge_filter(spark, kind) as hash_list_limit:
            run = project.dbt("run", "--vars", f"{{dbt_multijoin_hash_list_limit: {hash_list_limit}, dbt_multijoin_compact: {str(compact).lower()}, "
                              f"dbt_multijoin_broadcast_key_limit: {BROADCAST_KEY_LIMIT if broadcast else 0}}}")
        assert_equals_full_rebuild(project, run)
        assert "wide: partial update" in run.output and "wide_mor: partial update" in run.output
        assert_merge_filter(run.output, kind, inputs.writes > writes)
        assert_base_key_lookup(run.output, kind, broadcast)
        assert ("wide_mor: compacting" in run.output) >= compact, run.output
        steps += "wide_mor: the compaction folds the delta rows of key bucket(s)" in run.output
        # A run that compacted nothing leaves the delta rows in at most MAX_DELTA_FILES files, or
        # rewrote them into a file per bucket; readers see the rebuild's rows either way (above).
        gathered = re.search(r"wide_mor: the \d+ delta rows are in \d+ files, past compaction_max_delta_files", run.output) is not None
        gathers += gathered
        if "wide_mor: compacting" not in run.output:
            assert delta_files(project) <= (BUCKETS if gathered else MAX_DELTA_FILES), run.output
        touched, null_keyed_branch = assert_view_shape_is_the_stores(project)
        touched_after_a_run |= bool(touched)
        # A NULL-keyed delta row touches its input: a branch with no input is markers alone.
        markers_alone |= null_keyed_branch and not touched
        if "(before this run writes the store)" in run.output:
            widened_runs += 1
            # Widened before the delta rows are written: a reader between the two writes must not
            # miss them.
            this_run = run_log(project).rsplit("Running with dbt", 1)[1]
            widened = this_run.index("create or replace view " + project.table("wide_mor") + " tblproperties")
            assert widened < this_run.index("merge into " + project.table("wide_mor__dbt_mj_store")), this_run
        assert not scratch_objects(project)
    # The full build's view takes no input's columns from delta rows: a run that left delta rows
    # widened it.
    assert widened_runs > 0 or not touched_after_a_run
    # The pinned runs pass the bound with delta rows in more than one bucket: some run folds a step.
    assert steps > 0 or batches != PINNED
    # And some run left markers as the store's only delta rows.
    assert markers_alone or batches != PINNED
    # And some run gathered the delta rows of several runs into a file per bucket.
    assert gathers > 0 or batches != PINNED
    properties = project.properties("wide")
    # The table still records the operator its full build used; the refreshes joined nothing.
    assert properties["dbt_multijoin.operator"] == "MultiJoin"
    assert int(properties["dbt_multijoin.changed_since.a"]) >= 1000
    # Readers need no extension: the view is Spark's own SQL.
    view = spark.sql(f"show create table {project.table('wide_mor')}").first()[0]
    assert "multijoin_" not in view.replace("dbt_multijoin_", ""), view
    # A compaction asked for outside a run folds every delta row in; readers see the same rows.
    before = project.rows("wide_mor")
    compacted = project.dbt("run-operation", "dbt_multijoin.compact", "--args", "{model_name: wide_mor}")
    assert compacted.success, compacted.describe()
    assert "wide_mor: compacted" in compacted.output, compacted.output
    store = project.table("wide_mor__dbt_mj_store")
    assert spark.sql(f"select count(*) from {store} where dbt_multijoin_seq > 0").first()[0] == 0
    assert project.rows("wide_mor") == before
    # It leaves the view the base rows' scan, with no join and no branch.
    assert assert_view_shape_is_the_stores(project) == ("", False)


def test_a_run_that_fails_keeps_the_table_and_its_marks(project, table_format):
    """Two changed rows of one key in input a break one_row_per_key: the run fails naming the
    input, its relation and the key, before anything is written; the table and its marks stay as
    they were, and once a's duplicate is gone the next run is right."""
    Inputs(lambda sql: project.spark.sql(sql), lambda sql: project.spark.sql(sql).collect(), project.schema,
           table_format, one_row_per_key=True)
    project.sources(*INPUTS)
    project.model("wide", model_sql(one_row_per_key=True))
    assert project.dbt("run", "-s", "wide").success
    before, marks = project.rows("wide"), project.properties("wide")
    # Two new rows of one key in input a, stamped above its mark (the inputs were written at
    # 1001..1012), and a change in b that would otherwise be applied.
    project.spark.sql(f"insert into {project.table('a')} values (900, 50, 5, null, 5000), (902, 50, 6, null, 5000)")
    project.spark.sql(f"insert into {project.table('b')} values (901, 6, 6, null, 5000)")
    failed = project.dbt("run", "-s", "wide")
    assert not failed.success
    message = failed.messages["wide"]
    assert "one_row_per_key" in message and "'a'" in message and project.table("a") in message and "k = 50" in message, message
    assert project.rows("wide") == before
    assert {k: v for k, v in project.properties("wide").items() if k.startswith("dbt_multijoin.")} == \
        {k: v for k, v in marks.items() if k.startswith("dbt_multijoin.")}
    assert not [t for t in project.tables() if "__dbt_mj_" in t]
    # The failure came after the run had created its changes' views, with the conf that keeps
    # their plans set for them: it is put back, and no ledger is left to replay.
    confs = {row.key: row.value for row in project.spark.sql("set").collect()}
    assert "spark.sql.legacy.storeAnalyzedPlanForView" not in confs and "spark.dbt_multijoin.pending" not in confs, confs

    project.spark.sql(f"delete from {project.table('a')} where id = 900")
    offset = len(run_log(project))
    again = project.dbt("run", "-s", "wide")
    assert_equals_full_rebuild(project, again, models=["wide"])
    # No changed row had a NULL key: the inputs' NULL-keyed rows were neither read nor replaced
    # (the property's pinned ties change NULL-keyed rows at the mark, which a run must see).
    assert "__dbt_mj_null_rows" not in run_log(project)[offset:]


# A merge-on-read model wider than the columns the formats keep file statistics of by default
# (Delta's first 32, Iceberg's first 100): input w gives it 100 columns, and the store's own
# columns come after the model's. Its 200 keys' base rows land in 8 files (8 sort partitions).
WIDE_COLUMNS = [f"w{i}" for i in range(100)]
WIDE_MOR = (
    "{{ config(materialized='multijoin', incremental_strategy='changed_keys', one_row_per_key=true,\n"
    "          layout='merge_on_read', compaction_share=1000,\n"
    "          spark_conf={'spark.sql.shuffle.partitions': '8', 'spark.sql.adaptive.coalescePartitions.enabled': 'false'}) }}\n"
    "{{ dbt_multijoin.multi_join([source('inputs', 'a'), source('inputs', 'w')], key='k',\n"
    f"    columns={{'a': ['v'], 'w': {WIDE_COLUMNS}}}, changed_since={{'a': 'updated_at', 'w': 'updated_at'}}) }}}}\n"
)


def test_a_wide_models_store_reads_its_delta_rows_and_skips_its_base_files(project, table_format):
    """The store's reads of its delta rows (`dbt_multijoin_seq > 0`: the view's join, a refresh's
    MERGE, the run's state query, a compaction) skip every file of base rows by the sequence's
    file statistics, in a model wider than the columns the formats keep them of by default, and
    the refresh's rows are the vanilla join's. Sized from the plan by multijoin_scan_size."""
    from pipeline_tests.test_scan_size import scan_size

    spark, table = project.spark, project.table
    spark.sql(f"create table {table('a')} using {table_format} as "
              "select cast(id as int) as k, cast(id as int) as v, 1000L as updated_at from range(200)")
    spark.sql(f"create table {table('w')} using {table_format} as select cast(id as int) as k, "
              + ", ".join(f"cast(id as int) as {c}" for c in WIDE_COLUMNS) + ", 1000L as updated_at from range(10)")
    project.sources("a", "w")
    project.model("wide_mor", WIDE_MOR)
    assert project.dbt("run").success
    spark.sql(f"update {table('a')} set v = -1, updated_at = 1001 where k in (3, 150)")
    # The lookup's own table that an earlier release's refresh, killed before its drop, left.
    spark.sql(f"create table {table('wide_mor__dbt_mj_in_base')} using parquet as select 3 as k")
    refreshed = project.dbt("run")
    assert refreshed.success and "wide_mor: partial update" in refreshed.output, refreshed.describe()
    assert not scratch_objects(project)
    store = table("wide_mor__dbt_mj_store")
    store_files, _, _ = scan_size(spark, f"select * from {store}")
    delta_files, _, _ = scan_size(spark, f"select * from {store} where dbt_multijoin_seq > 0")
    base_files = spark.sql(f"select count(distinct file) from (select input_file_name() as file from {store} "
                           "where dbt_multijoin_seq = 0)").first()[0]
    assert base_files >= 8 and store_files - delta_files >= base_files, (store_files, delta_files, base_files)
    vanilla = (f"select coalesce(a.k, w.k) as k, a.v, w.w99 from {table('a')} as a "
               f"full outer join {table('w')} as w on a.k = w.k")
    assert project.rows(f"select k, v, w99 from {table('wide_mor')}") == project.rows(vanilla)
