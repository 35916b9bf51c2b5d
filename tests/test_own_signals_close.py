"""A ``goodbench.Benchmark`` and signals at the edges of its session (docs/own-code.md, "Stopping a
run"): SIGTERM or Ctrl-C while a finished run's record is closed keeps it (held, raised after the
file is written); a script stopped by SIGTERM ends with SIGTERM's status, not a traceback; a
script whose run-own launcher is gone leaves no empty file at ``out``; the session's handlers go
back only where still set, and leave nothing noted for a later session."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from quick_ceiling import quick_ceiling

import goodbench
from suite.record.errors import GoodbenchError
from suite.run import driver
from suite.run import signals as run_signals

REPO = Path(__file__).resolve().parent.parent
STEPS = 4


def _bench(out: Path, **kw) -> goodbench.Benchmark:
    return goodbench.Benchmark("signals-close", samples_per_step=4, flops_per_step=1e6, max_steps=STEPS,
                               warmup_steps=1, device="cpu", out=out, sign=False,
                               progress=lambda *a, **k: None, **kw)


def _train(run) -> None:
    for _ in range(STEPS):
        with run.step() as s:
            s.loss = torch.tensor(1.0)
    if run.due_for_evaluation():
        run.evaluate(lambda: {"x": 1.0})


@pytest.fixture
def default_signals():
    """SIGTERM at its default and SIGINT at Python's (as in a script), put back after."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    hook = sys.excepthook
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)
    sys.excepthook = hook


@pytest.mark.parametrize("ended", ["by the loop", "by end()"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_a_finished_run_is_closed_keeps_it(tmp_path, monkeypatch, default_signals, sig, ended):
    """The signal lands as the finished run's record is put together (/tmp/review14b/race.py): it
    is held, the run is written complete, and the interrupt is raised after the file is written."""
    quick_ceiling(monkeypatch)
    real = driver.close_record

    def close_signalled(*a, **k):
        os.kill(os.getpid(), sig)
        return real(*a, **k)

    monkeypatch.setattr(driver, "close_record", close_signalled)
    out = tmp_path / "race.json"
    bench = _bench(out)
    expected = run_signals.Terminated if sig == signal.SIGTERM else KeyboardInterrupt
    with pytest.raises(expected) as raised, bench:
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # the session's own handler
        for run in bench.runs():
            _train(run)
            if ended == "by end()":
                break  # the run ends as the session does
    assert type(raised.value) is expected
    assert len(bench.records) == 1 and bench.records[0]["status"] == "complete"
    doc = json.loads(out.read_text())
    assert [r["status"] for r in doc["runs"]] == ["complete"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_handler_set_during_the_session_is_left_alone(tmp_path, monkeypatch, default_signals):
    """A framework's SIGTERM handler, installed inside ``with bench:``, is not replaced by the one
    the session found at its start."""
    quick_ceiling(monkeypatch)

    def framework(signum, frame):
        pass

    bench = _bench(tmp_path / "framework.json")
    with bench:
        for run in bench.runs():
            signal.signal(signal.SIGTERM, framework)
            _train(run)
    assert signal.getsignal(signal.SIGTERM) is framework
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_start_that_fails_leaves_no_handler(tmp_path, default_signals):
    """``start()`` called by itself (not ``with``), refused (its out exists): SIGTERM and SIGINT as before."""
    (tmp_path / "taken.json").write_text("{}")
    bench = _bench(tmp_path / "taken.json")
    with pytest.raises(GoodbenchError, match="exists"):
        bench.start()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_later_session_is_not_stopped_by_an_earlier_ones_signal(tmp_path, monkeypatch, default_signals):
    """A SIGTERM held while the first session's file was written, whose write then failed, is not
    raised again by a second Benchmark in the same process (a sweep, a notebook)."""
    quick_ceiling(monkeypatch)
    first = _bench(tmp_path / "first.json")

    def signalled_then_failed(interrupted):
        os.kill(os.getpid(), signal.SIGTERM)
        raise GoodbenchError("cannot write first.json")

    monkeypatch.setattr(first, "_write", signalled_then_failed)
    with pytest.raises(GoodbenchError, match="cannot write"), first:
        for run in first.runs():
            _train(run)
    second = _bench(tmp_path / "second.json")
    try:
        with second:
            for run in second.runs():
                _train(run)
    except run_signals.Terminated:  # not a KeyboardInterrupt out of the test: that would stop pytest
        pytest.fail("the second session was stopped by the first one's SIGTERM")
    assert second.path is not None and second.path.exists()
    assert not run_signals.sigterm_received()


SCRIPT = """
import os, signal, sys
import torch
sys.path.insert(0, {tests!r})
import goodbench
from suite.api import benchmark
from suite.meters.ceiling import matmul_ceiling
benchmark.matmul_ceiling = lambda device, precision: matmul_ceiling(device, precision, n=256, min_seconds=0.05)
bench = goodbench.Benchmark("stopped", samples_per_step=4, flops_per_step=1e6, max_steps=6, warmup_steps=1,
                            device="cpu", out=sys.argv[1], sign=False, progress=lambda *a, **k: None)
with bench:
    for run in bench.runs():
        for step in range(1, 7):
            with run.step() as s:
                if step == 3:
                    os.kill(os.getpid(), signal.SIGTERM)
                s.loss = torch.tensor(1.0)
print("trained on")
"""


@pytest.mark.slow  # a script's process, stopped: 4 s (the fast loop stays under 3 minutes)
def test_a_script_stopped_by_sigterm_ends_as_killed_by_it(tmp_path):
    """Plain ``python script.py`` sent SIGTERM: the runs so far are written, one line says where,
    and the process ends as SIGTERM's default would (status 143 to a shell), with no traceback."""
    out = tmp_path / "stopped.json"
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(tests=str(REPO / "tests")), str(out)],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=120)
    said = done.stdout + done.stderr
    assert done.returncode == -signal.SIGTERM, said
    assert "Traceback" not in said and "trained on" not in said
    assert f"goodbench: stopped by SIGTERM; the runs so far are in {out}" in done.stderr, said
    doc = json.loads(out.read_text())
    assert doc["runs"][0]["status"] == "partial" and doc["settings"]["interrupted"] is True


ORPHAN = """
import os, sys, time
r, w = os.pipe()
os.environ['GOODBENCH_EDGE_FD'] = str(w)
from suite.api import benchmark
from suite.meters.ceiling import matmul_ceiling
benchmark.matmul_ceiling = lambda device, precision: matmul_ceiling(device, precision, n=256, min_seconds=0.05)
import goodbench
bench = goodbench.Benchmark("orphan", samples_per_step=4, flops_per_step=1e6, max_steps=6, device="cpu",
                            out=sys.argv[1], sign=False, progress=lambda *a, **k: None)
bench.start()
assert os.path.exists(sys.argv[1]) and os.path.getsize(sys.argv[1]) == 0  # the reservation
os.close(r)  # the launcher is gone
time.sleep(30)
print("trained on")
"""


def test_a_script_whose_launcher_is_gone_leaves_no_empty_file(tmp_path):
    """The pipe's reader gone after the Benchmark reserved ``out``: the script ends at once, and
    its empty placeholder goes with it (a file nothing stamped, that validate would call empty)."""
    out = tmp_path / "orphan.json"
    done = subprocess.run([sys.executable, "-c", ORPHAN, str(out)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "trained on" not in done.stdout, done.stdout + done.stderr
    assert "its launcher (goodbench run-own) is gone: the script ends here" in done.stderr
    assert not out.exists()


def test_a_placeholder_a_killed_run_left_is_taken_over_saying_so(tmp_path, monkeypatch, capsys, default_signals):
    """An empty, unheld file at ``out`` (a run killed after reserving it): the Benchmark takes it
    over and says so in one line, as ``goodbench run`` does."""
    quick_ceiling(monkeypatch)
    out = tmp_path / "left.json"
    out.touch()
    bench = _bench(out)
    with bench:
        for run in bench.runs():
            _train(run)
    assert f"{out} was left empty by a run that was killed; taking it over" in capsys.readouterr().err
    assert json.loads(out.read_text())["runs"][0]["status"] == "complete"


def test_a_sigterm_that_comes_twice_keeps_the_runs_so_far(tmp_path, monkeypatch, default_signals):
    """``kill -TERM -PGID`` reaches the script and ``goodbench run-own``, which passes it on: the
    script gets SIGTERM twice, a moment apart. The second one, landing as the session's end begins
    (before the record is held), was raised there too, and the runs so far were never written; it
    is noted as part of the same stop, and the file is written once, the run partial."""
    quick_ceiling(monkeypatch)
    monkeypatch.setattr(run_signals, "ECHO_S", 60.0)  # however slowly this machine runs the test
    real = run_signals.holding
    echoes = []

    @contextlib.contextmanager
    def echoed(*a, **k):
        if not echoes:  # the launcher's SIGTERM, passed on, lands here: before the hold
            echoes.append(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
        with real(*a, **k) as held:
            yield held

    monkeypatch.setattr(run_signals, "holding", echoed)
    out = tmp_path / "twice.json"
    bench = _bench(out)
    with pytest.raises(run_signals.Terminated) as raised, bench:
        for run in bench.runs():
            for step in range(1, STEPS + 1):
                with run.step() as s:
                    if step == 2:
                        os.kill(os.getpid(), signal.SIGTERM)  # the group's SIGTERM
                    s.loss = torch.tensor(1.0)
    assert type(raised.value) is run_signals.Terminated and echoes
    doc = json.loads(out.read_text())
    assert [(r["status"], r["error"]) for r in doc["runs"]] == [("partial", "interrupted (SIGTERM) after 1 of at most 4 steps")]
    assert doc["settings"]["interrupted"] is True
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_sigterm_held_at_a_runs_end_and_its_echo_right_after_keep_the_runs(tmp_path, monkeypatch, default_signals):
    """The group's SIGTERM lands while a finished run's record is closed (held, raised when that
    hold ends), and the same kill passed on by run-own lands right after, before the session's end
    holds the file's write: the second is the same stop (signals.ECHO_S counts from the first even
    though it was held), noted, and the file is written, the run complete."""
    quick_ceiling(monkeypatch)
    monkeypatch.setattr(run_signals, "ECHO_S", 60.0)  # however slowly this machine runs the test
    real = run_signals.holding
    holds = []

    @contextlib.contextmanager
    def timed(*a, **k):
        holds.append(k)
        if len(holds) == 2:  # run-own's SIGTERM, passed on: after the run's hold, before the next one
            os.kill(os.getpid(), signal.SIGTERM)
        with real(*a, **k) as held:
            if len(holds) == 1:  # the group's SIGTERM, while the finished run's record is closed
                os.kill(os.getpid(), signal.SIGTERM)
            yield held

    monkeypatch.setattr(run_signals, "holding", timed)
    out = tmp_path / "held-then-echo.json"
    bench = _bench(out)
    with pytest.raises(run_signals.Terminated) as raised, bench:
        for run in bench.runs():
            _train(run)
    assert type(raised.value) is run_signals.Terminated and len(holds) >= 2 and holds[0] == {"deliver": True}
    doc = json.loads(out.read_text())
    assert [r["status"] for r in doc["runs"]] == ["complete"]
    assert doc["settings"]["interrupted"] is True
