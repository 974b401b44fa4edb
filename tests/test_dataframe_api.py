"""`dbt_multijoin.multi_join`, the DataFrame call, in classic PySpark: the same rows as the vanilla
chain written in SQL, with the MultiJoin operator; the dbt macro's column names; where the hint
must go; and how it says that the chain runs without the operator (docs/pyspark.md).

The same call over Spark Connect is in test_connect.py.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbt_multijoin import MultiJoinNotAppliedWarning, multi_join
from testkit.differential import multiset, typed_inputs, vanilla_sql
from testkit.frames import local_frame
from testkit.plans import uses_multijoin
from testkit.properties import examples

FAIL_ON_FALLBACK = "spark.multijoin.failOnFallback"


@settings(max_examples=examples(0.2))
@given(data=st.data())
def test_same_rows_as_the_vanilla_chain(spark, data):
    n = data.draw(st.integers(2, 4), label="inputs")
    how = data.draw(st.sampled_from(["full", "left", "inner"]), label="how")
    types, inputs = data.draw(typed_inputs(n), label="types, rows")
    arity = len(types[0])
    # Clashing value columns get the macro's prefixes; a key spelled differently in input 2
    # takes the first input's spelling in the output.
    clash = data.draw(st.booleans(), label="value columns share a name")
    respelled = data.draw(st.booleans(), label="input 2 spells the key in upper case")
    keys = [[f"k{c + 1}".upper() if respelled and i == 1 else f"k{c + 1}" for c in range(arity)] for i in range(n)]
    columns = [["v" if clash else f"v{i + 1}"] for i in range(n)]
    outputs = [[f"t{i + 1}_v" if clash else f"v{i + 1}"] for i in range(n)]

    frames = []
    for i in range(n):
        ddl = ", ".join([f"{keys[i][c]} {types[i][c]}" for c in range(arity)] + [f"{columns[i][0]} INT"])
        frame = local_frame(spark, inputs[i], ddl)
        frame.createOrReplaceTempView(f"t{i + 1}")
        frames.append(frame)

    spark.conf.set(FAIL_ON_FALLBACK, "true")  # a fallback fails the example with its reason
    joined = multi_join(frames, on=keys[0], how=how)
    assert uses_multijoin(joined), joined._jdf.queryExecution().optimizedPlan().toString()
    assert joined.columns == keys[0] + [o for out in outputs for o in out]
    expected = multiset(spark.sql(vanilla_sql(how, keys, columns, outputs)).collect())
    actual = multiset(joined.collect())
    assert actual == expected, f"\nmissing: {expected - actual}\nextra: {actual - expected}"


def test_columns_are_named_as_the_dbt_macro_names_them(spark):
    a = local_frame(spark, [(1, 2, "a")], "id INT, amount INT, a_only STRING")
    b = local_frame(spark, [(1, 3, 4)], "ID INT, AMOUNT INT, b_only INT")
    c = local_frame(spark, [(1, 5)], "id INT, amount INT")
    # Clashes compare names case-insensitively; the key takes the first input's spelling.
    assert multi_join([a, b, c], on="id").columns == ["id", "t1_amount", "a_only", "t2_AMOUNT", "b_only", "t3_amount"]
    named = multi_join([a, b, c], on=["id"], how="left", names=["orders", "refunds", "fees"])
    assert named.columns == ["id", "orders_amount", "a_only", "refunds_AMOUNT", "b_only", "fees_amount"]
    assert named.collect() == [(1, 2, "a", 3, 4, 5)]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda a, b: multi_join([a], on="id"), "at least two DataFrames"),
        (lambda a, b: multi_join([a, b], on="missing"), "key column(s) missing not found in input 't1'"),
        (lambda a, b: multi_join([a, b], on=[]), "on='column'"),
        (lambda a, b: multi_join([a, b], on=["id", "ID"]), "lists a column twice"),
        (lambda a, b: multi_join([a, b], on="id", how="right"), "supports 'full', 'left' and 'inner'"),
        (lambda a, b: multi_join([a, b], on="id", names=["x"]), "one name per input"),
        (lambda a, b: multi_join([a, b], on="id", names=["x", "X"]), "the same name"),
        (lambda a, b: multi_join([a, b], on="id", names=["x", "not valid"]), "not a plain identifier"),
        # b's v becomes t2_v, which a's own t2_v column already is.
        (lambda a, b: multi_join([a.withColumnRenamed("w", "t2_v"), b], on="id"), "would appear twice"),
    ],
)
def test_invalid_arguments_say_what_is_wrong(spark, call, message):
    a = local_frame(spark, [(1, 2, 3)], "id INT, v INT, w INT")
    b = local_frame(spark, [(1, 3)], "id INT, v INT")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(a, b)


def test_the_hint_goes_on_the_final_dataframe(spark):
    a = local_frame(spark, [(1, 1), (2, 2)], "k INT, a INT")
    b = local_frame(spark, [(2, 3), (3, 4)], "k INT, b INT")
    c = local_frame(spark, [(3, 5)], "k INT, c INT")
    chained = a.join(b, "k", "full").join(c, "k", "full")
    assert uses_multijoin(chained.hint("MULTI_JOIN"))
    # On the first DataFrame the hint covers `a` alone: no join under it, nothing collapses.
    assert not uses_multijoin(a.hint("MULTI_JOIN").join(b, "k", "full").join(c, "k", "full"))
    assert multiset(multi_join([a, b, c], on="k").collect()) == multiset(chained.collect())


def test_a_chain_that_cannot_collapse_warns_with_the_extensions_reason(spark):
    # Level 2 compares bigints, level 3 doubles: 2^53 + 1 and 2^53 meet only at level 3, so the
    # extension keeps Spark's joins (docs/semantics.md, keys and types).
    big = local_frame(spark, [(2**53 + 1, 1)], "k BIGINT, x INT")
    small = local_frame(spark, [(1, 2)], "k INT, y INT")
    dbl = local_frame(spark, [(float(2**53), 3)], "k DOUBLE, z INT")
    with pytest.warns(MultiJoinNotAppliedWarning, match="which is not the coalesce of the keys") as caught:
        joined = multi_join([big, small, dbl], on="k")
    assert "spark.multijoin.failOnFallback=true" in str(caught[0].message)
    assert spark.conf.get(FAIL_ON_FALLBACK) == "false"  # set back after reading the reason
    assert not uses_multijoin(joined)
    vanilla = big.join(small, "k", "full").join(dbl, "k", "full")
    assert multiset(joined.collect()) == multiset(vanilla.collect())

    spark.conf.set(FAIL_ON_FALLBACK, "true")
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="which is not the coalesce of the keys"):
        multi_join([big, small, dbl], on="k")


def test_disabled_extension_warns(spark):
    a = local_frame(spark, [(1, 1)], "k INT, a INT")
    b = local_frame(spark, [(1, 2)], "k INT, b INT")
    spark.conf.set("spark.multijoin.enabled", "false")
    with pytest.warns(MultiJoinNotAppliedWarning, match="spark.multijoin.enabled is false"):
        joined = multi_join([a, b], on="k")
    assert joined.collect() == [(1, 1, 2)]


def test_no_warning_when_the_chain_collapses(spark):
    a = local_frame(spark, [(1, 1)], "k INT, a INT")
    b = local_frame(spark, [(1, 2)], "k INT, b INT")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        multi_join([a, b], on="k", how="inner")


def test_the_package_imports_without_pyspark():
    code = "import sys; sys.modules['pyspark'] = None; import dbt_multijoin; print(dbt_multijoin.multi_join.__name__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "multi_join", result.stderr


# A Spark application of its own: vanilla Spark, no extension (this run's session has it).
WITHOUT_EXTENSION = textwrap.dedent(
    """
    import warnings
    from pyspark.sql import SparkSession
    from dbt_multijoin import MultiJoinNotAppliedError, MultiJoinNotAppliedWarning, multi_join

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
    a = spark.range(3).selectExpr("id AS k", "id AS a")
    b = spark.range(1, 4).selectExpr("id AS k", "id AS b")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = sorted(multi_join([a, b], on="k").collect(), key=lambda r: r.k)
    ours = [w.message for w in caught if isinstance(w.message, MultiJoinNotAppliedWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    print("WARNING:", ours[0])
    assert [tuple(r) for r in rows] == [(0, 0, None), (1, 1, 1), (2, 2, 2), (3, None, 3)], rows
    spark.conf.set("spark.multijoin.failOnFallback", "true")
    try:
        multi_join([a, b], on="k")
    except MultiJoinNotAppliedError as error:
        print("ERROR:", error)
    else:
        raise AssertionError("no error under failOnFallback")
    spark.stop()
    """
)


@pytest.mark.slow
def test_without_the_extension_it_warns_or_raises_how_to_load_it(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTENSION],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**__import__("os").environ, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    for line in ("WARNING:", "ERROR:"):
        message = next(text for text in result.stdout.splitlines() if text.startswith(line))
        assert "the MultiJoin extension is not loaded in this Spark session" in message
        assert "spark.sql.extensions" in message and "dbt-multijoin jar" in message
