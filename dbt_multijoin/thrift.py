"""A local Spark Thrift Server with the extension loaded, for development and tests.

`dbt-multijoin thrift start|stop|status` runs the server that a `method: thrift` dbt target
talks to. The pyspark wheel has no `sbin/start-thriftserver.sh`, so we launch the server class
through the wheel's own `bin/spark-submit` (DESIGN.md section 4):

    spark-submit --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
        --jars <jar> --conf spark.sql.extensions=<class>
        --hiveconf hive.server2.thrift.port=<port> --hiveconf hive.server2.thrift.bind.host=127.0.0.1
        spark-internal

Each server owns a state directory (by default one per port under the user cache directory):
`server.pid`, `server.log`, its own `warehouse/` and Derby `metastore_db/`. The server, the
driver and the Spark UI bind to 127.0.0.1 only. `stop` signals the pid from the pid file
(after checking that it is this server) and waits for it to exit.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from dbt_multijoin import EXTENSION_CLASS

SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
HOST = "127.0.0.1"
DEFAULT_PORT = 10000
DEFAULT_MASTER = "local[*]"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 60.0

# Servers started by this process: stop() reaps them so that they do not linger as zombies.
_CHILDREN: dict[int, subprocess.Popen] = {}


class ThriftServerError(RuntimeError):
    """The server could not be started or stopped; the message says why (with a log tail)."""


def default_state_dir(port: int) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "dbt-multijoin" / f"thrift-{port}"


@dataclass
class ThriftServer:
    """A server identified by its port and state directory (pid file, log, warehouse, metastore)."""

    port: int = DEFAULT_PORT
    state_dir: Path = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ThriftServerError(f"invalid port {self.port}")
        self.state_dir = Path(self.state_dir or default_state_dir(self.port)).resolve()

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "server.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "server.log"

    @property
    def warehouse_dir(self) -> Path:
        return self.state_dir / "warehouse"

    @property
    def metastore_dir(self) -> Path:
        return self.state_dir / "metastore_db"

    def pid(self) -> int | None:
        """The pid of this running server, or None (no pid file, process gone, or pid reused)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if not _alive(pid):
            return None
        command = _command_line(pid)
        # Guard against a recycled pid: it must still be a Thrift server on our port.
        if command is not None and (SERVER_CLASS not in command or f"thrift.port={self.port}" not in command):
            return None
        return pid

    def accepts_connections(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=1.0):
                return True
        except OSError:
            return False

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


def spark_submit() -> Path:
    import pyspark

    script = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    if not script.exists():
        raise ThriftServerError(f"{script} not found: is pyspark installed completely?")
    return script


def build_command(
    server: ThriftServer,
    jar: Path | None,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
) -> list[str]:
    """The spark-submit command line; jar=None starts a vanilla server (no extension)."""
    command = [str(spark_submit()), "--class", SERVER_CLASS, "--master", master, "--name", f"dbt-multijoin-thrift-{server.port}"]
    if jar is not None:
        # --driver-class-path as well as --jars: the Thrift Server closes a session's class loader
        # when the session ends (Hive SessionState.close), and classes of the extension that were
        # not loaded yet then fail with NoClassDefFoundError in later sessions. On the driver's
        # own class path they come from the application class loader, which is never closed;
        # --jars still ships the jar to executors of a non-local master.
        command += ["--driver-class-path", str(jar), "--jars", str(jar), "--conf", f"spark.sql.extensions={EXTENSION_CLASS}"]
    settings = {
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.sql.warehouse.dir": str(server.warehouse_dir),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={server.metastore_dir};create=true",
        **(confs or {}),
    }
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command += [
        "--hiveconf", f"hive.server2.thrift.port={server.port}",
        "--hiveconf", f"hive.server2.thrift.bind.host={HOST}",
        "spark-internal",
    ]  # fmt: skip
    return command


def start(
    port: int = DEFAULT_PORT,
    state_dir: Path | str | None = None,
    *,
    jar: Path | None | bool = True,
    master: str = DEFAULT_MASTER,
    confs: dict[str, str] | None = None,
    timeout: float = START_TIMEOUT,
) -> ThriftServer:
    """Start a server and wait until its port accepts connections.

    jar=True uses `ensure_jar()` (compiling it if needed), a Path uses that jar, and
    jar=None/False starts vanilla Spark without the extension. On a timeout or an early exit
    the process is stopped and ThriftServerError carries the end of its log.
    """
    server = ThriftServer(port, state_dir)
    if server.pid() is not None:
        raise ThriftServerError(f"a server is already running on port {port} (pid {server.pid()}, {server.state_dir})")
    if server.accepts_connections():
        raise ThriftServerError(f"port {port} on {HOST} is already in use by another process")
    if jar is True:
        from dbt_multijoin.jar import ensure_jar

        jar = ensure_jar()
    command = build_command(server, jar or None, master, confs)
    server.state_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_LOCAL_IP=HOST)
    with open(server.log_file, "ab") as log:
        log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(command)}\n".encode())
        log.flush()
        # cwd: Derby and Hive drop files (derby.log) into the working directory.
        process = subprocess.Popen(
            command,
            cwd=server.state_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _CHILDREN[process.pid] = process
    server.pid_file.write_text(f"{process.pid}\n")
    try:
        _wait_until_listening(server, process, timeout)
    except BaseException:  # timeout, early exit, Ctrl-C: leave nothing running
        stop(port, server.state_dir)
        raise
    return server


def _wait_until_listening(server: ThriftServer, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ThriftServerError(
                f"the Thrift server exited with code {process.returncode} before listening on port {server.port}; "
                f"log {server.log_file}:\n{server.log_tail()}"
            )
        if server.accepts_connections():
            return
        time.sleep(0.5)
    raise ThriftServerError(
        f"the Thrift server did not listen on {HOST}:{server.port} within {timeout:.0f}s (stopped it); "
        f"log {server.log_file}:\n{server.log_tail()}"
    )


def stop(port: int = DEFAULT_PORT, state_dir: Path | str | None = None, timeout: float = STOP_TIMEOUT) -> bool:
    """Stop the server by the pid in its pid file; True if one was running."""
    server = ThriftServer(port, state_dir)
    pid = server.pid()
    if pid is None:
        server.pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)  # the JVM's shutdown hooks stop the server and SparkContext
    if not _wait_for_exit(pid, timeout):
        os.kill(pid, signal.SIGKILL)
        if not _wait_for_exit(pid, 10.0):
            raise ThriftServerError(f"pid {pid} did not exit after SIGKILL")
    server.pid_file.unlink(missing_ok=True)
    return True


def _wait_for_exit(pid: int, timeout: float) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        del _CHILDREN[pid]
        return True
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None  # reaps a zombie child
    try:  # a zombie (exited, not yet reaped by its parent) is not a running server
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return True


def _command_line(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        pass
    try:  # no /proc (macOS)
        return subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True).stdout
    except OSError:
        return None


# --- CLI ---------------------------------------------------------------------------------------


def _conf(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"thrift port on {HOST} (default: {DEFAULT_PORT})")
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="state directory: pid file, log, warehouse, Derby metastore (default: ~/.cache/dbt-multijoin/thrift-<port>)",
    )
    parser.add_argument("--master", default=DEFAULT_MASTER, help=f"Spark master (default: {DEFAULT_MASTER})")
    parser.add_argument(
        "--conf", type=_conf, action="append", default=[], metavar="KEY=VALUE", help="extra Spark conf (repeatable)"
    )
    parser.add_argument("--jar", type=Path, default=None, help="extension jar (default: build/locate it)")
    parser.add_argument(
        "--no-extension", action="store_true", help="start vanilla Spark without the jar (to test the missing-extension path)"
    )
    parser.add_argument("--timeout", type=float, default=START_TIMEOUT, help="seconds to wait for start/stop")


def main(args: argparse.Namespace) -> int:
    server = ThriftServer(args.port, args.dir)
    if args.action == "status":
        pid = server.pid()
        if pid is None:
            print(f"stopped (port {args.port}, {server.state_dir})")
            return 1
        state = "running" if server.accepts_connections() else "starting"
        print(f"{state}: pid {pid}, {HOST}:{args.port}, log {server.log_file}")
        return 0
    if args.action == "stop":
        try:
            stopped = stop(args.port, args.dir, timeout=min(args.timeout, STOP_TIMEOUT))
        except ThriftServerError as error:
            print(error, file=sys.stderr)
            return 1
        print(f"stopped (port {args.port})" if stopped else f"not running (port {args.port})")
        return 0
    jar: Path | None | bool = None if args.no_extension else (args.jar or True)
    try:
        server = start(args.port, args.dir, jar=jar, master=args.master, confs=dict(args.conf), timeout=args.timeout)
    except Exception as error:  # JarBuildError, ThriftServerError
        print(error, file=sys.stderr)
        return 1
    print(f"started: pid {server.pid()}, {HOST}:{args.port}, log {server.log_file}")
    print(
        "  extension: none (vanilla Spark)"
        if args.no_extension
        else f"  extension: {EXTENSION_CLASS}"
    )
    print(f"  stop with: dbt-multijoin thrift stop --port {args.port}" + (f" --dir {args.dir}" if args.dir else ""))
    return 0
