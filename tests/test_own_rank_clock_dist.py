"""``goodbench run-own --nproc-per-node 2`` of tests/own_ddp_job.py: two real gloo ranks on the CPU,
each writing its edges to its own socket, both stamped on the launcher's one clock; the file is valid,
both ranks of its run are stamped and it is not held apart as timed by one clock. Its reproduction
(``goodbench reproduce --run-recorded-command``) stamps both ranks of the sandboxed re-run too."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_own_code import _git_repo

from suite.cli import main
from suite.figures import clock_cover, rank_clocks
from suite.leaderboard import pipeline, rows
from suite.validate import check_document

REPO = Path(__file__).resolve().parent.parent
JOB = REPO / "tests" / "own_ddp_job.py"
pytestmark = [pytest.mark.slow, pytest.mark.dist]  # rank processes under torchrun


def _run_own(folder: Path, *args: str, script: Path = JOB) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "suite", "run-own", "--nproc-per-node", "2", str(script), *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def both_ranks_stamped(doc: dict) -> dict:
    """The file's one run, once the file is valid and every step of each of its two ranks is
    stamped by the second clock, the clocks agreeing (tests/test_own_callbacks_dist.py too)."""
    assert check_document(doc) == []
    [run] = doc["runs"]
    entries = doc["second_clock"]["runs"]
    assert sorted(rank_clocks.rank_of(e) for e in entries) == [0, 1]
    assert {e["run_id"] for e in entries} == {run["run_id"]}
    assert all(e["agreement"]["agree"] and len(e["step_s"]) == len(run["step_times_s"]) for e in entries)
    assert clock_cover.stamped(doc, run["run_id"])
    return run


def test_a_rank_whose_clocks_run_slow_is_refused_naming_it(tmp_path):
    """Rank 1 slows its clocks while it trains: its record and its edges' readings claim a fraction of
    the time the launcher's clock saw pass."""
    done = _run_own(tmp_path, "cheat.json", "--slow-clocks-rank", "1")
    assert done.returncode == 1
    refused, *also = [line for line in done.stdout.splitlines() if "[second-clock]" in line]
    assert "second_clock.runs[1]: rank 1: the clocks disagree: clock span" in refused
    # and its child's slowed reading is not its launcher's stamp on the machine's clock (trial 9: readings_flaw)
    assert all("second_clock.runs[1]: rank 1: run " in line and "on the child's monotonic clock" in line for line in also)
    assert "the clocks disagree on rank 1 (seed 1)" in done.stderr
    assert "second_clock" in json.loads((tmp_path / "cheat.json").read_text())


def test_a_torchrun_job_that_fails_gets_one_line_naming_the_rank(tmp_path):
    """Rank 1 raises after step 7 while rank 0 goes on to its next collective: no rank puts a
    record together (no collective could be matched), the job ends with the error instead of
    hanging, one line says so, and there is no file."""
    began = time.monotonic()
    done = _run_own(tmp_path, "own-ddp.json", "--fail-rank", "1")
    assert time.monotonic() - began < 120  # gloo's default timeout is 30 minutes: a hang would show
    assert done.returncode == 1 and "rank 1 fails alone" in done.stderr  # the rank's own error, above the line
    lines = [line for line in done.stderr.splitlines() if line.startswith("goodbench: error:")]
    assert len(lines) == 1 and lines[0].startswith("goodbench: error: the script failed (exit status 1; its error is "
                                                    "above); it named no results file, so nothing was kept")
    assert not (tmp_path / "own-ddp.json").exists()


def test_run_own_and_the_reproduction_of_a_torchrun_job_stamp_both_ranks_and_the_file_ranks(tmp_path, monkeypatch, capsys):
    for name in ("own_ddp_job.py", "own_job_step.py"):  # the job and the step it imports, in a checkout
        shutil.copy(REPO / "tests" / name, tmp_path / name)
    _git_repo(tmp_path)
    done = _run_own(tmp_path, "orig.json", script=Path("own_ddp_job.py"))
    assert done.returncode == 0, done.stderr[-3000:]
    # run-own stamps both ranks of the torchrun job, and the file ranks
    assert "second clock added (1 run on 2 ranks, the clocks agree), unsigned, valid" in done.stderr
    doc = json.loads((tmp_path / "orig.json").read_text())
    both_ranks_stamped(doc)
    assert doc["settings"]["implementation"]["command"][:2] == ["torchrun", "--nproc-per-node=2"]
    frame = pipeline.table([("orig.json", doc)])
    assert frame["second_clock"].all() and not rows.one_clock(frame).any()
    assert not set(rows.ONE_CLOCK_REASONS) & set(rows.unranked_reasons(frame.to_dict(orient="records")[0]))
    monkeypatch.chdir(tmp_path)  # then its reproduction stamps both ranks of the re-run
    assert main(["reproduce", "orig.json", "-o", "repro.json", "--no-sign", "--run-recorded-command",
                 "--measure-for", "1"]) in (0, 1)  # its throughput on a busy machine is not the question here
    assert "bit-identical" in capsys.readouterr().out
    repro = json.loads((tmp_path / "repro.json").read_text())
    entries = repro["second_clock"]["runs"]
    assert sorted(rank_clocks.rank_of(e) for e in entries) == [0, 1]
    assert {e["run_id"] for e in entries} == {repro["runs"][0]["run_id"]}
    assert all(e["agreement"]["agree"] for e in entries) and check_document(repro) == []
