"""dbt's session method at threads: 4, in this process (dbtRunner: dbt-spark's getOrCreate() returns
this suite's SparkSession), with models that each set their own confs.

The property: every model's query ran under its own confs and no other model's. Each model's SQL
reads the confs it runs under from inside the query, three ways: Spark's `${key}` substitution
(the value when Spark parses the statement that builds the table), `current_timezone()` (when it
plans it), and `spark_partition_id()` over the multi-join's output, whose number of partitions is
the `spark.sql.shuffle.partitions` the exchanges were planned with (AQE off, so that nothing
coalesces them). A model without its own confs must see the process session's. After the run the
process session's confs are exactly what they were before it.

What makes it hold is the package's dbt plugin (dbt_multijoin/dbt_plugin.py), which dbt loads from
the installed package: each dbt connection runs in a session of its own. Turned off
(DBT_MULTIJOIN_SESSION_PER_CONNECTION=false, dbt-spark's one shared session), a model that would
set confs fails instead, saying that the session is shared by the dbt threads.
"""

from __future__ import annotations

import pkgutil

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from testkit import REPO
from testkit.dbt import PipelineProject
from testkit.properties import PIPELINE_EXAMPLES, PIPELINE_SETTINGS

pytestmark = pytest.mark.slow

THREADS = 4
# Distinct keys over the two inputs: enough that every one of at most MAX_PARTITIONS hash
# partitions gets rows, so the count of partition ids is the number of partitions.
KEYS = 300
MAX_PARTITIONS = 12
TIME_ZONES = ["UTC", "Asia/Tokyo", "America/Lima", "Europe/Paris", "Australia/Adelaide"]
# The process session's values, set by the test: AQE off so that partition counts are the conf's.
BASE_CONFS = {"spark.sql.shuffle.partitions": "3", "spark.sql.adaptive.enabled": "false",
              "spark.sql.session.timeZone": "America/New_York",
              # dbt-spark sets it on the process session whenever it connects (session method).
              "spark.sql.ansi.enabled": "false"}

# Where each model reads its confs: `${...}` is substituted when the statement is parsed.
PROBES = """
    spark_partition_id() as partition_id,
    '${spark.sql.shuffle.partitions}' as partitions_conf,
    '${spark.sql.session.timeZone}' as time_zone_conf,
    current_timezone() as time_zone"""


def model_sql(kind: str, partitions: int | None, time_zone: str | None) -> str:
    """A model of `kind` (a multijoin strategy, or 'plain': dbt's table materialization over a
    repartition) reading its confs from inside its query."""
    if kind == "plain":
        return (f"{{{{ config(materialized='table') }}}}\nselect {PROBES}, k\n"
                f"from (select /*+ REPARTITION(k) */ k from {{{{ source('inputs', 'in_a') }}}}) as repartitioned\n")
    confs = {}
    if partitions is not None:
        confs["spark.sql.shuffle.partitions"] = str(partitions)
    if time_zone is not None:
        confs["spark.sql.session.timeZone"] = time_zone
    return (f"{{{{ config(materialized='multijoin', strategy='{kind}', spark_conf={confs!r}) }}}}\n"
            f"select {PROBES}, joined.*\nfrom (\n"
            "{{ dbt_multijoin.multi_join([source('inputs', 'in_a'), source('inputs', 'in_b')], key='k') }}\n"
            ") as joined\n")


MODEL = st.tuples(
    st.sampled_from(["multiway", "multiway", "chain", "balanced", "plain"]),
    st.none() | st.integers(2, MAX_PARTITIONS),
    st.none() | st.sampled_from(TIME_ZONES),
).map(lambda m: (m[0], None, None) if m[0] == "plain" else m)
# The issue's case: eight multiway models, each with its own partitions and time zone, and two
# models of dbt's own materialization between them.
ISSUE_CASE = [("multiway", 5 + i, TIME_ZONES[i % len(TIME_ZONES)]) for i in range(8)] + [("plain", None, None)] * 2


@pytest.fixture(scope="module")
def project(spark, tmp_path_factory):
    """Two input tables (KEYS distinct keys over both) and a project reading them as sources."""
    with pytest.MonkeyPatch.context() as patch:
        # dbt finds the plugin as it finds an installed package: a dbt_* directory on sys.path.
        if "dbt_multijoin" not in {module.name for module in pkgutil.iter_modules()}:
            patch.syspath_prepend(str(REPO))
        project = PipelineProject.create(spark, tmp_path_factory.mktemp("threads"), "parquet")
        spark.sql(f"create table {project.table('in_a')} using parquet as select id as k, id * 2 as a from range(0, {KEYS * 2 // 3})")
        spark.sql(f"create table {project.table('in_b')} using parquet as select id as k, id * 3 as b from range({KEYS // 3}, {KEYS})")
        project.sources("in_a", "in_b")
        yield project


def process_confs(spark) -> dict[str, str]:
    return {row.key: row.value for row in spark.sql("set").collect()}


def run_models(spark, project, models, *extra) -> tuple:
    """Write `models` as m00, m01, ... (removing the last run's), set the process session's
    confs, run them at THREADS threads; returns (the run, the session's confs before, after)."""
    for stale in (project.root / "models").glob("m*.sql"):
        stale.unlink()
    for i, (kind, partitions, time_zone) in enumerate(models):
        project.model(f"m{i:02}", model_sql(kind, partitions, time_zone))
    for key, value in BASE_CONFS.items():
        spark.conf.set(key, value)
    before = process_confs(spark)
    run = project.dbt("run", "--threads", str(THREADS), *extra)
    return run, before, process_confs(spark)


def observed(project, name: str) -> dict:
    """What the model's query saw, each probe's distinct values across the table's rows."""
    # This session cached the table's files when it last read it; dbt rewrote the table since,
    # in a session of its own.
    project.spark.catalog.refreshTable(project.table(name))
    (row,) = project.spark.sql(
        f"select count(distinct partition_id) as partitions, collect_set(partitions_conf) as partitions_conf, "
        f"collect_set(time_zone_conf) as time_zone_conf, collect_set(time_zone) as time_zone, count(*) as n "
        f"from {project.table(name)}").collect()
    return row.asDict()


# A dbt run an example, like the pipeline properties: CI draws one random example besides the
# pinned one (MULTIJOIN_PIPELINE_EXAMPLES).
@settings(max_examples=PIPELINE_EXAMPLES, **PIPELINE_SETTINGS)
@example(models=ISSUE_CASE)
@given(models=st.lists(MODEL, min_size=8, max_size=10))
def test_each_model_runs_under_its_own_confs_at_threads_4(spark, project, models):
    run, before, after = run_models(spark, project, models)
    assert run.success, run.describe()
    for i, (kind, partitions, time_zone) in enumerate(models):
        partitions = partitions or int(BASE_CONFS["spark.sql.shuffle.partitions"])
        time_zone = time_zone or BASE_CONFS["spark.sql.session.timeZone"]
        seen = observed(project, f"m{i:02}")
        assert seen["n"] > 0, (i, kind, seen)
        assert seen == {"partitions": partitions, "partitions_conf": [str(partitions)],
                        "time_zone_conf": [time_zone], "time_zone": [time_zone], "n": seen["n"]}, (
            f"m{i:02} ({kind}) ran under other confs", seen, run.describe())
    assert after == before


def test_one_shared_session_fails_the_models_that_set_confs_naming_the_threads(spark, project, monkeypatch):
    """dbt-spark's one session for every thread (the plugin turned off): each model with confs to
    set fails before it sets any, saying why; the others run under the process session's confs;
    the process session is left as it was."""
    monkeypatch.setenv("DBT_MULTIJOIN_SESSION_PER_CONNECTION", "false")
    models = [("multiway", 7, "UTC"), ("chain", 9, None), ("chain", None, None), ("plain", None, None)]
    run, before, after = run_models(spark, project, models)
    assert not run.success, run.describe()
    for name in ("m00", "m01"):
        assert run.status(name) == "error", run.describe()
        message = run.message(name)
        assert f"dbt_multijoin: model '{name}': its confs (spark.sql.shuffle.partitions=" in message, message
        assert f"would be set in a SparkSession that {THREADS} dbt threads share" in message, message
        assert "pip install dbt-multijoin" in message and "threads: 1" in message, message
    for i in (2, 3):
        assert run.status(f"m{i:02}") == "success", run.describe()
        seen = observed(project, f"m{i:02}")
        assert seen["partitions"] == 3 and seen["time_zone"] == [BASE_CONFS["spark.sql.session.timeZone"]], seen
    assert after == before
