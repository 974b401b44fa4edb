"""A FULL multi-join reports its output hash-partitioned (and, with one key column, sorted) on the
coalesced key, so a GROUP BY, a window or a join on that key above it needs no Exchange of its own
(docs/architecture.md, "Output partitioning of a FULL multi-join").

Wrong partitioning gives wrong rows silently (a group split over two partitions counts twice), so
every case runs against vanilla Spark (the same SQL without the hint): hypothesis generates the
inputs and the operator above; fixed cases cover the traps where the property does NOT hold and
the Exchange must stay: a key that is not null for a missing input (a constant in it), a key that
is an expression and a query on another expression, float keys, a composite key grouped on part
of it, casts the query adds, inputs bucketed on part of the key, collated strings (Spark 4).
"""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.differential import KEY_POOLS, assert_same_rows_as_vanilla, chain_sql, key_names, spark_minor
from testkit.frames import local_frame
from testkit.plans import executed_nodes, plan_nodes
from testkit.properties import examples

REPORT_CONF = "spark.multijoin.fullOuter.outputPartitioning"


def exchanges_above_operator(df) -> int:
    """Exchanges with the MultiJoin operator below them: the shuffles the property removes."""
    exchanges = [n for n in executed_nodes(df) if n.nodeName() == "Exchange"]
    return sum(1 for e in exchanges if any(n.nodeName() == "MultiJoin" for n in plan_nodes(e)))


def sorts_above_operator(df) -> int:
    return sum(
        1 for s in executed_nodes(df)
        if s.nodeName() == "Sort" and any(n.nodeName() == "MultiJoin" for n in plan_nodes(s))
    )


def plan_string(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def register(spark, name: str, columns: str, rows) -> None:
    local_frame(spark, rows, columns).createOrReplaceTempView(name)


def on_top(operation: str, inner: str, arity: int) -> str:
    """A query on the coalesced key over the multi-join `inner`, whose output is k1.., v1.."""
    keys = ", ".join(key_names(arity))
    if operation == "group":
        return f"SELECT {keys}, count(*) AS c, sum(v1) AS s FROM ({inner}) GROUP BY {keys}"
    if operation == "window":
        return (
            f"SELECT {keys}, v1, count(*) OVER (PARTITION BY {keys}) AS c, "
            f"rank() OVER (PARTITION BY {keys} ORDER BY v1) AS r FROM ({inner})"
        )
    if operation in ("join", "left join"):
        condition = " AND ".join(f"m.{k} = u.{k}" for k in key_names(arity))
        return f"SELECT m.*, u.w FROM ({inner}) m {operation.upper()} u ON {condition}"
    raise ValueError(operation)


# --- differential: the rows of vanilla Spark, whatever runs on top ----------------------------

# Key types the operator reports its partitioning for, and DOUBLE (it must not); mixed families
# put Spark's implicit casts into the keys.
SHARED_TYPES = ["INT", "BIGINT", "STRING", "DECIMAL(10,2)", "DATE", "DOUBLE"]
MIXED_FAMILY = ["TINYINT", "INT", "BIGINT", "DECIMAL(10,2)"]


@st.composite
def scenarios(draw):
    n = draw(st.integers(2, 4))
    arity = draw(st.sampled_from([1, 1, 2]))
    if draw(st.booleans()):
        types = [[draw(st.sampled_from(MIXED_FAMILY)) for _ in range(arity)] for _ in range(n)]
    else:
        shared = [draw(st.sampled_from(SHARED_TYPES)) for _ in range(arity)]
        types = [list(shared) for _ in range(n)]

    def rows(column_types):
        # Small pools: keys repeat and collide across inputs; nulls, alone or in one component.
        key = [st.one_of(st.none(), st.sampled_from(KEY_POOLS[t][:3])) for t in column_types]
        return st.lists(st.tuples(*key, st.integers(-3, 3)), max_size=draw(st.sampled_from([0, 3, 8])))

    return {
        "types": types,
        "inputs": [draw(rows(t)) for t in types],
        "other": draw(rows(types[0])),
        "spelling": draw(st.sampled_from(["flat", "nested", "reordered"])),
        "operation": draw(st.sampled_from(["group", "window", "join", "left join"])),
        "adaptive": draw(st.booleans()),
    }


@settings(max_examples=examples(1 / 3))
@given(case=scenarios())
def test_queries_on_the_coalesced_key_return_the_vanilla_rows(spark, case):
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.sql.adaptive.enabled", str(case["adaptive"]).lower())
    n, arity = len(case["inputs"]), len(case["types"][0])
    for i, (column_types, rows) in enumerate(zip(case["types"], case["inputs"])):
        columns = [f"k{c + 1} {t}" for c, t in enumerate(column_types)] + [f"v{i + 1} INT"]
        register(spark, f"t{i + 1}", ", ".join(columns), rows)
    columns = [f"k{c + 1} {t}" for c, t in enumerate(case["types"][0])] + ["w INT"]
    register(spark, "u", ", ".join(columns), case["other"])
    hinted, vanilla = (
        on_top(case["operation"], chain_sql(n, arity, case["spelling"], hint), arity)
        for hint in (True, False)
    )
    assert_same_rows_as_vanilla(spark, hinted, vanilla)


# --- where it holds: no Exchange above the operator -------------------------------------------


@pytest.fixture
def three_inputs(spark):
    """Keys of three types Spark widens exactly (INT, BIGINT, DECIMAL): the keys carry casts."""
    for i, key_type in enumerate(["INT", "BIGINT", "DECIMAL(12,0)"], start=1):
        rows = [(k, 10 * i + k) for k in range(i, 40, i)] + [(None, i), (None, -i), (7, 0)]
        local_frame(spark, rows, f"k1 INT, v{i} INT") \
            .selectExpr(f"CAST(k1 AS {key_type}) AS k1", f"v{i}").createOrReplaceTempView(f"t{i}")
    register(spark, "u", "k1 BIGINT, w INT", [(k, k) for k in range(0, 50, 3)])


@pytest.mark.parametrize("adaptive", [False, True])
@pytest.mark.parametrize("spelling", ["flat", "nested", "reordered"])
@pytest.mark.parametrize("operation", ["group", "window", "join"])
def test_no_exchange_above_the_operator_on_the_coalesced_key(spark, three_inputs, operation, spelling, adaptive):
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.sql.adaptive.enabled", str(adaptive).lower())
    hinted, vanilla = (on_top(operation, chain_sql(3, 1, spelling, hint), 1) for hint in (True, False))
    df = spark.sql(hinted)
    df.collect()  # AQE's final plan, with its coalesced shuffle reads
    assert exchanges_above_operator(df) == 0, plan_string(df)
    if operation == "join":
        # One key column: the merge's key order holds too, so the join does not sort that side.
        assert sorts_above_operator(df) == 0, plan_string(df)
    assert_same_rows_as_vanilla(spark, hinted, vanilla)


def test_group_by_inside_the_hinted_query_in_another_spelling(spark, three_inputs):
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    sql = (
        "SELECT {hint} coalesce(coalesce(t3.k1, t1.k1), t2.k1) AS k, count(*) AS c FROM t1 "
        "FULL JOIN t2 ON t1.k1 = t2.k1 FULL JOIN t3 ON coalesce(t1.k1, t2.k1) = t3.k1 "
        "GROUP BY coalesce(coalesce(t3.k1, t1.k1), t2.k1)"
    )
    df = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    assert exchanges_above_operator(df) == 0, plan_string(df)
    assert_same_rows_as_vanilla(spark, sql.format(hint="/*+ MULTI_JOIN */"), sql.format(hint=""))


def test_a_key_that_is_an_expression_grouped_on_that_expression(spark):
    register(spark, "t1", "k INT, v1 INT", [(k, k) for k in [None, 0, 1, 2, 5, 5]])
    register(spark, "t2", "k INT, v2 INT", [(k, k) for k in [None, 1, 2, 3, 6]])
    sql = ("SELECT {hint} coalesce(t2.k, t1.k + 1) AS k, count(*) AS c FROM t1 "
           "FULL JOIN t2 ON t1.k + 1 = t2.k GROUP BY coalesce(t2.k, t1.k + 1)")
    df = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    assert exchanges_above_operator(df) == 0, plan_string(df)
    assert_same_rows_as_vanilla(spark, sql.format(hint="/*+ MULTI_JOIN */"), sql.format(hint=""))


# --- where it does not hold: the Exchange stays, and the rows are vanilla's -------------------


def assert_exchange_kept_and_vanilla_rows(spark, sql: str) -> None:
    for adaptive in ("false", "true"):
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
        assert_same_rows_as_vanilla(spark, sql.format(hint="/*+ MULTI_JOIN */"), sql.format(hint=""))
        df = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
        df.collect()
        assert exchanges_above_operator(df) == 1, plan_string(df)


def test_a_key_with_a_constant_is_not_null_for_a_missing_input(spark):
    """CASE WHEN t1.k IS NULL THEN 0 ELSE t1.k END is 0 on a row without t1: the coalesced key of
    a row t2 brings (t2.k = 7, hashed on 7) is then 0, while the rows of key 0 were hashed on 0.
    Claiming the partitioning would split the group 0 over several partitions. (Spark simplifies
    the same key spelled coalesce(t1.k, 0) inside a coalesce: no query could name it.)"""
    register(spark, "t1", "k INT, v1 INT", [(None, 1), (0, 2), (3, 3)])
    register(spark, "t2", "k INT, v2 INT", [(k, k) for k in [0, 1, 2, 4, 5, 6, 7, 8, 9]])
    key = "CASE WHEN t1.k IS NULL THEN 0 ELSE t1.k END"
    assert_exchange_kept_and_vanilla_rows(
        spark,
        f"SELECT k, count(*) AS c FROM (SELECT {{hint}} coalesce({key}, t2.k) AS k, v1, v2 "
        f"FROM t1 FULL JOIN t2 ON {key} = t2.k) GROUP BY k",
    )


def test_grouping_on_an_input_key_or_another_expression_keeps_the_exchange(spark):
    register(spark, "t1", "k INT, v1 INT", [(k, k) for k in [None, 0, 1, 2, 5, 5]])
    register(spark, "t2", "k INT, v2 INT", [(k, k) for k in [None, 1, 2, 3, 6]])
    # t1.k is null on the rows t2 brings; coalesce(t1.k, t2.k) is not the key t1.k + 1.
    assert_exchange_kept_and_vanilla_rows(
        spark, "SELECT k, count(*) AS c FROM (SELECT {hint} t1.k AS k FROM t1 FULL JOIN t2 ON t1.k = t2.k) GROUP BY k")
    assert_exchange_kept_and_vanilla_rows(
        spark, "SELECT k, count(*) AS c FROM (SELECT {hint} coalesce(t1.k, t2.k) AS k FROM t1 "
        "FULL JOIN t2 ON t1.k + 1 = t2.k) GROUP BY k")
    # A cast the query adds: the value hashed was the INT key, not its string.
    assert_exchange_kept_and_vanilla_rows(
        spark, "SELECT k, count(*) AS c FROM (SELECT {hint} coalesce(CAST(t1.k AS STRING), "
        "CAST(t2.k AS STRING)) AS k FROM t1 FULL JOIN t2 ON t1.k = t2.k) GROUP BY k")


def test_floating_point_keys_keep_the_exchange(spark, extension_log):
    """The inputs were hashed on keys with -0.0 and NaN normalised; the query's coalesce is not, and
    returns whichever input's -0.0 or 0.0 comes first: no key column, and the log says why."""
    values = [None, 0.0, -0.0, float("nan"), 1.5, 1.5]
    register(spark, "t1", "k DOUBLE, v1 INT", [(k, i) for i, k in enumerate(values)])
    register(spark, "t2", "k DOUBLE, v2 INT", [(k, i) for i, k in enumerate(reversed(values))])
    mark = extension_log.mark()
    assert_exchange_kept_and_vanilla_rows(
        spark, "SELECT k, count(*) AS c FROM (SELECT {hint} coalesce(t1.k, t2.k) AS k FROM t1 "
        "FULL JOIN t2 ON t1.k = t2.k) GROUP BY k")
    assert "has no key column of its own: its key is of type DOUBLE" in extension_log.since(mark)


@pytest.fixture
def composite_with_partial_nulls(spark):
    pool = [None, 0, 1, 2]
    for i in (1, 2, 3):
        rows = [(a, b, 10 * i + a_i) for a_i, a in enumerate(pool) for b in pool if (a_i + i) % 2 or b != 1]
        register(spark, f"t{i}", f"k1 INT, k2 INT, v{i} INT", rows)
    register(spark, "u", "k1 INT, k2 INT, w INT", [(a, b, 1) for a in pool for b in pool])


def test_composite_key_with_partial_nulls(spark, composite_with_partial_nulls):
    """A row whose key has a null component matches nothing: its coalesced key is its own input's
    whole key, hashed where it sits. So grouping on both columns needs no Exchange; grouping on
    one of them does (the inputs were hashed on both)."""
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    hinted, vanilla = (on_top("group", chain_sql(3, 2, "flat", hint), 2) for hint in (True, False))
    df = spark.sql(hinted)
    assert exchanges_above_operator(df) == 0, plan_string(df)
    assert_same_rows_as_vanilla(spark, hinted, vanilla)
    inner = chain_sql(3, 2, "flat", True).replace("/*+ MULTI_JOIN */ ", "{hint}")
    assert_exchange_kept_and_vanilla_rows(spark, f"SELECT k2, count(*) AS c FROM ({inner}) GROUP BY k2")


@pytest.mark.parametrize("operation", ["join", "left join"])
def test_composite_key_with_nulls_is_not_reported_sorted(spark, composite_with_partial_nulls, operation):
    """The merge emits a row with a null key component as soon as it reaches the head of its
    input, among the others: with two key columns the output is not in key order, and a join on
    the key above must sort it."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    hinted, vanilla = (on_top(operation, chain_sql(3, 2, "flat", hint), 2) for hint in (True, False))
    df = spark.sql(hinted)
    assert exchanges_above_operator(df) == 0, plan_string(df)
    assert sorts_above_operator(df) == 1, plan_string(df)
    assert_same_rows_as_vanilla(spark, hinted, vanilla)


def test_inputs_bucketed_on_part_of_the_key(spark, tmp_path):
    """Tables bucketed on k1 satisfy the operator's clustering on (k1, k2) with no shuffle: every
    row sits where its k1 hashes to, so the output is partitioned on the coalesced k1, not on
    both columns. Grouping on (k1, k2) needs no Exchange; grouping on k2 alone does."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    # Spark would read the buckets as plain files (it only keeps bucketed reads it knows help),
    # and by default co-partitions inputs on all the key columns only.
    partial_key_confs = {
        "spark.sql.sources.bucketing.autoBucketedScan.enabled": "false",
        "spark.sql.requireAllClusterKeysForCoPartition": "false",
    }
    for key, value in partial_key_confs.items():
        spark.conf.set(key, value)
    tables = [f"bucketed_p{i}" for i in (1, 2, 3)]
    try:
        for i, table in enumerate(tables, start=1):
            spark.sql(f"DROP TABLE IF EXISTS {table}")
            spark.range(0, 120, i).selectExpr(
                "CAST(id % 7 AS INT) AS k1", "CAST(id % 5 AS INT) AS k2", f"CAST(id AS INT) AS v{i}"
            ).write.bucketBy(3, "k1").option("path", str(tmp_path / table)).saveAsTable(table)

        def sql(group_by: str, hint: bool) -> str:
            inner = chain_sql(3, 2, "flat", hint, tables=tables)
            return f"SELECT {group_by}, count(*) AS c, sum(v2) AS s FROM ({inner}) GROUP BY {group_by}"

        df = spark.sql(sql("k1, k2", True))
        assert [n.nodeName() for n in executed_nodes(df)].count("Exchange") == 0, plan_string(df)
        assert_same_rows_as_vanilla(spark, sql("k1, k2", True), sql("k1, k2", False))
        df = spark.sql(sql("k2", True))
        assert exchanges_above_operator(df) == 1, plan_string(df)
        assert_same_rows_as_vanilla(spark, sql("k2", True), sql("k2", False))
        # A join on (k1, k2) shuffles its other side to the output's partitioning: on k1 alone,
        # as the output really is (on both columns, the matches would land elsewhere).
        register(spark, "u", "k1 INT, k2 INT, w INT", [(a, b, a * b) for a in range(7) for b in range(5)])
        joined = [on_top("join", chain_sql(3, 2, "flat", hint, tables=tables), 2) for hint in (True, False)]
        assert_same_rows_as_vanilla(spark, *joined)
    finally:
        for key in partial_key_confs:
            spark.conf.unset(key)
        for table in tables:
            spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_the_key_is_a_column_of_the_operator(spark, three_inputs):
    """The coalesced key is computed by the operator into a column of its own, which the query's
    coalesce reads: the projection above has no coalesce left, and the partitioning is on it."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    df = spark.sql(chain_sql(3, 1, "nested", True))
    operator = next(n for n in executed_nodes(df) if n.nodeName() == "MultiJoin")
    key_columns = operator.keyColumns()
    assert key_columns.size() == 1, operator.simpleString(100)
    assert "key columns=[" in operator.simpleString(100)
    assert operator.outputPartitioning().expressions().apply(0).semanticEquals(key_columns.apply(0))
    assert "coalesce(" not in plan_string(df).split("MultiJoin")[0].lower(), plan_string(df)


@pytest.mark.parametrize("operation", ["group", "window", "join"])
def test_null_keys_spread_by_vanilla_joins_below(spark, tmp_path, operation):
    """Spark 4.3's spark.sql.shuffle.spreadNullJoinKeys.enabled: an input that is itself an outer
    join spreads its null keys; the operator shuffles it again (a strict clustering), so the key
    column's partitioning holds, and the rows above are vanilla's."""
    if spark_minor(spark) < (4, 3):
        pytest.skip(f"spark.sql.shuffle.spreadNullJoinKeys.enabled is new in Spark 4.3 (running {spark.version})")
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.sql.shuffle.spreadNullJoinKeys.enabled", "true")
    for name, keys in {"t1": [1, 2, None, None, 5], "t2": [2, 3, None, 6], "t3": [3, None, None, 6]}.items():
        path = str(tmp_path / name)
        local_frame(spark, [(key, value) for value, key in enumerate(keys)], "k1 INT, v INT").write.parquet(path)
        spark.read.parquet(path).createOrReplaceTempView(f"p{name}")
    spark.sql("SELECT a.k1, a.v AS v1 FROM pt1 a LEFT JOIN pt3 b ON a.k1 = b.k1").createOrReplaceTempView("t1")
    spark.sql("SELECT k1, v AS v2 FROM pt2").createOrReplaceTempView("t2")
    spark.sql("SELECT k1, v AS v3 FROM pt3").createOrReplaceTempView("t3")
    register(spark, "u", "k1 INT, w INT", [(k, k) for k in range(8)] + [(None, 0)])
    hinted, vanilla = (on_top(operation, chain_sql(3, 1, "flat", hint), 1) for hint in (True, False))
    assert_same_rows_as_vanilla(spark, hinted, vanilla)


def test_turned_off_the_exchange_comes_back(spark, three_inputs):
    spark.conf.set(REPORT_CONF, "false")
    hinted, vanilla = (on_top("group", chain_sql(3, 1, "flat", hint), 1) for hint in (True, False))
    df = spark.sql(hinted)
    assert exchanges_above_operator(df) == 1, plan_string(df)
    assert_same_rows_as_vanilla(spark, hinted, vanilla)


def test_collated_keys_keep_the_query_spelling(spark):
    """Spark 4: under a case-insensitive collation 'a' and 'A' are one key, but not one value: the
    query's coalesce(t2.k, t1.k) must still return t2's spelling, so it is not rewritten."""
    if spark_minor(spark) < (4, 0):
        pytest.skip(f"collations are new in Spark 4.0 (running {spark.version})")
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    register(spark, "t1", "k STRING COLLATE UTF8_LCASE, v1 INT", [("a", 1), ("b", 2)])
    register(spark, "t2", "k STRING COLLATE UTF8_LCASE, v2 INT", [("A", 3), ("c", 4)])
    sql = ("SELECT k, count(*) AS c FROM (SELECT {hint} coalesce(t2.k, t1.k) AS k FROM t1 "
           "FULL JOIN t2 ON t1.k = t2.k) GROUP BY k")
    assert_same_rows_as_vanilla(spark, sql.format(hint="/*+ MULTI_JOIN */"), sql.format(hint=""))
    assert sorted(r.k for r in spark.sql(sql.format(hint="/*+ MULTI_JOIN */")).collect()) == ["A", "b", "c"]
