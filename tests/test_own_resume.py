"""A killed run of one's own code goes on (suite/api/benchmark.py ``checkpoint_dir``,
``Run.save``, ``Run.restore``): the same command run again continues the session, keeps the
finished seed's record, and the killed seed goes on from its newest checkpoint, bit for bit the
curve of an uninterrupted run, the steps after that checkpoint counted as lost work."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import goodbench
from suite.record.errors import GoodbenchError
from suite.validate import check_document

JOB = Path(__file__).resolve().parent / "own_resume_job.py"


def _job(out: Path, checkpoint_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(JOB), str(out), str(checkpoint_dir), *extra],
                          capture_output=True, text=True, timeout=300, cwd=JOB.parent.parent)


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory) -> dict:
    """An uninterrupted session, and one killed after step 25 of seed 2 (its newest checkpoint:
    step 20) then run again with the same command; the killed session's directory as it was left."""
    root = tmp_path_factory.mktemp("resume")
    whole = _job(root / "whole.json", root / "whole.ckpt")
    assert whole.returncode == 0, whole.stderr
    kill = ("--kill-seed", "2", "--kill-after", "25")
    killed = _job(root / "resumed.json", root / "resumed.ckpt", *kill)
    assert killed.returncode == -9, killed.stderr  # SIGKILL: nothing of it ran past step 25
    assert not (root / "resumed.json").exists()
    shutil.copytree(root / "resumed.ckpt", root / "as-killed.ckpt")
    again = _job(root / "resumed.json", root / "resumed.ckpt", *kill)
    assert again.returncode == 0, again.stderr
    return {"whole": json.loads((root / "whole.json").read_text()),
            "resumed": json.loads((root / "resumed.json").read_text()), "as_killed": root / "as-killed.ckpt",
            "seed1_kept": json.loads((root / "as-killed.ckpt" / "seed1" / "finished-record.json").read_text())}


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


def test_a_successor_that_declares_another_step_is_refused(killed_and_resumed, tmp_path):
    left = tmp_path / "left.ckpt"
    shutil.copytree(killed_and_resumed["as_killed"], left)
    with pytest.raises(GoodbenchError, match="seed 1 .* trained 19456 FLOPs per step, not 10000"), \
            _bench(tmp_path, left, seeds=2, flops_per_step=1e4) as bench:
        next(bench.runs())
    assert not (tmp_path / "out.json").exists()


def test_a_run_an_earlier_process_began_must_be_restored_and_nothing_is_lost(killed_and_resumed, tmp_path):
    left = tmp_path / "left.ckpt"
    shutil.copytree(killed_and_resumed["as_killed"], left)
    before = {p.name: p.read_bytes() for p in (left / "seed2").iterdir()}
    with pytest.raises(GoodbenchError, match=r"call run.restore\(\) before the first step"), \
            _bench(tmp_path, left, seeds=[2], flops_per_step=19456) as bench:
        for run in bench.runs():
            run.begin_step()
    assert not (tmp_path / "out.json").exists() and bench.records == []
    after = {p.name: p.read_bytes() for p in (left / "seed2").iterdir()}
    assert after.keys() == before.keys()
    assert all(after[name] == data for name, data in before.items() if name != "events.log")
    assert after["events.log"].startswith(before["events.log"])  # this process's start is added, nothing lost


def test_save_and_restore_need_the_checkpoint_dir(tmp_path):
    bench = goodbench.Benchmark("no-dir", samples_per_step=4, max_steps=3, device="cpu", out=tmp_path / "o.json",
                                sign=False, flops_per_step=1e4)
    with bench:
        for run in bench.runs():
            with pytest.raises(GoodbenchError, match="no checkpoint_dir"):
                run.restore()
            with run.step():
                pass
            with pytest.raises(GoodbenchError, match="no checkpoint_dir"):
                run.save({})
            for _ in range(2):
                with run.step():
                    pass
    assert bench.problems == []
