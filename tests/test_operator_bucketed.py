"""A multi-join over Iceberg tables bucketed on the join key reads them with no shuffle
(docs/table_formats.md, "Inputs bucketed on the key"; jvm KeyGroupedInputs.scala).

Every case runs against vanilla Spark (the same SQL without the hint): a partition index that
held different keys in two inputs would silently lose matches. Hypothesis draws bucket counts,
empty tables and buckets, NULL keys, skewed and duplicate keys, key types, and inputs in another
layout (unbucketed, another bucket count): on Spark 4 only those are shuffled, into the others'
layout, and an input bucketed into a multiple of the others' count is read grouped onto theirs; on
Spark 3.5 every input is shuffled. Fixed cases pin what is shuffled per layout.

The module needs a session with the Iceberg runtime, a JVM of its own: run it in its own pytest
process (`python -m pytest tests/test_operator_bucketed.py`). Iceberg publishes runtimes for
Spark 3.5 and 4.1 only; elsewhere the module is skipped.
"""

from __future__ import annotations

import itertools

import pyspark
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from testkit.chains import join_chain_sql
from testkit.differential import KEY_POOLS, multiset
from testkit.frames import local_frame
from testkit.plans import executed_nodes, plan_nodes, uses_multijoin
from testkit.properties import examples

TESTS_DIR = __import__("pathlib").Path(__file__).resolve().parent

# What the layout needs (docs/table_formats.md): Spark reads Iceberg's buckets as key groups.
LAYOUT_CONFS = {
    "spark.sql.sources.v2.bucketing.enabled": "true",
    "spark.sql.iceberg.planning.preserve-data-grouping": "true",
}
SESSION_CONFS = {
    **LAYOUT_CONFS,
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.driver.memory": "2g",
}
_tables = itertools.count(1)
# Spark 4 shuffles an input into another's key-grouped layout by partition value
# (KeyGroupedInputs.scala); Spark 3.5 cannot, so there every input of a mixed layout is shuffled.
SHUFFLES_BY_VALUE = int(pyspark.__version__.split(".")[0]) >= 4


@pytest.fixture(scope="module")
def ice(extension_log, tmp_path_factory):
    """A SparkSession with the Iceberg runtime: its own JVM, so never beside the suite's."""
    import pyspark
    from pyspark import SparkContext

    from testkit.formats import RUNTIMES, build_format_session, spark_minor

    if spark_minor(pyspark.__version__) not in RUNTIMES:
        pytest.skip(f"no Iceberg runtime for Spark {pyspark.__version__}")
    if SparkContext._active_spark_context is not None:
        pytest.skip("needs a JVM of its own with the Iceberg runtime: run this module in its own pytest process")
    java_options = (
        f"-Dlog4j.configurationFile=file:{TESTS_DIR / 'log4j2-test.properties'} "
        f"-Dmultijoin.test.log={extension_log.path}"
    )
    session = build_format_session(
        "iceberg", tmp_path_factory.mktemp("bucketed"), "dbt-multijoin-bucketed",
        {**SESSION_CONFS, "spark.driver.extraJavaOptions": java_options},
    )
    session.sql("CREATE NAMESPACE IF NOT EXISTS ice.b")
    yield session
    session.stop()


@pytest.fixture
def ispark(ice):
    """The Iceberg session, its runtime confs back to the module's after each test."""
    yield ice
    for key in ("spark.sql.adaptive.enabled", "spark.sql.requireAllClusterKeysForCoPartition",
                "spark.multijoin.bloomFilter.enabled",
                "spark.multijoin.keyGroupedInputs.enabled"):
        ice.conf.unset(key)
    for key, value in LAYOUT_CONFS.items():
        ice.conf.set(key, value)


# The tables made so far, by what they hold: no test writes to a table once it is made, so the
# cases of a test that differ only in a conf (adaptive execution on and off) read the same tables
# rather than writing them again.
_made: dict[tuple, str] = {}


def bucketed_table(ispark, rows, columns: str, partitioned_by: str | None, ordered_by: str | None = None) -> str:
    """An Iceberg table of `rows`, partitioned by `partitioned_by` (None: not partitioned); the
    one made before for the same rows and layout, if any."""
    made = (repr(rows), columns, partitioned_by, ordered_by)
    if made not in _made:
        _made[made] = new_bucketed_table(ispark, rows, columns, partitioned_by, ordered_by)
    return _made[made]


def new_bucketed_table(ispark, rows, columns: str, partitioned_by: str | None, ordered_by: str | None) -> str:
    """A new Iceberg table of `rows`, as bucketed_table's."""
    name = f"ice.b.t{next(_tables)}"
    spec = f" PARTITIONED BY ({partitioned_by})" if partitioned_by else ""
    ispark.sql(f"CREATE TABLE {name} ({columns}) USING iceberg{spec}")
    if ordered_by:
        ispark.sql(f"ALTER TABLE {name} WRITE ORDERED BY {ordered_by}")
    if rows:
        local_frame(ispark, rows, columns).writeTo(name).append()
    return name


def chain(tables: list[str], join_type: str, keys: list[str], hint: bool) -> str:
    """The flat chain over `tables`, each with columns (keys..., v<i>), as t1..tN."""
    n = len(tables)
    values = [[f"v{i + 1}"] for i in range(n)]
    return join_chain_sql(join_type, tables, keys, values, hint=hint, aliases=[f"t{i + 1}" for i in range(n)])


def exchanges(df) -> int:
    return sum(1 for n in executed_nodes(df) if "Exchange" in n.nodeName())


def exchanges_below_operator(df) -> int:
    joins = [n for n in executed_nodes(df) if n.nodeName() == "MultiJoin"]
    assert len(joins) == 1, [n.nodeName() for n in executed_nodes(df)]
    return sum(1 for n in plan_nodes(joins[0]) if "Exchange" in n.nodeName())


def operator(df):
    return next(n for n in executed_nodes(df) if n.nodeName() == "MultiJoin")


def assert_same_rows(ispark, hinted_sql: str, vanilla_sql: str):
    hinted = ispark.sql(hinted_sql)
    assert uses_multijoin(hinted), hinted_sql
    expected = multiset(ispark.sql(vanilla_sql).collect())
    actual = multiset(hinted.collect())
    assert actual == expected, f"\n{hinted_sql}\nmissing: {expected - actual}\nextra: {actual - expected}"
    return hinted


def keyed_rows(n_keys: int, step: int, value: int):
    return [(k, k * 10 + value) for k in range(0, n_keys, step)] + [(None, value), (3, -value)]


@pytest.fixture(scope="module")
def sixteen(ice):
    """16 tables bucketed alike on a bigint key, each with its own keys: some lack buckets the
    others hold, so Spark's own storage-partitioned join cannot pair them (into 4 buckets, each
    table holds all four, and Spark reads them unshuffled with the layout turned off)."""
    return [
        bucketed_table(ice, keyed_rows(40 + i, 1 + i % 3, i), f"k BIGINT, v{i + 1} BIGINT", "bucket(8, k)")
        for i in range(16)
    ]


@pytest.mark.parametrize("n, join_type, aqe", [
    (2, "full", "true"), (3, "full", "false"), (3, "left", "true"), (3, "inner", "false"),
    (16, "full", "true"), (16, "full", "false"), (16, "left", "false"), (16, "inner", "true"),
])
def test_inputs_bucketed_alike_are_not_shuffled(ispark, sixteen, n, join_type, aqe):
    ispark.conf.set("spark.sql.adaptive.enabled", aqe)
    tables = sixteen[:n]
    hinted = assert_same_rows(ispark, chain(tables, join_type, ["k"], True), chain(tables, join_type, ["k"], False))
    assert exchanges(hinted) == 0, hinted._jdf.queryExecution().executedPlan().toString()
    assert "inputs grouped by key" in operator(hinted).simpleString(100)


def test_vanilla_chain_shuffles_where_the_operator_does_not(ispark, sixteen):
    """What the layout saves: Spark's own chain joins two inputs without a shuffle, then shuffles
    the intermediate result and every later input."""
    ispark.conf.set("spark.sql.adaptive.enabled", "false")
    vanilla = ispark.sql(chain(sixteen[:3], "full", ["k"], False))
    assert exchanges(vanilla) >= 2


@pytest.mark.parametrize("join_type", ["left", "inner"])
def test_group_by_the_driver_key_adds_no_shuffle(ispark, sixteen, join_type):
    """LEFT and INNER keep the driver's key-grouped layout: a GROUP BY on its key needs no Exchange."""
    inner = chain(sixteen[:4], join_type, ["k"], True)
    hinted = assert_same_rows(
        ispark, f"SELECT k, count(*) AS c, sum(v2) AS s FROM ({inner}) GROUP BY k",
        f"SELECT k, count(*) AS c, sum(v2) AS s FROM ({chain(sixteen[:4], join_type, ['k'], False)}) GROUP BY k",
    )
    assert exchanges(hinted) == 0, hinted._jdf.queryExecution().executedPlan().toString()


# Above a FULL multi-join: on its key column (docs/architecture.md, "The key as a column of its own").
ABOVE = {
    "group": "SELECT k, count(*) AS c, sum(v2) AS s FROM ({inner}) GROUP BY k",
    "window": "SELECT k, v1, count(*) OVER (PARTITION BY k) AS c FROM ({inner})",
    "join": "SELECT m.*, u.k AS other_k FROM ({inner}) m JOIN {other} u ON m.k = u.k",
    "full join": "SELECT m.*, u.k AS other_k FROM ({inner}) m FULL JOIN {other} u ON m.k = u.k",
}


@pytest.fixture(scope="module")
def sparse(ice):
    """Three tables bucketed alike on a bigint key, each with a few keys of its own: each lacks
    some buckets, and no two list the same ones."""
    return [bucketed_table(ice, [(k, 10 * i + k) for k in keys] + [(None, i)], f"k BIGINT, v{i + 1} BIGINT", "bucket(8, k)")
            for i, keys in enumerate([[1, 2, 3], [2, 5, 11], [3, 40, 41, 2]])]


@pytest.fixture(scope="module")
def other_alike(ice):
    """A table bucketed like `sixteen`, holding keys of every bucket."""
    return bucketed_table(ice, [(k, -k) for k in range(0, 90, 2)] + [(None, 0)], "k BIGINT, w BIGINT", "bucket(8, k)")


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("operation", list(ABOVE))
def test_operations_on_the_key_above_a_full_join_shuffle_nothing(ispark, sparse, other_alike, operation, aqe):
    """FULL over key-grouped inputs reports its layout on its key column: a GROUP BY, a window, and
    a join with a table bucketed alike plan no Exchange at all. The inputs hold different buckets
    (some empty), so Spark's storage-partitioned join above pushes its own partition values into
    every scan: on Spark 3.5 only with pushPartValues (off by default there; the log says why)."""
    ispark.conf.set("spark.sql.adaptive.enabled", aqe)
    sql = ABOVE[operation]
    hinted_sql, vanilla_sql = (sql.format(inner=chain(sparse, "full", ["k"], hint), other=other_alike)
                               for hint in (True, False))
    hinted = assert_same_rows(ispark, hinted_sql, vanilla_sql)
    plan = hinted._jdf.queryExecution().executedPlan().toString()
    if "join" in operation and not SHUFFLES_BY_VALUE:
        assert exchanges_below_operator(hinted) == 0, plan
        ispark.conf.set("spark.sql.sources.v2.bucketing.pushPartValues.enabled", "true")
        try:
            hinted = assert_same_rows(ispark, hinted_sql, vanilla_sql)
        finally:
            ispark.conf.unset("spark.sql.sources.v2.bucketing.pushPartValues.enabled")
        plan = hinted._jdf.queryExecution().executedPlan().toString()
    assert exchanges(hinted) == 0, plan


def test_spark_35_says_why_a_join_above_shuffles_the_output(ispark, sparse, other_alike, extension_log):
    if SHUFFLES_BY_VALUE:
        pytest.skip("Spark 4 pushes partition values by default")
    ispark.conf.set("spark.sql.adaptive.enabled", "false")
    mark = extension_log.mark()
    sql = ABOVE["join"]
    assert_same_rows(ispark, sql.format(inner=chain(sparse, "full", ["k"], True), other=other_alike),
                     sql.format(inner=chain(sparse, "full", ["k"], False), other=other_alike))
    assert "spark.sql.sources.v2.bucketing.pushPartValues.enabled" in extension_log.since(mark)


def test_the_key_column_is_computed_without_generated_code(ispark, sixteen):
    ispark.conf.set("spark.multijoin.codegen.enabled", "false")
    try:
        sql = ABOVE["group"]
        hinted = assert_same_rows(ispark, sql.format(inner=chain(sixteen[:4], "full", ["k"], True)),
                                  sql.format(inner=chain(sixteen[:4], "full", ["k"], False)))
        assert exchanges(hinted) == 0
    finally:
        ispark.conf.unset("spark.multijoin.codegen.enabled")


@pytest.mark.parametrize("join_type", ["full", "left", "inner"])
def test_composite_key_bucketed_on_every_column(ispark, join_type):
    rows = [[(a, str(b), a * 7 + b + i) for a in range(6) for b in range(0, 5, i + 1)] + [(None, "1", i), (2, None, i)]
            for i in range(3)]
    tables = [bucketed_table(ispark, rows[i], f"k1 INT, k2 STRING, v{i + 1} INT", "bucket(4, k1), bucket(2, k2)")
              for i in range(3)]
    hinted = assert_same_rows(ispark, chain(tables, join_type, ["k1", "k2"], True),
                              chain(tables, join_type, ["k1", "k2"], False))
    assert exchanges(hinted) == 0
    if join_type == "full":
        # One key column per key part, each under its own bucket transform.
        sql = "SELECT k1, k2, count(*) AS c, sum(v3) AS s FROM ({}) GROUP BY k1, k2"
        grouped = assert_same_rows(ispark, sql.format(chain(tables, "full", ["k1", "k2"], True)),
                                   sql.format(chain(tables, "full", ["k1", "k2"], False)))
        assert exchanges(grouped) == 0, grouped._jdf.queryExecution().executedPlan().toString()


def test_composite_key_bucketed_on_part_of_it(ispark, extension_log):
    """Bucketed on k1 alone, joined on (k1, k2): like Spark, co-partitioned only when
    ispark.sql.requireAllClusterKeysForCoPartition is false; shuffled, with the reason, otherwise."""
    rows = [[(a, b, a * 7 + b + i) for a in range(6) for b in range(0, 5, i + 1)] + [(None, 1, i)] for i in range(3)]
    tables = [bucketed_table(ispark, rows[i], f"k1 INT, k2 INT, v{i + 1} INT", "bucket(4, k1)") for i in range(3)]
    hinted_sql, vanilla_sql = (chain(tables, "full", ["k1", "k2"], hint) for hint in (True, False))
    mark = extension_log.mark()
    hinted = assert_same_rows(ispark, hinted_sql, vanilla_sql)
    assert exchanges_below_operator(hinted) == 3
    assert "not on every column of its key" in extension_log.since(mark)
    ispark.conf.set("spark.sql.requireAllClusterKeysForCoPartition", "false")
    hinted = assert_same_rows(ispark, hinted_sql, vanilla_sql)
    assert exchanges(hinted) == 0


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("layout", ["other bucket count", "one unbucketed", "other column type", "unbucketed driver"])
def test_an_input_in_another_layout_is_shuffled_into_the_others(ispark, extension_log, layout, aqe):
    """One input the operator cannot pair partition by partition with the others (bucketed alike
    on a BIGINT key). Spark 4: that input alone is shuffled, into the others' layout, and the
    driver log names it and why; Spark 3.5: every input is shuffled (hash), and the log says why.
    The rows are vanilla Spark's either way, with the odd input last or, unbucketed, first (the
    driver of a LEFT join, whose layout the output then reports)."""
    ispark.conf.set("spark.sql.adaptive.enabled", aqe)
    # Not a divisor or multiple of 4 (see the test below for those), with values the others lack.
    spec = {"other bucket count": "bucket(3, k)", "one unbucketed": None, "other column type": "bucket(4, k)",
            "unbucketed driver": None}[layout]
    key_type = "INT" if layout == "other column type" else "BIGINT"
    odd_at = 0 if layout == "unbucketed driver" else 2
    tables = [bucketed_table(ispark, keyed_rows(30, i + 1, i + 1),
                             f"k {key_type if i == odd_at else 'BIGINT'}, v{i + 1} BIGINT",
                             spec if i == odd_at else "bucket(4, k)")
              for i in range(3)]
    for join_type in ("full", "left"):
        mark = extension_log.mark()
        hinted = assert_same_rows(ispark, chain(tables, join_type, ["k"], True), chain(tables, join_type, ["k"], False))
        log = extension_log.since(mark)
        if SHUFFLES_BY_VALUE:
            assert exchanges_below_operator(hinted) == 1, hinted._jdf.queryExecution().executedPlan().toString()
            assert "shuffled into that layout: input" in log, log
        else:
            assert exchanges_below_operator(hinted) == 3
            assert "the storage layout is not used" in log, log
    # Under a GROUP BY and a join on the key (with a table of the kept layout, whose values Spark
    # would push into the scans below if the output reported a layout: it reports none once an
    # input was shuffled into it; the odd input's values 8 to 11 would be lost): vanilla's rows.
    for join_type in ("full", "left"):
        for operation in ("group", "join"):
            sql = ABOVE[operation]
            assert_same_rows(ispark, sql.format(inner=chain(tables, join_type, ["k"], True), other=tables[1]),
                             sql.format(inner=chain(tables, join_type, ["k"], False), other=tables[1]))


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("counts", [(2, 4, 2), (2, 4, 4), (4, 2, 8)], ids=lambda c: "-".join(map(str, c)))
def test_inputs_bucketed_into_multiples_are_read_with_no_shuffle(ispark, extension_log, counts, aqe):
    """Inputs bucketed into N and multiples of N (Iceberg's bucket 2N value v holds only keys of
    bucket N value v mod N). Spark 4, whose transforms say how they reduce: no input is shuffled,
    the larger counts are read grouped onto the smallest, and the driver log says which; Spark 3.5:
    every input is shuffled, as for any other mix of layouts. The rows are vanilla Spark's, also
    under a GROUP BY, a window and a join on the key (with the smallest count's table: the output
    reports no layout, so that Spark never pushes that table's partition values down into a scan
    of another bucket count, which would then read only its buckets of those values)."""
    ispark.conf.set("spark.sql.adaptive.enabled", aqe)
    tables = [bucketed_table(ispark, keyed_rows(60, i + 1, i + 1), f"k BIGINT, v{i + 1} BIGINT", f"bucket({n}, k)")
              for i, n in enumerate(counts)]
    for join_type in ("full", "left", "inner"):
        mark = extension_log.mark()
        hinted = assert_same_rows(ispark, chain(tables, join_type, ["k"], True), chain(tables, join_type, ["k"], False))
        log = extension_log.since(mark)
        plan = hinted._jdf.queryExecution().executedPlan().toString()
        if SHUFFLES_BY_VALUE:
            assert exchanges_below_operator(hinted) == 0, plan
            assert f"read grouped by bucket({min(counts)}, " in log and "grouped onto it from a multiple of its bucket count" in log, log
        else:
            assert exchanges_below_operator(hinted) == len(counts), plan
            assert "the storage layout is not used" in log, log
        smallest = tables[counts.index(min(counts))]
        for operation in ("group", "window", "join"):
            sql = ABOVE[operation]
            assert_same_rows(ispark, sql.format(inner=chain(tables, join_type, ["k"], True), other=smallest),
                             sql.format(inner=chain(tables, join_type, ["k"], False), other=smallest))


def test_layout_can_be_turned_off(ispark, sixteen):
    ispark.conf.set("spark.multijoin.keyGroupedInputs.enabled", "false")
    hinted = assert_same_rows(ispark, chain(sixteen[:3], "full", ["k"], True), chain(sixteen[:3], "full", ["k"], False))
    assert exchanges_below_operator(hinted) == 3


def test_buckets_written_in_key_order_are_still_sorted_by_the_operator(ispark):
    """Evidence for the docs: a table whose write order is the key, one sorted file per bucket.
    Spark is not told the files are sorted (the scan reports no ordering), so the operator sorts
    every input, as it must for what it cannot know."""
    rows = [(k, k) for k in range(200)]
    tables = [bucketed_table(ispark, rows, f"k BIGINT, v{i + 1} BIGINT", "bucket(4, k)", ordered_by="k") for i in range(2)]
    hinted = assert_same_rows(ispark, chain(tables, "full", ["k"], True), chain(tables, "full", ["k"], False))
    assert exchanges(hinted) == 0
    scans = [n for n in executed_nodes(hinted) if n.getClass().getSimpleName() == "BatchScanExec"]
    assert scans and all(s.outputOrdering().isEmpty() for s in scans)
    assert "sorts inputs: all" in operator(hinted).simpleString(100)


# --- differential: random bucketed layouts --------------------------------------------------

KEY_TYPES = ["INT", "BIGINT", "STRING", "DATE", "DECIMAL(10,2)"]


@pytest.mark.parametrize("join_type", ["left", "inner"])
@pytest.mark.parametrize("spec", ["bucket(8, k)", None], ids=["bucketed", "unbucketed"])
def test_bloom_filter_of_an_iceberg_driver(ispark, join_type, spec):
    """LEFT and INNER: the bloom filter of a driver far smaller than the other inputs, all Iceberg
    tables. The filter's subquery reads the driver through a DSv2 scan, which must be pushed down
    before it is planned (it failed planning with "No plan for RelationV2")."""
    driver = bucketed_table(ispark, keyed_rows(20, 1, 1), "k BIGINT, v1 BIGINT", spec)
    others = [bucketed_table(ispark, keyed_rows(6000, 1, i), f"k BIGINT, v{i} BIGINT", spec) for i in (2, 3)]
    tables = [driver, *others]
    hinted = assert_same_rows(ispark, chain(tables, join_type, ["k"], True), chain(tables, join_type, ["k"], False))
    optimized = hinted._jdf.queryExecution().optimizedPlan().toString()
    assert "might_contain" in optimized, optimized


@st.composite
def layouts(draw):
    n = draw(st.integers(2, 5))
    arity = draw(st.sampled_from([1, 1, 2]))
    buckets = draw(st.sampled_from([1, 2, 3, 8, 16]))
    mixed = draw(st.integers(0, 4)) == 0
    shared = [draw(st.sampled_from(KEY_TYPES)) for _ in range(arity)]
    types = [[("BIGINT" if t == "INT" and mixed and i == n - 1 else t) for t in shared] for i in range(n)]
    hot = draw(st.booleans())

    def key_column(t):
        pool = KEY_POOLS[t]
        return st.one_of(st.none(), st.sampled_from(pool[:1] if hot and draw(st.booleans()) else pool))

    inputs = [draw(st.lists(st.tuples(*[key_column(t) for t in types[i]], st.integers(-5, 5)),
                            max_size=draw(st.sampled_from([0, 1, 6, 20])))) for i in range(n)]
    join_type = draw(st.sampled_from(["full", "left", "inner"]))
    spec = ", ".join(f"bucket({buckets}, k{c + 1})" for c in range(arity))
    # Now and then one input in another layout: not bucketed, another bucket count, or a multiple
    # of the others' count.
    odd = draw(st.sampled_from([None, None, None, "unbucketed", "other count", "multiple"]))
    odd_count = buckets * 2 if odd == "multiple" else buckets * 2 + 1
    odd_spec = None if odd == "unbucketed" else ", ".join(f"bucket({odd_count}, k{c + 1})" for c in range(arity))
    specs = [spec] * n
    if odd:
        specs[draw(st.integers(0, n - 1))] = odd_spec
    above = draw(st.sampled_from([None, "group", "window"]))
    return n, arity, types, inputs, join_type, specs, draw(st.booleans()), above, odd, odd_count, buckets


def on_top(above: str | None, inner: str, keys: list[str]) -> str:
    """A GROUP BY or a window on the key over the multi-join `inner` (None: `inner` alone)."""
    listed = ", ".join(keys)
    if above == "group":
        return f"SELECT {listed}, count(*) AS c, sum(v1) AS s FROM ({inner}) GROUP BY {listed}"
    if above == "window":
        return f"SELECT {listed}, v1, count(*) OVER (PARTITION BY {listed}) AS c FROM ({inner})"
    return inner


@settings(max_examples=examples(0.07))
@given(layouts())
# One bucket is no multiple's reduction: Iceberg reduces bucket counts onto a common divisor above 1
# only, so the input bucketed into 3 keeps its layout and the one-bucket input is shuffled into it.
@example((2, 1, [["INT"], ["INT"]], [[(0, 0)], [(0, 0)]], "full", ["bucket(3, k1)", "bucket(1, k1)"],
          False, None, "other count", 3, 1))
def test_bucketed_inputs_return_vanillas_rows(ispark, layout):
    """Above the multi-join, now and then a GROUP BY or a window on its key: over a FULL join they
    read its key column, whose reported layout must hold for the rows to be vanilla's."""
    n, arity, types, inputs, join_type, specs, aqe, above, odd, odd_count, buckets = layout
    ispark.conf.set("spark.sql.adaptive.enabled", str(aqe).lower())
    keys = [f"k{c + 1}" for c in range(arity)]
    tables = []
    for i in range(n):
        columns = ", ".join([f"k{c + 1} {t}" for c, t in enumerate(types[i])] + [f"v{i + 1} INT"])
        # Tables of its own, dropped at the end of each example (the examples' are many).
        tables.append(new_bucketed_table(ispark, inputs[i], columns, specs[i], None))
    try:
        hinted = assert_same_rows(ispark, on_top(above, chain(tables, join_type, keys, True), keys),
                                  on_top(above, chain(tables, join_type, keys, False), keys))
        # An empty scan reports no key grouping: its multi-join shuffles that input (Spark 4) or
        # every input (3.5). A LEFT or INNER join's inputs are read through the `key IS NOT NULL`
        # filter Spark infers, and Iceberg prunes every file of an input whose keys are all NULL.
        has_full_keys = all(any(None not in row[:arity] for row in rows) for rows in inputs)
        if all(t == types[0] for t in types) and has_full_keys:
            # At most one input is in another layout: Spark 4 reads it grouped onto the others'
            # when its bucket count is a multiple of theirs that the source can reduce (Iceberg
            # reduces onto a common divisor above 1), else shuffles it (or, of two inputs, the
            # second); 3.5 shuffles every input.
            multiple = odd is not None and odd != "unbucketed" and odd_count % buckets == 0 and buckets > 1
            expected = 0 if len(set(specs)) == 1 or (multiple and SHUFFLES_BY_VALUE) else 1 if SHUFFLES_BY_VALUE else n
            plan = hinted._jdf.queryExecution().executedPlan().toString()
            assert exchanges_below_operator(hinted) == expected, (specs, plan)
    finally:
        for table in tables:
            ispark.sql(f"DROP TABLE {table} PURGE")
