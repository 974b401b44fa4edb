"""What Spark's status store knows about the stages a measurement ran: shuffle and spill bytes,
and the largest execution memory (sort buffers, hash maps) any one task held."""

from __future__ import annotations


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
    """Spill bytes (to disk) and the largest per-task peak execution memory over the stages with
    an id above `after_stage_id`."""
    store = spark.sparkContext._jsc.sc().statusStore()
    spilled, peak = 0, 0
    for stage in stage_list(spark):
        if int(stage.stageId()) <= after_stage_id:
            continue
        spilled += int(stage.diskBytesSpilled())
        tasks = store.taskList(stage.stageId(), stage.attemptId(), 100_000)
        for t in range(tasks.size()):
            metrics = tasks.apply(t).taskMetrics()
            if metrics.isDefined():
                peak = max(peak, int(metrics.get().peakExecutionMemory()))
    return {"spill_bytes": spilled, "peak_task_memory": peak}
