"""The operator on fixed examples: the worked example of docs/semantics.md, the plan it gets,
its metrics, a hot key that must spill, wide chains, and how adaptive execution lays out its
tasks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.errors import AnalysisException

from testkit.differential import assert_same_rows_as_vanilla, chain_sql, register_inputs
from testkit.frames import local_frame
from testkit.plans import multijoin_metrics, node_names, skip_wrappers, uses_multijoin


@pytest.fixture
def worked_example(spark):
    """docs/semantics.md, worked example: R1 = {key1, key2}, R2 = R3 = R4 = {key3}."""
    for name, keys in [("r1", ["key1", "key2"]), ("r2", ["key3"]), ("r3", ["key3"]), ("r4", ["key3"])]:
        local_frame(spark, [(k, f"{name}:{k}") for k in keys], f"k STRING, v_{name} STRING") \
            .createOrReplaceTempView(name)


NESTED_COALESCE = """
SELECT {hint} coalesce(r1.k, r2.k, r3.k, r4.k) AS k, v_r1, v_r2, v_r3, v_r4
FROM r1
FULL OUTER JOIN r2 ON r1.k = r2.k
FULL OUTER JOIN r3 ON coalesce(r1.k, r2.k) = r3.k
FULL OUTER JOIN r4 ON coalesce(r1.k, r2.k, r3.k) = r4.k
"""

KEYED_ON_R1 = """
SELECT {hint} coalesce(r1.k, r2.k, r3.k, r4.k) AS k
FROM r1
FULL OUTER JOIN r2 ON r1.k = r2.k
FULL OUTER JOIN r3 ON r1.k = r3.k
FULL OUTER JOIN r4 ON r1.k = r4.k
"""


def test_worked_example_gives_three_rows_through_the_operator(spark, worked_example):
    df = spark.sql(NESTED_COALESCE.format(hint="/*+ MULTI_JOIN */"))
    assert uses_multijoin(df)
    rows = sorted(df.collect())
    assert [r.k for r in rows] == ["key1", "key2", "key3"]
    assert rows[2].asDict() == {"k": "key3", "v_r1": None, "v_r2": "r2:key3", "v_r3": "r3:key3", "v_r4": "r4:key3"}


def test_chain_keyed_on_r1_keeps_its_five_rows_untouched(spark, worked_example, extension_log):
    mark = extension_log.mark()
    df = spark.sql(KEYED_ON_R1.format(hint="/*+ MULTI_JOIN */"))
    assert not uses_multijoin(df)
    assert sorted(r.k for r in df.collect()) == ["key1", "key2", "key3", "key3", "key3"]
    assert "not the coalesce of the keys" in extension_log.since(mark)


def exchange_and_sort_counts(df) -> tuple[int, int]:
    names = node_names(df)
    return names.count("Exchange"), names.count("Sort")


@pytest.mark.parametrize("adaptive", ["true", "false"])
@pytest.mark.parametrize("spelling", ["flat", "nested", "using"])
def test_plan_has_one_exchange_per_input_and_the_operator_sorts_them(spark, adaptive, spelling):
    spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    n = 5
    register_inputs(spark, [["BIGINT"]] * n, [[(i, i)] * 2 + [(i + 1, 0)] for i in range(n)])
    df = spark.sql(chain_sql(n, 1, spelling, hint=True))
    df.collect()  # an adaptive plan is final only once it ran
    names = node_names(df)
    assert names.count("MultiJoin") == 1, names
    assert "SortMergeJoin" not in names
    # One shuffle per input; no Sort node, since the operator sorts each input itself.
    assert exchange_and_sort_counts(df) == (n, 0), names
    plan = df._jdf.queryExecution().executedPlan().toString()
    multijoin = next(node for node in _nodes(df) if node.nodeName() == "MultiJoin")
    children = multijoin.children()
    child_names = [skip_wrappers(children.apply(i)).nodeName() for i in range(children.size())]
    assert child_names == ["Exchange"] * n, (child_names, plan)
    assert "sorts inputs: all" in plan, plan
    metrics = multijoin_metrics(df)
    assert metrics["sortPeakMemory"] > 0, metrics


def test_inputs_that_arrive_in_key_order_are_not_sorted_again(spark, tmp_path):
    """Tables bucketed and sorted on the key, with as many buckets as shuffle partitions, need
    neither a shuffle nor a sort; the operator reads them as they are and returns vanilla's rows."""
    spark.conf.set("spark.sql.legacy.bucketedTableScan.outputOrdering", "true")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    try:
        for i in (1, 2, 3):
            spark.sql(f"DROP TABLE IF EXISTS bucketed_t{i}")
            spark.range(0, 300, i).selectExpr("CAST(id % 97 AS INT) AS k1", f"id AS v{i}") \
                .repartition(partitions, "k1") \
                .write.bucketBy(partitions, "k1").sortBy("k1") \
                .option("path", str(tmp_path / f"t{i}")).saveAsTable(f"bucketed_t{i}")
        tables = ["bucketed_t1", "bucketed_t2", "bucketed_t3"]
        hinted = spark.sql(chain_sql(3, 1, "flat", hint=True, tables=tables))
        plan = hinted._jdf.queryExecution().executedPlan().toString()
        assert "sorts inputs: none" in plan, plan
        assert exchange_and_sort_counts(hinted) == (0, 0), plan
        assert_same_rows_as_vanilla(spark, chain_sql(3, 1, "flat", hint=True, tables=tables),
                                    chain_sql(3, 1, "flat", hint=False, tables=tables))
    finally:
        for i in (1, 2, 3):
            spark.sql(f"DROP TABLE IF EXISTS bucketed_t{i}")


def _nodes(df):
    from testkit.plans import executed_nodes

    return executed_nodes(df)


def test_explain_names_the_operator_its_inputs_and_keys(spark):
    register_inputs(spark, [["INT", "STRING"]] * 3, [[(1, "a", 1)]] * 3)
    explained = spark.sql(chain_sql(3, 2, "flat", hint=True))._jdf.queryExecution().explainString(
        spark._jvm.org.apache.spark.sql.execution.ExplainMode.fromString("simple")
    )
    assert re.search(r"MultiJoin FullOuter, 3 inputs, keys=\[\(t1\.k1, t1\.k2\), \(t2\.k1, t2\.k2\), \(t3\.k1, t3\.k2\)\]", explained), explained


def test_thirty_two_inputs(spark):
    n = 32
    inputs = [[(k, i) for k in range(i % 4, 40, 3)] for i in range(n)]
    register_inputs(spark, [["INT"]] * n, inputs)
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    assert_same_rows_as_vanilla(spark, chain_sql(n, 1, "flat", True), chain_sql(n, 1, "flat", False))


def test_metrics_count_rows_read_per_input_and_rows_out(spark):
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    inputs = [[(k, 0) for k in range(10)], [(k, 0) for k in range(5, 12)] * 2, [(None, 0), (3, 0)]]
    register_inputs(spark, [["INT"]] * 3, inputs)
    df = spark.sql(chain_sql(3, 1, "flat", hint=True))
    rows = df.collect()
    metrics = multijoin_metrics(df)
    assert metrics["numOutputRows"] == len(rows)
    assert [metrics[f"numInputRows{i}"] for i in range(1, 4)] == [10, 14, 2]
    assert metrics["spillSize"] == 0


def test_hot_key_larger_than_the_buffer_spills_and_completes(spark):
    """One key with 60k rows in one input, past a tiny spill threshold: the buffer spills to disk
    (Spark's own full outer join would hold it all in memory) and the count is exact."""
    spark.conf.set("spark.multijoin.buffer.inMemoryThreshold", "64")
    spark.conf.set("spark.multijoin.buffer.spillThreshold", "1000")
    hot = 60_000
    spark.range(hot).selectExpr("CAST(id % 1 + 7 AS INT) AS k1", "CAST(id AS INT) AS v1").createOrReplaceTempView("t1")
    local_frame(spark, [(7, 1), (7, 2), (8, 3)], "k1 INT, v2 INT").createOrReplaceTempView("t2")
    local_frame(spark, [(7, 1), (9, 2)], "k1 INT, v3 INT").createOrReplaceTempView("t3")
    df = spark.sql(chain_sql(3, 1, "flat", hint=True))
    assert uses_multijoin(df)
    # key 7: 60k x 2 x 1; key 8 and key 9 once each.
    assert df.count() == hot * 2 + 2
    counted = spark.sql(chain_sql(3, 1, "flat", hint=True))
    rows = counted.collect()
    assert len(rows) == hot * 2 + 2
    metrics = multijoin_metrics(counted)
    assert metrics["spillSize"] > 0, metrics
    assert sum(1 for r in rows if r.k1 == 7 and r.v2 == 2 and r.v3 == 1) == hot


def test_version_function_reports_the_package_version(spark):
    from dbt_multijoin import __version__

    assert spark.sql("SELECT multijoin_version() AS v").first().v == __version__


def test_hint_parameters_are_rejected(spark):
    register_inputs(spark, [["INT"]] * 2, [[(1, 1)]] * 2)
    with pytest.raises(AnalysisException, match="takes no parameters"):
        spark.sql("SELECT /*+ MULTI_JOIN(t1) */ * FROM t1 FULL JOIN t2 USING (k1)")


def test_disabled_at_runtime_runs_the_vanilla_plan_and_says_so(spark, extension_log):
    register_inputs(spark, [["INT"]] * 3, [[(1, 1)]] * 3)
    spark.conf.set("spark.multijoin.enabled", "false")
    mark = extension_log.mark()
    df = spark.sql(chain_sql(3, 1, "flat", hint=True))
    assert not uses_multijoin(df)
    assert df.count() == 1
    assert "hint ignored: spark.multijoin.enabled is false" in extension_log.since(mark)


def test_confs_are_registered_and_validated(spark):
    listed = {row.key for row in spark.sql("SET -v").collect()}
    assert {"spark.multijoin.enabled", "spark.multijoin.failOnFallback",
            "spark.multijoin.buffer.inMemoryThreshold", "spark.multijoin.buffer.spillThreshold"} <= listed
    with pytest.raises(Exception, match="spark.multijoin.enabled"):
        spark.sql("SET spark.multijoin.enabled=maybe")


def test_filter_around_a_hinted_subquery_reaches_the_joins(spark):
    """The hint marker must not stop Spark's own filter pushdown: a filter on t1's column written
    outside the hinted subquery reaches the joins, where Spark turns the FULL joins into LEFT
    ones, which then collapse as a LEFT multi-join."""
    register_inputs(spark, [["INT"]] * 3, [[(k, k) for k in range(5)]] * 3)
    inner = chain_sql(3, 1, "flat", hint=True)
    df = spark.sql(f"SELECT * FROM ({inner}) WHERE v1 > 2")
    optimized = df._jdf.queryExecution().optimizedPlan().toString()
    assert "MultiJoin LeftOuter" in optimized and "FullOuter" not in optimized, optimized
    assert sorted(r.v1 for r in df.collect()) == [3, 4]


def test_filter_on_the_coalesced_key_stays_above_the_operator(spark):
    register_inputs(spark, [["INT"]] * 3, [[(k, k) for k in range(5)]] * 3)
    inner = chain_sql(3, 1, "flat", hint=True)
    df = spark.sql(f"SELECT * FROM ({inner}) WHERE k1 >= 3")
    assert uses_multijoin(df)
    assert sorted(r.k1 for r in df.collect()) == [3, 4]


def _operator_partitions(df) -> list[int]:
    """The number of partitions each input of the (single) MultiJoin is read in."""
    operator = next(node for node in _nodes(df) if node.nodeName() == "MultiJoin")
    children = operator.children()
    return [children.apply(i).outputPartitioning().numPartitions() for i in range(children.size())]


def test_adaptive_reads_are_coalesced_into_whole_waves_of_tasks(spark):
    """AQE coalesces the inputs' shuffle reads as one group, here into an odd number of tasks;
    on 2 cores the operator's rule regroups them into the next even number (the same ranges for
    every input), and the rows stay the vanilla ones. Off, AQE's count stays."""
    n = 3
    register_inputs(spark, [["BIGINT"]] * n, [[(i * 7 + j, j) for i in range(3000)] for j in range(n)])
    confs = {"spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "40",
             "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
             "spark.sql.adaptive.advisoryPartitionSizeInBytes": "20k"}
    slots = spark.sparkContext.defaultParallelism
    counts = {}
    try:
        for key, value in confs.items():
            spark.conf.set(key, value)
        for whole_waves in ("false", "true"):
            spark.conf.set("spark.multijoin.coalesceToWholeWaves", whole_waves)
            df = assert_same_rows_as_vanilla(spark, chain_sql(n, 1, "flat", hint=True), chain_sql(n, 1, "flat", hint=False))
            partitions = _operator_partitions(df)
            assert len(set(partitions)) == 1, partitions
            counts[whole_waves] = partitions[0]
    finally:
        for key in [*confs, "spark.multijoin.coalesceToWholeWaves"]:
            spark.conf.unset(key)
    assert slots == 2 and counts["false"] % slots == 1, counts  # the case the rule is for
    assert counts["true"] == counts["false"] + 1, counts


@settings(max_examples=200)
@given(data=st.data())
def test_whole_wave_ranges_cover_the_partitions_evenly(spark, data):
    """The regrouping itself: `count` contiguous, non-empty ranges covering every shuffle
    partition, none holding more than its share of the bytes plus one partition's."""
    sizes = data.draw(st.lists(st.integers(0, 10**12), min_size=1, max_size=60))
    count = data.draw(st.integers(1, len(sizes)))
    gateway = spark.sparkContext._gateway
    array = gateway.new_array(gateway.jvm.long, len(sizes))
    for i, size in enumerate(sizes):
        array[i] = size
    found = spark._jvm.org.apache.spark.sql.multijoin.execution.CoalesceToWholeWaves.ranges(array, count)
    ranges = [(found.apply(i)._1(), found.apply(i)._2()) for i in range(found.size())]
    assert len(ranges) == count
    assert ranges[0][0] == 0 and ranges[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(start < end for start, end in ranges)
    share = sum(sizes) / count
    assert all(sum(sizes[start:end]) <= share + max(sizes) for start, end in ranges), (sizes, ranges)
