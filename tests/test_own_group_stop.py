"""torchrun under ``goodbench run-own --nproc-per-node`` and ``goodbench run --nproc-per-node`` leads a
process group of its own (:func:`suite.run.stops.start_own_group`): a stop sent to the launcher's
whole group (``kill -TERM -PGID``, ``timeout``, a shell's ``kill %1``, a terminal's Ctrl-C) reaches
the launcher alone, which passes it on once; sharing the group, torchrun got a SIGTERM twice and took
the second in its shutdown as a new stop, ending before its ranks had written their runs. A SIGHUP
is passed on as SIGTERM, and a launcher killed with SIGKILL has the kernel send torchrun SIGTERM.
Here a stand-in for torchrun, started by :class:`suite.run.stops.Stops`'s launcher as run-own's is,
notes every signal it gets."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CHILD = """\
import os, signal, sys, time
notes = sys.argv[1]
def note(signum, frame):
    with open(notes, "a") as f:
        f.write(signal.Signals(signum).name + "\\n")
signal.signal(signal.SIGTERM, note)
signal.signal(signal.SIGINT, note)
open(notes + ".ready", "w").close()
deadline = time.monotonic() + 120
while not os.path.exists(notes) and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(3.0)  # a second stop, passed on by the launcher or sent to the group, would come meanwhile
"""

LAUNCHER = """\
import sys
from suite.run.stops import Stops, start_own_group
with Stops() as stops:
    child = start_own_group([sys.executable, "-c", sys.argv[1], sys.argv[2]])
    stops.started(child)
    with open(sys.argv[2] + ".launched", "w") as f:
        f.write(str(child.pid))
    while True:
        try:
            child.wait()
            break
        except KeyboardInterrupt:
            stops.interrupted()
print(stops.status, stops.words, flush=True)
"""


def _launched(notes: Path) -> tuple[subprocess.Popen, int]:
    """The launcher in a process group of its own (a shell's job), its child started and ready;
    the launcher and the child's pid."""
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, CHILD, str(notes)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, process_group=0)
    launched, deadline = Path(f"{notes}.launched"), time.monotonic() + 60
    while not (Path(f"{notes}.ready").exists() and launched.exists() and launched.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the launcher did not start its child"
        time.sleep(0.05)
    return proc, int(launched.read_text())


def _gone(pid: int, wait_s: float) -> bool:
    """True once ``pid`` has ended (a zombie not yet reaped by its new parent counts as ended)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat[stat.rindex(")") + 2] == "Z":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


STOPS = {  # how the launcher is stopped: the signal, sent to its group or to it alone; what the child gets
    "SIGTERM to the group": (signal.SIGTERM, True, "SIGTERM", "143 stopped by SIGTERM"),
    "SIGTERM to the launcher": (signal.SIGTERM, False, "SIGTERM", "143 stopped by SIGTERM"),
    "SIGHUP to the group": (signal.SIGHUP, True, "SIGTERM", "143 stopped by SIGHUP, as by SIGTERM"),
    "Ctrl-C to the group": (signal.SIGINT, True, "SIGINT", "130 interrupted"),
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc: Linux's")
@pytest.mark.parametrize("how", list(STOPS))
def test_torchrun_in_its_own_group_gets_each_stop_once(tmp_path, how):
    signum, to_group, got, said = STOPS[how]
    notes = tmp_path / "signals"
    proc, child = _launched(notes)
    try:
        assert os.getpgid(child) == child != proc.pid  # a group of its own, not the launcher's
        if to_group:  # kill -SIG -PGID, a terminal's Ctrl-C or hangup: the launcher's group, the launcher alone in it
            os.killpg(proc.pid, signum)
        else:  # kill -TERM PID, docker stop
            os.kill(proc.pid, signum)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if not _gone(child, 0):
            os.kill(child, signal.SIGKILL)
    assert out.strip() == said and proc.returncode == 0
    assert notes.read_text().splitlines() == [got]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_torchrun_in_its_own_group_ends_with_a_killed_launcher(tmp_path):
    """SIGKILL to the launcher's group (``kill -9 -PGID``) does not reach torchrun's: the kernel sends
    it SIGTERM as its launcher dies, and it ends."""
    notes = tmp_path / "signals"
    proc, child = _launched(notes)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _gone(child, 30), "the child trained on after its launcher was killed"
    finally:
        if not _gone(child, 0):
            os.kill(child, signal.SIGKILL)
    assert notes.read_text().splitlines() == ["SIGTERM"]
