"""``goodbench run-own --nproc-per-node 2`` of tests/own_ddp_job.py: two real gloo ranks on the CPU,
each writing its edges to its own FIFO, both stamped on the launcher's one clock; the file is valid,
both ranks of its run are stamped and it is not held apart as timed by one clock."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from suite.figures import clocks, rank_clocks
from suite.leaderboard import pipeline, rows
from suite.validate import check_document

REPO = Path(__file__).resolve().parent.parent
JOB = REPO / "tests" / "own_ddp_job.py"
pytestmark = [pytest.mark.slow, pytest.mark.dist]  # rank processes under torchrun


def _run_own(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "suite", "run-own", "--nproc-per-node", "2", str(JOB), *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_run_own_stamps_both_ranks_of_a_torchrun_job_and_the_file_ranks(tmp_path):
    done = _run_own(tmp_path, "own-ddp.json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "second clock added (1 run on 2 ranks, the clocks agree), unsigned, valid" in done.stderr
    doc = json.loads((tmp_path / "own-ddp.json").read_text())
    assert check_document(doc) == []
    assert doc["settings"]["implementation"]["command"][:2] == ["torchrun", "--nproc-per-node=2"]
    [run] = doc["runs"]
    entries = doc["second_clock"]["runs"]
    assert sorted(rank_clocks.rank_of(e) for e in entries) == [0, 1]
    assert {e["run_id"] for e in entries} == {run["run_id"]}
    assert all(e["agreement"]["agree"] and len(e["step_s"]) == len(run["step_times_s"]) for e in entries)
    assert clocks.stamped(doc, run["run_id"])
    frame = pipeline.table([("own-ddp.json", doc)])
    assert frame["second_clock"].all() and not rows.one_clock(frame).any()
    assert rows.ONE_CLOCK_REASON not in rows.unranked_reasons(frame.to_dict(orient="records")[0])


def test_a_torchrun_job_that_fails_gets_one_line_naming_the_rank(tmp_path):
    done = _run_own(tmp_path, "own-ddp.json", "--fail-rank", "1")
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.startswith("goodbench: error:")]
    assert len(lines) == 1 and "no second clock: rank 0: the script ended with status" in lines[0]
    assert not (tmp_path / "own-ddp.json").exists()
