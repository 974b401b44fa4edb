"""Shared helpers for the dbt tests: a private copy of integration_tests/, dbt run as a
subprocess, a local Spark Thrift Server started and stopped by pid.

Every process these helpers start is stopped by the code that started it:
- dbt runs as a child process with a timeout (subprocess.run kills it by pid on timeout); on the
  session method its Spark JVM is pyspark's child and exits when dbt's end of its stdin pipe
  closes;
- `thrift_server()` stops its server by pid in a `finally`, also when the test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

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
        lines = [f"dbt {' '.join(self.args)} -> exit {self.returncode}"]
        for r in self.results:
            message = (r.get("message") or "").strip().replace("\n", " | ")
            lines.append(f"  {r['status']:8} {r['unique_id']}  {message[:300]}")
        if not self.results:
            lines.append(self.output[-4000:])
        return "\n".join(lines)


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
        command = self.command(*args)
        results_file = self.root / "target" / "run_results.json"
        results_file.unlink(missing_ok=True)
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
        results = json.loads(results_file.read_text())["results"] if results_file.exists() else []
        return DbtRun(list(args), completed.returncode, completed.stdout, results)

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
    from dbt_multijoin.jar import ensure_jar

    jar = Path(os.environ["DBT_MULTIJOIN_TEST_JAR"]) if os.environ.get("DBT_MULTIJOIN_TEST_JAR") else ensure_jar()
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
