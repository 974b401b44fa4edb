"""The operator on a real cluster: executors in their own JVMs receive the jar through spark.jars."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_hinted_query_on_local_cluster_matches_vanilla_with_spilling_sorts():
    job = Path(__file__).with_name("cluster_job.py")
    # The job imports testkit from the repository root.
    env = dict(os.environ, PYTHONPATH=str(job.parent.parent))
    completed = subprocess.run([sys.executable, str(job)], capture_output=True, text=True, timeout=600, env=env)
    assert completed.returncode == 0, completed.stderr[-5000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert result["executors"] == 2, result
    assert result["multijoin_planned"], result
    assert result["rows"] == result["vanilla_rows"] > 0, result
    assert result["difference"] == 0, result
    assert result["sort_spill_bytes"] > 0, result
