"""The sandbox's private /tmp (suite/run/reproduce/sandbox_tmp.py; docs/own-code.md, "Reproducing"):
sized from the machine's available memory (at least 2 GiB) or by ``--sandbox-tmp-gib``; a bwrap that
cannot bound it is said in one line; a re-run that ran it full, or whose run says it ran out of
space, is not judged (a refusal naming the size and the option), never "differs"."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_own_code import TRAIN_SCRIPT, _git_repo

from suite.run.edge_reader import EdgeReader, clock
from suite.run.reproduce import own, sandbox, sandbox_tmp
from suite.run.reproduce.comparison import DIFFERS, REPRODUCED
from suite.run.reproduce.lingering import Lingering
from suite.run.reproduce.planning import CannotReproduce

# what `bwrap --help` says of its tmpfs before bubblewrap 0.5, and from then on
HELP_WITHOUT_SIZE = ("usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n"
                     "    --tmpfs DEST                 Mount new tmpfs on DEST\n")
HELP_WITH_SIZE = HELP_WITHOUT_SIZE + "    --size BYTES                 Set size of next argument (only for --tmpfs)\n"
ENOSPC = "OSError: [Errno 28] No space left on device: '/tmp/checkpoint-2.pt'"


def _meminfo(available: int) -> str:
    return f"MemTotal:       {2 * available // 1024} kB\nMemAvailable:   {available // 1024} kB\n"


def test_the_tmp_is_a_quarter_of_the_available_memory_at_least_the_floor_or_what_the_reviewer_asks():
    large = 12 * sandbox_tmp.FLOOR_BYTES + 12345 * 1024
    sized = sandbox_tmp.size(None, meminfo=_meminfo(large))
    assert sized.bytes == large // sandbox_tmp.SHARE // sandbox_tmp.MIB * sandbox_tmp.MIB > sandbox_tmp.FLOOR_BYTES
    assert "a quarter of this machine's available memory" in sized.line() and sandbox_tmp.OPTION in sized.line()
    assert sandbox_tmp.size(None, meminfo=_meminfo(sandbox_tmp.FLOOR_BYTES)).bytes == sandbox_tmp.FLOOR_BYTES
    assert sandbox_tmp.size(None, meminfo="MemTotal: 1 kB\n").bytes == sandbox_tmp.FLOOR_BYTES  # nothing available read
    asked = sandbox_tmp.size(0.5, meminfo=_meminfo(large))
    assert asked.bytes == sandbox_tmp.GIB // 2 and f"as {sandbox_tmp.OPTION} asked" in asked.line()


def test_a_bwrap_without_size_is_said_to_leave_the_tmp_unbounded(tmp_path, monkeypatch):
    """L5: a bubblewrap whose --help names no --size runs the sandbox with tmpfs's default /tmp: the
    reproduction says so in one line, and the command asks for no size."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    for text, bounded in ((HELP_WITHOUT_SIZE, False), (HELP_WITH_SIZE, True)):
        monkeypatch.setattr(sandbox, "_help", lambda program, t=text: t)
        assert sandbox.bounds_tmp() == bounded
        line = sandbox_tmp.size(None, sandbox.bounds_tmp()).line()
        assert ("unbounded" in line and line.startswith("note: ")) == (not bounded) and "\n" not in line
        args = sandbox.command(["python", "train.py"], writable=[tmp_path / "out"], cwd=tmp_path,
                               where=tmp_path / "checkout", env={}, tmp_bytes=sandbox_tmp.FLOOR_BYTES)
        assert ("--size" in args) == bounded
    watch = sandbox_tmp.Watch(sandbox_tmp.size(None, False))
    watch.started([1])
    assert watch._thread is None and watch.stop() == sandbox_tmp.Use(0, False)  # nothing to tell it by


def test_the_watch_counts_only_a_file_system_of_the_bounded_size(tmp_path):
    """Before bwrap has built the sandbox's root, ``/proc/PID/root/tmp`` is another file system (here
    this machine's): it is not read as the sandbox's /tmp, however full."""
    (tmp_path / "7" / "root" / "tmp").mkdir(parents=True)
    watch = sandbox_tmp.Watch(sandbox_tmp.FLOOR, proc=tmp_path)
    watch.pids = [7, 8]  # 8: gone
    watch.read()
    assert watch.stop() == sandbox_tmp.Use(0, False)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_the_watch_reads_the_sandbox_tmp_from_outside_full_or_not(tmp_path):
    """A real sandbox with a small bounded /tmp: filled to the brim by its script, goodbench reads it
    full through the sandbox's first process; a sandbox that writes a little is read not full."""
    tmp, out = sandbox_tmp.size(1 / 64), tmp_path / "out"
    out.mkdir()
    for fill, full in ((True, True), (False, False)):
        script = ("import time\ntry:\n    fh = open('/tmp/fill', 'wb')\n    while True: fh.write(b'x' * 65536); "
                  "fh.flush()\nexcept OSError:\n    pass\ntime.sleep(1.5)\n") if fill else \
            "import time\nopen('/tmp/little', 'wb').write(b'x' * 65536)\ntime.sleep(1.5)\n"
        argv = sandbox.command([sys.executable, "-c", script], writable=[out], cwd=out,
                               where=tmp_path / "checkout", env={}, tmp_bytes=tmp.bytes)
        child = subprocess.Popen(argv, env=sandbox.BWRAP_ENVIRONMENT)
        lingering, watch = Lingering(), sandbox_tmp.Watch(tmp, poll_s=0.05)
        lingering.started(child.pid)
        watch.started([p for p in lingering.pids if p != child.pid])
        assert child.wait(timeout=60) == 0
        use = watch.stop()
        assert use.full == full and (use.peak > tmp.bytes * (1 - sandbox_tmp.FULL_SHARE)) == full and use.peak > 0


def _comparisons(*verdicts: str) -> list:
    return [SimpleNamespace(verdict=v) for v in verdicts]


def test_a_re_run_short_of_room_that_did_not_reproduce_is_not_judged(tmp_path):
    """Full /tmp (read from outside) or a run's own error saying ENOSPC: a re-run that differs is
    refused, naming the size and the option, and kept; one that reproduced is judged all the same,
    and one that differs with room to spare still differs."""
    raw, out = b'{"runs": []}', tmp_path / "repro.json"
    full, roomy = sandbox_tmp.Use(sandbox_tmp.FLOOR_BYTES, True), sandbox_tmp.Use(1, False)
    failed = {"runs": [{"status": "failed", "error": ENOSPC}]}
    own._short_of_room(raw, {"runs": []}, _comparisons(REPRODUCED), sandbox_tmp.FLOOR, [full], out)
    own._short_of_room(raw, {"runs": []}, _comparisons(DIFFERS + "curve"), sandbox_tmp.FLOOR, [roomy], out)
    for doc, uses, said in (({"runs": []}, [roomy, full], "ran the sandbox's /tmp full"),
                            (failed, [roomy], r"ran out of space \(its run 0's error reads")):
        with pytest.raises(CannotReproduce, match=rf"{said}.*not judged here.*{sandbox_tmp.OPTION} N.*kept as") as e:
            own._short_of_room(raw, doc, _comparisons(REPRODUCED, DIFFERS + "curve"), sandbox_tmp.FLOOR, uses, out)
        assert sandbox_tmp.FLOOR.gib() in str(e.value) and "$GOODBENCH_CHECKPOINT_DIR" in str(e.value)
    assert sandbox_tmp.no_space({"runs": [{"status": "complete", "error": ENOSPC}]}) is None


def test_a_re_run_that_exits_after_running_out_of_space_names_the_option(tmp_path, monkeypatch):
    """The recorded command exits 1, its run's error saying ENOSPC: the refusal says why and how to
    give the sandbox more, the re-run's file kept."""
    import os

    def fake_run(argv, env, ends, timeout, started=None):
        env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
        os.close(ends[1])
        Path(env[own.OUT_VARIABLE]).write_text(json.dumps({"runs": [{"status": "failed", "error": ENOSPC}]}))
        reader = EdgeReader(ends[0], clock())
        reader.finish(1.0)
        return 1, 1, reader

    monkeypatch.setattr(own, "copy_code", lambda settings, where, dest: dest.mkdir())
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: (["python", "train.py"], where))
    monkeypatch.setattr(own.sandbox, "check", lambda writable, where: None)
    monkeypatch.setattr(own.stamping, "run", fake_run)
    with pytest.raises(CannotReproduce, match=rf"exited 1: the re-run ran out of space .*{sandbox_tmp.OPTION} N.*"
                                              "what it wrote is kept as"):
        own._rerun({}, tmp_path, None, tmp_path / "repro.json", own.BARE)


# the reviewer's re-run (HOME is the sandbox's) fills its /tmp, then trains with another learning
# rate: its curve differs from the original's, and would read "differs" with room to spare
FILLS_THEN_DIFFERS = '''
import os
LR = 0.01
if os.environ.get("HOME") == "/tmp/home":
    LR = 0.02
    try:
        with open("/tmp/checkpoint.pt", "wb") as fh:
            while True:
                fh.write(b"x" * (1 << 20)); fh.flush()
    except OSError:
        pass
''' + TRAIN_SCRIPT.replace("lr=0.01", "lr=LR")


@pytest.mark.slow  # trains once and re-runs in the sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_re_run_that_fills_the_sandbox_tmp_is_not_judged_end_to_end(tmp_path, monkeypatch, capfd):
    from suite.cli import main

    (tmp_path / "train.py").write_text(FILLS_THEN_DIFFERS)
    _git_repo(tmp_path)
    done = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.chdir(tmp_path)
    capfd.readouterr()
    t0 = time.monotonic()
    status = main(["reproduce", "orig.json", "-o", "repro.json", "--run-recorded-command", "--no-sign",
                   "--sandbox-tmp-gib", str(1 / 64)])
    said = capfd.readouterr()
    assert status == 1 and not (tmp_path / "repro.json").exists(), said  # a refusal: no reproduction written
    assert "the sandbox's /tmp, also its $HOME (caches): 0.0156 GiB, as --sandbox-tmp-gib asked" in said.err
    assert "the re-run ran the sandbox's /tmp full (0.0156 GiB" in said.err and "not judged here" in said.err
    assert list(tmp_path.glob("repro.rerun*.json")) and time.monotonic() - t0 < 300


def test_the_option_is_refused_for_a_file_of_goodbenchs_workloads(tmp_path, monkeypatch, capsys):
    """A reference workload's runs are trained again without a sandbox: its size is refused, nothing runs."""
    from suite.cli import main

    monkeypatch.chdir(tmp_path)
    reference = Path(__file__).parent / "fixtures" / "reference-smoke.json"
    with pytest.raises(SystemExit) as exit_status:
        main(["reproduce", str(reference), "--sandbox-tmp-gib", "4", "-o", "r.json"])
    assert exit_status.value.code == 2 and sandbox_tmp.OPTION in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_a_sigterm_during_the_scratch_folders_removal_waits_until_it_is_gone(tmp_path, monkeypatch):
    """Empty goodbench-rerun-* folders were found in /tmp, left by earlier stops: a second SIGTERM
    that came while a re-run's scratch folder was being removed raised there and left it. The
    removal now holds it until the folder is gone, then stops as the SIGTERM asks."""
    import os
    import signal

    from suite.record import tempfiles
    from suite.run import signals

    scratch = tmp_path / "goodbench-rerun-x"
    (scratch / "code" / "deep").mkdir(parents=True)
    (scratch / "code" / "deep" / "f").write_text("x")
    real = tempfiles.remove_tree

    def signalled_first(path: Path):
        os.kill(os.getpid(), signal.SIGTERM)  # arrives as the removal begins
        return real(path)

    monkeypatch.setattr(tempfiles, "remove_tree", signalled_first)
    previous = signals.stop_on_sigterm()
    try:
        with pytest.raises(signals.Terminated):
            own.remove_scratch(scratch)
    finally:
        signals.restore(previous)
        signals.caught()
    assert not scratch.exists()
