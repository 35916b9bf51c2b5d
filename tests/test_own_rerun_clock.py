"""Own code's reproduction stamped on a second clock (issue 44, audit gap 4; docs/own-code.md,
"Reproducing"): the recorded script, re-run in the sandbox, gets the write end of an edge channel and
the reviewer's goodbench stamps its edges outside the sandbox, so the reproduction carries a
second clock (an honest re-run's is pinned by test_own_code.py's reproduce test); a script that
replaces its clocks — whose plain-python original is valid, and whose re-run would match it — is
refused when reproduced."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_own_code import SLEEPING, _git_repo

from suite import validate as v
from suite.cli import main
from suite.run.reproduce import stamping

# SLEEPING (test_own_code.py: each step has a length on any clock), but once the Benchmark has
# measured its ceiling, its clocks run 20 times slower (issue 44, finding 6),
# put back once its runs are over, before the ceiling is measured again at the job's end (cpu-too-fast
# would see them still slowed)
SLOWED = SLEEPING.replace("    for run in bench.runs():\n", '''    import time
    real_clocks = {name: getattr(time, name) for name in ("perf_counter", "time", "monotonic")}
    for name, real in real_clocks.items():
        origin = real()
        setattr(time, name, lambda real=real, origin=origin: origin + (real() - origin) / 20)

    def slowed_runs():
        yield from bench.runs()
        for name, real in real_clocks.items():
            setattr(time, name, real)
    for run in slowed_runs():
''')


def _original(folder, script: str) -> dict:
    (folder / "train.py").write_text(script)
    _git_repo(folder)
    done = subprocess.run([sys.executable, "train.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("[]"), done.stderr[-2000:]
    doc = json.loads((folder / "orig.json").read_text())
    assert "second_clock" not in doc and v.check_document(doc) == []  # plain python: one clock, valid
    return doc


@pytest.mark.slow
def test_clocks_replaced_in_the_script_are_refused_when_it_is_reproduced(tmp_path, monkeypatch, capsys):
    original = _original(tmp_path, SLOWED)
    assert original["runs"][0]["step_times_s"][-1] < 0.005  # 10 ms steps claimed at ~0.5 ms
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "orig.json", "-o", "repro.json", "--no-sign", "--run-recorded-command"]) == 1
    said = capsys.readouterr().err
    assert "the re-run's clocks disagree beyond the tolerance (run " in said and "s on goodbench's" in said
    assert "the recorded command runs again" not in said  # refused after the first re-run
    assert not (tmp_path / "repro.json").exists() and list(tmp_path.glob("repro.rerun*.json"))  # the re-run kept


def test_a_plain_script_gets_the_pipe_and_a_torchrun_job_its_ranks_channels():
    assert stamping.torchrun_ranks([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                    "--nproc-per-node=2", "train.py"]) == 2  # each rank's socket
    assert stamping.torchrun_ranks([sys.executable, "train.py", "--nproc-per-node=2"]) is None  # the pipe
    assert stamping.environment(7) == {"GOODBENCH_EDGE_FD": "7"}


def test_a_re_run_whose_steps_sum_the_second_clock_does_not_hold_is_refused():
    """Trial 17, E: a re-run whose steps were each claimed a few ms short passed the per-step
    agreement and was measured on its own claims (steps summing 0.99 s, 1.257 s stamped); the sum
    rule refuses it before anything is measured, as it keeps an honest re-run."""
    from test_own_outcome import _doc

    from suite.figures import clock_cover

    honest = _doc()
    assert stamping.disagreement(json.dumps(honest).encode()) is None
    shaved = _doc()
    for run in shaved["runs"]:  # every step claimed the share trial 17's were: 0.99 s of 1.257 s
        run["step_times_s"] = [t * 0.99 / 1.257 for t in run["step_times_s"]]
        run["metrics"]["throughput"]["step_time_s"]["p50"] *= 0.99 / 1.257
    assert all(entry["agreement"]["agree"] for entry in shaved["second_clock"]["runs"])  # the old gate passed it
    assert clock_cover.SUM_OFF in {clock_cover.steps_flaw(shaved, r) for r in shaved["runs"]}
    said = stamping.disagreement(json.dumps(shaved).encode())
    assert said is not None and "its steady steps add up to" in said and "5% + 75 ms" in said
