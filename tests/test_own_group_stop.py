"""A SIGTERM to ``goodbench run-own --nproc-per-node``'s whole process group reaches torchrun, which
shares the launcher's group, once: the launcher does not pass on a SIGTERM that the same group-wide
delivery brought torchrun already (torchrun takes a second one in its shutdown as a new stop and ends
there, before its ranks have written their runs). A SIGTERM to the launcher alone is still passed on.
Here the launcher's :class:`suite.run.stops.Stops` watches the group as run-own's does, and a
stand-in for torchrun counts the SIGTERMs it gets."""
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
count = sys.argv[1]
def on_sigterm(signum, frame):
    with open(count, "a") as f:
        f.write("SIGTERM\\n")
signal.signal(signal.SIGTERM, on_sigterm)
open(count + ".ready", "w").close()
deadline = time.monotonic() + 120
while not os.path.exists(count) and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(3.0)  # a second SIGTERM, passed on by the launcher, would come meanwhile
"""

LAUNCHER = """\
import subprocess, sys
from suite.run.stops import Stops
with Stops() as stops:
    stops.watch_group()
    child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
    stops.started(child)
    open(sys.argv[2] + ".launched", "w").close()
    child.wait()
print("group-wide" if stops.group_wide else "passed on", stops.status)
"""


def _launched(count: Path) -> subprocess.Popen:
    """The launcher in a process group of its own (a shell's job), its child started and ready."""
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, CHILD, str(count)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, process_group=0)
    deadline = time.monotonic() + 60
    while not (Path(f"{count}.ready").exists() and Path(f"{count}.launched").exists()):
        assert proc.poll() is None and time.monotonic() < deadline, "the launcher did not start its child"
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize("how", ["SIGTERM to the group", "SIGTERM to the launcher"])
def test_torchrun_sharing_the_launchers_group_gets_one_sigterm(tmp_path, how):
    count = tmp_path / "sigterms"
    proc = _launched(count)
    try:
        if how == "SIGTERM to the group":  # kill -TERM -PGID: the launcher and its child at once
            os.killpg(proc.pid, signal.SIGTERM)
        else:  # kill -TERM PID: the launcher alone, which passes it on
            os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # what the launcher did: two SIGTERMs close together may reach the child as one (a signal pending
    # takes no second), so the count alone cannot show a second one was sent
    assert out.split() == (["group-wide", "143"] if how == "SIGTERM to the group" else ["passed", "on", "143"])
    assert count.read_text().splitlines() == ["SIGTERM"]


def test_the_witness_ends_with_its_launcher():
    """A launcher killed with SIGKILL leaves no witness behind: it ends itself."""
    launcher = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom suite.run.stops import GroupWitness\n"
                                 "print(GroupWitness().proc.pid, flush=True)\ntime.sleep(60)\n"],
                                stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert launcher.stdout is not None
    witness = int(launcher.stdout.readline())
    launcher.kill()
    launcher.wait()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{witness}").exists() and time.monotonic() < deadline:
        stat = Path(f"/proc/{witness}/stat").read_text() if Path(f"/proc/{witness}").exists() else ""
        if stat and stat[stat.rindex(")") + 2] == "Z":
            break  # ended, not yet reaped by its new parent
        time.sleep(0.1)
    else:
        if Path(f"/proc/{witness}").exists():
            os.kill(witness, signal.SIGKILL)
            pytest.fail("the witness outlived its launcher")
