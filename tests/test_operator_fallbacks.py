"""Every reason the hint can fall back for: the query still returns Spark's own rows, a WARN in the
extension's log names the join and the reason, and failOnFallback turns it into an error."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

from testkit.differential import multiset
from testkit.frames import local_frame
from testkit.plans import uses_multijoin


@pytest.fixture
def inputs(spark):
    for i in (1, 2, 3):
        local_frame(
            spark,
            [(None, i, 0, 0.5)] + [(k, k * 10 + i, k % 2, float(k)) for k in range(i, 6)],
            f"k INT, v{i} INT, g{i} INT, d{i} DOUBLE",
        ).createOrReplaceTempView(f"t{i}")
    local_frame(spark, [(1, 5), (2**53 + 1, 6)], "k BIGINT, w INT").createOrReplaceTempView("big")
    local_frame(spark, [(1.0, 7), (float(2**53), 8)], "k DOUBLE, x INT").createOrReplaceTempView("dbl")
    spark.range(3).selectExpr("7 AS k", "id AS c").createOrReplaceTempView("constant_key")


FALLBACKS = {
    "keyed_on_first_input": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON t1.k = t3.k",
        "joins on t1.k, which is not the coalesce of the keys of the inputs joined below it",
    ),
    "coalesce_over_other_expressions": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON coalesce(t1.k, 0) = t3.k",
        "which is not the coalesce of the keys",
    ),
    "key_not_null_for_a_missing_row": (
        # Vanilla computes t1's key on the nulls of a missing t1 row: 0, which meets t3's 0.
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON CASE WHEN t1.k IS NULL THEN 0 ELSE t1.k END = t2.k "
        "FULL JOIN t3 ON coalesce(CASE WHEN t1.k IS NULL THEN 0 ELSE t1.k END, t2.k) = t3.k",
        "is not null for a row missing from its input",
    ),
    "left_key_not_null_for_a_missing_row": (
        "SELECT {hint} * FROM t1 LEFT JOIN t2 ON t1.k = CASE WHEN t2.k IS NULL THEN 0 ELSE t2.k END "
        "LEFT JOIN t3 ON coalesce(t1.k, CASE WHEN t2.k IS NULL THEN 0 ELSE t2.k END) = t3.k",
        "is not null for a row missing from its input",
    ),
    "coalesce_reorders_the_key_of_one_input": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON coalesce(t1.k, t1.g1) = t2.k "
        "FULL JOIN t3 ON coalesce(t1.g1, t1.k, t2.k) = t3.k",
        "which is not the coalesce of the keys",
    ),
    "left_coalesce_reorders_the_key_of_one_input": (
        "SELECT {hint} * FROM t1 LEFT JOIN t2 ON t1.k = coalesce(t2.k, t2.g2) "
        "LEFT JOIN t3 ON coalesce(t2.g2, t1.k) = t3.k",
        "which is not the key of the first input",
    ),
    "non_equi_condition": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k < t2.k",
        "has the condition (t1.k < t2.k), which is not an equality",
    ),
    "extra_condition": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k = t2.k AND t1.v1 > 12",
        "has the condition (t1.v1 > 12), which is not an equality",
    ),
    "key_arity_changes": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k = t2.k AND t1.g1 = t2.g2 "
        "FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k",
        "joins on 1 key column(s), the joins below it on 2",
    ),
    "key_component_repeated": (
        "SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k = t2.k AND t1.g1 = t2.g2 "
        "FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k AND coalesce(t1.k, t2.k) = t3.g3",
        "uses a key column of the joins below it twice",
    ),
    "right_join_chain": (
        "SELECT {hint} * FROM t1 RIGHT JOIN t2 ON t1.k = t2.k RIGHT JOIN t3 ON t2.k = t3.k",
        "is RIGHT OUTER; MULTI_JOIN collapses chains of FULL OUTER, LEFT OUTER",
    ),
    "filter_between_levels": (
        "SELECT {hint} coalesce(j.k, t3.k) AS k, j.v1, j.v2, t3.v3 FROM "
        "(SELECT coalesce(t1.k, t2.k) AS k, t1.v1, t2.v2 FROM t1 FULL JOIN t2 ON t1.k = t2.k "
        " WHERE t1.v1 IS NULL OR t2.v2 IS NULL) j FULL JOIN t3 ON j.k = t3.k",
        "a filter",
    ),
    "projection_not_null_when_missing": (
        "SELECT {hint} coalesce(j.k, t3.k) AS k, j.v, t3.v3 FROM "
        "(SELECT coalesce(t1.k, t2.k) AS k, coalesce(t1.v1, -1) AS v FROM t1 FULL JOIN t2 ON t1.k = t2.k) j "
        "FULL JOIN t3 ON j.k = t3.k",
        "is not null for a row that is missing from its side",
    ),
    "projection_not_deterministic": (
        "SELECT {hint} coalesce(j.k, t3.k) AS k, t3.v3 FROM "
        "(SELECT coalesce(t1.k, t2.k) + CAST(rand() * 0 AS INT) AS k FROM t1 FULL JOIN t2 ON t1.k = t2.k) j "
        "FULL JOIN t3 ON j.k = t3.k",
        "between two joins is not deterministic",
    ),
    "inexact_cast_between_levels": (
        # level 2 compares bigints, level 3 compares doubles: 2^53 + 1 and 2^53 meet only there.
        "SELECT {hint} * FROM big FULL JOIN t1 ON big.k = t1.k FULL JOIN dbl ON coalesce(big.k, t1.k) = dbl.k",
        "which is not the coalesce of the keys",
    ),
    "constant_key": (
        "SELECT {hint} * FROM constant_key c FULL JOIN t1 ON c.k = t1.k",
        "compares a key with a constant",
    ),
    "left_chain_keyed_on_another_input": (
        "SELECT {hint} * FROM t1 LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t2.k = t3.k",
        "which is not the key of the first input",
    ),
    "inner_chain_without_a_shared_key": (
        "SELECT {hint} * FROM t1 JOIN t2 ON t1.k = t2.k JOIN t3 ON t2.g2 = t3.g3",
        "the inputs are not all joined on one shared key",
    ),
    "no_join_below_the_hint": (
        "SELECT {hint} * FROM t1 UNION ALL SELECT * FROM t2",
        "no join below the hint",
    ),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_fallback_warns_with_its_reason_and_returns_vanilla_rows(spark, inputs, extension_log, case):
    sql, reason = FALLBACKS[case]
    mark = extension_log.mark()
    hinted = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    assert not uses_multijoin(hinted)
    assert multiset(hinted.collect()) == multiset(spark.sql(sql.format(hint="")).collect())
    log = extension_log.since(mark)
    assert "WARN CollapseMultiJoinChain: MULTI_JOIN hint not applied" in log, log
    assert reason in log, log


@pytest.mark.parametrize(
    "case", ["keyed_on_first_input", "key_not_null_for_a_missing_row", "non_equi_condition", "right_join_chain"]
)
def test_fail_on_fallback_turns_the_warning_into_an_error(spark, inputs, case):
    sql, reason = FALLBACKS[case]
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    with pytest.raises(AnalysisException) as error:
        spark.sql(sql.format(hint="/*+ MULTI_JOIN */")).collect()
    assert reason in str(error.value)
    assert "spark.multijoin.failOnFallback is true" in str(error.value)


def test_where_clause_that_rejects_nulls_collapses_as_a_left_chain(spark, inputs):
    """Spark turns the FULL chain into a LEFT one (t1's rows are required); joined on
    coalesce(t1.k, t2.k), which equals t1.k in a LEFT chain, it collapses as LEFT."""
    sql = ("SELECT {hint} * FROM t1 FULL JOIN t2 ON t1.k = t2.k FULL JOIN t3 ON coalesce(t1.k, t2.k) = t3.k "
           "WHERE t1.v1 > 12")
    hinted = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    assert "MultiJoin LeftOuter" in hinted._jdf.queryExecution().optimizedPlan().toString()
    assert multiset(hinted.collect()) == multiset(spark.sql(sql.format(hint="")).collect())


def test_python_udf_key_falls_back(spark, inputs, extension_log):
    from pyspark.sql.functions import udf

    spark.udf.register("plus_zero", udf(lambda k: k, "int"))
    sql = "SELECT {hint} * FROM t1 FULL JOIN t2 ON plus_zero(t1.k) = t2.k"
    mark = extension_log.mark()
    hinted = spark.sql(sql.format(hint="/*+ MULTI_JOIN */"))
    assert multiset(hinted.collect()) == multiset(spark.sql(sql.format(hint="")).collect())
    assert "cannot be evaluated as a key" in extension_log.since(mark)
