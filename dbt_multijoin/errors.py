"""The errors the library raises. Only the CLI (`cli.py`) turns them into messages and exit codes."""

from __future__ import annotations


class DbtMultijoinError(Exception):
    """A failure the user can act on; the message says what went wrong and what to do."""


class PysparkNotInstalledError(DbtMultijoinError):
    """The command needs the pyspark of the environment (compiling, the session method, a local Thrift server)."""


class JarNotFoundError(DbtMultijoinError):
    """No extension jar for the requested Spark version ships with this installation."""


class JarBuildError(DbtMultijoinError):
    """The jar could not be compiled (the message holds the compiler's output)."""


class ProfileError(DbtMultijoinError):
    """Invalid arguments for a profiles.yml snippet."""


class ThriftServerError(DbtMultijoinError):
    """The server could not be started or stopped; the message says why (with a log tail)."""
