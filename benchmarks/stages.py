"""What Spark's status store knows about the stages a measurement ran: shuffle and spill bytes,
the largest execution memory (sort buffers, hash maps) any one task held, and per stage the
tasks' run, CPU and GC time."""

from __future__ import annotations

from testkit.executions import executions, plan_root, settle


def stage_list(spark) -> list:
    """Every stage of the application so far (`stageList`'s parameters differ between Spark
    lines: empty lists and false select all)."""
    context = spark.sparkContext
    jvm, gateway = context._jvm, context._gateway
    store = context._jsc.sc().statusStore()
    method = next(m for m in store.getClass().getMethods() if m.getName() == "stageList")
    types = method.getParameterTypes()
    arguments = gateway.new_array(jvm.java.lang.Object, len(types))
    for i, kind in enumerate(types):
        name = kind.getName()
        arguments[i] = (jvm.java.util.ArrayList() if name == "java.util.List"
                        else gateway.new_array(jvm.double, 0) if name == "[D" else False)
    stages = method.invoke(store, arguments)
    return [stages.apply(i) for i in range(stages.size())]


def last_stage_id(spark) -> int:
    return max((int(stage.stageId()) for stage in stage_list(spark)), default=-1)


def shuffle_bytes(spark) -> int:
    """Shuffle bytes written by every stage of the application so far."""
    return sum(int(stage.shuffleWriteBytes()) for stage in stage_list(spark))


def stages_since(spark, after_stage_id: int) -> dict:
    """Over the stages with an id above `after_stage_id`: spill bytes (to disk), the largest
    per-task peak execution memory, and per stage its tasks and where their time went (summed
    over the tasks: run time, CPU time, GC time; and the stage's wall time). Wall time moves
    with everything else on the machine; task CPU time much less, so the two side by side tell
    a slow operator from a slow repetition."""
    store = spark.sparkContext._jsc.sc().statusStore()
    spilled, peak, timings = 0, 0, []
    for stage in sorted(stage_list(spark), key=lambda s: int(s.stageId())):
        # A skipped stage is one AQE re-planned over shuffles already written: it ran no tasks.
        if int(stage.stageId()) <= after_stage_id or str(stage.status()) == "SKIPPED":
            continue
        spilled += int(stage.diskBytesSpilled())
        tasks = store.taskList(stage.stageId(), stage.attemptId(), 100_000)
        for t in range(tasks.size()):
            metrics = tasks.apply(t).taskMetrics()
            if metrics.isDefined():
                peak = max(peak, int(metrics.get().peakExecutionMemory()))
        submitted, completed = stage.submissionTime(), stage.completionTime()
        wall = ((completed.get().getTime() - submitted.get().getTime()) / 1e3
                if submitted.isDefined() and completed.isDefined() else None)
        timings.append({"stage": int(stage.stageId()), "tasks": int(stage.numCompleteTasks()),
                        "wall_seconds": wall,
                        "task_seconds": int(stage.executorRunTime()) / 1e3,
                        "cpu_seconds": int(stage.executorCpuTime()) / 1e9,
                        "gc_seconds": int(stage.jvmGcTime()) / 1e3})
    return {"spill_bytes": spilled, "peak_task_memory": peak, "stage_timings": timings}


def io_since(spark, after_stage_id: int) -> dict:
    """What the stages with an id above `after_stage_id` read and moved: bytes and records read
    from files (every scan: data files, and a table format's own log, manifest and delete files),
    shuffle bytes written and read, and bytes and records written to files (a table format's data
    and delete files; its own metadata is written by the driver, outside any stage)."""
    settle(spark)
    totals = {"input_bytes": 0, "input_records": 0, "shuffle_write_bytes": 0, "shuffle_read_bytes": 0,
              "output_bytes": 0, "output_records": 0, "stages": 0}
    for stage in stage_list(spark):
        if int(stage.stageId()) <= after_stage_id or str(stage.status()) == "SKIPPED":
            continue
        totals["stages"] += 1
        totals["input_bytes"] += int(stage.inputBytes())
        totals["input_records"] += int(stage.inputRecords())
        totals["shuffle_write_bytes"] += int(stage.shuffleWriteBytes())
        totals["shuffle_read_bytes"] += int(stage.shuffleReadBytes())
        totals["output_bytes"] += int(stage.outputBytes())
        totals["output_records"] += int(stage.outputRecords())
    return totals


def executions_since(spark, after_execution_id: int, most: int = 8) -> list[list]:
    """The SQL executions with an id above `after_execution_id`, the longest `most`, as
    [seconds from submission to completion, the plan's root node]: what Spark itself spent on
    each statement, beside the dbt log's timing of it (which also counts the client's work after
    a statement until the next one is sent)."""
    settle(spark)
    found = []
    for execution in executions(spark):
        if int(execution.executionId()) <= after_execution_id or not execution.completionTime().isDefined():
            continue
        seconds = (execution.completionTime().get().getTime() - int(execution.submissionTime())) / 1e3
        found.append([round(seconds, 3), plan_root(execution)[:90]])
    return sorted(found, key=lambda e: -e[0])[:most]
