"""SIGTERM (Slurm, ``timeout``, ``docker stop``) stops a suite like Ctrl-C: the runs already
finished are kept, the running one is recorded as partial, the file validates, exit 143."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import lines_until

from suite.validate import validate_file

pytestmark = pytest.mark.slow

# two synthetic-token workloads: no dataset needed
SUITE = ["-w", "gpt2-124m", "-w", "llama-1b", "--scale", "smoke", "--device", "cpu"]


def _run_until(args: list[str], marker: str, tmp_path: Path, timeout_s: float = 300) -> subprocess.Popen:
    """Start ``goodbench run ARGS`` and return once its progress shows ``marker``."""
    env = {**os.environ, "GOODBENCH_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "suite", "run", *args], cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines_until(proc, proc.stderr, marker, timeout_s)
    return proc


def _terminate(proc: subprocess.Popen, out: Path) -> dict:
    """Send SIGTERM, wait, and return the results file, which must validate (exit 143)."""
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 143, stdout + stderr
    assert validate_file(out) == [], stdout + stderr
    return json.loads(out.read_text())


@pytest.mark.long  # two workloads trained in a subprocess
def test_sigterm_during_the_second_workload_keeps_the_first(tmp_path):
    proc = _run_until([*SUITE, "-o", "out.json"], "[llama-1b seed 1] step 10/", tmp_path)
    doc = _terminate(proc, tmp_path / "out.json")
    runs = {r["workload"]["id"]: r for r in doc["runs"]}
    assert runs["gpt2-124m"]["status"] == "complete"
    assert runs["llama-1b"]["status"] == "partial"
    assert "SIGTERM" in runs["llama-1b"]["error"]
    assert 10 <= runs["llama-1b"]["steps"] < 80
    assert doc["settings"]["interrupted"] is True


@pytest.mark.dist
def test_sigterm_to_the_launcher_of_two_ranks_keeps_the_first(tmp_path):
    proc = _run_until([*SUITE, "--nproc-per-node", "2", "-o", "out.json"],
                      "[llama-1b seed 1] step 10/", tmp_path)
    doc = _terminate(proc, tmp_path / "out.json")
    statuses = {r["workload"]["id"]: r["status"] for r in doc["runs"]}
    assert statuses == {"gpt2-124m": "complete", "llama-1b": "partial"}
    assert doc["settings"]["interrupted"] is True
    # handed to the workers as SIGINT, noted as SIGTERM by the launcher (it read "KeyboardInterrupt")
    assert doc["runs"][1]["error"].startswith("interrupted (SIGTERM) after ")
