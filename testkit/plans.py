"""Walking a Spark physical plan (a py4j object) and reading its SQL metrics: one home for the
tests and the benchmarks."""

from __future__ import annotations

# Wrappers of an adaptive plan that hide operators: we look inside them.
_WRAPPERS = {
    "AdaptiveSparkPlanExec": lambda p: p.executedPlan(),
    "ShuffleQueryStageExec": lambda p: p.plan(),
    # Spark 4.0+ wraps AQE's final plan in a query stage of its own (SPARK-51008).
    "ResultQueryStageExec": lambda p: p.plan(),
    "BroadcastQueryStageExec": lambda p: p.plan(),
    "TableCacheQueryStageExec": lambda p: p.plan(),
    "ReusedExchangeExec": lambda p: p.child(),
}


def plan_nodes(plan, subqueries: bool = False):
    """Every operator of a physical plan, adaptive wrappers opened, depth first; with
    `subqueries`, also the operators of the subqueries its expressions run (a bloom filter's)."""
    name = plan.getClass().getSimpleName()
    if name in _WRAPPERS:
        yield from plan_nodes(_WRAPPERS[name](plan), subqueries)
        return
    yield plan
    nested = [plan.children()] + ([plan.subqueries()] if subqueries else [])
    for sequence in nested:
        for i in range(sequence.size()):
            yield from plan_nodes(sequence.apply(i), subqueries)


def node_metrics(node) -> dict[str, int]:
    """The SQL metrics of one operator, by name, as exact integers."""
    metrics = node.metrics()
    keys = metrics.keys().iterator()
    result = {}
    while keys.hasNext():
        key = keys.next()
        result[key] = int(metrics.apply(key).value())
    return result

def executed_nodes(df):
    return list(plan_nodes(df._jdf.queryExecution().executedPlan()))


def node_names(df) -> list[str]:
    return [node.nodeName() for node in executed_nodes(df)]


def multijoin_metrics(df) -> dict[str, int]:
    """The SQL metrics of the (single) MultiJoin operator of an executed query."""
    nodes = [n for n in executed_nodes(df) if n.getClass().getSimpleName() == "MultiJoinExec"]
    assert len(nodes) == 1, f"expected one MultiJoinExec, found {len(nodes)}"
    return node_metrics(nodes[0])


def skip_wrappers(node):
    """Below codegen and adaptive-execution wrappers, to the node that does the work."""
    while node.getClass().getSimpleName() in (
        "WholeStageCodegenExec", "InputAdapter", "AQEShuffleReadExec", "ShuffleQueryStageExec"
    ):
        node = node.children().apply(0) if node.children().size() else node.plan()
    return node


def optimized_plan(df) -> str:
    return df._jdf.queryExecution().optimizedPlan().toString()


def uses_multijoin(df) -> bool:
    return "MultiJoin" in optimized_plan(df)


def multijoin_generates_code(df) -> bool:
    """Whether the executed MultiJoin is the source of a whole-stage codegen stage, so that the
    code generated for the operators above it reads its input rows' fields (instead of the
    operator concatenating each combination's rows into one row)."""

    def stage_has_multijoin(node) -> bool:
        name = node.getClass().getSimpleName()
        if name == "MultiJoinExec":
            return True
        if name == "InputAdapter":  # the stage's boundary: below it is another stage
            return False
        children = node.children()
        return any(stage_has_multijoin(children.apply(i)) for i in range(children.size()))

    return any(stage_has_multijoin(node.child()) for node in executed_nodes(df)
               if node.getClass().getSimpleName() == "WholeStageCodegenExec")
