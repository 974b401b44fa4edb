"""`dbt-multijoin thrift start|stop|status`: a local Spark Thrift Server with the extension,
bound to 127.0.0.1, stopped by its pid; and the thrift profile snippet against it.
"""

from __future__ import annotations

import os

import pytest

from testkit.dbt import cli, make_tiny_project, private_jar

from dbt_multijoin import EXTENSION_CLASS, thrift
from testkit.processes import listening_addresses, running
from testkit.thrift_client import free_port, hive_query


def test_build_command_loads_the_jar_on_127_0_0_1(tmp_path):
    server = thrift.ThriftServer(10123, tmp_path)
    jar = tmp_path / "x.jar"
    command = thrift.build_command(server, jar, "local[2]", {"spark.ui.enabled": "false"})
    joined = " ".join(command)
    assert command[1:3] == ["--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"]
    # The plain form Spark documents: the extension survives client sessions closing without
    # the jar on the driver's class path (tests/test_thrift_loading.py).
    assert f"--jars {jar} --conf spark.sql.extensions={EXTENSION_CLASS}" in joined
    assert "--driver-class-path" not in joined
    assert "--hiveconf hive.server2.thrift.port=10123 --hiveconf hive.server2.thrift.bind.host=127.0.0.1" in joined
    assert f"spark.sql.warehouse.dir={tmp_path.resolve() / 'warehouse'}" in joined
    assert f"databaseName={tmp_path.resolve() / 'metastore_db'};create=true" in joined
    assert command[-1] == "spark-internal"
    vanilla = " ".join(thrift.build_command(server, None))
    assert "--jars" not in vanilla and "spark.sql.extensions" not in vanilla


def test_stale_pid_file_is_not_a_server(tmp_path):
    # A pid file left behind, naming a live process that is no Thrift server (this one):
    # status says stopped, and stop must not signal that process.
    server = thrift.ThriftServer(free_port(), tmp_path)
    server.pid_file.parent.mkdir(parents=True, exist_ok=True)
    server.pid_file.write_text(f"{os.getpid()}\n")
    assert server.pid() is None
    assert thrift.stop(server.port, tmp_path) is False
    assert not server.pid_file.exists()


@pytest.mark.slow
def test_start_status_profile_stop(tmp_path):
    port, state = free_port(), tmp_path / "server"
    jar = private_jar(tmp_path)
    server = thrift.ThriftServer(port, state)
    common = ["--port", str(port), "--dir", str(state)]
    try:
        started = cli("thrift", "start", *common, "--master", "local[2]", "--jar", str(jar),
                      "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=4")
        assert started.returncode == 0, started.stdout + started.stderr
        pid = server.pid()
        assert pid is not None and f"pid {pid}" in started.stdout
        assert listening_addresses(port) == {"127.0.0.1"}
        status = cli("thrift", "status", *common)
        assert status.returncode == 0 and status.stdout.startswith(f"running: pid {pid}"), status.stdout
        again = cli("thrift", "start", *common, "--jar", str(jar))
        assert again.returncode == 1 and "already running" in again.stderr
        assert hive_query(port, "select multijoin_version()")[0][0]
        assert_hives_function_registry_initialises(port)

        # The thrift snippet, as printed, runs a multiway model on this server.
        snippet = cli("profile", "--method", "thrift", "--port", str(port), "--profile", "multijoin", "--schema", "tiny")
        assert snippet.returncode == 0, snippet.stderr
        project = make_tiny_project(tmp_path, snippet.stdout)
        run = project.dbt("build")
        assert run.returncode == 0, run.describe()
        assert "dbt_multijoin: tiny_joined: strategy multiway, physical join operator: MultiJoin" in run.output

        stopped = cli("thrift", "stop", *common)
        assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stdout + stopped.stderr
        assert not running(pid)
        assert not server.accepts_connections() and not server.pid_file.exists()
        status = cli("thrift", "status", *common)
        assert status.returncode == 1 and status.stdout.startswith("stopped")
        assert cli("thrift", "stop", *common).stdout.startswith("not running")
    finally:
        thrift.stop(port, state)  # by pid, whatever failed above


def assert_hives_function_registry_initialises(port):
    """Hive ends a client session through SessionState.close, which can build a metastore client
    and so initialise Hive's FunctionRegistry (seen on Spark 4.3 as a model's error: dbt's close of
    its session failed). Its static initialiser needs hive-llap-common, which Spark 4 no longer
    ships: the server has it (launch.thrift_server_class_path), so the class initialises here,
    in a task of the server's JVM, as it would at a close. Without the jar this query fails with
    NoClassDefFoundError."""
    registry = "org.apache.hadoop.hive.ql.exec.FunctionRegistry"
    assert hive_query(port, f"select reflect('java.lang.Class', 'forName', '{registry}')") == [(f"class {registry}",)]
