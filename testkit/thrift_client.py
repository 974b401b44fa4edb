"""A client of a local Spark Thrift Server, for the tests and the benchmarks: a free port to start
one on, and statements run over Thrift (pyhive) in a session of their own, as a separate client
would run them."""

from __future__ import annotations

import contextlib
import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def _hive_cursor(port: int):
    """A cursor of a Thrift server session of its own, closed when the block exits."""
    from pyhive import hive

    connection = hive.connect(host="127.0.0.1", port=port, username="dbt")
    try:
        yield connection.cursor()
    finally:
        connection.close()


def hive_query(port: int, sql: str) -> list[tuple]:
    """Run one statement on a Thrift server (its own session) and fetch the rows."""
    with _hive_cursor(port) as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def hive_execute(port: int, *statements: str) -> None:
    """Run statements without a result set (SET, DDL, DML) in order, in one session: a SET holds
    for the statements after it, and for no other session."""
    with _hive_cursor(port) as cursor:
        for sql in statements:
            cursor.execute(sql)
