"""The multi-join as one DataFrame call, for classic PySpark and Spark Connect.

`multi_join` builds the same query as the dbt macro: a chain of USING joins on the key (for FULL,
each level joins on the coalesce of the keys below it: the nested-coalesce form of
docs/semantics.md), with the value columns named by the macro's rule, and puts the MULTI_JOIN
hint on the final DataFrame, where the extension sees the whole chain under it.

This module imports pyspark only inside its functions: `import dbt_multijoin` must work where
pyspark is not installed (the dbt package needs no pyspark on the thrift method).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Optional, Union

from dbt_multijoin.errors import DbtMultijoinError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["multi_join", "MultiJoinNotAppliedError", "MultiJoinNotAppliedWarning", "HINT"]

HINT = "MULTI_JOIN"
ENABLED = "spark.multijoin.enabled"
FAIL_ON_FALLBACK = "spark.multijoin.failOnFallback"
_JOIN_TYPES = ("full", "left", "inner")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The operator's line in EXPLAIN ("MultiJoin FullOuter, 3 inputs, keys=..."); not MultiJoinHint.
_OPERATOR = re.compile(r"\bMultiJoin (FullOuter|LeftOuter|Inner)\b")


class MultiJoinNotAppliedError(DbtMultijoinError):
    """`multi_join` would run with Spark's own joins and `spark.multijoin.failOnFallback` is true:
    the extension is not loaded in the session."""


class MultiJoinNotAppliedWarning(UserWarning):
    """`multi_join` returns a DataFrame that runs with Spark's own joins (the same rows, without
    the MultiJoin operator); the message says why and how to fix it."""


def multi_join(
    dataframes: Sequence["DataFrame"],
    on: Union[str, Sequence[str]],
    how: Literal["full", "left", "inner"] = "full",
    names: Optional[Sequence[str]] = None,
) -> "DataFrame":
    """Joins DataFrames on a shared key as one k-way sort-merge join (``MultiJoin`` in EXPLAIN).

    The result is the chain of joins the dbt macro ``dbt_multijoin.multi_join`` renders, with
    the ``MULTI_JOIN`` hint on it:

    - ``full``: the nested-coalesce FULL OUTER JOIN. Every key present in any input; each key
      column is the coalesce of the inputs' keys.
    - ``left``: every input LEFT OUTER JOINed on the first input's (the driver's) key; the key
      columns are the driver's.
    - ``inner``: the keys present in every input; the key columns are the first input's.

    Rows with a NULL key component match nothing. Duplicate keys multiply, as in any join.

    The output has the key columns (spelled as in the first input), then every non-key column
    of each input in order. A non-key column name used by more than one input (compared
    case-insensitively) is prefixed with the input's name and ``_`` (``t2_amount``), as the dbt
    macro does.

    Works with classic PySpark and Spark Connect DataFrames; needs the extension loaded where
    the session runs (``spark.sql.extensions``, a static conf: see docs/pyspark.md).

    Parameters
    ----------
    dataframes : list of :class:`DataFrame`
        Two or more DataFrames of one SparkSession.
    on : str or list of str
        The key column name, or names for a composite key. Each input must have these columns
        (case-insensitively); their types must be comparable, as for any join.
    how : str, optional, default ``"full"``
        ``"full"``, ``"left"`` or ``"inner"``.
    names : list of str, optional
        One plain identifier per input, the prefixes of clashing column names. Default:
        ``t1``, ``t2``, ... ``tN``.

    Returns
    -------
    :class:`DataFrame`
        The joined DataFrame, carrying the MULTI_JOIN hint.

    Raises
    ------
    ValueError
        Invalid arguments: fewer than two inputs, a missing key column, an unknown ``how``,
        bad ``names``, or an output column that would appear twice.
    MultiJoinNotAppliedError
        The extension is not loaded in the session and ``spark.multijoin.failOnFallback`` is
        true.
    pyspark.errors.AnalysisException
        The extension cannot collapse this chain and ``spark.multijoin.failOnFallback`` is
        true; the message is the extension's reason.

    Warns
    -----
    MultiJoinNotAppliedWarning
        The DataFrame will run with Spark's own joins (same rows, no MultiJoin operator): the
        extension is not loaded, ``spark.multijoin.enabled`` is false, or the chain cannot
        collapse (the message carries the extension's reason).

    Notes
    -----
    The call plans the query once (EXPLAIN) to check that it collapses. When it does not, it
    plans it once more with ``spark.multijoin.failOnFallback`` set to true in the session, to
    read the extension's reason, and then sets that conf back.

    When writing the chain by hand, put ``.hint("MULTI_JOIN")`` on the DataFrame of the last
    join: ``a.join(b, "k", "full").join(c, "k", "full").hint("MULTI_JOIN")``. A hint applies to
    the plan of the DataFrame it is called on, so ``a.hint("MULTI_JOIN").join(...)`` marks
    ``a`` alone, which has no join under it: the extension falls back with a warning in the
    driver's log only.

    Examples
    --------
    >>> from dbt_multijoin import multi_join
    >>> a = spark.createDataFrame([(1, "x"), (2, "y")], "id INT, v STRING")
    >>> b = spark.createDataFrame([(2, 20), (3, 30)], "id INT, v INT")
    >>> c = spark.createDataFrame([(3, 0.5)], "id INT, score DOUBLE")
    >>> multi_join([a, b, c], on="id").orderBy("id").show()
    +---+----+----+-----+
    | id|t1_v|t2_v|score|
    +---+----+----+-----+
    |  1|   x|NULL| NULL|
    |  2|   y|  20| NULL|
    |  3|NULL|  30|  0.5|
    +---+----+----+-----+
    """
    inputs = list(dataframes) if not isinstance(dataframes, (str, bytes)) else []
    if len(inputs) < 2:
        raise ValueError(f"multi_join needs a list of at least two DataFrames, got {dataframes!r}")
    keys = _key_list(on)
    join_type = _join_type(how)
    labels = _names(names, len(inputs))

    sides = _resolve_inputs(inputs, keys, labels)
    result = sides[0]
    for side in sides[1:]:
        # A USING join: for FULL its key columns are coalesce(left.k, right.k), so the next
        # level joins on the coalesce of every key below it; for LEFT and INNER they are the
        # left side's, i.e. the first input's. Its output is the key columns, then the left
        # side's other columns, then the right side's: the macro's column order.
        result = result.join(side, on=keys, how=join_type)
    # On the final DataFrame, so that the whole chain is under the hint.
    result = result.hint(HINT)
    _check_collapses(result)
    return result


def _key_list(on: Union[str, Sequence[str]]) -> list[str]:
    keys = [on] if isinstance(on, str) else list(on) if on is not None else []
    if not keys or not all(isinstance(k, str) and k for k in keys):
        raise ValueError(f"multi_join needs on='column' or on=['column', ...], got {on!r}")
    if len({k.lower() for k in keys}) != len(keys):
        raise ValueError(f"on lists a column twice: {', '.join(keys)}")
    return keys


def _join_type(how: str) -> str:
    if not isinstance(how, str) or how.lower() not in _JOIN_TYPES:
        raise ValueError(f"unknown how={how!r}: multi_join supports 'full', 'left' and 'inner'")
    return how.lower()


def _names(names: Optional[Sequence[str]], count: int) -> list[str]:
    if names is None:
        return [f"t{i + 1}" for i in range(count)]
    if isinstance(names, str) or len(names) != count:
        raise ValueError(f"names must list one name per input ({count} inputs), got {names!r}")
    for name in names:
        if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"input name {name!r} is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)")
    if len({n.lower() for n in names}) != count:
        raise ValueError(f"two inputs have the same name ({', '.join(names)}): pass one distinct name per input")
    return list(names)


def _resolve_inputs(inputs: list["DataFrame"], keys: list[str], labels: list[str]) -> list["DataFrame"]:
    """Each input with its key columns spelled as in the first input and its clashing non-key
    columns prefixed (the macro's rule, macros/internal/_spec.sql)."""
    key_lower = [k.lower() for k in keys]
    layouts = []  # per input: (its key column names, its non-key column names)
    for label, df in zip(labels, inputs):
        columns = list(df.columns)
        lowered = [c.lower() for c in columns]
        duplicates = sorted({c for c in lowered if lowered.count(c) > 1})
        if duplicates:
            raise ValueError(
                f"input '{label}' has more than one column named {', '.join(duplicates)} (case-insensitively): "
                "select or rename them first"
            )
        missing = [k for k in keys if k.lower() not in lowered]
        if missing:
            raise ValueError(f"key column(s) {', '.join(missing)} not found in input '{label}'; its columns: {', '.join(columns)}")
        own_keys = [columns[lowered.index(k)] for k in key_lower]
        layouts.append((own_keys, [c for c in columns if c.lower() not in key_lower]))

    uses: dict[str, int] = {}
    for _, payload in layouts:
        for column in payload:
            uses[column.lower()] = uses.get(column.lower(), 0) + 1
    output_keys = layouts[0][0]
    outputs = {k.lower(): f"key column {k}" for k in output_keys}
    sides = []
    for label, df, (own_keys, payload) in zip(labels, inputs, layouts):
        renames = {own: first for own, first in zip(own_keys, output_keys) if own != first}
        for column in payload:
            name = f"{label}_{column}" if uses[column.lower()] > 1 else column
            if name.lower() in outputs:
                raise ValueError(
                    f"output column '{name}' (from input '{label}', column '{column}') would appear twice "
                    f"(also the {outputs[name.lower()]}): rename or drop it first, or pass other names="
                )
            outputs[name.lower()] = f"column {column} of input '{label}'"
            if name != column:
                renames[column] = name
        # A projection of one input alone: the extension reads through it to the input.
        sides.append(df.withColumnsRenamed(renames) if renames else df)
    return sides


def _check_collapses(df: "DataFrame") -> None:
    """Warn, or raise under spark.multijoin.failOnFallback, unless the extension will run `df`
    with the MultiJoin operator."""
    spark = df.sparkSession
    fail = _conf(spark, FAIL_ON_FALLBACK, "false").lower() == "true"
    if not spark.catalog.functionExists("multijoin_version"):
        problem = (
            "the MultiJoin extension is not loaded in this Spark session (multijoin_version() does not "
            f"resolve): Spark drops the {HINT} hint as an unrecognized hint and runs the chain with its own "
            "joins (same rows, no MultiJoin operator). To load it: " + _how_to_load(df)
        )
        if fail:
            raise MultiJoinNotAppliedError(f"{problem} ({FAIL_ON_FALLBACK} is true)")
        warnings.warn(
            f"{problem}. Set {FAIL_ON_FALLBACK}=true to make this an error.", MultiJoinNotAppliedWarning, stacklevel=3
        )
        return
    if _conf(spark, ENABLED, "true").lower() == "false":
        warnings.warn(
            f"{ENABLED} is false in this session: the extension ignores the {HINT} hint and the chain "
            "runs with Spark's own joins (same rows, no MultiJoin operator)",
            MultiJoinNotAppliedWarning,
            stacklevel=3,
        )
        return
    # Under failOnFallback the extension raises its reason (an AnalysisException) right here.
    if _OPERATOR.search(_explain(df)):
        return
    # The reason reads "MULTI_JOIN hint not applied: <why>. The query runs with Spark's own joins."
    warnings.warn(
        f"{_fallback_reason(df)} Set {FAIL_ON_FALLBACK}=true to make this an error.",
        MultiJoinNotAppliedWarning,
        stacklevel=3,
    )


def _conf(spark: "SparkSession", key: str, default: str) -> str:
    value = spark.conf.get(key, default)
    return default if value is None else str(value)


def _explain(df: "DataFrame") -> str:
    """The physical plan as `df.explain()` prints it."""
    if _is_connect(df):
        return df._explain_string(mode="simple")  # type: ignore[attr-defined]
    execution = df._jdf.queryExecution()  # type: ignore[attr-defined]
    # Optimizing raises the extension's error under failOnFallback; Spark 3.5's explainString
    # would catch it and print it into the plan text instead.
    execution.optimizedPlan()
    # What classic `explain()` prints, as a string (the same call on 3.5 and 4.x).
    return df.sparkSession._jvm.PythonSQLUtils.explainString(execution, "simple")  # type: ignore[attr-defined]


def _fallback_reason(df: "DataFrame") -> str:
    """The extension's reason for not collapsing `df`: it logs it on the driver, and raises it
    when failOnFallback is true, so plan a fresh copy of the query under that conf."""
    spark = df.sparkSession
    previous = spark.conf.get(FAIL_ON_FALLBACK)
    spark.conf.set(FAIL_ON_FALLBACK, "true")
    try:
        # A new DataFrame: a classic DataFrame keeps the plan it has already optimized.
        _explain(df.select("*"))
    except Exception as error:  # the extension's AnalysisException, whatever its client-side class
        return _first_line(error)
    finally:
        spark.conf.set(FAIL_ON_FALLBACK, previous)
    return f"{HINT} hint not applied (the extension gave no reason: see the driver's log)."


def _first_line(error: Exception) -> str:
    # pyspark appends the JVM stack trace to the message; the reason is its first line.
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    return line.replace(f" ({FAIL_ON_FALLBACK} is true)", "")


def _is_connect(df: "DataFrame") -> bool:
    return type(df).__module__.startswith("pyspark.sql.connect")


def _how_to_load(df: "DataFrame") -> str:
    from dbt_multijoin import EXTENSION_CLASS

    if _is_connect(df):
        return (
            "this is a Spark Connect session, and a client cannot set the static conf spark.sql.extensions: "
            f"start the server with --jars <jar> --conf spark.sql.extensions={EXTENSION_CLASS} "
            "(`dbt-multijoin connect start` does this for a local server; <jar> is the path `dbt-multijoin jar "
            "--spark <the server's Spark minor>` prints)"
        )
    return (
        f"build the SparkSession with .config('spark.jars', <jar>).config('spark.sql.extensions', '{EXTENSION_CLASS}') "
        "before it starts (static confs: a running session ignores them; stop it first), with <jar> the path "
        "`dbt-multijoin jar` prints"
    )
