"""Reading a query's physical plan and SQL metrics through py4j, for assertions."""

from __future__ import annotations

# Wrappers that hide the operators of an adaptive plan; we look inside them.
_WRAPPERS = {
    "AdaptiveSparkPlanExec": lambda p: p.executedPlan(),
    "ShuffleQueryStageExec": lambda p: p.plan(),
    "BroadcastQueryStageExec": lambda p: p.plan(),
    "TableCacheQueryStageExec": lambda p: p.plan(),
}


def plan_nodes(plan):
    """Every node of a physical plan (py4j object), adaptive wrappers opened, depth first."""
    name = plan.getClass().getSimpleName()
    if name in _WRAPPERS:
        yield from plan_nodes(_WRAPPERS[name](plan))
        return
    yield plan
    children = plan.children()
    for i in range(children.size()):
        yield from plan_nodes(children.apply(i))


def executed_nodes(df):
    return list(plan_nodes(df._jdf.queryExecution().executedPlan()))


def node_names(df) -> list[str]:
    return [node.nodeName() for node in executed_nodes(df)]


def multijoin_metrics(df) -> dict[str, int]:
    """The SQL metrics of the (single) MultiJoin operator of an executed query."""
    nodes = [n for n in executed_nodes(df) if n.getClass().getSimpleName() == "MultiJoinExec"]
    assert len(nodes) == 1, f"expected one MultiJoinExec, found {len(nodes)}"
    metrics = nodes[0].metrics()
    keys = metrics.keys().iterator()
    result = {}
    while keys.hasNext():
        key = keys.next()
        result[key] = metrics.apply(key).value()
    return result


def optimized_plan(df) -> str:
    return df._jdf.queryExecution().optimizedPlan().toString()


def uses_multijoin(df) -> bool:
    return "MultiJoin" in optimized_plan(df)
