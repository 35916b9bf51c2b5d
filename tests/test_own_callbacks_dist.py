"""The framework callbacks under torchrun (suite/api/lightning.py, suite/api/hf.py):
``goodbench run-own --nproc-per-node 2`` of tests/own_framework_ddp_job.py, a Lightning DDP fit (a
free job, Lightning's validation on the curve) and a Hugging Face Trainer under DDP (held to
lm-char's smoke target, the pinned evaluator on every rank), each two real gloo ranks on the CPU:
every rank measures the same steps, rank 0 alone writes the file, and the second clock stamps
both ranks and agrees with each."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_own_callbacks import FRAMEWORK
from test_own_rank_clock_dist import _run_own, both_ranks_stamped

pytestmark = [pytest.mark.slow, pytest.mark.dist]  # rank processes under torchrun
JOB = Path(__file__).resolve().parent / "own_framework_ddp_job.py"
STEADY = 27  # the job's 30 steps, 3 of warm-up


def _measured(folder: Path, framework: str) -> dict:
    """The run of ``framework``'s job under run-own on 2 ranks, its file checked on both ranks."""
    pytest.importorskip(FRAMEWORK[framework])
    done = _run_own(folder, framework, "own.json", script=JOB)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("results written") == 1 and "validator:" not in done.stdout  # rank 0 alone writes
    assert "second clock added (1 run on 2 ranks, the clocks agree), unsigned, valid" in done.stderr
    doc = json.loads((folder / "own.json").read_text())
    run = both_ranks_stamped(doc)
    assert doc["settings"]["distributed"]["world_size"] == 2
    assert doc["settings"]["implementation"]["command"][:4] == ["torchrun", "--nproc-per-node=2",
                                                                "tests/own_framework_ddp_job.py", framework]
    assert run["status"] == "complete" and run["steps"] == 30
    assert [r["step_time_s"]["steps"] for r in run["distributed"]["ranks"]] == [STEADY, STEADY]
    assert [p["step"] for p in run["curve"]] == [10, 20, 30]
    return run


def test_a_lightning_ddp_fit_under_run_own_is_stamped_on_both_ranks(tmp_path):
    run = _measured(tmp_path, "lightning")
    assert all("val_mse" in p for p in run["curve"])  # Lightning's own validation, at the cadence


def test_a_hugging_face_ddp_trainer_under_run_own_is_stamped_on_both_ranks(tmp_path, data_dir, monkeypatch):
    monkeypatch.setenv("GOODBENCH_DATA_DIR", str(data_dir))  # lm-char's text, for the pinned evaluator
    run = _measured(tmp_path, "hf")
    assert all("val_loss" in p for p in run["curve"])  # the pinned evaluator's, on every rank
    assert run["pinned_evaluation"]["start"]["val_loss"] > 2.4 and run["pinned_evaluation"]["refused"] is None
