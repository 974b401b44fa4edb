"""profiles.yml snippets for the two local targets (`dbt-multijoin profile --method ...`).

- session: dbt runs Spark inside its own process. The static confs that load the extension
  (`spark.jars`, `spark.sql.extensions`) go into `server_side_parameters`, which dbt-spark hands
  to the SparkSession builder. dbt-spark re-applies these parameters before every statement,
  so a runtime conf listed there cannot be changed by a model's `spark_conf`.
- thrift: the jar and extension are fixed when the server starts (`dbt-multijoin thrift start`);
  per-session confs must be written `set:hiveconf:<key>`, the only form a Spark Thrift Server
  applies when dbt opens a session.
"""

from __future__ import annotations

import json
import re
import shlex

from dbt_multijoin import EXTENSION_CLASS

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _q(value: str) -> str:
    # A JSON string is a valid double-quoted YAML scalar: paths with any characters stay safe.
    return json.dumps(value)


def render_profile(method: str, profile: str, schema: str, port: int) -> str:
    """A profiles.yml snippet with the extension jar and class filled in."""
    if not _NAME.fullmatch(profile):
        raise SystemExit(f"dbt-multijoin profile: invalid profile name {profile!r} (letters, digits, _)")
    if not _NAME.fullmatch(schema):
        raise SystemExit(f"dbt-multijoin profile: invalid schema {schema!r} (letters, digits, _)")
    if method == "session":
        return _session_profile(profile, schema)
    if method == "thrift":
        if not 0 < port < 65536:
            raise SystemExit(f"dbt-multijoin profile: invalid port {port}")
        return _thrift_profile(profile, schema, port)
    raise SystemExit(f"dbt-multijoin profile: unknown method {method!r} (session or thrift)")


def _jar() -> str:
    from dbt_multijoin.jar import JarBuildError, ensure_jar

    try:
        return str(ensure_jar())
    except JarBuildError as error:
        raise SystemExit(f"dbt-multijoin profile: cannot build the extension jar:\n{error}") from error


def _session_profile(profile: str, schema: str) -> str:
    return f"""\
# dbt-multijoin, method session: Spark runs inside the dbt process.
# spark.jars and spark.sql.extensions are static: they apply when dbt builds the session.
# Every thread shares that one session: keep threads at 1.
# Runtime confs listed under server_side_parameters are re-applied before every statement;
# set per-model confs with the model's spark_conf instead.
{profile}:
  target: session
  outputs:
    session:
      type: spark
      method: session
      host: localhost  # required by dbt-spark, unused by the session method
      schema: {schema}
      threads: 1
      server_side_parameters:
        spark.jars: {_q(_jar())}
        spark.sql.extensions: {_q(EXTENSION_CLASS)}
"""


def _thrift_profile(profile: str, schema: str, port: int) -> str:
    start = shlex.join(["dbt-multijoin", "thrift", "start", "--port", str(port)])
    jar = shlex.quote(_jar())
    return f"""\
# dbt-multijoin, method thrift: a Spark Thrift Server on 127.0.0.1:{port}.
# The jar and extension are fixed when the server starts; start one with
#   {start}
# which runs spark-submit --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
#   --driver-class-path {jar} --jars {jar}
#   --conf spark.sql.extensions={EXTENSION_CLASS}
#   --hiveconf hive.server2.thrift.port={port} --hiveconf hive.server2.thrift.bind.host=127.0.0.1 spark-internal
# (--driver-class-path too: a jar given only with --jars loses classes once the first session closes)
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
      server_side_parameters:
        "set:hiveconf:spark.multijoin.enabled": "true"
"""
