"""The machine a run measured, and how busy other processes kept it meanwhile."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

from benchmarks.config import REPO_ROOT

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_bytes() -> int | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def _git() -> dict:
    def run(*args):
        try:
            return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": run("rev-parse", "HEAD") or None,
            "dirty": bool(run("status", "--porcelain", "--untracked-files=no"))}


def operator() -> dict:
    """Which extension the run loaded: the jar, its source fingerprint, and where the sources were."""
    from dbt_multijoin import jar

    install = jar.spark_install()
    path = jar.jar_path(install)
    worktree = jar.SOURCE_DIR.resolve() == (jar.JVM_DIR / "src" / "main" / "scala").resolve()
    info = {"jar": str(path), "fingerprint": jar.fingerprint(install)[:16],
            "sources": str(jar.SOURCE_DIR)}
    if worktree:
        def run(*args):
            try:
                return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                                      timeout=10).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                return ""
        info["uncommitted_jvm_changes"] = bool(run("status", "--porcelain", "--", "jvm/src"))
    return info


def describe(spark) -> dict:
    jvm = spark.sparkContext._jvm
    system = jvm.java.lang.System
    runtime = jvm.java.lang.Runtime.getRuntime()
    return {
        "cores": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_bytes": _memory_bytes(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "java": f"{system.getProperty('java.vm.name')} {system.getProperty('java.version')}",
        "jvm_max_heap_bytes": int(runtime.maxMemory()),
        "spark": spark.version,
        "spark_master": spark.sparkContext.master,
        "git": _git(),
    }


def _busy_ticks_all() -> int | None:
    """CPU ticks spent busy by the whole machine since boot (all CPUs)."""
    line = _read("/proc/stat").splitlines()[:1]
    if not line or not line[0].startswith("cpu "):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in line[0].split()[1:9])
    return user + nice + system + irq + softirq + steal


def _process_ticks(pid: int | str) -> int:
    fields = _read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()
    return int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0  # utime + stime


class LoadMeter:
    """Fraction of the machine's CPU capacity used by processes other than this run (this Python
    process and its Spark JVM) between two readings; None where /proc is not available."""

    def __init__(self, jvm_pid: int | None):
        self._pids = ["self"] + ([jvm_pid] if jvm_pid else [])
        self._cpus = os.cpu_count() or 1

    def reading(self):
        import time

        all_busy = _busy_ticks_all()
        if all_busy is None:
            return None
        ours = sum(_process_ticks(pid) for pid in self._pids)
        return time.monotonic(), all_busy, ours

    def others(self, start, end) -> float | None:
        if start is None or end is None or end[0] <= start[0]:
            return None
        capacity = (end[0] - start[0]) * _TICKS * self._cpus
        others = (end[1] - start[1]) - (end[2] - start[2])
        return max(0.0, others / capacity)


def jvm_pid(spark) -> int | None:
    try:
        return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - only for the load meter
        return None
