"""A sandbox's process that outlives it (bwrap freeing a full private /tmp, reparented away from the
bwrap goodbench started) is waited for before the re-run's end is read, and left out of that
reading if still there; the sandbox's /tmp is bounded (trial 17, C)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from suite.meters import host_load
from suite.run.reproduce import own, sandbox, sandbox_tmp
from suite.run.reproduce.lingering import Lingering


def test_a_child_outliving_the_sandbox_is_waited_for_and_a_stuck_one_is_named():
    """A parent and its child, each living until the test lets it end (not for fixed times a busy
    machine could overrun): the child outlives the parent, is waited for past a short cap and
    named, then waited for until it is gone."""
    orphan_stdin, orphan_ends = os.pipe()  # the child reads until the test closes orphan_ends
    parent_stdin, parent_ends = os.pipe()  # the parent waits for one byte
    script = ("import os, subprocess\n"
              f"subprocess.Popen(['cat'], stdin={orphan_stdin}, stdout=subprocess.DEVNULL)\n"
              "print('started', flush=True)\n"
              f"os.read({parent_stdin}, 1)")
    with subprocess.Popen([sys.executable, "-c", script], pass_fds=(orphan_stdin, parent_stdin),
                          stdout=subprocess.PIPE, text=True) as child:
        os.close(orphan_stdin)
        os.close(parent_stdin)
        try:
            assert child.stdout is not None and child.stdout.readline() == "started\n"
            lingering = Lingering()
            lingering.started(child.pid)
            os.write(parent_ends, b"x")
            child.wait()
            assert len(lingering.alive()) == 1  # the orphaned child, its parent gone
            assert lingering.wait(cap_s=0.05) == lingering.alive() != []  # past the cap: still there, named
        finally:
            os.close(orphan_ends)
            os.close(parent_ends)
    t0 = time.monotonic()
    assert lingering.wait() == []
    assert time.monotonic() - t0 < 5


def test_the_end_reading_leaves_out_the_sandbox_processes_still_there(monkeypatch):
    # every busy process listed, not the 5 busiest: on a loaded machine (a parallel test run) five
    # others may each use more than the spinner, and its absence would then prove nothing
    monkeypatch.setattr(host_load, "LISTED", 10_000)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)  # not ours
    try:
        time.sleep(0.3)
        seen = host_load.snapshot(pids=True)
        left_out = host_load.snapshot(pids=True, roots=[busy.pid])
    finally:
        busy.kill()
        busy.wait()
    assert busy.pid in [b.get("pid") for b in seen["busy"] or []]
    assert busy.pid not in [b.get("pid") for b in left_out["busy"] or []]


def test_the_sandbox_tmp_is_bounded_where_bwrap_can(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: "bwrap")
    for bounds in (True, False):
        monkeypatch.setattr(sandbox, "_bounds_tmpfs", lambda program, b=bounds: b)
        args = sandbox.command(["python", "train.py"], writable=[tmp_path / "out"], cwd=tmp_path,
                               where=tmp_path / "checkout", env={own.OUT_VARIABLE: str(tmp_path / "out" / "r.json")},
                               tmp_bytes=3 * sandbox_tmp.FLOOR_BYTES)
        at = args.index("/tmp", args.index("--tmpfs"))
        assert (args[at - 3:at - 1] == ["--size", str(3 * sandbox_tmp.FLOOR_BYTES)]) == bounds
        assert ("--size" in args) == bounds
