"""The benchmark harness keeps working: one tiny run in a subprocess, outputs checked for shape
and correctness (every strategy ran, multiway really ran MultiJoin, the joins agree on the row
count). No timing is asserted: that is what the full runs under benchmarks/results/ are for."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ["chain", "balanced", "union_group", "multiway", "floor"]
KS = [2, 3]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-out")
    command = [
        sys.executable, "-m", "benchmarks.run",
        "--shapes", "unique,dups", "--rows", "2000", "--k", ",".join(map(str, KS)),
        "--reps", "1", "--warmup-rows", "0", "--shuffle-partitions", "4", "--driver-memory", "1g",
        "--work-dir", str(tmp_path_factory.mktemp("bench-work")), "--out", str(out),
    ]
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-5000:]
    return out, json.loads((out / "results.json").read_text()), completed.stderr


pytestmark = pytest.mark.slow


def test_outputs_exist_and_are_well_formed(run):
    out, results, _ = run
    for key in ("command", "run", "spark_conf", "machine", "operator", "configs", "measurements",
                "targets", "provisional", "other_load", "outputs"):
        assert key in results
    assert results["operator"]["jar"].endswith(".jar") and results["operator"]["fingerprint"]
    for key in ("cores", "memory_bytes", "java", "spark", "cpu_model"):
        assert results["machine"][key]
    assert results["spark_conf"]["spark.multijoin.failOnFallback"] == "true"
    assert results["spark_conf"]["spark.sql.autoBroadcastJoinThreshold"] == "-1"
    assert results["failures"] == 0
    assert [t["id"] for t in results["targets"]] == ["T1", "T2", "T3", "T4", "T5", "T6"]

    markdown = (out / "results.md").read_text()
    assert "## Targets" in markdown
    for strategy in STRATEGIES:
        assert strategy in markdown
    if importlib.util.find_spec("matplotlib"):
        assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_strategy_ran_and_the_joins_agree(run):
    _, results, _ = run
    configs = {c["name"]: c for c in results["configs"]}
    assert set(configs) == {"unique", "dups"}
    assert "union_group" in configs["dups"]["skipped"]  # duplicated keys: not a valid rewrite
    for name, config in configs.items():
        expected = [s for s in STRATEGIES if s not in config["skipped"]]
        assert [int(k) for k in config["results"]] == KS
        for k, cell in config["results"].items():
            assert sorted(cell["strategies"]) == sorted(expected), (name, k)
            for summary in cell["strategies"].values():
                assert summary["median_s"] > 0 and summary["reps"] == 1
            assert cell["row_counts_agree"], (name, k, cell["join_output_rows"])
            assert cell["multiway_used_multijoin"] is True
            assert "chain/multiway" in cell["ratios"] and "multiway/floor" in cell["ratios"]
            rows = cell["strategies"]["multiway"]["output_rows"]
            # Every key of every input appears at least once in the FULL join.
            assert rows >= max(config["inputs"]["rows"][: int(k)])


def test_the_plans_are_the_ones_we_mean(run):
    _, results, _ = run
    for m in results["measurements"]:
        k, ops = m["k"], m["operators"]
        if m["strategy"] == "multiway":
            assert ops.get("MultiJoin") == 1 and "SortMergeJoin" not in ops
            assert m["exchanges"] == k  # each input shuffled exactly once
            assert m["sorts"] == k  # and sorted exactly once, by the operator
            config = next(c for c in results["configs"] if c["name"] == m["config"])
            read = [m["multijoin"]["metrics"][f"numInputRows{i}"] for i in range(k)]
            assert read == config["inputs"]["rows"][:k]
        elif m["strategy"] in ("chain", "balanced"):
            assert ops.get("SortMergeJoin") == k - 1 and "MultiJoin" not in ops
        elif m["strategy"] == "floor":
            assert m["exchanges"] == k and m["output_rows"] is None
        assert m["shuffle_bytes_written"] > 0
        assert m["stages"], "stage metrics from the status store"


def test_progress_is_reported_per_measurement(run):
    _, results, stderr = run
    progress = [line for line in stderr.splitlines() if line.startswith("[")]
    assert len(progress) == len(results["measurements"])


def test_driven_benchmark_runs_the_bloom_filtered_left_join(tmp_path):
    """benchmarks.driven (issue 5's LEFT shape) at a tiny size: both strategies return the same
    rows, the multiway plan carries the bloom filter, and it shuffles fewer bytes than the chain
    (the filter drops the feature rows the driver lacks: a property of the plan, not a timing)."""
    out = tmp_path / "out"
    command = [sys.executable, "-m", "benchmarks.driven", "--rows", "4000", "--k", "3", "--reps", "1",
               "--shuffle-partitions", "4", "--out", str(out), "--work-dir", str(tmp_path / "work")]
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-5000:]
    results = json.loads((out / "results.json").read_text())
    chain, multiway = results["strategies"]["chain"], results["strategies"]["multiway"]
    assert chain["rows"] == multiway["rows"] == results["shape"]["driver_rows"] > 0
    assert multiway["bloom_filter"] is True
    assert 0 < multiway["shuffle_bytes"] < chain["shuffle_bytes"]
    assert "chain / multiway time" in (out / "results.md").read_text()
