"""Timing one query to the noop sink and reading what Spark itself measured about it.

- The executed plan: a QueryExecutionListener (a Python object behind py4j's callback server)
  receives the QueryExecution of each noop write, so we walk the plan that really ran (the final
  adaptive plan) and read its SQL metrics exactly (SQLMetric.value, no formatted strings):
  shuffle bytes written by every Exchange, Sort time / peak memory / spill, MultiJoin metrics.
- Task metrics: each measurement runs under its own job group; the jobs of that group give the
  stages, and Spark's status store gives each stage's task metrics (run time, GC, spill, shuffle)
  and the per-task maximum of peak execution memory.
"""

from __future__ import annotations

import itertools
import queue
import re
import time

from testkit.plans import node_metrics, plan_nodes

_WRITE_NODES = ("OverwriteByExpressionExec", "AppendDataExec", "V2TableWriteExec")


class QueryCapture:
    """Receives the QueryExecution of every query of the session that ends (py4j callback)."""

    def __init__(self, spark):
        from pyspark.java_gateway import ensure_callback_server_started

        self._spark = spark
        self._queue: queue.Queue = queue.Queue()
        ensure_callback_server_started(spark.sparkContext._gateway)
        spark._jsparkSession.listenerManager().register(self)

    # --- org.apache.spark.sql.util.QueryExecutionListener (called on Spark's listener thread)
    def onSuccess(self, func_name, qe, duration_ns):  # noqa: N802 - Java interface
        self._queue.put((func_name, qe, None))

    def onFailure(self, func_name, qe, exception):  # noqa: N802 - Java interface
        self._queue.put((func_name, qe, exception.toString()))

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]

    # --- harness side
    def _drain_bus(self):
        # Every event posted so far (queries that ended) has been delivered to the listeners.
        self._spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()

    def clear(self):
        """Forgets every query that ended so far: the next one `last()` returns is a new one."""
        self._drain_bus()
        while not self._queue.empty():
            self._queue.get_nowait()

    def last(self, timeout: float = 120.0):
        """The QueryExecution of the last query that ended since `clear()`."""
        self._drain_bus()
        item = self._queue.get(timeout=timeout)
        while not self._queue.empty():
            item = self._queue.get_nowait()
        func_name, qe, error = item
        if error:
            raise RuntimeError(f"query {func_name} failed: {error}")
        return qe

    def close(self):
        try:
            self._spark._jsparkSession.listenerManager().unregister(self)
        except Exception:  # noqa: BLE001 - the session may already be gone
            pass


def _java_doubles(spark, values):
    gateway = spark.sparkContext._gateway
    array = gateway.new_array(gateway.jvm.double, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def _option(value):
    return value.get() if value.isDefined() else None


def stage_metrics(spark, job_group: str) -> list[dict]:
    """Task metrics of every completed stage of the jobs of `job_group`, by stage id."""
    sc = spark.sparkContext
    sc._jsc.sc().listenerBus().waitUntilEmpty()  # the status store has seen every event
    store = sc._jsc.sc().statusStore()
    stage_ids = set()
    for job_id in sc.statusTracker().getJobIdsForGroup(job_group):
        ids = store.job(job_id).stageIds()
        stage_ids.update(int(ids.apply(i)) for i in range(ids.size()))
    gateway = sc._gateway
    no_task_filter = gateway.jvm.java.util.ArrayList()
    no_quantiles = _java_doubles(spark, [])
    stages = []
    for stage_id in sorted(stage_ids):
        attempts = store.stageData(stage_id, False, no_task_filter, False, no_quantiles)
        for a in range(attempts.size()):
            s = attempts.apply(a)
            if s.status().toString() != "COMPLETE":
                continue  # skipped (reused shuffle output) or failed attempts did no work we count
            summary = _option(store.taskSummary(stage_id, s.attemptId(), _java_doubles(spark, [1.0])))
            submitted, completed = _option(s.submissionTime()), _option(s.completionTime())
            stages.append({
                "stage_id": stage_id,
                "attempt": s.attemptId(),
                "name": s.name(),
                "tasks": s.numTasks(),
                "wall_ms": (completed.getTime() - submitted.getTime()) if submitted and completed else None,
                "submitted_ms": submitted.getTime() if submitted else None,
                "completed_ms": completed.getTime() if completed else None,
                "executor_run_ms": s.executorRunTime(),
                "executor_cpu_ms": s.executorCpuTime() // 1_000_000,
                "gc_ms": s.jvmGcTime(),
                "input_bytes": s.inputBytes(),
                "shuffle_read_bytes": s.shuffleReadBytes(),
                "shuffle_fetch_wait_ms": s.shuffleFetchWaitTime(),
                "shuffle_write_bytes": s.shuffleWriteBytes(),
                "shuffle_write_ms": s.shuffleWriteTime() // 1_000_000,
                "memory_bytes_spilled": s.memoryBytesSpilled(),
                "disk_bytes_spilled": s.diskBytesSpilled(),
                "peak_execution_memory_sum": s.peakExecutionMemory(),
                "peak_execution_memory_max_task": int(summary.peakExecutionMemory().apply(0)) if summary else None,
            })
    return stages


def plan_summary(qe) -> dict:
    """What the executed plan of a noop write did, from its SQL metrics."""
    nodes = list(plan_nodes(qe.executedPlan()))
    names = [node.nodeName() for node in nodes]
    query = [n for n in nodes if n.getClass().getSimpleName() not in _WRITE_NODES]
    summary = {
        "operators": dict(sorted({n: names.count(n) for n in set(names)}.items())),
        "output_rows": None,
        "shuffle_bytes_written": 0,
        "shuffle_records_written": 0,
        "exchanges": 0,
        "sorts": 0,
        "sort_time_ms": 0,
        "sort_peak_memory_bytes": 0,
        "sort_spill_bytes": 0,
        "multijoin": None,
    }
    for node in query:
        kind = node.getClass().getSimpleName()
        metrics = node_metrics(node)
        if summary["output_rows"] is None and "numOutputRows" in metrics:
            # The topmost counting operator; only Projects (which keep every row) sit above it.
            summary["output_rows"] = metrics["numOutputRows"]
        if kind == "ShuffleExchangeExec":
            summary["exchanges"] += 1
            summary["shuffle_bytes_written"] += metrics.get("shuffleBytesWritten", 0)
            summary["shuffle_records_written"] += metrics.get("shuffleRecordsWritten", 0)
        elif kind == "SortExec":
            summary["sorts"] += 1
            _add_sort(summary, metrics.get("sortTime", 0), metrics.get("peakMemory", 0),
                      metrics.get("spillSize", 0))
        elif kind == "MultiJoinExec":
            # The operator sorts its inputs itself: its sort metrics cover all of them.
            description = node.simpleString(200)
            summary["multijoin"] = {"description": description, "metrics": metrics}
            summary["sorts"] += _inputs_sorted_by_multijoin(description, node.children().size())
            _add_sort(summary, metrics.get("sortTime", 0), metrics.get("sortPeakMemory", 0),
                      metrics.get("sortSpillSize", 0))
    return summary


def _add_sort(summary: dict, time_ms: int, peak_memory: int, spill: int) -> None:
    summary["sort_time_ms"] += time_ms
    summary["sort_peak_memory_bytes"] = max(summary["sort_peak_memory_bytes"], peak_memory)
    summary["sort_spill_bytes"] += spill


def _inputs_sorted_by_multijoin(description: str, inputs: int) -> int:
    """From EXPLAIN's `sorts inputs: all | none (...) | [1, 3]`."""
    sorted_part = description.rpartition("sorts inputs: ")[2]
    if sorted_part.startswith("all"):
        return inputs
    return len(re.findall(r"\d+", sorted_part.split("(")[0]))


_group_ids = itertools.count(1)


def measure(spark, capture: QueryCapture, build, label: str) -> dict:
    """Builds the query, writes it to the noop sink, and returns its time and Spark's metrics."""
    group = f"bench-{next(_group_ids)}-{label}"
    sc = spark.sparkContext
    capture.clear()
    sc.setJobGroup(group, label)
    try:
        started = time.perf_counter()
        df = build()
        df.write.format("noop").mode("overwrite").save()
        seconds = time.perf_counter() - started
    finally:
        sc._jsc.clearJobGroup()
    qe = capture.last()
    result = {"seconds": seconds, **plan_summary(qe)}
    result["stages"] = stage_metrics(spark, group)
    result["task_totals"] = {
        key: sum(s[key] or 0 for s in result["stages"])
        for key in ("executor_run_ms", "executor_cpu_ms", "gc_ms", "shuffle_write_bytes",
                    "shuffle_read_bytes", "memory_bytes_spilled", "disk_bytes_spilled")
    }
    peaks = [s["peak_execution_memory_max_task"] for s in result["stages"]
             if s["peak_execution_memory_max_task"] is not None]
    result["task_totals"]["peak_execution_memory_max_task"] = max(peaks) if peaks else None
    return result
