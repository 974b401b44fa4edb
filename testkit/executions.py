"""Spark's own record of the SQL statements it ran (the SQL status store, which also feeds the UI's
SQL tab): for the benchmarks' per-statement times and for tests that check what a command ran."""

from __future__ import annotations

import re

# The plan roots of statements that only read metadata (a relation's columns, a table's
# properties, the schema's relations), each a command that Spark records once as itself and once
# as the CommandResult that returns its rows. Anything else (a query, a CALL, a CREATE, a CACHE,
# an ALTER, a write) is not what compiling a project may run.
METADATA_ROOT = re.compile(r"^((Execute )?(Describe|Show)\w*|CommandResult)\b")


def settle(spark) -> None:
    """Wait until the status store has seen every event so far: it is filled from the listener
    bus asynchronously, so the last stages of a statement that just returned may be missing."""
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()


def executions(spark) -> list:
    """Every SQL execution the status store holds (`spark.sql.ui.retainedExecutions`, the newest)."""
    store = spark._jsparkSession.sharedState().statusStore()
    listed = store.executionsList()
    return [listed.apply(i) for i in range(listed.size())]


def last_execution_id(spark) -> int:
    return max((int(execution.executionId()) for execution in executions(spark)), default=-1)


def plan_root(execution) -> str:
    """The first operator of an execution's physical plan: `Execute CreateViewCommand`,
    `DescribeTable ...`, `AdaptiveSparkPlan ...`."""
    plan = str(execution.physicalPlanDescription())
    return next((line.strip() for line in plan.splitlines() if line.strip() and not line.startswith("==")), "")


def executions_after(spark, after_execution_id: int) -> list:
    """The executions with an id above `after_execution_id`, in order, once the store has seen them."""
    settle(spark)
    return [e for e in sorted(executions(spark), key=lambda e: int(e.executionId()))
            if int(e.executionId()) > after_execution_id]


def roots_since(spark, after_execution_id: int) -> list[str]:
    """The plan roots of the executions with an id above `after_execution_id`, in order."""
    return [plan_root(e) for e in executions_after(spark, after_execution_id)]


def merge_source_copies_since(spark, after_execution_id: int) -> list[str]:
    """The plan roots of the executions with an id above `after_execution_id` that read a copy
    Delta made of a MERGE's source (the RDD `mergeMaterializedSource`, its materializeSource)."""
    return [plan_root(e) for e in executions_after(spark, after_execution_id)
            if "mergeMaterializedSource" in str(e.physicalPlanDescription())]


def stage_tasks_since(spark, after_execution_id: int) -> list[tuple[str, list[int]]]:
    """Per execution with an id above `after_execution_id`, in order: its plan root and the task
    counts of the stages it ran (skipped stages, which AQE planned over shuffles already written,
    count none)."""
    tracker = spark.sparkContext.statusTracker()
    found = []
    for execution in executions_after(spark, after_execution_id):
        stages, ids = [], execution.stages().iterator()
        while ids.hasNext():
            info = tracker.getStageInfo(int(ids.next()))
            if info is not None and info.numCompletedTasks:
                stages.append(info.numTasks)
        found.append((plan_root(execution), stages))
    return found
