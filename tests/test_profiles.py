"""`dbt-multijoin profile --method session|thrift` prints a profiles.yml that works.

The thrift snippet is run against a live server in tests/test_thrift_server.py (it needs one);
here: the content of both snippets, bad arguments, and a real `dbt build` with the session
snippet (a multiway model that can only succeed when the snippet loaded the extension).
"""

from __future__ import annotations

import pytest
import yaml

from testkit.dbt import cli, make_tiny_project, private_jar

from buildtools.jar_build import ensure_jar
from dbt_multijoin import EXTENSION_CLASS
from dbt_multijoin.errors import ProfileError
from dbt_multijoin.profiles import render_profile


def test_session_snippet():
    text = render_profile(method="session", profile="mj", schema="analytics", port=10000)
    profile = yaml.safe_load(text)["mj"]
    assert profile["target"] == "session"
    output = profile["outputs"]["session"]
    assert output["type"] == "spark" and output["method"] == "session" and output["schema"] == "analytics"
    assert output["threads"] == 1  # one SparkSession shared by all threads
    assert output["server_side_parameters"] == {"spark.jars": str(ensure_jar()), "spark.sql.extensions": EXTENSION_CLASS}


def test_thrift_snippet():
    text = render_profile(method="thrift", profile="mj", schema="analytics", port=10123)
    output = yaml.safe_load(text)["mj"]["outputs"]["thrift"]
    assert output["method"] == "thrift" and output["host"] == "127.0.0.1" and output["port"] == 10123
    # A Spark Thrift Server applies only keys written set:hiveconf:<key>.
    assert output["server_side_parameters"] and all(key.startswith("set:hiveconf:") for key in output["server_side_parameters"])
    # dbt-spark sleeps poll_interval seconds between status polls of a statement (default 5).
    assert output["poll_interval"] == 1
    # The jar and extension are fixed when the server starts: the snippet says how.
    assert "dbt-multijoin thrift start --port 10123" in text
    assert f"--jars {ensure_jar()}" in text and f"spark.sql.extensions={EXTENSION_CLASS}" in text


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (dict(method="session", profile="my profile", schema="s", port=1), "invalid profile name"),
        (dict(method="session", profile="p", schema="a;b", port=1), "invalid schema"),
        (dict(method="thrift", profile="p", schema="s", port=0), "invalid port"),
        (dict(method="odbc", profile="p", schema="s", port=1), "unknown method"),
    ],
)
def test_bad_arguments(args, problem):
    with pytest.raises(ProfileError, match=problem):
        render_profile(**args)


def test_cli_prints_the_snippet():
    run = cli("profile", "--method", "session", "--profile", "mj", "--schema", "analytics")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == render_profile(method="session", profile="mj", schema="analytics", port=10000).strip()


@pytest.mark.slow
def test_session_snippet_runs_a_multiway_model(tmp_path):
    snippet = cli("profile", "--method", "session", "--profile", "multijoin", "--schema", "tiny")
    assert snippet.returncode == 0, snippet.stderr
    # The same jar, copied: a rebuild of jvm/target during the run must not swap it under the JVM.
    text = snippet.stdout.replace(str(ensure_jar()), str(private_jar(tmp_path)))
    project = make_tiny_project(tmp_path, text)
    run = project.dbt("build")
    assert run.returncode == 0, run.describe()
    assert run.status("tiny_joined") == "success"
    assert "dbt_multijoin: tiny_joined: strategy multiway, physical join operator: MultiJoin" in run.output
