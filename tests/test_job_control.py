"""Ctrl-Z under the fault-injection supervisor (docs/goodput.md): the supervisor stops its worker's
process group with itself and continues it with itself, and the run's log and record say how long
the worker was paused (its clock ran on: the pause is inside its timed window)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waiting import until

from suite.record import mllog
from suite.run import job_control

REPO = Path(__file__).resolve().parent.parent

SUPERVISED = """\
import json, sys
import torch
from short_lmchar import ShortLmChar, sigtstp_to_the_supervisor_at_step_10
from suite.run import signals, supervisor
from suite.run.runner import RunOptions

signals.stop_on_sigterm()
options = RunOptions(device=torch.device("cpu"), data_dir=sys.argv[1], checkpoint_dir=sys.argv[2],
                     inject_failures=(1000,))
record = supervisor.run_supervised(ShortLmChar(), "smoke", 1, options, progress=sigtstp_to_the_supervisor_at_step_10)
print(json.dumps(record))
"""


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2:].split()[0]


def _stopped(pid: int, deadline: float) -> int:
    """Wait until ``pid`` (a child) stops; its stop signal."""
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WUNTRACED | os.WNOHANG)
        if done:
            assert os.WIFSTOPPED(status), f"the supervisor ended ({status}) instead of stopping"
            return os.WSTOPSIG(status)
        time.sleep(0.05)
    raise AssertionError("the supervisor never stopped")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_ctrl_z_stops_the_supervised_worker_with_its_supervisor_and_the_pause_is_recorded(data_dir, tmp_path):
    """The worker sends its supervisor SIGTSTP at step 10 (a terminal's Ctrl-Z reaches the supervisor
    alone). This test is the shell: it sees the supervisor stop, finds its worker stopped too (it
    trained on before), holds them a while, continues the supervisor (``fg``), and the run ends
    complete, its log holding one ``paused`` event at least as long as the hold, and its record's
    ``faults.paused_s`` the same."""
    script = tmp_path / "supervised.py"
    script.write_text(SUPERVISED)
    err = tmp_path / "stderr"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    with open(err, "w") as stderr:
        # a group of its own in this session, as a shell's job: not orphaned, so SIGTSTP stops it
        proc = subprocess.Popen([sys.executable, str(script), str(data_dir), str(tmp_path / "ckpt")],
                                stdout=subprocess.PIPE, stderr=stderr, env=env, process_group=0)
    try:
        assert _stopped(proc.pid, time.monotonic() + 300) == signal.SIGTSTP, err.read_text()[-3000:]
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert len(children) == 1, children
        worker = int(children[0])
        assert until(lambda: _state(worker) == "T", 30), "the worker trains on while its supervisor is stopped"
        held = 1.0
        time.sleep(held)
        assert _state(worker) == "T"
        os.killpg(proc.pid, signal.SIGCONT)  # fg
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err.read_text()[-3000:]
    record = json.loads(out)
    assert record["status"] == "complete" and record["steps"] == 40
    paused = [e for e in mllog.parse(record["event_log"]) if e.key == job_control.PAUSED]
    assert len(paused) == 1 and paused[0].value >= held, paused
    assert record["faults"]["paused_s"] == job_control.paused_s(record["event_log"]) >= held


def test_job_control_leaves_an_ignored_sigtstp_alone():
    """``nohup``-like: SIGTSTP ignored stays ignored; SIGCONT's default is taken over and put back."""
    before = signal.signal(signal.SIGTSTP, signal.SIG_IGN)
    try:
        with job_control.JobControl(None):
            assert signal.getsignal(signal.SIGTSTP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGCONT) is not signal.SIG_DFL
        assert signal.getsignal(signal.SIGCONT) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTSTP, before)


def test_the_pause_is_logged_before_the_worker_is_continued(tmp_path, monkeypatch):
    """The supervisor's stop and continuation stood in for: when the worker gets SIGCONT, the
    ``paused`` line is in the log already, so the worker's later events follow it (and a record
    the worker reads from the log then counts it)."""
    log = tmp_path / "events.log"
    signalled: list[tuple[int, list[str]]] = []
    monkeypatch.setattr(job_control.os, "kill", lambda pid, signum: None)  # the supervisor's own stop
    with job_control.JobControl(log) as control:
        def to_worker(signum: int) -> bool:
            signalled.append((signum, log.read_text().splitlines() if log.exists() else []))
            return True
        monkeypatch.setattr(control, "_signal_worker", to_worker)
        control._on_sigtstp(signal.SIGTSTP, None)
    assert [signum for signum, _ in signalled] == [signal.SIGSTOP, signal.SIGCONT]
    assert signalled[0][1] == []
    assert [e.key for e in mllog.parse(signalled[1][1])] == [job_control.PAUSED]
