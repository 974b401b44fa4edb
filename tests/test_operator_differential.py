"""Differential tests: the hinted query through MultiJoin returns exactly the rows of vanilla Spark.

Hypothesis generates the inputs (N from 2 to 8, every key type, null and duplicate keys, empty
and single-row inputs, composite keys, mixed numeric key types, NaN and -0.0) and the spelling
(flat chain, nested subqueries, USING), with adaptive execution on or off and the operator
inside a whole-stage codegen stage or not. Each case runs the query twice on the same session:
with the hint, where failOnFallback makes sure the operator really ran, and without it, which is
Spark's own plan. The results must be equal as multisets.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.differential import (
    KEY_POOLS, SPELLINGS, assert_same_rows_as_vanilla, chain_sql, multiset, register_inputs, spark_minor, typed_inputs,
)
from testkit.frames import local_frame
from testkit.plans import executed_nodes, multijoin_generates_code, skip_wrappers
from testkit.properties import examples

@st.composite
def scenarios(draw):
    types, inputs = draw(typed_inputs(n=draw(st.integers(2, 8))))
    return {
        "types": types,
        "inputs": inputs,
        "spelling": draw(st.sampled_from(SPELLINGS)),
        "adaptive": draw(st.booleans()),
        "codegen": draw(st.booleans()),
    }


def assert_chain_returns_the_vanilla_rows(spark, case) -> None:
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.sql.adaptive.enabled", str(case["adaptive"]).lower())
    spark.conf.set("spark.multijoin.codegen.enabled", str(case["codegen"]).lower())
    register_inputs(spark, case["types"], case["inputs"])
    n, arity = len(case["inputs"]), len(case["types"][0])
    hinted = assert_same_rows_as_vanilla(
        spark,
        chain_sql(n, arity, case["spelling"], hint=True),
        chain_sql(n, arity, case["spelling"], hint=False),
    )
    # The case ran the path it names (a few dozen columns: Spark generates code for them).
    assert multijoin_generates_code(hinted) == case["codegen"]


@given(case=scenarios())
def test_hinted_chain_returns_the_vanilla_rows(spark, case):
    """Under the session's default ANSI mode: off in Spark 3.5, on in Spark 4."""
    assert_chain_returns_the_vanilla_rows(spark, case)


@settings(max_examples=examples(1 / 3))
@given(case=scenarios())
def test_hinted_chain_returns_the_vanilla_rows_in_ansi_mode(spark, case):
    """ANSI mode coerces mixed key types by other rules (and is Spark 4's default): the casts
    between key types must still be exact widenings the chain collapses through."""
    spark.conf.set("spark.sql.ansi.enabled", "true")
    assert_chain_returns_the_vanilla_rows(spark, case)


@settings(max_examples=examples(1 / 5))
@given(
    rows=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 4)), st.integers(-100, 100)), max_size=10),
    n=st.integers(2, 5),
    spelling=st.sampled_from(SPELLINGS),
)
def test_one_table_joined_with_itself(spark, rows, n, spelling):
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    local_frame(spark, rows, "k1 INT, v1 INT").createOrReplaceTempView("self_input")
    # Every level reads the same view; the value column is named v1 in each, so select it by alias.
    tables = ["self_input"] * n
    hinted = chain_sql(n, 1, "using", hint=True, tables=tables) if spelling == "using" else None
    if hinted is None:
        hinted = _self_join_sql(n, spelling, hint=True)
        vanilla = _self_join_sql(n, spelling, hint=False)
    else:
        vanilla = chain_sql(n, 1, "using", hint=False, tables=tables)
    assert_same_rows_as_vanilla(spark, hinted, vanilla)


def _self_join_sql(n: int, spelling: str, hint: bool) -> str:
    # The same chain as chain_sql, over one view: value columns are all v1, told apart by alias.
    sql = chain_sql(n, 1, spelling, hint, tables=["self_input"] * n)
    for i in range(n, 1, -1):
        sql = sql.replace(f"t{i}.v{i}", f"t{i}.v1 AS v{i}")
    return sql


@pytest.mark.parametrize("n", [2, 3, 4])
def test_empty_inputs_everywhere(spark, n):
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    register_inputs(spark, [["INT"]] * n, [[] for _ in range(n)])
    for spelling in SPELLINGS:
        assert_same_rows_as_vanilla(spark, chain_sql(n, 1, spelling, True), chain_sql(n, 1, spelling, False))


# A level above the first joins on a coalesce that vanilla computes on the nulls a join pads a
# missing row with. The operator takes each input's key from its own rows only, so such a chain
# must fall back (docs/semantics.md, "What makes the hint fall back"). Each case: the query, then
# the rows of t1, t2, t3 as (k, a, v) with a a second key column.
ZERO_FOR_NULL = "CASE WHEN {t}.k IS NULL THEN 0 ELSE {t}.k END"
KEYS_COMPUTED_ON_A_MISSING_ROW = {
    # The FULL chain: t2's row 7 has no t1 row, on which t1's key is 0, not null: it meets t3's 0.
    "full_key_not_null_for_a_missing_row": (
        "SELECT {hint} t1.v, t2.v, t3.v FROM t1 FULL JOIN t2 ON " + ZERO_FOR_NULL.format(t="t1") + " = t2.k "
        "FULL JOIN t3 ON coalesce(" + ZERO_FOR_NULL.format(t="t1") + ", t2.k) = t3.k",
        [[(None, None, 1), (5, None, 2)], [(7, None, 3)], [(0, None, 4), (7, None, 5)]],
    ),
    # The LEFT chain: t1's null-key row has no t2 match, whose key is then 0: it meets t3's 0.
    "left_key_not_null_for_a_missing_row": (
        "SELECT {hint} t1.v, t2.v, t3.v FROM t1 LEFT JOIN t2 ON t1.k = " + ZERO_FOR_NULL.format(t="t2") + " "
        "LEFT JOIN t3 ON coalesce(t1.k, " + ZERO_FOR_NULL.format(t="t2") + ") = t3.k",
        [[(None, None, 1), (5, None, 2)], [(5, None, 3)], [(0, None, 4), (5, None, 5)]],
    ),
    # t1's key is coalesce(k, a): the level above, with k and a swapped, gives 2 where it is 1.
    "full_coalesce_key_reordered": (
        "SELECT {hint} t1.v, t2.v, t3.v FROM t1 FULL JOIN t2 ON coalesce(t1.k, t1.a) = t2.k "
        "FULL JOIN t3 ON coalesce(t1.a, t1.k, t2.k) = t3.k",
        [[(1, 2, 1)], [(1, None, 2)], [(1, None, 3), (2, None, 4)]],
    ),
    "left_coalesce_key_reordered": (
        "SELECT {hint} t1.v, t2.v, t3.v FROM t1 LEFT JOIN t2 ON t1.k = coalesce(t2.k, t2.a) "
        "LEFT JOIN t3 ON coalesce(t2.a, t1.k) = t3.k",
        [[(1, None, 1)], [(1, 2, 2)], [(1, None, 3), (2, None, 4)]],
    ),
}


def register_keyed_inputs(spark, inputs) -> None:
    for i, rows in enumerate(inputs):
        local_frame(spark, rows, "k INT, a INT, v INT").createOrReplaceTempView(f"t{i + 1}")


@pytest.mark.parametrize("case", sorted(KEYS_COMPUTED_ON_A_MISSING_ROW))
def test_key_computed_on_a_missing_row_gives_the_vanilla_rows(spark, case):
    sql, inputs = KEYS_COMPUTED_ON_A_MISSING_ROW[case]
    register_keyed_inputs(spark, inputs)
    hinted = multiset(spark.sql(sql.format(hint="/*+ MULTI_JOIN */")).collect())
    assert hinted == multiset(spark.sql(sql.format(hint="")).collect())


# Ways to spell the key of input {t}, as the operands of its coalesce: null for a missing row or
# not, one operand or several.
KEY_SPELLINGS = [
    ["{t}.k"], ["CAST({t}.k AS BIGINT)"], ["{t}.k + 1"], ["{t}.k", "{t}.a"], ["{t}.k", "0"],
    [ZERO_FOR_NULL],
]


def _coalesce(operands: list[str]) -> str:
    return operands[0] if len(operands) == 1 else f"coalesce({', '.join(operands)})"


@settings(max_examples=examples(1 / 5))
@given(data=st.data())
def test_any_key_spelling_gives_the_vanilla_rows(spark, data):
    """A FULL or LEFT chain of three inputs, each keyed by one of KEY_SPELLINGS, the last level
    joined on the operands of the first two keys in any order: collapsed or fallen back, the
    hinted query returns the vanilla rows."""
    join_type = data.draw(st.sampled_from(["FULL", "LEFT"]))
    keys = [[o.format(t=f"t{i + 1}") for o in data.draw(st.sampled_from(KEY_SPELLINGS))] for i in range(3)]
    below = data.draw(st.permutations(keys[0] + keys[1]))
    value = st.one_of(st.none(), st.integers(-1, 2))
    rows = st.lists(st.tuples(value, value, st.integers(0, 9)), max_size=4)
    register_keyed_inputs(spark, [data.draw(rows) for _ in range(3)])
    sql = (f"SELECT {{hint}} t1.v, t2.v, t3.v FROM t1 {join_type} JOIN t2 ON {_coalesce(keys[0])} = "
           f"{_coalesce(keys[1])} {join_type} JOIN t3 ON {_coalesce(below)} = {_coalesce(keys[2])}")
    hinted = multiset(spark.sql(sql.format(hint="/*+ MULTI_JOIN */")).collect())
    assert hinted == multiset(spark.sql(sql.format(hint="")).collect()), sql


@pytest.mark.parametrize("sql", [
    # Keys that are not null for a missing row are fine where no later level coalesces them.
    "SELECT {hint} t1.v, t2.v FROM t1 FULL JOIN t2 ON " + ZERO_FOR_NULL.format(t="t1") + " = t2.k",
    "SELECT {hint} t1.v, t2.v, t3.v FROM t1 FULL JOIN t2 ON t1.k = t2.k "
    "FULL JOIN t3 ON coalesce(t1.k, t2.k) = " + ZERO_FOR_NULL.format(t="t3"),
    # A coalesce key whose operands keep their order, with other inputs' keys between them.
    "SELECT {hint} t1.v, t2.v, t3.v FROM t1 FULL JOIN t2 ON coalesce(t1.k, t1.a) = t2.k "
    "FULL JOIN t3 ON coalesce(t1.k, t2.k, t1.a) = t3.k",
    "SELECT {hint} t1.v, t2.v, t3.v FROM t1 LEFT JOIN t2 ON t1.k = coalesce(t2.k, t2.a) "
    "LEFT JOIN t3 ON coalesce(t2.k, t1.k) = t3.k",
])
def test_keys_computed_only_on_present_rows_still_collapse(spark, sql):
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    register_keyed_inputs(spark, [
        [(None, None, 1), (None, 2, 2), (5, None, 3), (1, 2, 4)],
        [(7, None, 5), (0, None, 6), (1, 3, 7), (None, 2, 8)],
        [(0, None, 9), (7, None, 10), (2, None, 11), (None, None, 12)],
    ])
    assert_same_rows_as_vanilla(spark, sql.format(hint="/*+ MULTI_JOIN */"), sql.format(hint=""))


# Value columns of every way an UnsafeRow stores a field: fixed-width in the slot (INT, BIGINT,
# DOUBLE, BOOLEAN, DECIMAL up to 18 digits) or in the variable-length region (STRING, BINARY,
# wide DECIMAL, ARRAY, STRUCT), with a generator of values for each.
VALUE_TYPES = {
    "INT": lambda r: r.randint(-5, 5),
    "BIGINT": lambda r: r.choice([0, -1, 2**62]),
    "DOUBLE": lambda r: r.choice([0.0, -0.0, 1.5, float("nan")]),
    "BOOLEAN": lambda r: r.random() < 0.5,
    "DECIMAL(10,2)": lambda r: Decimal(r.randint(-999, 999)) / 100,
    "STRING": lambda r: r.choice(["", "x", "é" * r.randint(1, 9), "long " * r.randint(1, 30)]),
    "BINARY": lambda r: bytearray(r.randint(0, 255) for _ in range(r.choice([0, 1, 7, 8, 9, 33]))),
    "DECIMAL(38,6)": lambda r: Decimal(r.randint(-(10**30), 10**30)) / 10**6,
    "ARRAY<INT>": lambda r: [r.choice([None, 1, 2]) for _ in range(r.randint(0, 5))],
    "STRUCT<s: STRING, i: INT>": lambda r: (r.choice([None, "", "abc" * r.randint(0, 9)]), r.randint(0, 9)),
}
# Column counts that put null bits on both sides of a 64-bit word boundary, within an input and
# at the input's place in the output.
COLUMN_COUNTS = [0, 1, 2, 5, 62, 63, 64, 70]


@st.composite
def wide_inputs(draw):
    n = draw(st.integers(2, 4))
    key_type = draw(st.sampled_from(["BIGINT", "INT", "STRING"]))
    random = draw(st.randoms(use_true_random=False))
    null_rate = draw(st.sampled_from([0.0, 0.3, 1.0]))
    inputs = []
    for i in range(n):
        count = draw(st.sampled_from(COLUMN_COUNTS))
        types = [random.choice(list(VALUE_TYPES)) for _ in range(count)]
        rows = []
        for _ in range(draw(st.sampled_from([0, 1, 3, 6]))):
            key = random.choice([None] + KEY_POOLS[key_type][:4])
            values = [None if random.random() < null_rate else VALUE_TYPES[t](random) for t in types]
            rows.append((key, *values))
        inputs.append((key_type, types, rows))
    return inputs


@settings(max_examples=examples(1 / 3))
@given(inputs=wide_inputs(), spelling=st.sampled_from(["using", "flat"]), codegen=st.booleans())
def test_every_column_type_and_width_comes_out_intact(spark, inputs, spelling, codegen):
    """The operator hands out its output either as the fields of the inputs' rows, read by the
    code Spark generates above it, or as rows it concatenates, bits and bytes: either way every
    storage kind, null or not, and inputs of 0 to 70 value columns must come out as the vanilla
    join returns them. (Past spark.sql.codegen.maxFields, 100 fields nested ones included, Spark
    generates no code and the operator concatenates.)"""
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.multijoin.codegen.enabled", str(codegen).lower())
    n = len(inputs)
    for i, (key_type, types, rows) in enumerate(inputs):
        columns = [f"k1 {key_type}"] + [f"c{i + 1}_{j} {t}" for j, t in enumerate(types)]
        local_frame(spark, rows, ", ".join(columns)).createOrReplaceTempView(f"t{i + 1}")
    aliases = [f"t{i + 1}" for i in range(n)]

    def sql(hint: bool) -> str:
        hint_sql = "/*+ MULTI_JOIN */ " if hint else ""
        if spelling == "using":
            joins = " ".join(f"FULL OUTER JOIN {a} USING (k1)" for a in aliases[1:])
            return f"SELECT {hint_sql}* FROM t1 {joins}"
        keys = [f"{a}.k1" for a in aliases]
        joins = " ".join(
            f"FULL OUTER JOIN {a} ON {keys[0] if i == 1 else 'coalesce(' + ', '.join(keys[:i]) + ')'} = {a}.k1"
            for i, a in enumerate(aliases[1:], start=1)
        )
        # Every input's key as well: the output then holds each input's row whole.
        columns = ", ".join(f"{a}.*" for a in aliases)
        return f"SELECT {hint_sql}coalesce({', '.join(keys)}) AS k, {columns} FROM t1 {joins}"

    hinted = assert_same_rows_as_vanilla(spark, sql(hint=True), sql(hint=False))
    operator = next(n for n in executed_nodes(hinted) if n.getClass().getSimpleName() == "MultiJoinExec")
    codegen_stage = getattr(getattr(spark._jvm.org.apache.spark.sql.execution, "WholeStageCodegenExec$"), "MODULE$")
    too_wide = codegen_stage.isTooManyFields(spark._jsparkSession.sessionState().conf(), operator.schema())
    assert multijoin_generates_code(hinted) == (codegen and not too_wide)


@pytest.mark.parametrize("join_type", ["FULL OUTER", "LEFT"])
def test_null_keys_spread_by_vanilla_joins_below_the_operator(spark, tmp_path, join_type):
    """Spark 4.3's spark.sql.shuffle.spreadNullJoinKeys.enabled lets an outer join's inputs
    spread their null-key rows over every partition; that join's output partitioning
    (NullAwareHashPartitioning) then no longer clusters the rows by key. The operator asks for a
    strict ClusteredDistribution, so an input that is such a join must be shuffled again: the
    rows must be the vanilla ones, and every input of the operator an exchange of its own."""
    if spark_minor(spark) < (4, 3):
        pytest.skip(f"spark.sql.shuffle.spreadNullJoinKeys.enabled is new in Spark 4.3 (running {spark.version})")
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.sql.shuffle.spreadNullJoinKeys.enabled", "true")
    # From files, not literals: keys Spark could fold would not exercise the shuffles.
    for name, keys in {
        "t1": [1, 2, 3, None, None, None, 5],
        "t2": [2, 3, 3, None, None, 6],
        "t3": [1, 3, None, None, 6, 7],
        "t4": [3, 6, None, None],
    }.items():
        rows = [(key, value) for value, key in enumerate(keys)]
        path = str(tmp_path / name)
        local_frame(spark, rows, f"k INT, v_{name} INT").write.parquet(path)
        spark.read.parquet(path).createOrReplaceTempView(name)

    def sql(hint: bool) -> str:
        hint_sql = "/*+ MULTI_JOIN */ " if hint else ""
        # t2 is itself a vanilla outer join, which spreads its null keys.
        joined = "(SELECT a.k, a.v_t2, b.v_t4 FROM t2 a LEFT JOIN t4 b ON a.k = b.k)"
        key = "coalesce(t1.k, j.k)" if join_type == "FULL OUTER" else "t1.k"
        return (
            f"SELECT {hint_sql}t1.k AS k1, j.k AS k2, t3.k AS k3, v_t1, v_t2, v_t4, v_t3 "
            f"FROM t1 {join_type} JOIN {joined} j ON t1.k = j.k "
            f"{join_type} JOIN t3 ON {key} = t3.k"
        )

    vanilla_plan = spark.sql(sql(hint=False))._jdf.queryExecution().executedPlan().toString()
    assert "nullaware" in vanilla_plan.lower(), vanilla_plan
    assert_same_rows_as_vanilla(spark, sql(hint=True), sql(hint=False))
    hinted = spark.sql(sql(hint=True))
    operator = [n for n in executed_nodes(hinted) if n.nodeName() == "MultiJoin"]
    assert len(operator) == 1, hinted._jdf.queryExecution().executedPlan().toString()
    # Inside a whole-stage codegen stage each input is an InputAdapter over what feeds it.
    children = [skip_wrappers(operator[0].children().apply(i)) for i in range(operator[0].children().size())]
    assert [c.nodeName() for c in children] == ["Exchange"] * 3, operator[0].toString()
    assert all("nullaware" not in c.outputPartitioning().toString().lower() for c in children)
