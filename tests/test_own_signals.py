"""Own code stopped from outside keeps its runs so far (docs/own-code.md, "Stopping a run"): SIGTERM
to a ``goodbench.Benchmark`` acts as Ctrl-C does; ``goodbench run-own`` passes a SIGTERM on to the
script, waits for its file, adds the second clock and exits 143 (130 after Ctrl-C, never "the script
failed"); a script whose launcher was killed with SIGKILL ends, keeping nothing unstamped; torchrun
started by ``goodbench run --nproc-per-node`` ends with its launcher; a script silent for long is
said once."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from array import array
from pathlib import Path

import pytest
from waiting import ended, lines_until, until

from suite.run import launch, own_stall
from suite.run.edge_reader import RunEdges
from suite.run.stops import Stops, ending_with
from suite.validate import check_document

REPO = Path(__file__).resolve().parent.parent
JOB = REPO / "tests" / "own_sigterm_job.py"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


def _start(command: list[str], cwd: Path) -> subprocess.Popen:
    """``command`` in a process group of its own, SIGINT at its default (a terminal's job)."""
    def own_group() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setpgrp()

    return subprocess.Popen(command, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=own_group)


def _wait_for(proc: subprocess.Popen, marker: str, timeout_s: float = 240) -> list[str]:
    assert proc.stdout is not None
    return lines_until(proc, proc.stdout, marker, timeout_s)


@pytest.mark.slow
def test_sigterm_to_a_benchmark_keeps_the_runs_so_far(tmp_path):
    """``python script.py`` sent SIGTERM at step 15: the run is written as partial, and SIGTERM's
    default comes back when the session ends (it was lost whole)."""
    done = subprocess.run([sys.executable, str(JOB), "--out", "own.json", "--at", "15"], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert "stopped: Terminated; SIGTERM's handler restored: True" in done.stdout, done.stdout + done.stderr
    assert done.returncode == -signal.SIGTERM and "Traceback" not in done.stderr, done.stderr  # as if killed by it
    doc = json.loads((tmp_path / "own.json").read_text())
    run = doc["runs"][0]
    assert run["status"] == "partial" and run["error"] == "interrupted (SIGTERM) after 14 of at most 40 steps"
    assert doc["settings"]["interrupted"] is True


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGTERM to the launcher", "SIGTERM to the group", "Ctrl-C to the group"])
def test_run_own_stopped_keeps_the_runs_so_far_with_their_second_clock(tmp_path, how):
    """The script hangs in step 12; the launcher alone is sent SIGTERM (``docker stop``, a supervisor
    signalling the main pid), or the whole group SIGINT (Ctrl-C): the script writes its runs so
    far, the launcher adds its second clock and says what stopped it, with the signal's status."""
    proc = _start([sys.executable, "-m", "suite", "run-own", str(JOB), "--out", "own.json", "--at", "0",
                   "--hang-at", "12"], tmp_path)
    seen = _wait_for(proc, "eval at step 10")
    time.sleep(1.0)  # into the hung step
    if how == "SIGTERM to the launcher":
        proc.send_signal(signal.SIGTERM)
    elif how == "SIGTERM to the group":  # `kill -TERM -PGID`: the script gets it twice, the launcher passing it on
        os.killpg(proc.pid, signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    rest, _ = proc.communicate(timeout=240)
    said = "".join(seen) + rest
    assert proc.returncode == (143 if how.startswith("SIGTERM") else 130), said
    words = "stopped by SIGTERM" if how.startswith("SIGTERM") else "interrupted"
    assert f"goodbench run-own: {words}: what the script recorded before it stopped is in" in said, said
    assert "the script failed" not in said
    doc = json.loads((tmp_path / "own.json").read_text())
    assert doc["runs"][0]["status"] == "partial" and "second_clock" in doc
    assert doc["runs"][0]["error"].startswith(f"interrupted ({'SIGTERM' if words != 'interrupted' else 'KeyboardInterrupt'})")
    assert [p for p in check_document(doc) if p.code != "schema-unchecked"] == []


@pytest.mark.slow
def test_a_script_whose_launcher_is_killed_ends_keeping_no_unstamped_file(tmp_path):
    """SIGKILL of the launcher: its single child finds the pipe without a reader and ends at once,
    saying so, rather than training on unwatched and writing a file of one clock."""
    proc = _start([sys.executable, "-m", "suite", "run-own", str(JOB), "--out", "own.json", "--at", "0",
                   "--pause-s", "0.05"], tmp_path)
    _wait_for(proc, "step 10/40")
    children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    assert len(children) == 1
    proc.kill()
    proc.wait()
    rest = proc.stdout.read() if proc.stdout else ""
    assert ended(children[0], 30), f"the script {children[0]} trained on after its launcher was killed"
    assert "its launcher (goodbench run-own) is gone: the script ends here, unstamped" in rest, rest
    assert "it kept no checkpoints (no checkpoint_dir): run the same command again to start over" in rest
    assert not (tmp_path / "own.json").exists()


def test_torchrun_started_by_goodbench_run_ends_with_its_launcher(tmp_path):
    """The ``preexec_fn`` goodbench run and run-own give torchrun: its launcher killed with SIGKILL, the
    kernel sends it SIGTERM (``PR_SET_PDEATHSIG``), which stops its ranks; it trained on, orphaned."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    starter = ("import os, subprocess, sys, time\n"
               "from suite.run import stops\n"
               "child = subprocess.Popen(['sleep', '60'], preexec_fn=stops.ending_with(os.getpid()))\n"
               "print(child.pid, flush=True)\n"
               "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", starter], env=_env(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    proc.kill()
    proc.wait()
    assert ended(child, 10), "the child outlived its launcher"
    assert ending_with(os.getpid()) is not None


def test_the_single_process_watch_ends_a_script_whose_launcher_is_gone():
    """The pipe's reader gone (the launcher killed) while the script is blocked where it writes no
    edge: the watch ends it, with one line (the same command starts over: it named no checkpoints)."""
    script = ("import os, time\n"
              "r, w = os.pipe()\n"
              "os.environ['GOODBENCH_EDGE_FD'] = str(w)\n"
              "from suite.api.edges import EdgePipe\n"
              "pipe = EdgePipe.for_process()\n"
              "assert pipe.open\n"
              "os.close(r)\n"
              "time.sleep(30)\n"
              "print('trained on')\n")
    done = subprocess.run([sys.executable, "-c", script], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "trained on" not in done.stdout, done.stdout + done.stderr
    assert done.stderr.strip() == ("goodbench: its launcher (goodbench run-own) is gone: the script ends here, "
                                   "unstamped, as if killed with it; it kept no checkpoints (no checkpoint_dir): run "
                                   "the same command again to start over")


class _Reader:
    def __init__(self, runs):
        self.runs = runs


def _run_of(steps: int, step_s: float) -> RunEdges:
    run = RunEdges("r1", 1, first_step=1)
    run.begins = array("d", [i * step_s for i in range(steps)])
    run.ends = array("d", [(i + 0.9) * step_s for i in range(steps)])
    run.stamps = [0.0, run.ends[-1]]
    return run


def test_a_script_silent_for_long_is_said_once_per_silence():
    said: list[str] = []
    watch = own_stall.StallWatch(said.append, 4242)
    run = _run_of(30, 1.0)  # 0.9 s steps, the last ended at 29.8 s
    watch.check([_Reader([run])], 29.8 + 59.0)  # under a minute: not yet
    assert said == []
    watch.check([_Reader([run])], 29.8 + 61.0)
    watch.check([_Reader([run])], 29.8 + 120.0)  # said once for one silence
    assert said == ["goodbench run-own: no step or evaluation edge from the script for 61 s (since step 30 of seed "
                    "1 ended): if it hangs, `kill -TERM 4242` (or Ctrl-C) stops it and keeps the runs so far"]
    run.stamps[-1] = 200.0  # an edge came: a new silence is said again
    watch.check([_Reader([run])], 200.0 + 61.0)
    assert len(said) == 2


def test_slow_steps_stretch_the_silence_said():
    said: list[str] = []
    watch = own_stall.StallWatch(said.append, 1)
    run = _run_of(10, 20.0)  # 18 s steps: ten of them are 180 s
    watch.check([_Reader([run])], run.stamps[-1] + 120.0)
    assert said == []
    watch.check([_Reader([run])], run.stamps[-1] + 181.0)
    assert len(said) == 1
    watch.check([_Reader([])], 1000.0)  # no edge yet (loading data, measuring the ceiling): nothing said
    assert len(said) == 1


def test_a_benchmark_that_cannot_start_leaves_sigterm_as_it_was(tmp_path):
    """A Benchmark refused at its start (its out= exists) puts SIGTERM's handler back at once."""
    import goodbench
    from suite.record.errors import GoodbenchError

    (tmp_path / "taken.json").write_text("{}")
    bench = goodbench.Benchmark("refused", samples_per_step=1, max_steps=1, device="cpu", sign=False,
                                out=tmp_path / "taken.json")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(GoodbenchError, match="exists"), bench:
        pass
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_launcher_sleeps_on_the_scripts_end_and_still_watches_for_a_stall():
    """Review of the stall watch, M7: Popen.wait(timeout) polls 20 times a second for the whole run
    on a machine whose load goodbench flags; on Linux the launcher sleeps on the child's pidfd
    between its checks, and returns the child's status as soon as it ends."""
    import time

    from suite.run import own_launch

    child = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(0.6); sys.exit(3)"])
    assert own_launch._exit_handle(child) is not None  # Linux: a pidfd
    checks = []
    started = time.monotonic()
    with Stops() as stops:
        status = own_launch._wait(child, stops, [], time.monotonic(), checks.append, poll_s=0.2)
    assert status == 3 and time.monotonic() - started < 5


def test_a_ctrl_c_while_the_launcher_adds_the_second_clock_is_noted_not_raised():
    """Review of run-own's stops, M4: a Ctrl-C after the script ended, while the launcher reads its
    last edges and seals its file, raised there and left the file one clock and unsigned; it is
    noted (exit 130) and the handler put back when the launcher is done."""
    before = signal.getsignal(signal.SIGINT)
    with Stops() as stops:
        stops.hold_interrupts()
        os.kill(os.getpid(), signal.SIGINT)  # delivered at once to this, the main thread
        assert stops.status == 130 and stops.words == "interrupted"
    assert signal.getsignal(signal.SIGINT) is before
    unopened = Stops()
    unopened.hold_interrupts()  # outside its context it installs nothing
    assert signal.getsignal(signal.SIGINT) is before


FAKE_TORCHRUN = """
import os, pathlib, signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
pathlib.Path(sys.argv[1]).write_text("ready")
while not got:
    time.sleep(0.02)
pathlib.Path(sys.argv[2]).write_text(pathlib.Path(os.environ["GOODBENCH_STOP_NOTE"]).read_text())
sys.exit(1)
"""


def test_goodbench_runs_launcher_passes_sigterm_on_as_sigint_noted_as_sigterm(tmp_path, monkeypatch):
    """``goodbench run --nproc-per-node``'s launcher shares run-own's :class:`Stops`, passing SIGTERM on
    its own way: the note says SIGTERM, torchrun (here a stand-in) gets SIGINT, the launcher exits
    143 whatever torchrun's status, and SIGTERM's handler is put back."""
    import threading

    ready, noted = tmp_path / "ready", tmp_path / "noted"
    monkeypatch.setattr(launch, "torchrun_command",
                        lambda *a, **k: [sys.executable, "-c", FAKE_TORCHRUN, str(ready), str(noted)])

    def sigterm_once_ready() -> None:
        until(ready.exists, 60, 0.02)
        os.kill(os.getpid(), signal.SIGTERM)  # handled by the launcher's Stops, in the main thread

    before = signal.getsignal(signal.SIGTERM)
    sender = threading.Thread(target=sigterm_once_ready)
    sender.start()
    status = launch.launch(["run", "-w", "gpt2-124m"], str(tmp_path / "out.json"), 2)
    sender.join()
    assert status == 143 and noted.read_text() == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before
