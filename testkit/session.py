"""A SparkSession with the extension loaded, for the tests and the benchmarks."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def extension_confs() -> dict[str, str]:
    """The two static confs that load the extension; they must be set before the session starts."""
    from dbt_multijoin.launch import session_confs
    from testkit import extension_jar

    return session_confs(extension_jar())


def build_session(
    master: str = "local[2]",
    app_name: str = "dbt-multijoin",
    conf: Mapping[str, str] | None = None,
    with_extension: bool = True,
):
    """Start (or return the running) SparkSession with `conf` and, by default, the extension."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    # Python workers run this interpreter, with this virtualenv's packages: Spark 4 evaluates
    # Python UDFs through Arrow when the driver has pyarrow, and a worker on another Python
    # without it fails the query. (pyspark takes the workers' Python from PYSPARK_PYTHON, not
    # from spark.pyspark.python.)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = {"spark.ui.enabled": "false", **(extension_confs() if with_extension else {}), **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
