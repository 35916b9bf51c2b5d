"""torchrun under ``goodbench run-own --nproc-per-node`` and ``goodbench run --nproc-per-node`` leads a
process group of its own (:func:`suite.run.stops.start_own_group`): a stop sent to the launcher's
whole group (``kill -TERM -PGID``, ``timeout``, a shell's ``kill %1``, a terminal's Ctrl-C) reaches
the launcher alone, which passes it on once; sharing the group, torchrun got a SIGTERM twice and took
the second in its shutdown as a new stop, ending before its ranks had written their runs. A SIGHUP
is passed on as SIGTERM. A launcher killed with SIGKILL while threads of its own run has the kernel
send torchrun its death signal once per thread: run-own's SIGKILL, and ``goodbench run``'s own signal,
which :mod:`suite.run.death_once` passes on once as SIGTERM. Here a stand-in for torchrun, started
by :class:`suite.run.stops.Stops`'s launcher as run-own's and run's are, notes every signal it gets."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waiting import ended

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
time.sleep(1.0)  # a second stop, passed on by the launcher or sent to the group, would come meanwhile
"""

LAUNCHER = """\
import signal, sys, threading
from suite.run import death_once
from suite.run.stops import Stops, start_own_group
code, notes, flavour, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def spin():  # torch's and CUDA's threads, in a real launcher (started here once the child is: sooner)
    while True:
        sum(range(1000))
if flavour == "run":  # goodbench run's torchrun: its own death signal, passed on once as SIGTERM
    command, death = [sys.executable, "-m", "suite.run.death_once", "-c", code, notes], death_once.DEATH_SIGNAL
else:  # run-own's: SIGKILL
    command, death = [sys.executable, "-c", code, notes], signal.SIGKILL
with Stops() as stops:
    child = start_own_group(command, death_signal=death)
    stops.started(child)
    for _ in range(threads):
        threading.Thread(target=spin, daemon=True).start()
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


def _launched(notes: Path, flavour: str = "run-own", threads: int = 0) -> tuple[subprocess.Popen, int]:
    """The launcher (``flavour``: run-own's or run's, running ``threads`` busy threads) in a process
    group of its own (a shell's job), its child started and ready; the launcher and the child's pid."""
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, CHILD, str(notes), flavour, str(threads)],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                            process_group=0)
    launched, deadline = Path(f"{notes}.launched"), time.monotonic() + 60
    while not (Path(f"{notes}.ready").exists() and launched.exists() and launched.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the launcher did not start its child"
        time.sleep(0.05)
    return proc, int(launched.read_text())


STOPS = {  # how the launcher is stopped: the signal, sent to its group or to it alone; what the child gets
    "SIGTERM to the group": (signal.SIGTERM, True, "SIGTERM", "143 stopped by SIGTERM"),
    "SIGTERM to the launcher": (signal.SIGTERM, False, "SIGTERM", "143 stopped by SIGTERM"),
    "SIGHUP to the group": (signal.SIGHUP, True, "SIGTERM", "143 stopped by SIGHUP, as by SIGTERM"),
    "Ctrl-C to the group": (signal.SIGINT, True, "SIGINT", "130 interrupted"),
}
SLOW = pytest.mark.slow  # the group's SIGTERM, which came twice, stays in the fast loop


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc: Linux's")
@pytest.mark.parametrize("how", [how if how == "SIGTERM to the group" else pytest.param(how, marks=SLOW)
                                 for how in STOPS])
def test_torchrun_in_its_own_group_gets_each_stop_once(tmp_path, how, sighup_at_default):
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
        if not ended(child):
            os.kill(child, signal.SIGKILL)
    assert out.strip() == said and proc.returncode == 0
    assert notes.read_text().splitlines() == [got]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("flavour, got, kills", [("run", ["SIGTERM"], 1), ("run-own", [], 1),
                                                 pytest.param("run", ["SIGTERM"], 4, marks=SLOW)])
def test_torchrun_in_its_own_group_ends_with_a_killed_launcher(tmp_path, flavour, got, kills):
    """SIGKILL to the launcher's group (``kill -9 -PGID``) does not reach torchrun's: the kernel sends
    it the launcher's death signal, and it ends. The launcher runs threads, as one with torch loaded
    does: the kernel sends the signal again as each ends, and run's torchrun still gets one SIGTERM
    (without :mod:`suite.run.death_once`, 2 or 3 in most kills); run-own's is killed."""
    for kill in range(kills):
        notes = tmp_path / f"signals-{kill}"
        proc, child = _launched(notes, flavour, threads=8)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            assert ended(child, 30), "the child trained on after its launcher was killed"
        finally:
            if not ended(child):
                os.kill(child, signal.SIGKILL)
        assert (notes.read_text().splitlines() if notes.exists() else []) == got, f"kill {kill}"
