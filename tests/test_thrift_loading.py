"""The extension keeps working when Spark loads its jar the documented ways (`--jars`,
`spark.jars`, `--packages`), without `--driver-class-path`, also after client sessions closed.

Such a server reads the jar through spark-submit's class loader, and Hive closes that loader
when a Thrift client session ends (ExtensionClassLoading.scala says how and why). A class of
the extension needed for the first time after that failed with NoClassDefFoundError. So every
server here first serves a session that uses nothing of the extension and closes it; only then
come the sessions that use it, each one checked in full: the version function, the MultiJoin
operator in EXPLAIN, and exactly the vanilla chain's rows.

The servers are started the plain way the Spark documentation gives (not `dbt-multijoin thrift`,
which adds more), each by this file, and stopped by pid in a `finally`.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Iterator

import pytest

from testkit.dbt import private_jar

from dbt_multijoin import EXTENSION_CLASS, __version__, thrift
from testkit.thrift_client import free_port

pytestmark = pytest.mark.slow

SESSIONS = 4
START_TIMEOUT = 240.0  # seconds; a shared 2-core machine starts a server slowly
# Keys in [start, stop) per input: each pair overlaps, each input has keys of its own.
INPUTS = {"t1": (0, 10), "t2": (5, 15), "t3": (8, 20)}
VIEWS = [
    f"CREATE OR REPLACE TEMPORARY VIEW {name} AS SELECT id AS k, id * 10 + {i} AS v{i} FROM range({start}, {stop})"
    for i, (name, (start, stop)) in enumerate(INPUTS.items(), start=1)
]
CHAIN = (
    "SELECT {hint}coalesce(t1.k, t2.k, t3.k) AS k, t1.v1, t2.v2, t3.v3 FROM t1 "
    "FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k"
)
HINTED, VANILLA = CHAIN.format(hint="/*+ MULTI_JOIN */ "), CHAIN.format(hint="")
OPERATOR = "MultiJoin FullOuter, 3 inputs"


def expected_rows() -> list[tuple]:
    """The FULL OUTER chain's rows, computed here, so that a broken comparison cannot pass."""
    keys = sorted(set().union(*(range(*bounds) for bounds in INPUTS.values())))
    return [
        (k, *(k * 10 + i if start <= k < stop else None for i, (start, stop) in enumerate(INPUTS.values(), start=1)))
        for k in keys
    ]


def in_order(rows) -> list[tuple]:
    return sorted((tuple(row) for row in rows), key=lambda row: row[0])


# How each documented way hands the jar to spark-submit; `directory` is the test's scratch space.
def jars_option(jar: Path, directory: Path) -> list[str]:
    return ["--jars", str(jar)]


def spark_jars_conf(jar: Path, directory: Path) -> list[str]:
    return ["--conf", f"spark.jars={jar}"]


def packages_option(jar: Path, directory: Path) -> list[str]:
    """`--packages` from a Maven repository in `directory` (Ivy settings that name only it: no network)."""
    version_dir = directory / "m2" / "org" / "example" / "dbt-multijoin" / __version__
    version_dir.mkdir(parents=True)
    (version_dir / f"dbt-multijoin-{__version__}.jar").write_bytes(jar.read_bytes())
    (version_dir / f"dbt-multijoin-{__version__}.pom").write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>org.example</groupId><artifactId>dbt-multijoin</artifactId><version>{__version__}</version></project>\n"
    )
    settings = directory / "ivysettings.xml"
    settings.write_text(
        '<ivysettings><settings defaultResolver="here"/><resolvers>'
        f'<ibiblio name="here" m2compatible="true" root="{(directory / "m2").as_uri()}"/>'
        "</resolvers></ivysettings>\n"
    )
    return [
        "--packages", f"org.example:dbt-multijoin:{__version__}",
        "--conf", f"spark.jars.ivySettings={settings}",
        "--conf", f"spark.jars.ivy={directory / 'ivy'}",
    ]  # fmt: skip


LOADING_WAYS = {"--jars": jars_option, "spark.jars": spark_jars_conf, "--packages": packages_option}


def log_tail(log: Path, lines: int = 60) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def documented_server(directory: Path, load_jar: list[str]) -> Iterator[int]:
    """A Thrift server on a free 127.0.0.1 port, the jar loaded by `load_jar` alone; yields the
    port. Stopped by its pid when the block exits, however it exits."""
    directory.mkdir(parents=True)
    port, log = free_port(), directory / "server.log"
    command = [
        str(thrift.spark_submit()), "--class", thrift.SERVER_CLASS, "--master", "local[2]",
        *load_jar,
        "--conf", f"spark.sql.extensions={EXTENSION_CLASS}",
        "--conf", f"spark.sql.warehouse.dir={directory / 'warehouse'}",
        "--conf", f"spark.hadoop.javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={directory / 'metastore_db'};create=true",
        "--conf", f"spark.driver.host={thrift.HOST}",
        "--conf", f"spark.driver.bindAddress={thrift.HOST}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=3",
        "--hiveconf", f"hive.server2.thrift.port={port}",
        "--hiveconf", f"hive.server2.thrift.bind.host={thrift.HOST}",
        "spark-internal",
    ]  # fmt: skip
    with open(log, "wb") as output:
        # cwd: Derby and Hive drop files (derby.log) into the working directory.
        server = subprocess.Popen(
            command,
            cwd=directory,
            env=dict(os.environ, SPARK_LOCAL_IP=thrift.HOST),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not listening(port):
            assert server.poll() is None, f"the server exited with code {server.returncode}:\n{log_tail(log)}"
            assert time.monotonic() < deadline, f"no server on port {port} after {START_TIMEOUT:.0f}s:\n{log_tail(log)}"
            time.sleep(0.5)
        yield port
    finally:
        server.terminate()  # the JVM's shutdown hooks stop the server and its SparkContext
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


def listening(port: int) -> bool:
    try:
        with socket.create_connection((thrift.HOST, port), timeout=1.0):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def client_session(port: int):
    """One Thrift client session (a cursor); closing it is what makes Hive close class loaders."""
    from pyhive import hive

    connection = hive.connect(host=thrift.HOST, port=port, username="dbt")
    try:
        yield connection.cursor()
    finally:
        connection.close()


def query(cursor, sql: str) -> list[tuple]:
    cursor.execute(sql)
    return cursor.fetchall()


@pytest.mark.parametrize("loading", LOADING_WAYS)
def test_sessions_after_a_closed_session(tmp_path, loading):
    load_jar = LOADING_WAYS[loading](private_jar(tmp_path), tmp_path)
    with documented_server(tmp_path / "server", load_jar) as port:
        with client_session(port) as cursor:
            assert query(cursor, "SELECT 1") == [(1,)]
        for session in range(SESSIONS):
            with client_session(port) as cursor:
                try:
                    for view in VIEWS:
                        cursor.execute(view)
                    assert query(cursor, "SELECT multijoin_version()") == [(__version__,)]
                    plan = "\n".join(row[0] for row in query(cursor, "EXPLAIN " + HINTED))
                    assert OPERATOR in plan and "SortMergeJoin" not in plan, plan
                    hinted, vanilla = in_order(query(cursor, HINTED)), in_order(query(cursor, VANILLA))
                except Exception as error:  # a server error's text holds the server's stack trace
                    where = f"session {session + 1} after the first close ({loading})"
                    raise AssertionError(f"{where}: {str(error)[:2000]}") from error
                assert vanilla == expected_rows()
                assert hinted == vanilla


# A session of its own (pyspark starts spark-submit with the jar in spark.jars), in a child
# process so that its JVM is not the test run's. After the session is built, it closes the class
# loader that read the jar, as Hive does in a Thrift server, then uses the extension.
SPARK_JARS_SESSION = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession

    jar, extension, hinted, vanilla, views = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "3").config("spark.jars", jar)
             .config("spark.sql.extensions", extension).getOrCreate())
    try:
        jvm = spark._jvm
        context_loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        loader = jvm.java.lang.Class.forName(extension, False, context_loader).getClassLoader()
        urls = [url.toString() for url in loader.getURLs()]
        loader.close()
        result = {"loader": loader.getClass().getName(), "urls": urls,
                  "readable_after_close": loader.findResource("org/apache/spark/sql/multijoin/BuildInfo.class") is not None}
        try:
            for view in views:
                spark.sql(view)
            result["version"] = spark.sql("SELECT multijoin_version()").first()[0]
            result["plan"] = spark.sql("EXPLAIN " + hinted).first()[0]
            result["hinted"] = [list(row) for row in spark.sql(hinted).collect()]
            result["vanilla"] = [list(row) for row in spark.sql(vanilla).collect()]
        except Exception as error:
            result["error"] = str(error)[:3000]
        print("RESULT " + json.dumps(result))
    finally:
        spark.stop()
    """
)


def test_spark_jars_session_survives_its_jar_loader_closing(tmp_path):
    jar = private_jar(tmp_path)
    completed = subprocess.run(
        [sys.executable, "-c", SPARK_JARS_SESSION, str(jar), EXTENSION_CLASS, HINTED, VANILLA, json.dumps(VIEWS)],
        cwd=tmp_path,
        env=dict(os.environ, SPARK_LOCAL_IP=thrift.HOST),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert completed.returncode == 0 and lines, completed.stdout[-3000:] + completed.stderr[-5000:]
    result = json.loads(lines[0].removeprefix("RESULT "))
    # The jar came through spark-submit's own class loader, and that loader is closed now.
    assert result["loader"] == "org.apache.spark.util.MutableURLClassLoader", result["loader"]
    assert jar.as_uri() in result["urls"] or f"file:{jar}" in result["urls"], result["urls"]
    assert result["readable_after_close"] is False
    assert "error" not in result, result["error"]
    assert result["version"] == __version__
    assert OPERATOR in result["plan"] and "SortMergeJoin" not in result["plan"], result["plan"]
    assert in_order(result["vanilla"]) == expected_rows()
    assert in_order(result["hinted"]) == in_order(result["vanilla"])
