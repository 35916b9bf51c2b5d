"""Checkpoints: atomic, checksummed, last two kept, corrupt ones passed over, exact resume."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from suite.record import mllog
from suite.run import checkpoint


def _save_steps(directory, steps):
    for step in steps:
        checkpoint.save(directory, step, {"w": torch.full((4,), float(step)), "step": step})


def test_round_trip_and_keeps_last_two(tmp_path):
    _save_steps(tmp_path, (10, 20, 30))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ckpt-000000020.json", "ckpt-000000020.pt", "ckpt-000000030.json", "ckpt-000000030.pt"]
    loaded = checkpoint.load_latest(tmp_path)
    assert loaded.step == 30 and loaded.skipped == []
    assert torch.equal(loaded.state["w"], torch.full((4,), 30.0))


def test_corrupt_newest_falls_back_to_previous(tmp_path):
    _save_steps(tmp_path, (10, 20))
    payload = tmp_path / "ckpt-000000020.pt"
    data = bytearray(payload.read_bytes())
    data[len(data) // 2] ^= 0xFF
    payload.write_bytes(bytes(data))
    loaded = checkpoint.load_latest(tmp_path)
    assert loaded.step == 10
    assert loaded.skipped == [("ckpt-000000020.pt", "sha256 mismatch (corrupt)")]


def test_torn_payload_and_missing_manifest_are_passed_over(tmp_path):
    _save_steps(tmp_path, (10, 20))
    payload = tmp_path / "ckpt-000000020.pt"
    payload.write_bytes(payload.read_bytes()[:100])  # torn
    (tmp_path / "ckpt-000000030.pt").write_bytes(b"payload whose manifest never came")
    loaded = checkpoint.load_latest(tmp_path)
    assert loaded.step == 10 and "torn" in loaded.skipped[0][1]


def test_no_checkpoint_is_none(tmp_path):
    assert checkpoint.load_latest(tmp_path) is None


def test_rng_states_round_trip(tmp_path):
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    checkpoint.save(tmp_path, 1, {"rng": checkpoint.capture_rng()})
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    random.seed(9), np.random.seed(9), torch.manual_seed(9)
    checkpoint.restore_rng(checkpoint.load_latest(tmp_path).state["rng"])
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected


class Crash(BaseException):
    """A stand-in for the process dying mid-run (a kill): not an error the runner records as the
    run's failure (those end the run "failed" and it is not resumed), so it passes through."""


def _crash_at(step_to_crash):
    def on_step(step):
        if step == step_to_crash:
            raise Crash

    return on_step


def _losses(run):
    """Training loss by step from the log, the last writer's value winning."""
    return {e.metadata["step"]: e.value for e in mllog.parse(run["event_log"])
            if e.key == "train_loss"}


@pytest.mark.slow
def test_resume_reproduces_the_uninterrupted_loss_curve(data_dir, tmp_path, checkpointed_short_run):
    whole = checkpointed_short_run
    from short_lmchar import ShortLmChar

    from suite.run.runner import RunOptions, run_one

    options = RunOptions(device=torch.device("cpu"), data_dir=str(data_dir),
                         checkpoint_dir=str(tmp_path / "cut"), checkpoint_every=10)
    with pytest.raises(Crash):
        run_one(ShortLmChar(), "smoke", 1, options, on_step=_crash_at(26))
    resumed = run_one(ShortLmChar(), "smoke", 1, options)
    assert resumed["status"] == whole["status"] == "complete"
    assert resumed["steps"] == whole["steps"] == 40
    assert _losses(resumed) == _losses(whole)
    strip = [{k: v for k, v in p.items() if k != "time_s"} for p in whole["curve"]]
    assert [{k: v for k, v in p.items() if k != "time_s"} for p in resumed["curve"]] == strip
    # the crash is an exception after step 26 finished: the runner closes that step's block on
    # the way out, so the log knows steps 21-26 were computed after the step-20 checkpoint
    assert resumed["goodput"]["restarts"] == 1 and resumed["goodput"]["lost_steps"] == 6


def test_every_checkpoint_passed_over_is_logged_and_said_when_none_is_usable(tmp_path, capsys):
    """Trial 14b F11: two bad checkpoints read as "no checkpoint", the older one not even logged,
    and neither said on the console. Each gets its event and its line, and the restart says
    there was no *usable* checkpoint."""
    import time

    from suite.run import files
    from suite.run.progress import ProgressPrinter
    from suite.run.state import LoopState

    _save_steps(tmp_path, (40, 60))
    newest = tmp_path / "ckpt-000000060.pt"
    data = bytearray(newest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    newest.write_bytes(bytes(data))
    older = tmp_path / "ckpt-000000040.pt"
    older.write_bytes(older.read_bytes()[:100])
    passed: list = []
    assert checkpoint.load_latest(tmp_path, skipped=passed) is None
    assert [name for name, _ in passed] == ["ckpt-000000060.pt", "ckpt-000000040.pt"]
    log = mllog.EventLog()
    state = files.resume(None, None, "smoke", log, [], LoopState(init_start=time.time()), tmp_path)
    assert state.step == 0
    skipped = files.skipped_here(log)
    assert skipped == [{"file": "ckpt-000000060.pt", "reason": "sha256 mismatch (corrupt)"},
                       {"file": "ckpt-000000040.pt", "reason": passed[1][1]}]
    capsys.readouterr()
    ProgressPrinter()("resumed", workload="lm-char", seed=1, step=0, skipped=skipped)
    assert capsys.readouterr().err.splitlines() == [
        "[lm-char seed 1] checkpoint ckpt-000000060.pt skipped: sha256 mismatch (corrupt)",
        f"[lm-char seed 1] checkpoint ckpt-000000040.pt skipped: {passed[1][1]}",
        "[lm-char seed 1] restarted from step 0: no usable checkpoint (2 corrupt) to resume from"]
