"""A throwaway dbt project on the session method, run in this process, over input tables that
the tests write with the same SparkSession."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from testkit import REPO
_SCHEMAS = itertools.count(1)


@dataclass
class DbtResult:
    success: bool
    statuses: dict[str, str]
    messages: dict[str, str]
    error: str

    def describe(self) -> str:
        lines = [f"success={self.success} {self.error}"]
        lines += [f"  {name}: {self.statuses[name]} {self.messages.get(name, '')[:2000]}" for name in self.statuses]
        return "\n".join(lines)


@dataclass
class PipelineProject:
    spark: object
    root: Path
    schema: str
    table_format: str

    @classmethod
    def create(cls, spark, directory: Path, table_format: str, inputs_format: str | None = None) -> PipelineProject:
        schema = f"pipelines_{next(_SCHEMAS)}"
        root = directory / "project"
        (root / "models").mkdir(parents=True)
        (root / "dbt_project.yml").write_text(
            "name: pipelines\nversion: '1.0'\nconfig-version: 2\nprofile: pipelines\n"
            f"models:\n  pipelines:\n    +file_format: {table_format}\n"
        )
        (root / "profiles.yml").write_text(
            "pipelines:\n  target: session\n  outputs:\n    session:\n"
            f"      type: spark\n      method: session\n      host: localhost\n      schema: {schema}\n      threads: 1\n"
        )
        (root / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(REPO))}\n")
        spark.sql(f"create database if not exists {schema}")
        project = cls(spark, root, schema, table_format)
        deps = project.dbt("deps")
        assert deps.success, deps.describe()
        return project

    def sources(self, *tables: str) -> None:
        """Declare input tables of the schema as source('inputs', name)."""
        listed = "\n".join(f"      - name: {t}" for t in tables)
        (self.root / "models" / "sources.yml").write_text(
            f"version: 2\nsources:\n  - name: inputs\n    schema: {self.schema}\n    tables:\n{listed}\n"
        )

    def model(self, name: str, sql: str) -> None:
        (self.root / "models" / f"{name}.sql").write_text(sql)

    def dbt(self, *args: str) -> DbtResult:
        from dbt.cli.main import dbtRunner

        # Partial parsing: a test runs dbt over one project many times, changing a model file
        # at most (dbt then re-parses that file); a full parse of the package costs most of a
        # second each time. No usage events: they would wait on a network CI does not have.
        outcome = dbtRunner().invoke(
            [*args, "--project-dir", str(self.root), "--profiles-dir", str(self.root),
             "--partial-parse", "--no-send-anonymous-usage-stats", "--no-use-colors",
             "--log-path", str(self.root / "logs")]
        )
        statuses, messages = {}, {}
        for result in getattr(outcome.result, "results", None) or []:
            name = result.node.name
            statuses[name] = str(result.status)
            messages[name] = result.message or ""
        error = "" if outcome.exception is None else str(outcome.exception)
        return DbtResult(bool(outcome.success), statuses, messages, error)

    def table(self, name: str) -> str:
        return f"{self.schema}.{name}"

    def exists(self, name: str) -> bool:
        return self.spark.catalog.tableExists(name, self.schema)

    def tables(self) -> set[str]:
        return {row.tableName for row in self.spark.sql(f"show tables in {self.schema}").collect() if not row.isTemporary}

    def rows(self, sql_or_table: str) -> Counter:
        """The rows of a table or query as a multiset of tuples."""
        query = sql_or_table if " " in sql_or_table.strip() else f"select * from {self.table(sql_or_table)}"
        return Counter(tuple(row) for row in self.spark.sql(query).collect())

    def properties(self, name: str) -> dict[str, str]:
        return {row.key: row.value for row in self.spark.sql(f"show tblproperties {self.table(name)}").collect()}
