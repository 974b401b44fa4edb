"""The `dbt-multijoin` command.

`jar` and `extension` are a stable interface that tools outside this repo call: they print
exactly one line on stdout (a path, a class name) and diagnostics on stderr. This is the only
module that turns the library's errors (dbt_multijoin.errors) into messages and exit codes.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from dbt_multijoin import EXTENSION_CLASS, __version__
from dbt_multijoin.errors import DbtMultijoinError


def _cmd_jar(args: argparse.Namespace) -> int:
    from dbt_multijoin import jar

    compiling = args.spark_home or args.sources or args.target or args.rebuild
    if args.spark is not None:
        if compiling:
            raise DbtMultijoinError("--spark names a shipped jar: it takes no --spark-home, --sources, --target or --rebuild")
        path = jar.shipped_jar(args.spark)
    elif compiling:
        # Only a source checkout compiles; from a wheel checkout_build fails, naming --spark instead.
        path = jar.checkout_build().ensure_jar(
            jar.SparkInstall.from_home(args.spark_home) if args.spark_home else None,
            sources=args.sources,
            target=args.target,
            force=args.rebuild,
        )
    else:
        path = jar.extension_jar()
    print(path)
    return 0


def _cmd_extension(args: argparse.Namespace) -> int:
    print(EXTENSION_CLASS)
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    from dbt_multijoin.profiles import render_profile

    print(render_profile(method=args.method, profile=args.profile, schema=args.schema, port=args.port))
    return 0


def _run_server_action(module, args: argparse.Namespace) -> int:
    """start|status|stop of a local server: `module` is dbt_multijoin.thrift or dbt_multijoin.connect,
    which share their signatures (start, stop, the server class, HOST)."""
    command = args.command
    server = module.ThriftServer(args.port, args.dir) if command == "thrift" else module.ConnectServer(args.port, args.dir)
    again = f" --port {args.port}" + (f" --dir {args.dir}" if args.dir else "")
    if args.action == "status":
        pid = server.pid()
        if pid is None:
            print(f"stopped (port {args.port}, {server.state_dir})")
            return 1
        state = "running" if server.accepts_connections() else "starting"
        print(f"{state}: pid {pid}, {module.HOST}:{args.port}, log {server.log_file}")
        return 0
    if args.action == "stop":
        stopped = module.stop(args.port, args.dir, timeout=min(args.timeout, module.STOP_TIMEOUT))
        print(f"stopped (port {args.port})" if stopped else f"not running (port {args.port})")
        return 0
    jar: Path | None | bool = None if args.no_extension else (args.jar or True)
    if jar is True:
        from dbt_multijoin.jar import extension_jar

        jar = extension_jar()
    confs = dict(args.conf)
    # Say what runs before it runs: the start waits up to --timeout seconds.
    print("running: " + shlex.join(module.build_command(server, jar, args.master, confs)), flush=True)
    server = module.start(args.port, args.dir, jar=jar, master=args.master, confs=confs, timeout=args.timeout)
    print(f"started: pid {server.pid()}, {module.HOST}:{args.port}, log {server.log_file}")
    if command == "connect":
        print(f"  clients: SparkSession.builder.remote(\"{server.url}\") or SPARK_REMOTE={server.url}")
    print("  extension: none (vanilla Spark)" if args.no_extension else f"  extension: {EXTENSION_CLASS}")
    print(f"  stop with: dbt-multijoin {command} stop{again}")
    return 0


def _cmd_thrift(args: argparse.Namespace) -> int:
    from dbt_multijoin import thrift

    return _run_server_action(thrift, args)


def _cmd_connect(args: argparse.Namespace) -> int:
    from dbt_multijoin import connect

    return _run_server_action(connect, args)


def _conf(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _add_jar_command(commands) -> None:
    jar = commands.add_parser(
        "jar",
        help="print the path of the extension jar for the installed pyspark (compiled in a checkout, shipped otherwise)",
    )
    jar.add_argument("--spark", metavar="MINOR", help="the jar shipped with this installation for Spark MINOR (e.g. 3.5, 4.3)")
    jar.add_argument("--spark-home", type=Path, help="checkout: compile for the Spark in this directory (a pyspark directory)")
    jar.add_argument("--sources", type=Path, help="checkout: compile these Scala sources (default: jvm/src of the checkout)")
    jar.add_argument("--target", type=Path, help="checkout: compile into this directory (default: jvm/target of the checkout)")
    jar.add_argument("--rebuild", action="store_true", help="checkout: compile even if the jar is up to date")
    jar.set_defaults(func=_cmd_jar)


def _add_server_options(parser: argparse.ArgumentParser, module, kind: str) -> None:
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument(
        "--port", type=int, default=module.DEFAULT_PORT, help=f"{kind} port on {module.HOST} (default: {module.DEFAULT_PORT})"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help=f"state directory: pid file, log, warehouse, Derby metastore (default: ~/.cache/dbt-multijoin/{kind}-<port>)",
    )
    parser.add_argument("--master", default=module.DEFAULT_MASTER, help=f"Spark master (default: {module.DEFAULT_MASTER})")
    parser.add_argument(
        "--conf", type=_conf, action="append", default=[], metavar="KEY=VALUE", help="extra Spark conf (repeatable)"
    )
    parser.add_argument("--jar", type=Path, default=None, help="extension jar (default: `dbt-multijoin jar`)")
    parser.add_argument(
        "--no-extension", action="store_true", help="start vanilla Spark without the jar (to test the missing-extension path)"
    )
    parser.add_argument("--timeout", type=float, default=module.START_TIMEOUT, help="seconds to wait for start/stop")


def _add_thrift_command(commands) -> None:
    from dbt_multijoin import thrift
    from dbt_multijoin.launch import describe_thrift_command

    parser = commands.add_parser(
        "thrift",
        help="run a local Spark Thrift Server with the extension",
        description="A local Spark Thrift Server with the extension, on 127.0.0.1, stopped by its pid. `start` runs\n  "
        + describe_thrift_command(thrift.DEFAULT_PORT, "<jar>")
        + "\nwith a warehouse and Derby metastore in the state directory.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_server_options(parser, thrift, "thrift")
    parser.set_defaults(func=_cmd_thrift)


def _add_connect_command(commands) -> None:
    from dbt_multijoin import connect

    try:
        version = connect.pyspark_version()
    except DbtMultijoinError:
        version = "4.0.0"  # no pyspark: show the Spark 4 form, which needs no --packages
    parser = commands.add_parser(
        "connect",
        help="run a local Spark Connect server with the extension",
        description="A local Spark Connect server with the extension, on 127.0.0.1, stopped by its pid. `start` runs\n  "
        + connect.describe_connect_command(connect.DEFAULT_PORT, "<jar>", version)
        + "\nwith a warehouse and Derby metastore in the state directory. Clients connect with\n"
        "SparkSession.builder.remote(\"sc://127.0.0.1:<port>\") (pip install 'dbt-multijoin[connect]'). Spark 4 ships\n"
        "the server in the pyspark wheel; Spark 3.5 fetches it from Maven Central with --packages.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_server_options(parser, connect, "connect")
    parser.set_defaults(func=_cmd_connect)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dbt-multijoin", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_jar_command(commands)

    extension = commands.add_parser("extension", help="print the class name for spark.sql.extensions")
    extension.set_defaults(func=_cmd_extension)

    profile = commands.add_parser("profile", help="print a profiles.yml snippet with the jar and extension")
    profile.add_argument("--method", choices=["session", "thrift"], required=True)
    profile.add_argument("--profile", default="multijoin", help="profile name (default: multijoin)")
    profile.add_argument("--schema", default="analytics", help="target schema (default: analytics)")
    profile.add_argument("--port", type=int, default=10000, help="thrift port (default: 10000)")
    profile.set_defaults(func=_cmd_profile)

    _add_thrift_command(commands)
    _add_connect_command(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except DbtMultijoinError as error:
        print(f"dbt-multijoin {args.command}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
