"""The `dbt-multijoin` command.

`jar` and `extension` are a stable interface that tools outside this repo call: they print
exactly one line on stdout (a path, a class name) and diagnostics on stderr.
"""

from __future__ import annotations

import argparse
import sys

from dbt_multijoin import EXTENSION_CLASS, __version__


def _cmd_jar(args: argparse.Namespace) -> int:
    from dbt_multijoin.jar import JarBuildError, ensure_jar

    try:
        jar = ensure_jar(force=args.rebuild)
    except JarBuildError as error:
        print(error, file=sys.stderr)
        return 1
    print(jar)
    return 0


def _cmd_extension(args: argparse.Namespace) -> int:
    print(EXTENSION_CLASS)
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    from dbt_multijoin.profiles import render_profile

    print(render_profile(method=args.method, profile=args.profile, schema=args.schema, port=args.port))
    return 0


def _cmd_thrift(args: argparse.Namespace) -> int:
    from dbt_multijoin import thrift

    return thrift.main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dbt-multijoin", description=__doc__)
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True)

    jar = commands.add_parser("jar", help="print the path of the extension jar, building it if needed")
    jar.add_argument("--rebuild", action="store_true", help="compile even if the jar is up to date")
    jar.set_defaults(func=_cmd_jar)

    extension = commands.add_parser("extension", help="print the class name for spark.sql.extensions")
    extension.set_defaults(func=_cmd_extension)

    profile = commands.add_parser("profile", help="print a profiles.yml snippet with the jar and extension")
    profile.add_argument("--method", choices=["session", "thrift"], required=True)
    profile.add_argument("--profile", default="multijoin", help="profile name (default: multijoin)")
    profile.add_argument("--schema", default="analytics", help="target schema (default: analytics)")
    profile.add_argument("--port", type=int, default=10000, help="thrift port (default: 10000)")
    profile.set_defaults(func=_cmd_profile)

    thrift = commands.add_parser("thrift", help="run a local Spark Thrift Server with the extension")
    from dbt_multijoin import thrift as thrift_module

    thrift_module.add_arguments(thrift)
    thrift.set_defaults(func=_cmd_thrift)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
