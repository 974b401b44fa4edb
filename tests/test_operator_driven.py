"""LEFT and INNER multi-joins (driven by the first input) and the bloom filter that prunes every
other input with the driver's keys: rows equal to vanilla Spark's, with and without the filter,
also when the filter is made to give many false positives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.differential import chain_sql, multiset, register_inputs, typed_inputs
from testkit.plans import multijoin_metrics, node_names, uses_multijoin
from testkit.properties import examples

JOIN_TYPES = ["LEFT", "INNER"]


@st.composite
def driven_scenarios(draw):
    types, inputs = draw(typed_inputs(n=draw(st.integers(2, 6))))
    return {
        "types": types,
        "inputs": inputs,
        "join_type": draw(st.sampled_from(JOIN_TYPES)),
        "spelling": draw(st.sampled_from(["flat", "using"])),
        "adaptive": draw(st.booleans()),
    }


def assert_driven_matches_vanilla(spark, case, expect_bloom_filter: bool) -> None:
    n, arity = len(case["inputs"]), len(case["types"][0])
    hinted = spark.sql(chain_sql(n, arity, case["spelling"], hint=True, how=case["join_type"].lower()))
    assert uses_multijoin(hinted)
    optimized = hinted._jdf.queryExecution().optimizedPlan().toString()
    assert ("might_contain" in optimized) == expect_bloom_filter, optimized
    vanilla = spark.sql(chain_sql(n, arity, case["spelling"], hint=False, how=case["join_type"].lower()))
    expected, actual = multiset(vanilla.collect()), multiset(hinted.collect())
    assert actual == expected, f"\nmissing: {expected - actual}\nextra: {actual - expected}"


@settings(max_examples=examples(1 / 2))
@given(case=driven_scenarios())
def test_left_and_inner_chains_return_the_vanilla_rows(spark, case):
    """In-memory inputs: Spark does not know their size, so no bloom filter is built."""
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.sql.adaptive.enabled", str(case["adaptive"]).lower())
    register_inputs(spark, case["types"], case["inputs"])
    assert_driven_matches_vanilla(spark, case, expect_bloom_filter=False)


@settings(max_examples=examples(1 / 6))
@given(case=driven_scenarios(), fpp=st.sampled_from(["0.01", "0.5", "0.99"]))
def test_bloom_filter_false_positives_never_change_a_result(spark, tmp_path_factory, case, fpp):
    """Inputs read from parquet (sizes known), the filter forced on every input and sized for up
    to 99% false positives: the rows stay exactly the vanilla ones."""
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    spark.conf.set("spark.multijoin.bloomFilter.minSizeRatio", "0")
    spark.conf.set("spark.multijoin.bloomFilter.fpp", fpp)
    register_inputs(spark, case["types"], case["inputs"])
    folder = tmp_path_factory.mktemp("bloom")
    for i in range(len(case["inputs"])):
        spark.table(f"t{i + 1}").write.parquet(str(folder / f"t{i + 1}"))
        spark.read.parquet(str(folder / f"t{i + 1}")).createOrReplaceTempView(f"t{i + 1}")
    assert_driven_matches_vanilla(spark, case, expect_bloom_filter=True)


@pytest.fixture
def parquet_inputs(spark, tmp_path):
    """A small driver (5% of the keys) and three large feature inputs, as parquet."""
    spark.range(0, 200).selectExpr("id * 20 AS k", "id AS d").write.parquet(str(tmp_path / "t1"))
    for i in (2, 3, 4):
        spark.range(0, 40_000).selectExpr("id % 4000 AS k", f"id AS v{i}").write.parquet(str(tmp_path / f"t{i}"))
    for i in (1, 2, 3, 4):
        spark.read.parquet(str(tmp_path / f"t{i}")).createOrReplaceTempView(f"t{i}")


@pytest.mark.parametrize("join_type", JOIN_TYPES)
def test_bloom_filter_prunes_every_other_input_before_its_shuffle(spark, parquet_inputs, join_type, extension_log):
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    mark = extension_log.mark()
    sql = ("SELECT {hint} t1.k, d, v2, v3, v4 FROM t1 {jt} JOIN t2 ON t1.k = t2.k "
           "{jt} JOIN t3 ON t1.k = t3.k {jt} JOIN t4 ON t1.k = t4.k")
    hinted = spark.sql(sql.format(hint="/*+ MULTI_JOIN */", jt=join_type))
    explained = hinted._jdf.queryExecution().toString()
    assert f"MultiJoin {'LeftOuter' if join_type == 'LEFT' else 'Inner'}, 4 inputs" in explained
    assert explained.count("might_contain") >= 3, explained
    rows = hinted.collect()
    assert multiset(rows) == multiset(spark.sql(sql.format(hint="", jt=join_type)).collect())
    names = node_names(hinted)
    assert names.count("SortMergeJoin") == 0
    # Each feature input's Filter with the bloom filter sits below its Exchange: rows it drops
    # are never shuffled. The Exchange reports how many rows it wrote.
    exchanges = [n for n in _exchanges(hinted) if "v2" in n.output().toString() or "v3" in n.output().toString()]
    assert exchanges and all(_rows_written(e) < 40_000 for e in exchanges)
    log = extension_log.since(mark)
    assert "Bloom filter from the driver" in log and "prunes input 2" in log


def _exchanges(df):
    from testkit.plans import executed_nodes

    return [n for n in executed_nodes(df) if n.nodeName() == "Exchange"]


def _rows_written(exchange) -> int:
    return exchange.metrics().apply("shuffleRecordsWritten").value()


@pytest.mark.parametrize("conf, value, reason", [
    ("spark.multijoin.bloomFilter.minSizeRatio", "1000000", "Bloom filter not applied to input 2: it is only"),
    ("spark.multijoin.bloomFilter.maxNumBits", "64", "spark.multijoin.bloomFilter.maxNumBits=64"),
])
def test_bloom_filter_skipped_with_its_reason(spark, parquet_inputs, extension_log, conf, value, reason):
    """Not built when the driver is not much smaller than an input, or would exceed its bound."""
    spark.conf.set(conf, value)
    mark = extension_log.mark()
    df = spark.sql("SELECT /*+ MULTI_JOIN */ * FROM t1 LEFT JOIN t2 USING (k) LEFT JOIN t3 USING (k)")
    assert uses_multijoin(df) and "might_contain" not in df._jdf.queryExecution().optimizedPlan().toString()
    assert reason in extension_log.since(mark)


def test_bloom_filter_can_be_turned_off(spark, parquet_inputs, extension_log):
    spark.conf.set("spark.multijoin.bloomFilter.enabled", "false")
    df = spark.sql("SELECT /*+ MULTI_JOIN */ * FROM t1 INNER JOIN t2 USING (k) INNER JOIN t3 USING (k)")
    assert uses_multijoin(df) and "might_contain" not in df._jdf.queryExecution().optimizedPlan().toString()


def test_left_chain_output_keeps_the_driver_partitioning(spark, parquet_inputs):
    """A LEFT multi-join is partitioned on the driver's key, so an aggregation on it needs no
    new shuffle (as after Spark's own LEFT joins)."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    df = spark.sql("SELECT k, count(*) FROM (SELECT /*+ MULTI_JOIN */ t1.k, v2 FROM t1 "
                   "LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t1.k = t3.k) GROUP BY k")
    # One per input and none for the GROUP BY (the bloom filter's own lives in its subquery).
    assert node_names(df).count("Exchange") == 3
    assert df.count() == 200


def _bloom_filters(df) -> list:
    """The bloom filters the query's subqueries built (run the query first): one
    org.apache.spark.util.sketch.BloomFilter per subquery, read back from its cached result."""
    from testkit.plans import plan_nodes

    jvm = df.sparkSession.sparkContext._jvm
    subqueries = [n for n in plan_nodes(df._jdf.queryExecution().executedPlan(), subqueries=True)
                  if n.getClass().getSimpleName() == "SubqueryExec"]
    return [jvm.org.apache.spark.util.sketch.BloomFilter.readFrom(
        jvm.java.io.ByteArrayInputStream(s.executeCollect()[0].getBinary(0))) for s in subqueries]


DRIVER_ROWS = 20_000


@pytest.fixture
def compressible_driver(spark, tmp_path):
    """t1: a parquet driver of 20,000 keys (every 20th id) and a bigint of 100 values, without
    table statistics; it compresses to about 4 bytes a row, so its size / 8 is half its rows.
    Written as two files, of 100 and 19,900 rows, read as two partitions. t2: 200,000 rows, one
    per id, 10,000 of them with a key of the driver."""
    for ids, mode in ((spark.range(100), "overwrite"), (spark.range(100, DRIVER_ROWS).coalesce(1), "append")):
        ids.selectExpr("id * 20 AS k", "id % 100 AS d").write.mode(mode).parquet(str(tmp_path / "t1"))
    spark.range(200_000).selectExpr("id AS k", "id AS v2").write.parquet(str(tmp_path / "t2"))
    for i in (1, 2):
        spark.read.parquet(str(tmp_path / f"t{i}")).createOrReplaceTempView(f"t{i}")
    assert spark.table("t1").rdd.getNumPartitions() == 2
    driver_bytes = spark.table("t1")._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()
    assert int(str(driver_bytes)) / 8 < DRIVER_ROWS, "the driver must compress well"


def _left_join_matches_vanilla(spark):
    """t1 LEFT JOIN t2 with the hint, run; asserts its rows are vanilla's and returns it."""
    sql = "SELECT {hint} t1.k, d, v2 FROM t1 LEFT JOIN t2 ON t1.k = t2.k"
    hinted = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    assert multiset(hinted.collect()) == multiset(spark.sql(sql.format(hint="")).collect())
    return hinted


@pytest.mark.parametrize("adaptive", [True, False])
def test_bloom_filter_sized_for_the_drivers_true_row_count(spark, compressible_driver, extension_log, adaptive):
    """Sized from the driver's file size, the filter would hold twice the keys it was built for
    and let through about 20% of the rows it should drop, not the configured 3%."""
    spark.conf.set("spark.sql.adaptive.enabled", str(adaptive).lower())
    mark = extension_log.mark()
    hinted = _left_join_matches_vanilla(spark)
    # EXPLAIN shows what sizes the filter (the rate, the bound), not a guess of the driver's rows.
    explained = hinted._jdf.queryExecution().toString()
    assert "multijoin_bloom_filter(xxhash64(k#" in explained and ", 0.03, 67108864)" in explained
    [bloom_filter] = _bloom_filters(hinted)
    needed = spark.sparkContext._jvm.org.apache.spark.util.sketch.BloomFilter.optimalNumOfBits(DRIVER_ROWS, 0.03)
    assert bloom_filter.bitSize() >= needed, (bloom_filter.bitSize(), needed)
    # t2 has 10,000 of the driver's keys and 190,000 others: the filter lets through about 3% of
    # those, not the ~20% of a filter sized for the file's bytes / 8.
    assert multijoin_metrics(hinted)["numInputRows2"] < 10_000 + 0.05 * 190_000
    assert f"built for the {DRIVER_ROWS} distinct keys it has" in extension_log.since(mark)


def test_bloom_filter_keeps_its_bound_when_the_driver_has_more_keys_than_estimated(
        spark, compressible_driver, extension_log):
    """The estimate (size / 8) needs fewer bits than the bound, the driver's true keys more: the
    filter is built with the bound's bits, no more (more false positives, the same rows). The
    file of 100 keys stays a set of hashes while the other's outgrows it (a set merged with a
    full-size filter)."""
    spark.conf.set("spark.multijoin.bloomFilter.maxNumBits", "100000")
    mark = extension_log.mark()
    hinted = _left_join_matches_vanilla(spark)
    [bloom_filter] = _bloom_filters(hinted)
    assert 100_000 <= bloom_filter.bitSize() < 100_000 + 64  # whole 64-bit words
    assert "built with the most bits allowed, 100000" in extension_log.since(mark)


