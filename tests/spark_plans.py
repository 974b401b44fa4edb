"""Reading a query's physical plan and SQL metrics through py4j, for assertions."""

from __future__ import annotations

from testkit.plans import node_metrics, plan_nodes


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
