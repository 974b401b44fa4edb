"""The SQL of a chain of joins on one key: the query the MULTI_JOIN hint collapses, written once
for the tests and the benchmarks. A module of its own, because the benchmarks import it too and
must not need the test tools (testkit.differential imports hypothesis, which the `bench` extra
does not install); it imports nothing."""

from __future__ import annotations

HINT = "/*+ MULTI_JOIN */ "
JOIN_KEYWORDS = {"full": "FULL OUTER JOIN", "left": "LEFT OUTER JOIN", "inner": "INNER JOIN"}


def join_chain_sql(
    how: str,
    relations: list[str],
    keys: list[str] | list[list[str]],
    values: list[list[str]],
    *,
    hint: bool = False,
    spelling: str = "flat",
    aliases: list[str] | None = None,
) -> str:
    """`relations` joined in their order on the key columns `keys`, selecting the key, then each
    relation's `values`.

    how: "full", "left" or "inner". A FULL chain joins relation i on the coalesce of the keys of
        the relations before it (any of them may be the one that has the row) and outputs the
        coalesce of all of them; LEFT and INNER join every relation on the first one's key and
        output that.
    keys: the key columns, named alike in every relation; or a list per relation, its own name for
        each key column (the output takes the first relation's names).
    values: per relation, the columns it adds to the output, each a name or `name AS output`.
    aliases: what the query calls each relation; by default its name (a relation that comes
        twice needs them).
    spelling: "flat", as above; "reordered", flat with the output key coalesced the other way
        round (coalesce(coalesce(t3.k, t2.k), t1.k)); "nested", FULL only and plain value names,
        each join a subquery that outputs the coalesced key; "using", `JOIN ... USING (keys)`,
        selecting *.
    """
    n = len(relations)
    aliases = aliases or relations
    keys = [keys] * n if isinstance(keys[0], str) else keys
    arity = len(keys[0])
    hint_sql = HINT if hint else ""
    keyword = JOIN_KEYWORDS[how]
    named = [relation if relation == alias else f"{relation} AS {alias}" for relation, alias in zip(relations, aliases)]

    def column(i: int, c: int) -> str:
        return f"{aliases[i]}.{keys[i][c]}"

    def key_below(c: int, i: int) -> str:
        """Key column c as the join of relation i sees it: of the relations before i."""
        refs = [column(j, c) for j in (range(i) if how == "full" else range(1))]
        return refs[0] if len(refs) == 1 else f"coalesce({', '.join(refs)})"

    if spelling == "using":
        joins = [f"{keyword} {named[i]} USING ({', '.join(keys[0])})" for i in range(1, n)]
        return f"SELECT {hint_sql}* FROM {' '.join([named[0], *joins])}"
    if spelling == "nested":
        if how != "full":
            raise ValueError("the nested spelling coalesces the key: FULL chains only")
        return _nested_full_chain(named, aliases, keys[0], values, hint_sql)
    if spelling == "reordered":
        if how != "full":
            raise ValueError("the reordered spelling coalesces the key: FULL chains only")
        output_keys = [column(n - 1, c) for c in range(arity)]
        for i in range(n - 2, -1, -1):
            output_keys = [f"coalesce({output_keys[c]}, {column(i, c)})" for c in range(arity)]
    elif spelling == "flat":
        output_keys = [key_below(c, n) for c in range(arity)]
    else:
        raise ValueError(f"unknown spelling {spelling!r}")
    select = [f"{output_keys[c]} AS {keys[0][c]}" for c in range(arity)]
    select += [f"{aliases[i]}.{value}" for i in range(n) for value in values[i]]
    joins = [
        f"{keyword} {named[i]} ON " + " AND ".join(f"{key_below(c, i)} = {column(i, c)}" for c in range(arity))
        for i in range(1, n)
    ]
    return f"SELECT {hint_sql}{', '.join(select)} FROM {' '.join([named[0], *joins])}"


def _nested_full_chain(named: list[str], aliases: list[str], keys: list[str], values: list[list[str]], hint_sql: str) -> str:
    """Each FULL join a subquery `j` that outputs coalesce(j.k, t<i>.k) AS k and every value so
    far; the hint goes on the outermost one."""
    query = named[0]
    for level in range(1, len(named)):
        left = aliases[0] if level == 1 else "j"
        right = aliases[level]
        select = [f"coalesce({left}.{k}, {right}.{k}) AS {k}" for k in keys]
        select += [f"{left}.{value}" for below in values[:level] for value in below]
        select += [f"{right}.{value}" for value in values[level]]
        condition = " AND ".join(f"{left}.{k} = {right}.{k}" for k in keys)
        source = named[0] if level == 1 else f"({query}) AS j"
        top = level == len(named) - 1
        query = (
            f"SELECT {hint_sql if top else ''}{', '.join(select)} "
            f"FROM {source} FULL OUTER JOIN {named[level]} ON {condition}"
        )
    return query
