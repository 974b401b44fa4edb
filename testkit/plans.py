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
