"""dbt's hook into this package: on dbt-spark's session method with threads above 1, every dbt
connection runs its statements in a Spark session of its own, cloned from the process's
SparkSession.

Why. The session method runs Spark inside the dbt process, and dbt-spark sends every statement
of every dbt thread to the one session `SparkSession.builder.getOrCreate()` returns. A session's
runtime confs are one mutable map: with threads above 1, a multijoin model's SET of its
`spark_conf` changes the confs that the models running beside it are planned and run under, and
its restore puts back what it saw, not what the session started with. dbt opens one connection
per node (model, test, seed, unit test) and per hook run, closes it when the node is done and
never shares one between threads, so a session per connection gives each model its own confs and
temporary views for exactly as long as it runs: what a Spark Thrift Server gives each client
connection. The sessions share the SparkContext, the metastore and the cache, and each starts
with an empty cache of table metadata: a model reads the tables the models before it wrote.

At threads: 1 nothing changes: models run one after another in the one session, and the
materialization restores each model's confs (macros/internal/_confs.sql). That also keeps what a
program that runs dbt in its own process (dbtRunner) sees through its own session: a session
caches the file listing of the tables it read, and Iceberg the metadata, per session, so tables
rewritten in another session may need `REFRESH TABLE` there (docs/dbt_package.md).

The clone is taken when the connection runs its first statement (Spark's `cloneSession`: the
process session's confs, temporary views and function registry as they are then), after
dbt-spark's own call (`builder.config(<server_side_parameters>).getOrCreate()`), which creates
the process session with the profile's confs on first use and re-applies their runtime values to
it. No model's statement runs in the process session, so its confs are the same before and after
a run. The clone is marked with `spark.dbt_multijoin.session = per_connection`: the macros read
the mark to know that no other thread can change their confs (without it, on the session method
with threads above 1, a model with confs to set fails saying what to install).
`DBT_MULTIJOIN_SESSION_PER_CONNECTION=false` turns this off (dbt-spark's one session).

How dbt loads it. dbt-core imports every installed top-level module whose name starts with
`dbt_` and instantiates the `dbtPlugin` classes listed in its `plugins` attribute
(dbt/plugins/manager.py) before it connects; `dbt_multijoin.plugins` lists `SessionPerConnection`,
whose `initialize()` wraps dbt-spark's session `Connection.cursor`. dbt finds the package as a
directory of a `sys.path` entry, as a wheel installs it (a setuptools editable install hides it
from that scan: docs/dbt_package.md says what to do). Nothing is wrapped without pyspark (no
session method); when dbt-spark's session module is not the shape wrapped here, dbt says so.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from dbt.adapters.events.logging import AdapterLogger
from dbt.plugins.manager import dbtPlugin

# The mark each connection's session carries; the macros read it (macros/internal/_confs.sql).
SESSION_MARK_KEY = "spark.dbt_multijoin.session"
SESSION_MARK_VALUE = "per_connection"

# Set to false to keep dbt-spark's one session for every connection (read per connection).
ENABLE_VARIABLE = "DBT_MULTIJOIN_SESSION_PER_CONNECTION"

# Set on dbt-spark's Connection class once it is wrapped (dbt builds a plugin per command).
_WRAPPED = "_dbt_multijoin_session_per_connection"

logger = AdapterLogger("dbt_multijoin")


def per_connection_enabled() -> bool:
    """Whether connections may get sessions of their own (unless ENABLE_VARIABLE says false)."""
    return os.environ.get(ENABLE_VARIABLE, "true").strip().lower() not in ("false", "0", "no", "off")


def dbt_threads() -> int | None:
    """The threads of the running dbt command (the profile's, or --threads), None if unknown."""
    try:
        from dbt.adapters.factory import get_adapter_by_type

        return int(get_adapter_by_type("spark").config.threads)
    except Exception:  # no spark adapter registered, or a dbt without this API
        return None


def install() -> bool:
    """Wrap dbt-spark's session connections: at threads above 1 each one runs in a session of
    its own. Returns whether they are wrapped: False without pyspark, or when dbt-spark's
    session module does not have the shape this wraps (then dbt-spark runs as it does without
    this package)."""
    if importlib.util.find_spec("pyspark") is None:
        return False
    try:
        from dbt.adapters.spark import session as dbt_spark_session
    except ImportError:
        return False
    connection_class = getattr(dbt_spark_session, "Connection", None)
    cursor_class = getattr(dbt_spark_session, "Cursor", None)
    if connection_class is not None and getattr(connection_class, _WRAPPED, False):
        return True
    # The shape wrapped: Connection(server_side_parameters=...).cursor() returns
    # Cursor(server_side_parameters=...), whose execute(sql, *parameters) runs `sql` on the
    # builder's getOrCreate() and keeps the DataFrame in `_df` for fetchall/fetchone/description.
    missing = [
        name for owner, name in ((cursor_class, "execute"), (cursor_class, "fetchall"), (connection_class, "cursor"))
        if not callable(getattr(owner, name, None))
    ] + [name for name in ("SparkSession", "AnalysisException", "DbtRuntimeError") if not hasattr(dbt_spark_session, name)]
    if missing:
        logger.warning(
            f"dbt_multijoin: dbt-spark's session module has no {', '.join(missing)}: each dbt thread of the session "
            "method shares one SparkSession, and multijoin models that set confs need threads: 1")
        return False
    spark_session_class = dbt_spark_session.SparkSession
    analysis_exception = dbt_spark_session.AnalysisException
    runtime_error = dbt_spark_session.DbtRuntimeError

    def session_of(connection: Any) -> Any:
        """The connection's session: cloned from the process session at its first statement."""
        session = getattr(connection, "_dbt_multijoin_session", None)
        if session is None:
            builder = spark_session_class.builder.enableHiveSupport()
            for parameter, value in connection.server_side_parameters.items():
                builder = builder.config(parameter, value)
            process_session = builder.getOrCreate()
            session = spark_session_class(process_session.sparkContext, process_session._jsparkSession.cloneSession())
            session.conf.set(SESSION_MARK_KEY, SESSION_MARK_VALUE)
            connection._dbt_multijoin_session = session
        return session

    class ConnectionCursor(cursor_class):
        """dbt-spark's cursor, running its statement in its connection's session."""

        def __init__(self, connection: Any) -> None:
            super().__init__(server_side_parameters=connection.server_side_parameters)
            self._connection = connection

        def execute(self, sql: str, *parameters: Any) -> None:
            # dbt-spark's execute, but on the connection's session instead of getOrCreate()'s.
            if len(parameters) > 0:
                sql = sql % parameters
            session = session_of(self._connection)
            try:
                self._df = session.sql(sql)
            except analysis_exception as exc:
                raise runtime_error(str(exc)) from exc

    original_cursor = connection_class.cursor

    def cursor(self: Any) -> Any:
        if not per_connection_enabled() or dbt_threads() == 1:
            return original_cursor(self)
        return ConnectionCursor(self)

    connection_class.cursor = cursor
    setattr(connection_class, _WRAPPED, True)
    logger.debug("dbt_multijoin: at threads above 1, each connection of the session method runs in a Spark session of its own")
    return True


class SessionPerConnection(dbtPlugin):
    """Gives each dbt connection of the session method a Spark session of its own at threads
    above 1 (install())."""

    def initialize(self) -> None:
        install()
