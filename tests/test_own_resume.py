"""A killed run of one's own code goes on (suite/api/benchmark.py ``checkpoint_dir``,
``Run.save``, ``Run.restore``): the same command run again continues the session, keeps the
finished seed's record, and the killed seed goes on from its newest checkpoint, bit for bit the
curve of an uninterrupted run, the steps after that checkpoint counted as lost work."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import goodbench
from suite.record.errors import GoodbenchError
from suite.validate import check_document

JOB = Path(__file__).resolve().parent / "own_resume_job.py"


def _job(folder: Path, name: str, *extra: str) -> subprocess.CompletedProcess:
    """The job run in ``folder`` writing NAME.json and keeping NAME.ckpt: one command wherever the
    folder is (the command is part of the code's identity, which a successor must share)."""
    return subprocess.run([sys.executable, str(JOB), f"{name}.json", f"{name}.ckpt", *extra],
                          capture_output=True, text=True, timeout=300, cwd=folder)


KILL = ("--kill-seed", "2", "--kill-after", "25")


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory) -> dict:
    """An uninterrupted session, and one killed after step 25 of seed 2 (its newest checkpoint:
    step 20) then run again with the same command; the killed session's directory as it was left."""
    root = tmp_path_factory.mktemp("resume")
    whole = _job(root, "whole")
    assert whole.returncode == 0, whole.stderr
    killed = _job(root, "resumed", *KILL)
    assert killed.returncode == -9, killed.stderr  # SIGKILL: nothing of it ran past step 25
    # no results: the empty placeholder of its reservation (taken over by the same command again)
    assert (root / "resumed.json").stat().st_size == 0
    shutil.copytree(root / "resumed.ckpt", root / "as-killed.ckpt")
    again = _job(root, "resumed", *KILL)
    assert again.returncode == 0, again.stderr
    return {"whole": json.loads((root / "whole.json").read_text()),
            "resumed": json.loads((root / "resumed.json").read_text()), "as_killed": root / "as-killed.ckpt",
            "seed1_kept": json.loads((root / "as-killed.ckpt" / "seed1" / "finished-record.json").read_text())}


@pytest.mark.slow  # a job killed and resumed in subprocesses: ~45 s of the fast loop
def test_a_killed_run_goes_on_from_its_checkpoint_with_the_curve_of_an_unbroken_run(killed_and_resumed):
    whole, resumed = killed_and_resumed["whole"], killed_and_resumed["resumed"]
    assert check_document(resumed) == []
    assert [r["seed"] for r in resumed["runs"]] == [1, 2]
    for unbroken, run in zip(whole["runs"], resumed["runs"], strict=True):
        assert run["status"] == "complete" and run["steps"] == 40 and len(run["step_times_s"]) == 40
        assert [p["val_mse"] for p in run["curve"]] == [p["val_mse"] for p in unbroken["curve"]]
    killed = resumed["runs"][1]["goodput"]
    assert (killed["restarts"], killed["lost_steps"], killed["checkpoint"]["loads"]) == (1, 5, 1)
    assert killed["badput_s"]["lost_work"] > 0 and killed["badput_s"]["restart_recovery"] > 0
    assert resumed["runs"][0]["goodput"]["restarts"] == 0
    # the killed process's load watch up to its checkpoint is kept in it and added on (run.save, run.restore)
    assert resumed["runs"][1]["host_load"]["during"]["attempts"] == 2
    assert "attempts" not in resumed["runs"][0]["host_load"]["during"]


@pytest.mark.slow
def test_the_successor_keeps_the_finished_seed_and_the_session(killed_and_resumed):
    resumed, kept = killed_and_resumed["resumed"], killed_and_resumed["seed1_kept"]
    assert resumed["runs"][0]["run_id"] == kept["record"]["run_id"]  # not trained again
    session = json.loads((killed_and_resumed["as_killed"] / "session.json").read_text())
    assert resumed["settings"]["session"] == session
    for run in resumed["runs"]:
        assert sum(f'"goodbench_session", "value": "{session["id"]}"' in line for line in run["event_log"]) >= 1


def _bench(tmp_path: Path, checkpoint_dir: Path, **kw) -> goodbench.Benchmark:
    return goodbench.Benchmark("resume-mlp", trains="a 2-layer MLP on a synthetic sine teacher",
                               samples_per_step=16, max_steps=40, warmup_steps=3, eval_every=10, log_every=5,
                               device="cpu", code=[JOB], out=tmp_path / "out.json", sign=False,
                               checkpoint_dir=checkpoint_dir, **kw)


@pytest.mark.slow
def test_a_successor_that_declares_another_step_is_refused(killed_and_resumed, tmp_path):
    left = tmp_path / "left.ckpt"
    shutil.copytree(killed_and_resumed["as_killed"], left)
    with pytest.raises(GoodbenchError, match="seed 1 .* trained 19456 FLOPs per step, not 10000"), \
            _bench(tmp_path, left, seeds=2, flops_per_step=1e4) as bench:
        next(bench.runs())
    assert not (tmp_path / "out.json").exists()


@pytest.mark.slow
def test_a_run_an_earlier_process_began_must_be_restored_and_nothing_is_lost(killed_and_resumed, tmp_path):
    left = tmp_path / "resumed.ckpt"
    shutil.copytree(killed_and_resumed["as_killed"], left)
    before = {p.name: p.read_bytes() for p in (left / "seed2").iterdir()}
    with pytest.raises(GoodbenchError, match=r"call run.restore\(\) before the first step"), \
            _bench(tmp_path, left, seeds=[2], flops_per_step=19456) as bench:
        for run in bench.runs():
            run.begin_step()
    assert not (tmp_path / "out.json").exists() and bench.records == []
    assert {p.name: p.read_bytes() for p in (left / "seed2").iterdir()} == before  # nothing added, nothing lost
    # so the right command, run next, goes on as if the refused process had never been
    again = _job(tmp_path, "resumed", *KILL)  # the killed process's command
    assert again.returncode == 0, again.stderr
    resumed = json.loads((tmp_path / "resumed.json").read_text())
    assert check_document(resumed) == []
    assert (resumed["runs"][1]["goodput"]["restarts"], resumed["runs"][1]["goodput"]["lost_steps"]) == (1, 5)


@pytest.mark.slow
def test_a_process_killed_in_its_initialization_adds_nothing_to_the_runs_log(killed_and_resumed, tmp_path):
    """Killed before its first step (here: refused, its step declared otherwise), a process
    leaves the earlier process's log as it was: its events are held until its header is logged
    and its checkpoint accepted."""
    left = tmp_path / "left.ckpt"
    shutil.copytree(killed_and_resumed["as_killed"], left)
    shutil.rmtree(left / "seed1")
    log = (left / "seed2" / "events.log").read_bytes()
    with pytest.raises(GoodbenchError, match="checkpoint of another workload spec"), \
            _bench(tmp_path, left, seeds=[2], flops_per_step=19456) as bench:
        for run in bench.runs():
            run.restore()
    assert (left / "seed2" / "events.log").read_bytes() == log


def test_a_re_run_for_a_reproduction_keeps_its_checkpoints_apart(tmp_path, monkeypatch):
    """`goodbench reproduce` points GOODBENCH_CHECKPOINT_DIR at a fresh folder: the recorded
    command's checkpoint_dir (the original's, with its finished runs) is never read."""
    monkeypatch.setenv("GOODBENCH_CHECKPOINT_DIR", str(tmp_path / "fresh"))
    bench = _bench(tmp_path, tmp_path / "original.ckpt", flops_per_step=1e4)
    assert bench.checkpoint_dir == tmp_path / "fresh"
    assert _bench(tmp_path, None, flops_per_step=1e4).checkpoint_dir is None  # taken by the first Benchmark only


STEP_S = 0.01  # steps of no work: the refusals between them, on a loaded machine, once took 8 ms of a
# 8-ms block and the file was refused for a loop that spent most of its blocks between steps


def test_save_and_restore_need_the_checkpoint_dir(tmp_path):
    bench = goodbench.Benchmark("no-dir", samples_per_step=4, max_steps=3, device="cpu", out=tmp_path / "o.json",
                                sign=False, flops_per_step=1e4)
    with bench:
        for run in bench.runs():
            with pytest.raises(GoodbenchError, match="no checkpoint_dir"):
                run.restore()
            with run.step():
                time.sleep(STEP_S)
            with pytest.raises(GoodbenchError, match="no checkpoint_dir"):
                run.save({})
            for _ in range(2):
                with run.step():
                    time.sleep(STEP_S)
    assert bench.problems == []
