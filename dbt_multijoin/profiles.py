"""profiles.yml snippets for the two local targets (`dbt-multijoin profile --method ...`).

- session: dbt runs Spark inside its own process. The static confs that load the extension
  (`spark.jars`, `spark.sql.extensions`) go into `server_side_parameters`, which dbt-spark hands
  to the SparkSession builder. dbt-spark re-applies these parameters before every statement,
  so a runtime conf listed there cannot be changed by a model's `spark_conf`.
- thrift: the jar and extension are fixed when the server starts (`dbt-multijoin thrift start`);
  per-session confs must be written `set:hiveconf:<key>`, the only form a Spark Thrift Server
  applies when dbt opens a session. This snippet needs no pyspark: the server may run elsewhere.
The confs and spark-submit arguments themselves come from `launch.py`.
"""

from __future__ import annotations

import json
import re
import shlex

from dbt_multijoin.errors import ProfileError, PysparkNotInstalledError
from dbt_multijoin.jar import extension_jar
from dbt_multijoin.launch import describe_thrift_command, session_confs

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _q(value: str) -> str:
    # A JSON string is a valid double-quoted YAML scalar: paths with any characters stay safe.
    return json.dumps(value)


def render_profile(method: str, profile: str, schema: str, port: int) -> str:
    """A profiles.yml snippet with the extension jar and class filled in."""
    if not _NAME.fullmatch(profile):
        raise ProfileError(f"invalid profile name {profile!r} (letters, digits, _)")
    if not _NAME.fullmatch(schema):
        raise ProfileError(f"invalid schema {schema!r} (letters, digits, _)")
    if method == "session":
        return _session_profile(profile, schema)
    if method == "thrift":
        if not 0 < port < 65536:
            raise ProfileError(f"invalid port {port}")
        return _thrift_profile(profile, schema, port)
    raise ProfileError(f"unknown method {method!r} (session or thrift)")


def _server_side_parameters() -> str:
    return "".join(f"\n        {key}: {_q(value)}" for key, value in session_confs(extension_jar()).items())


def _session_profile(profile: str, schema: str) -> str:
    return f"""\
# dbt-multijoin, method session: Spark runs inside the dbt process.
# spark.jars and spark.sql.extensions are static: they apply when dbt builds the session.
# threads above 1: this package's dbt plugin runs each model in a Spark session of its own.
# Runtime confs listed under server_side_parameters start every model's session (at threads: 1,
# one session for all, they are re-applied before every statement); set per-model confs with the
# model's spark_conf instead.
{profile}:
  target: session
  outputs:
    session:
      type: spark
      method: session
      host: localhost  # required by dbt-spark, unused by the session method
      schema: {schema}
      threads: 1
      server_side_parameters:{_server_side_parameters()}
"""


def _thrift_profile(profile: str, schema: str, port: int) -> str:
    start = shlex.join(["dbt-multijoin", "thrift", "start", "--port", str(port)])
    try:
        jar = shlex.quote(str(extension_jar()))
    except PysparkNotInstalledError:  # no local Spark: the server's Spark minor picks the shipped jar
        jar = '"$(dbt-multijoin jar --spark <Spark minor of the server, e.g. 3.5>)"'
    return f"""\
# dbt-multijoin, method thrift: a Spark Thrift Server on 127.0.0.1:{port}.
# The jar and extension are fixed when the server starts; start one with
#   {start}
# which runs
#   {describe_thrift_command(port, jar, indent="#   ")}
# Session confs must be written set:hiveconf:<key>; a Thrift Server ignores plain keys.
{profile}:
  target: thrift
  outputs:
    thrift:
      type: spark
      method: thrift
      host: 127.0.0.1
      port: {port}
      user: dbt
      schema: {schema}
      threads: 4  # every model gets its own Thrift session
      connect_retries: 3
      connect_timeout: 10
      poll_interval: 1  # seconds between status polls of a running statement (dbt-spark's default 5 rounds a 6 s statement up to 10)
      server_side_parameters:
        "set:hiveconf:spark.multijoin.enabled": "true"
"""
