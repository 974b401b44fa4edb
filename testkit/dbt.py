"""The one dbt harness of the tests and the benchmarks: a dbt project in a directory of its own,
run by real `dbt` commands, and what a finished command left (`DbtRun`, from run_results.json).

A project runs dbt one of two ways, and both give a `DbtRun`:
- as a child process (`DbtProject`, a command that connects with the session method):
  integration_tests/ copies and tiny projects whose Spark is a JVM of dbt's own, as a user's
  session target is; the Thrift tests also start one in the background and kill the server under
  it. The child has a timeout (subprocess.run kills it by pid); on the session method its Spark
  JVM is pyspark's child and exits when dbt's end of its stdin pipe closes.
- in this process (dbtRunner): `DbtProject`'s other commands (a Thrift target, `dbt deps`), under
  the project's environment, and `PipelineProject`, whose session method's
  `SparkSession.builder.getOrCreate()` then returns the test's own session, over Delta or Iceberg
  tables the test writes between runs. A child dbt spends seconds of CPU starting (its imports,
  its adapter, reading the saved manifest back) before it sends a statement; in this process that
  is paid once, and a module runs dbt dozens of times (docs/development.md, "What CI runs").

`thrift_server()` stops its server by pid in a `finally`, also when the test fails.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import yaml

from dbt_multijoin import thrift
from testkit import REPO
from testkit.thrift_client import free_port

INTEGRATION_TESTS = REPO / "integration_tests"
DBT = str(Path(sys.executable).with_name("dbt"))
SCHEMA = "multijoin_it"
DBT_TIMEOUT = 900  # seconds for one dbt command
# Small Spark for 2-core CI machines: local[2] comes from the profile.
SPARK_SUBMIT_ARGS = "--conf spark.sql.shuffle.partitions=4 --conf spark.ui.enabled=false pyspark-shell"
# ANSI mode on for every Thrift session, on Spark 3.5 too (4.x has it on by default). The session
# method cannot run with it: dbt-spark pins spark.sql.ansi.enabled=false there.
THRIFT_CONFS = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", "spark.sql.ansi.enabled": "true"}


@dataclass
class DbtRun:
    """One finished dbt command: exit code, console output, run_results.json, dbt.log."""

    args: list[str]
    returncode: int
    output: str
    results: list[dict] = field(default_factory=list)
    # What stopped dbt before it ran a node (in process: the exception; a child prints it).
    error: str = ""

    @property
    def success(self) -> bool:
        return self.returncode == 0

    @property
    def statuses(self) -> dict[str, str]:
        """Each node's status by name ('success', 'error', 'pass', 'fail', ...)."""
        return {r["unique_id"].split(".")[-1]: r["status"] for r in self.results}

    @property
    def messages(self) -> dict[str, str]:
        return {r["unique_id"].split(".")[-1]: r.get("message") or "" for r in self.results}

    def result(self, name: str) -> dict:
        """The run_results entry of the model, seed or singular test called `name`."""
        matches = [r for r in self.results if r["unique_id"].split(".")[-1] == name]
        assert len(matches) == 1, f"{name}: {len(matches)} results in {[r['unique_id'] for r in self.results]}"
        return matches[0]

    def status(self, name: str) -> str:
        return self.result(name)["status"]

    def message(self, name: str) -> str:
        return self.result(name).get("message") or ""

    def model_order(self) -> list[str]:
        """Model names in the order they finished (threads: 1 makes that the run order)."""
        return [r["unique_id"].split(".")[-1] for r in self.results if r["unique_id"].startswith("model.")]

    def tests(self) -> list[dict]:
        return [r for r in self.results if r["unique_id"].startswith("test.")]

    def describe(self) -> str:
        lines = [f"dbt {' '.join(self.args)} -> exit {self.returncode} {self.error}"]
        for r in self.results:
            message = (r.get("message") or "").strip().replace("\n", " | ")
            lines.append(f"  {r['status']:8} {r['unique_id']}  {message[:300]}")
        if not self.results:
            lines.append(self.output[-4000:])
        return "\n".join(lines)


def _results(root: Path) -> list[dict]:
    """The run_results.json entries the last command over the project at `root` left, if any."""
    results_file = root / "target" / "run_results.json"
    return json.loads(results_file.read_text())["results"] if results_file.exists() else []


def dbt_in_this_process(root: Path, args: tuple[str, ...], *flags: str) -> DbtRun:
    """`dbt <args>` over the project at `root`, in this process (dbtRunner). No usage events: they
    would wait on a network CI does not have. `output` holds what dbt printed at info level and
    above."""
    from dbt.cli.main import dbtRunner
    from dbt_common.tests import enable_test_caching

    # dbt's own functional-test fixtures turn these caches on: Jinja's parse of each macro's source,
    # kept for the process. A new project, or a run with other --vars, parses every macro of dbt,
    # dbt-spark and this package again, and a pipeline run starts hundreds of such runs
    # (docs/development.md, "What CI runs"); the SQL each run renders is the same.
    enable_test_caching()
    printed: list[str] = []

    def keep_printed(event) -> None:
        if event.info.level in ("info", "warn", "error") and event.info.msg:
            printed.append(str(event.info.msg))

    (root / "target" / "run_results.json").unlink(missing_ok=True)
    outcome = dbtRunner(callbacks=[keep_printed]).invoke(
        [*args, "--project-dir", str(root), "--profiles-dir", str(root), "--no-send-anonymous-usage-stats", *flags]
    )
    error = "" if outcome.exception is None else str(outcome.exception)
    return DbtRun(list(args), 0 if outcome.success else 1, "\n".join(printed), _results(root), error)


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """This process's environment replaced by `env` for the block (dbt reads its flags and the
    project's env_var() from it), then restored."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@dataclass
class DbtProject:
    """A copy of integration_tests/ whose packages.yml points at this repository."""

    root: Path
    env: dict[str, str]

    @property
    def spark_dir(self) -> Path:
        return Path(self.env["DBT_MULTIJOIN_SPARK_DIR"])

    def command(self, *args: str) -> list[str]:
        """The dbt command line for this project."""
        return [DBT, *args, "--project-dir", str(self.root), "--profiles-dir", str(self.root)]

    def dbt(self, *args: str, timeout: int = DBT_TIMEOUT) -> DbtRun:
        """The command, in this process unless it connects with the session method (the module's
        header says why); `timeout` bounds a child's run."""
        if not self._opens_a_spark_session(args):
            with _environment(self.env):
                return dbt_in_this_process(self.root, args)
        command = self.command(*args)
        (self.root / "target" / "run_results.json").unlink(missing_ok=True)
        completed = subprocess.run(
            command,
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        return DbtRun(list(args), completed.returncode, completed.stdout, _results(self.root))

    def _opens_a_spark_session(self, args: tuple[str, ...]) -> bool:
        """Whether the command connects with dbt-spark's session method: the target `--target`
        names, or the profile's default, in the project's profiles.yml."""
        if args[0] == "deps":
            return False
        profile_name = yaml.safe_load((self.root / "dbt_project.yml").read_text())["profile"]
        profile = yaml.safe_load((self.root / "profiles.yml").read_text())[profile_name]
        target = args[args.index("--target") + 1] if "--target" in args else profile["target"]
        return profile["outputs"][target]["method"] == "session"

    def compiled(self) -> Path:
        return self.root / "target" / "compiled" / "dbt_multijoin_integration_tests"

    def manifest(self) -> dict:
        return json.loads((self.root / "target" / "manifest.json").read_text())

    def multiway_models(self) -> list[str]:
        return sorted(
            node["name"]
            for node in self.manifest()["nodes"].values()
            if node["resource_type"] == "model"
            and node["config"].get("materialized") == "multijoin"
            and node["config"].get("strategy") == "multiway"
        )


def make_project(
    directory: Path,
    jar: Path | None = None,
    thrift_port: int | None = None,
    thrift_vanilla_port: int | None = None,
) -> DbtProject:
    """Copy integration_tests/ into `directory` and install the package from this repo."""
    root = directory / "integration_tests"
    shutil.copytree(
        INTEGRATION_TESTS,
        root,
        ignore=shutil.ignore_patterns("target", "dbt_packages", "logs", "package-lock.yml", "__pycache__"),
    )
    packages = root / "packages.yml"
    packages.write_text(re.sub(r"local: \.\./?", f"local: {json.dumps(str(REPO))}", packages.read_text()))
    return _installed(
        root,
        DBT_MULTIJOIN_JAR=str(jar or "/nonexistent/no-jar-for-this-run.jar"),
        DBT_MULTIJOIN_SPARK_DIR=str(directory / "spark"),
        DBT_MULTIJOIN_SCHEMA=SCHEMA,
        DBT_MULTIJOIN_THRIFT_PORT=str(thrift_port or 1),
        DBT_MULTIJOIN_THRIFT_VANILLA_PORT=str(thrift_vanilla_port or 1),
    )


def _installed(root: Path, **env: str) -> DbtProject:
    """The project at `root` with its packages installed, run with quiet, reproducible dbt and a
    small Spark (2-core CI machines)."""
    project = DbtProject(
        root,
        dict(
            os.environ,
            DBT_SEND_ANONYMOUS_USAGE_STATS="false",
            DBT_USE_COLORS="false",
            # The tests run dbt several times over one project: each run re-parses only what changed.
            DBT_PARTIAL_PARSE="true",
            DBT_LOG_PATH=str(root / "logs"),
            SPARK_LOCAL_IP="127.0.0.1",
            PYSPARK_SUBMIT_ARGS=SPARK_SUBMIT_ARGS,
            **env,
        ),
    )
    deps = project.dbt("deps")
    assert deps.returncode == 0, deps.output
    return project


def private_jar(directory: Path) -> Path:
    """The extension jar, built if needed, copied for this test run: a JVM reads classes from its
    jar lazily, so a rebuild of jvm/target during the run must not swap the file under it.
    DBT_MULTIJOIN_TEST_JAR names a prebuilt jar to use instead."""
    from testkit import extension_jar

    jar = extension_jar()
    copy = directory / jar.name
    shutil.copyfile(jar, copy)
    return copy


@contextlib.contextmanager
def thrift_server(state_dir: Path, jar: Path | None) -> Iterator[thrift.ThriftServer]:
    """A Spark Thrift Server on a free 127.0.0.1 port, with the jar or (jar=None) vanilla;
    stopped by pid when the block exits, however it exits."""
    port = free_port()
    server = thrift.start(port, state_dir, jar=jar, master="local[2]", confs=THRIFT_CONFS)
    try:
        yield server
    finally:
        thrift.stop(port, state_dir)


# The session-target build is shared by the integration and sqlfluff tests when they run in
# one pytest process (it takes a minute or two); whoever asks first builds it.
_SESSION_BUILD: dict[str, tuple[DbtProject, DbtRun]] = {}


def session_build(directory_factory, jar: Path) -> tuple[DbtProject, DbtRun]:
    if "build" not in _SESSION_BUILD:
        project = make_project(directory_factory.mktemp("dbt-session"), jar=jar)
        _SESSION_BUILD["build"] = (project, project.dbt("build", "--target", "session"))
    return _SESSION_BUILD["build"]


def make_tiny_project(directory: Path, profiles_yml: str, profile: str = "multijoin") -> DbtProject:
    """A three-model project for a profile under test: two inputs and a multiway multi_join."""
    root = directory / "tiny"
    (root / "models").mkdir(parents=True)
    (root / "profiles.yml").write_text(profiles_yml)
    (root / "dbt_project.yml").write_text(
        f"name: tiny\nversion: '1.0'\nconfig-version: 2\nprofile: {profile}\n"
        "models:\n  tiny:\n    +file_format: parquet\n"
    )
    (root / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(REPO))}\n")
    (root / "models" / "tiny_a.sql").write_text("select id as k, id * 2 as a from range(10)\n")
    (root / "models" / "tiny_b.sql").write_text("select id as k, id * 3 as b from range(5, 15)\n")
    (root / "models" / "tiny_joined.sql").write_text(
        "{{ config(materialized='multijoin', strategy='multiway', spark_conf={'spark.sql.shuffle.partitions': '3'}) }}\n"
        "{{ dbt_multijoin.multi_join([ref('tiny_a'), ref('tiny_b')], key='k') }}\n"
    )
    return _installed(root)


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """`dbt-multijoin <args>` as a user runs it."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("dbt-multijoin")), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"),
    )


# Each pipeline project works in a schema of its own.
_SCHEMAS = itertools.count(1)


@dataclass
class PipelineProject:
    spark: object
    root: Path
    schema: str
    table_format: str

    @classmethod
    def create(cls, spark, directory: Path, table_format: str, inputs_format: str | None = None) -> PipelineProject:
        schema = f"pipelines_{next(_SCHEMAS)}"
        root = directory / "project"
        (root / "models").mkdir(parents=True)
        (root / "dbt_project.yml").write_text(
            "name: pipelines\nversion: '1.0'\nconfig-version: 2\nprofile: pipelines\n"
            f"models:\n  pipelines:\n    +file_format: {table_format}\n"
        )
        (root / "profiles.yml").write_text(
            "pipelines:\n  target: session\n  outputs:\n    session:\n"
            f"      type: spark\n      method: session\n      host: localhost\n      schema: {schema}\n      threads: 1\n"
        )
        (root / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(REPO))}\n")
        spark.sql(f"create database if not exists {schema}")
        project = cls(spark, root, schema, table_format)
        deps = project.dbt("deps")
        assert deps.success, deps.describe()
        return project

    def sources(self, *tables: str) -> None:
        """Declare input tables of the schema as source('inputs', name)."""
        listed = "\n".join(f"      - name: {t}" for t in tables)
        (self.root / "models" / "sources.yml").write_text(
            f"version: 2\nsources:\n  - name: inputs\n    schema: {self.schema}\n    tables:\n{listed}\n"
        )

    def model(self, name: str, sql: str) -> None:
        (self.root / "models" / f"{name}.sql").write_text(sql)

    def dbt(self, *args: str) -> DbtRun:
        """dbt in this process, partial parsing: a test runs dbt over one project many times,
        changing a model file at most (dbt then re-parses that file); a full parse of the
        package costs most of a second each time."""
        return dbt_in_this_process(self.root, args, "--partial-parse", "--no-use-colors", "--log-path", str(self.root / "logs"))

    def table(self, name: str) -> str:
        return f"{self.schema}.{name}"

    def exists(self, name: str) -> bool:
        return self.spark.catalog.tableExists(f"{self.schema}.{name}")

    def tables(self) -> set[str]:
        return {row.tableName for row in self.spark.sql(f"show tables in {self.schema}").collect() if not row.isTemporary}

    def rows(self, sql_or_table: str) -> Counter:
        """The rows of a table or query as a multiset of tuples."""
        query = sql_or_table if " " in sql_or_table.strip() else f"select * from {self.table(sql_or_table)}"
        return Counter(tuple(row) for row in self.spark.sql(query).collect())

    def properties(self, name: str) -> dict[str, str]:
        return {row.key: row.value for row in self.spark.sql(f"show tblproperties {self.table(name)}").collect()}
