"""Spark Connect: `dbt-multijoin connect start|status|stop`, and a real Connect client
(pyspark[connect]) against one real server per module, started with the real jar by `--jars` on
127.0.0.1 and stopped by pid however the module ends: hinted SQL and `multi_join` give vanilla's
rows with MultiJoin in EXPLAIN, across many client sessions; dbt's session method reaches the
server through SPARK_REMOTE.

Spark 4 only: pyspark 4 wheels ship the server; for Spark 3.5 it is a Maven Central artifact
(docs/pyspark.md).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.dbt import cli, make_tiny_project, private_jar

from buildtools import versions
from dbt_multijoin import EXTENSION_CLASS, connect, multi_join
from testkit.differential import chain_sql, multiset, typed_inputs, vanilla_sql
from testkit.processes import listening_addresses, running
from testkit.properties import EXAMPLES
from testkit.thrift_client import free_port

SPARK_MAJOR = int(connect.pyspark_version().split(".")[0])
needs_spark4 = pytest.mark.skipif(
    SPARK_MAJOR < 4,
    reason=f"Spark {connect.pyspark_version()}: the pyspark wheel has no Connect server, and `connect start` cannot "
    f"fetch {connect.server_package(connect.pyspark_version())} with --packages (not on Maven Central; docs/pyspark.md)",
)
# The client sets these when it connects; classic tests later in the same process must not see them.
_CLIENT_ENVIRONMENT = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")
SERVER_CONFS = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}
# The tested patch of each minor (spark-versions.toml).
PATCHES = {minor.minor: minor.patch for minor in versions.load()}


def test_build_command_binds_127_0_0_1_and_loads_the_jar_with_jars(tmp_path):
    server = connect.ConnectServer(15123, tmp_path)
    jar = tmp_path / "x.jar"
    command = connect.build_command(server, jar, "local[2]", spark_version=PATCHES["4.3"])
    joined = " ".join(command)
    assert command[1:3] == ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    assert f"--jars {jar} --conf spark.sql.extensions={EXTENSION_CLASS}" in joined
    assert "--packages" not in joined and "--driver-class-path" not in joined
    assert "spark.connect.grpc.binding.address=127.0.0.1" in joined
    assert "spark.connect.grpc.binding.port=15123" in joined
    assert "spark.driver.bindAddress=127.0.0.1" in joined
    assert command[-1] == "spark-internal"
    # Spark 3.5: the server comes from Maven Central.
    old = " ".join(connect.build_command(server, None, spark_version=PATCHES["3.5"]))
    assert f"--packages org.apache.spark:spark-connect_2.12:{PATCHES['3.5']}" in old and "spark.sql.extensions" not in old


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """One Connect server for the module: the real jar by --jars, 127.0.0.1, stopped by pid."""
    saved = {key: os.environ.get(key) for key in _CLIENT_ENVIRONMENT}
    directory = tmp_path_factory.mktemp("connect")
    port, state = free_port(), directory / "server"
    try:
        server = connect.start(port, state, jar=private_jar(directory), master="local[2]", confs=SERVER_CONFS)
        yield server
    finally:
        pid = connect.ConnectServer(port, state).pid()
        connect.stop(port, state)  # by pid, also when a test or the start failed
        assert pid is None or not running(pid)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def client(server):
    """A new client session of the server (a session of its own, not the cached default)."""
    from pyspark.sql import SparkSession

    return SparkSession.builder.remote(server.url).create()


@pytest.fixture(scope="module")
def remote(connect_server):
    session = client(connect_server)
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _reset_remote_confs(request):
    yield
    if "remote" in request.fixturenames:
        session = request.getfixturevalue("remote")
        for key in ("spark.multijoin.failOnFallback", "spark.multijoin.enabled"):
            session.conf.unset(key)


def register(session, types, inputs, value=lambda i: f"v{i + 1}"):
    frames = []
    for i, (column_types, rows) in enumerate(zip(types, inputs)):
        ddl = ", ".join([f"k{c + 1} {t}" for c, t in enumerate(column_types)] + [f"{value(i)} INT"])
        # Over Connect the rows travel as one Arrow batch in the plan: no Python workers.
        frame = session.createDataFrame(rows, ddl)
        frame.createOrReplaceTempView(f"t{i + 1}")
        frames.append(frame)
    return frames


def explain(session, sql: str) -> str:
    return session.sql(f"EXPLAIN {sql}").collect()[0][0]


@needs_spark4
@pytest.mark.slow
def test_server_status_and_binding(connect_server):
    pid = connect_server.pid()
    assert pid is not None
    assert listening_addresses(connect_server.port) == {"127.0.0.1"}
    status = cli("connect", "status", "--port", str(connect_server.port), "--dir", str(connect_server.state_dir))
    assert status.returncode == 0 and status.stdout.startswith(f"running: pid {pid}"), status.stdout + status.stderr
    again = cli("connect", "start", "--port", str(connect_server.port), "--dir", str(connect_server.state_dir))
    assert again.returncode == 1 and "already running" in again.stderr


@needs_spark4
@pytest.mark.slow
def test_hinted_sql_gives_vanilla_rows_with_multijoin(remote):
    types = [["INT", "STRING"]] * 3
    inputs = [
        [(1, "a", 1), (1, "a", 2), (None, "a", 3), (2, None, 4)],
        [(1, "a", 5), (3, "b", 6)],
        [(None, None, 7)],
    ]
    register(remote, types, inputs)
    for spelling in ("flat", "nested", "using"):
        hinted = chain_sql(3, 2, spelling, hint=True)
        assert "MultiJoin FullOuter, 3 inputs" in explain(remote, hinted), explain(remote, hinted)
        expected = multiset(remote.sql(chain_sql(3, 2, spelling, hint=False)).collect())
        assert multiset(remote.sql(hinted).collect()) == expected, spelling


@needs_spark4
@pytest.mark.slow
@settings(max_examples=max(EXAMPLES // 30, 3))  # each example is a few gRPC round trips and Spark jobs
@given(data=st.data())
def test_multi_join_over_connect_gives_vanilla_rows(remote, data):
    n = data.draw(st.integers(2, 4), label="inputs")
    how = data.draw(st.sampled_from(["full", "left", "inner"]), label="how")
    types, inputs = data.draw(typed_inputs(n), label="types, rows")
    clash = data.draw(st.booleans(), label="value columns share a name")
    arity = len(types[0])
    # createDataFrame sends local rows, and Spark prunes a join with an empty local relation
    # before the extension sees the chain (it then says "no join below the hint"): give an
    # empty input one row whose NULL key matches nothing. test_dataframe_api.py covers empty
    # inputs with scans Spark cannot see through.
    inputs = [rows or [(None,) * arity + (0,)] for rows in inputs]
    keys = [[f"k{c + 1}" for c in range(arity)] for _ in range(n)]
    columns = [["v" if clash else f"v{i + 1}"] for i in range(n)]
    outputs = [[f"t{i + 1}_v" if clash else f"v{i + 1}"] for i in range(n)]
    frames = register(remote, types, inputs, value=lambda i: columns[i][0])

    remote.conf.set("spark.multijoin.failOnFallback", "true")
    joined = multi_join(frames, on=keys[0], how=how)
    assert type(joined).__module__.startswith("pyspark.sql.connect")
    assert "MultiJoin " in joined._explain_string(mode="simple")
    assert joined.columns == keys[0] + [o for out in outputs for o in out]
    expected = multiset(remote.sql(vanilla_sql(how, keys, columns, outputs)).collect())
    actual = multiset(joined.collect())
    assert actual == expected, f"\nmissing: {expected - actual}\nextra: {actual - expected}"


@needs_spark4
@pytest.mark.slow
def test_multi_join_warns_with_the_extensions_reason_over_connect(remote):
    from dbt_multijoin import MultiJoinNotAppliedWarning
    from pyspark.errors import AnalysisException

    big = remote.createDataFrame([(2**53 + 1, 1)], "k BIGINT, x INT")
    small = remote.createDataFrame([(1, 2)], "k INT, y INT")
    dbl = remote.createDataFrame([(float(2**53), 3)], "k DOUBLE, z INT")
    with pytest.warns(MultiJoinNotAppliedWarning, match="which is not the coalesce of the keys"):
        multi_join([big, small, dbl], on="k")
    assert remote.conf.get("spark.multijoin.failOnFallback") == "false"
    remote.conf.set("spark.multijoin.failOnFallback", "true")
    with pytest.raises(AnalysisException, match="which is not the coalesce of the keys"):
        multi_join([big, small, dbl], on="k")


@needs_spark4
@pytest.mark.slow
def test_the_extension_holds_across_many_client_sessions(connect_server):
    # The server loads the jar with --jars alone (no driver class path); sessions that end must
    # not take the extension's classes away from the ones after them.
    for number in range(8):
        session = client(connect_server)
        try:
            assert session.sql("select multijoin_version()").collect()[0][0]
            a = session.createDataFrame([(1, number), (2, number)], "k INT, v INT")
            b = session.createDataFrame([(2, 20), (3, 30)], "k INT, v INT")
            joined = multi_join([a, b], on="k")
            assert "MultiJoin FullOuter, 2 inputs" in joined._explain_string(mode="simple")
            assert sorted(joined.collect(), key=lambda r: r.k) == [(1, number, None), (2, number, 20), (3, None, 30)]
        finally:
            session.stop()


CONFS_SEEN_AFTER = """\
-- depends_on: {{ ref('tiny_joined') }}
{%- set listing = {} -%}
{%- if execute -%}
  {%- for row in run_query('set') -%}{%- do listing.update({row['key']: row['value']}) -%}{%- endfor -%}
{%- endif %}
select '{{ listing.get("spark.sql.shuffle.partitions", "unset") }}' as shuffle_partitions,
       '{{ listing.get("spark.multijoin.failOnFallback", "unset") }}' as fail_on_fallback,
       '{{ listing.get("spark.dbt_multijoin.pending", "unset") }}' as pending
"""


@needs_spark4
@pytest.mark.slow
def test_dbt_session_method_runs_a_multiway_model_through_spark_remote(connect_server, remote, tmp_path):
    # dbt-spark's session method calls SparkSession.builder...getOrCreate(), which SPARK_REMOTE
    # turns into a Connect session of this server: one session for the whole dbt run.
    profile = (
        "multijoin:\n  target: dev\n  outputs:\n    dev:\n      type: spark\n      method: session\n"
        "      host: localhost\n      schema: tiny_connect\n      threads: 1\n"
    )
    project = make_tiny_project(tmp_path, profile)
    (project.root / "models" / "tiny_confs.sql").write_text(CONFS_SEEN_AFTER)
    project.env["SPARK_REMOTE"] = connect_server.url
    run = project.dbt("build")
    assert run.returncode == 0, run.describe()
    assert "dbt_multijoin: tiny_joined: strategy multiway, physical join operator: MultiJoin" in run.output
    # The tables live on the server; the model's confs (shuffle partitions 3, failOnFallback) were
    # set for it and put back before the next model ran in the same session.
    assert remote.sql("select count(*) from tiny_connect.tiny_joined").collect()[0][0] == 15
    seen = remote.sql("select * from tiny_connect.tiny_confs").collect()[0].asDict()
    assert seen == {"shuffle_partitions": "4", "fail_on_fallback": "unset", "pending": "unset"}, seen
