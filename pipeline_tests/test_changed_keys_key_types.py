"""changed_keys over keys of every kind: the MERGE's target filter (a key's hash bucket among the
changed keys' buckets) must never drop a row the MERGE replaces, and is only used where equal
keys hash alike. Each case has a model over two inputs of its own: it is built, its inputs get new
keys, updated rows and NULL keys, it is refreshed, and after both runs its table equals a vanilla
full rebuild; the MERGE dbt ran shows whether the filter was in it. All cases share one project
and its two dbt runs (a dbt run over Delta or Iceberg costs seconds of fixed work on 2 cores).
"""

from __future__ import annotations

import pytest

# name -> (key columns, their type in a, in b, key values (None: NULL), whether the MERGE may
# filter the target by hash bucket)
CASES = {
    "int and bigint inputs": (["k"], ["int"], ["bigint"], ["1", "2", "-3", "40"], True),
    "string": (["k"], ["string"], ["string"], ["'x'", "'y'", "''", "'Z z'"], True),
    "decimal": (["k"], ["decimal(10,2)"], ["decimal(10,2)"], ["1.10", "2.00", "-3.50", "0.01"], True),
    "timestamp": (["k"], ["timestamp"], ["timestamp"],
                  ["timestamp'2024-01-01 00:00:00'", "timestamp'2024-01-01 00:00:01'", "timestamp'1999-12-31 23:59:59'", "timestamp'2030-06-15 12:00:00'"], True),
    # -0.0 = 0.0 but their bytes (and hashes) differ: no filter.
    "double with -0.0": (["k"], ["double"], ["double"], ["0.0", "-0.0", "1.5", "-2.25"], False),
    "composite string and int": (["k1", "k2"], ["string", "int"], ["string", "int"],
                                 ["'x', 1", "'x', 2", "'y', 1", "'', 0"], True),
}


def _key_values(value: str | None, width: int) -> str:
    return ", ".join(["null"] * width) if value is None else value


def _slug(case: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in case)


class Input:
    def __init__(self, project, name: str, keys: list[str], types: list[str]):
        self.name, self.table, self.width = name, project.table(name), len(keys)
        self.spark = project.spark
        columns = ", ".join(f"{k} {t}" for k, t in zip(keys, types))
        self.spark.sql(f"create table {self.table} (id bigint, {columns}, v int, updated_at bigint) using {project.table_format}")

    def insert(self, rows: list[tuple[int, str | None, int, int]]) -> None:
        values = ", ".join(f"({i}, {_key_values(key, self.width)}, {v}, {at})" for i, key, v, at in rows)
        self.spark.sql(f"insert into {self.table} values {values}")


class Case:
    """One key type: inputs a_<slug> and b_<slug>, model wide_<slug> over them."""

    def __init__(self, project, case: str):
        self.keys, a_types, b_types, self.values, self.filtered = CASES[case]
        self.project, slug = project, _slug(case)
        self.model = f"wide_{slug}"
        self.a = Input(project, f"a_{slug}", self.keys, a_types)
        self.b = Input(project, f"b_{slug}", self.keys, b_types)
        first, second, third, _ = self.values
        self.a.insert([(1, first, 10, 1), (2, second, 20, 1), (3, None, 30, 1), (4, first, 40, 1)])
        self.b.insert([(1, second, 11, 1), (2, third, 21, 1), (3, None, 31, 1)])
        key = repr(self.keys[0]) if len(self.keys) == 1 else repr(self.keys)
        project.model(self.model, (
            "{{ config(materialized='multijoin', incremental_strategy='changed_keys') }}\n"
            f"{{{{ dbt_multijoin.multi_join([source('inputs', 'a_{slug}'), source('inputs', 'b_{slug}')], key=" + key + ",\n"
            f"    columns={{'a_{slug}': ['id', 'v'], 'b_{slug}': ['id', 'v']}}, changed_since='updated_at') }}}}\n"
        ))

    def change(self) -> None:
        """A changed row of an existing key, a new key, a NULL key, and a key only b had gains
        an a row."""
        first, _, third, fourth = self.values
        self.project.spark.sql(f"update {self.a.table} set v = v + 100, updated_at = 2 where id = 2")
        self.a.insert([(5, fourth, 50, 2), (6, None, 60, 2), (7, third, 70, 2)])
        self.b.insert([(4, first, 41, 2)])

    def rows(self) -> tuple:
        """(the model's rows, the rows of a vanilla full rebuild): multisets."""
        on = " and ".join(f"a.{k} = b.{k}" for k in self.keys)
        key_columns = ", ".join(f"coalesce(a.{k}, b.{k}) as {k}" for k in self.keys)
        expected = self.project.rows(
            f"select {key_columns}, a.id as a_id, a.v as a_v, b.id as b_id, b.v as b_v "
            f"from {self.a.table} as a full outer join {self.b.table} as b on {on}"
        )
        return self.project.rows(self.model), expected


@pytest.fixture(scope="module")
def refreshed(spark, table_format, tmp_path_factory) -> dict:
    """Every case in one project: one `dbt run` builds the six models, one refreshes them after
    their inputs changed (two dbt runs in all, not two per case). Per case: whether each run
    succeeded, the rows after each, and the MERGE the refresh ran."""
    from testkit.dbt import PipelineProject

    project = PipelineProject.create(spark, tmp_path_factory.mktemp("key-types"), table_format)
    cases = {case: Case(project, case) for case in CASES}
    project.sources(*(name for c in cases.values() for name in (c.a.name, c.b.name)))
    built = project.dbt("run")
    outcome = {case: {"built": (built, c.rows())} for case, c in cases.items()}
    for c in cases.values():
        c.change()
    run = project.dbt("run")
    compiled = project.root / "target" / "run" / "pipelines" / "models"
    for case, c in cases.items():
        outcome[case]["refreshed"] = (run, c.rows())
        outcome[case]["merge"] = (compiled / f"{c.model}.sql").read_text()
    return outcome


@pytest.mark.parametrize("case", CASES)
def test_changed_keys_by_key_type(refreshed, case):
    for step in ("built", "refreshed"):
        run, (built, expected) = refreshed[case][step]
        assert run.success, run.describe()
        assert built == expected, f"{step}: missing: {expected - built}, extra: {built - expected}"
    merge = refreshed[case]["merge"]
    assert merge.lstrip().lower().startswith("merge into")
    assert ("xxhash64" in merge) == CASES[case][4], merge[:2000]
