"""The host's load at a run's start and end (suite/meters/host_load.py): read from /proc, kept in
the run's record, and a run measured under load marked on the site and by compare."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waiting import until

from suite.compare import engine as compare
from suite.compare.report import _identity, load_lines
from suite.figures import load
from suite.leaderboard import rows as leaderboard
from suite.meters import host_load
from suite.site import columns, run_page

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int, name: str, group: int, cpu_ticks: int, *, parent: int = 1, reaped_ticks: int = 0,
          began_ticks: int = 0) -> str:
    """A /proc/PID/stat line: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
    majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime …"""
    return (f"{pid} ({name}) R {parent} {group} {group} 0 -1 0 0 0 0 0 {cpu_ticks} 0 {reaped_ticks} 0 20 0 1 0 "
            f"{began_ticks} 0 0\n")


def _write_proc(proc, uptime: float, processes: dict) -> None:
    """A fake /proc holding ``processes`` (pid: keyword arguments of :func:`_stat`) and nothing
    else, ``uptime`` seconds after the host's boot."""
    for old in proc.iterdir():
        if old.is_dir():
            (old / "stat").unlink()
            old.rmdir()
    (proc / "uptime").write_text(f"{uptime:.2f} 0.00\n")
    for pid, fields in processes.items():
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "stat").write_text(_stat(pid, **fields))


@pytest.fixture
def fake_proc(tmp_path):
    """A /proc of three processes (one of this process's group and under it, whose use is not
    counted) whose CPU times move on while the snapshot sleeps, as the kernel's would."""
    own = os.getpgrp()
    procs = {101: ("stress (x) ng", own + 1, [0, int(0.9 * TICK)]),  # a name with ") " in it
             102: ("idle\x1b[31m", own + 2, [5, 5]),
             103: ("our-rank", own, [0, 5 * TICK])}
    for pid, (name, group, ticks) in procs.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, group, ticks[0], parent=os.getpid()))
    (tmp_path / "self").mkdir()  # not a process

    def sleep(seconds):
        for pid, (name, group, ticks) in procs.items():
            (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, group, ticks[1], parent=os.getpid()))

    clock = iter([10.0, 11.0])  # one second passes over the window
    return {"proc": tmp_path, "sleep": sleep, "clock": lambda: next(clock)}


def test_a_snapshot_counts_the_cpu_of_processes_outside_the_runs_group(fake_proc):
    snap = host_load.snapshot(**fake_proc)
    assert snap["cores"] == host_load.run_cores() and snap["host_cores"] == (os.cpu_count() or 1)
    assert snap["other_cores"] == 0.9  # the rank in the run's own group is not another process
    assert snap["busy"] == [{"name": "stress (x) ng", "cores": 0.9}]  # idle: under a tenth of a core
    assert load.under_load({"start": snap, "end": None}) == \
        f"other processes used 0.9 of {snap['cores']} cores at its start (stress (x) ng)"


def test_what_is_said_now_names_each_busy_processs_pid_and_what_a_file_keeps_does_not(fake_proc):
    """``check`` and ``--wait-quiet`` name the pids, so the user can tell which "python" is busy; a
    run's recorded snapshot keeps no pid (the default)."""
    from suite.run import check

    said = host_load.snapshot(**fake_proc, pids=True)
    assert said["busy"] == [{"name": "stress (x) ng", "cores": 0.9, "pid": 101}]
    assert load.other_load(said) == f"0.9 of {said['cores']} cores (stress (x) ng pid 101)"
    line = check.busy_check({**said, "other_cores": 1.5, "busy": [{**said["busy"][0], "cores": 1.5}]})
    assert line.verdict == "fail" and "(stress (x) ng pid 101)" in line.detail
    assert "pid" not in str(host_load.snapshot(sample_s=0))  # the default: what a run records


def test_the_other_ranks_of_a_torchrun_job_are_not_other_processes(tmp_path, monkeypatch):
    """torchrun starts each rank in a process group of its own: the job's agent, its other ranks
    and their workers descend from this rank's parent and are left out; a stranger is not."""
    own = os.getpgrp()
    procs = {300: ("torchrun", 1, own + 1), 301: ("python", 300, own + 2), 302: ("pt_data_worker", 301, own + 2),
             303: ("make", 1, own + 3)}
    for pid, (name, parent, group) in procs.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, group, TICK, parent=parent))
    assert set(host_load._cpu_seconds(tmp_path, family=300)) == {303}
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert set(host_load._cpu_seconds(tmp_path)) == {300, 301, 302, 303}  # no torchrun: nothing is the job's
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "job")
    monkeypatch.setattr(host_load.os, "getppid", lambda: 300)
    assert set(host_load._cpu_seconds(tmp_path)) == {303}


def test_a_scripts_other_jobs_in_the_runs_process_group_are_other_processes(tmp_path):
    """A shell without job control (a script, nohup, CI) starts its background jobs in its own
    process group, the run's too: only the processes above the run and under it are its own."""
    own, me = os.getpgrp(), os.getpid()
    _write_proc(tmp_path, 100, {
        700: {"name": "bash", "group": own, "parent": 1, "cpu_ticks": TICK},  # the script
        me: {"name": "goodbench", "group": own, "parent": 700, "cpu_ticks": TICK},
        701: {"name": "pt_data_worker", "group": own, "parent": me, "cpu_ticks": TICK},
        702: {"name": "spin", "group": own, "parent": 700, "cpu_ticks": TICK},  # `spin &` in the script
        703: {"name": "spin-child", "group": own, "parent": 702, "cpu_ticks": TICK}})
    assert set(host_load._cpu_seconds(tmp_path, family=0)) == {702, 703}


def test_a_busy_sibling_started_by_the_same_shell_is_load_on_the_run():
    """On this machine's /proc: ``sh -c 'burn & measure'`` (no job control: one process group)."""
    burn = "import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: pass"
    measure = ("import json\nfrom suite.meters import host_load\n"
               "print(json.dumps(host_load.snapshot(sample_s=1.0)))")
    script = f"{sys.executable} -c '{burn}' & sleep 0.5; {sys.executable} -c '{measure}'; wait"
    found = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    snap = json.loads(found.stdout.splitlines()[-1])
    assert snap["other_cores"] >= 0.5, snap  # the burner's core, or its share of the run's cores


def test_a_process_name_is_kept_as_printable_ascii_of_at_most_15_characters():
    assert host_load._printable("idle\x1b[31m") == "idle?[31m"
    assert host_load._printable("ü" * 20) == "?" * 15
    assert host_load._printable("") == "?"


def test_a_watch_adds_up_what_other_processes_used_over_the_run_between_its_readings(tmp_path):
    """Walk 5: a run four times slower than minutes later recorded no load in its start and end
    snapshots. A :class:`host_load.Watch` counts each process's CPU between readings: one busy
    throughout, one begun between two readings (all of its time), a pid reused by another program
    (the new one's time only, told by its start time); never this run's own group, nor a process
    that ended before the watch."""
    own = os.getpgrp()
    readings = [  # the host's uptime, and pid: (name, group, CPU ticks, start tick) at each reading
        (100, {201: ("stress", own + 1, 0, 10), 202: ("cc1", own + 1, 5 * TICK, 50), 203: ("our-rank", own, 0, 60)}),
        (102, {201: ("stress", own + 1, 2 * TICK, 10), 204: ("make", own + 2, TICK, 101 * TICK),
               203: ("our-rank", own, 4 * TICK, 60)}),
        (104, {201: ("stress", own + 1, 3 * TICK, 10), 202: ("python", own + 1, TICK // 2, 103 * TICK),
               203: ("our-rank", own, 8 * TICK, 60)}),
    ]
    clock = iter([0.0, 2.0, 4.0])

    def write(reading):
        uptime, processes = reading
        _write_proc(tmp_path, uptime, {pid: {"name": name, "group": group, "cpu_ticks": ticks, "began_ticks": began,
                                             "parent": os.getpid()}
                                       for pid, (name, group, ticks, began) in processes.items()})

    write(readings[0])
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    write(readings[1])
    watch.read()
    write(readings[2])
    during = watch.stop()
    assert watch.stop() is during  # stopped once: the record stays
    # stress 3 s, make 1 s (new), the reused pid's python 0.5 s; cc1's 5 s before the watch and our rank: none
    assert during == {"cores": host_load.run_cores(), "host_cores": os.cpu_count() or 1, "other_cores": round(4.5 / 4, 2), "seconds": 4.0,
                      "busy": [{"name": "stress", "cores": 0.75}, {"name": "make", "cores": 0.25},
                               {"name": "python", "cores": 0.12}]}
    # the run is flagged on it, though quiet at its start and end
    assert load.under_load({"start": _quiet(0.0), "end": _quiet(0.0), "during": during}) == \
        f"other processes used 1.12 of {during['cores']} cores on average over it (stress, make, python)"
    assert load.under_load({"start": _quiet(0.0), "end": _quiet(0.0), "during": None}) is None


def test_a_watch_reads_in_its_thread_what_a_short_process_used_between_its_start_and_stop():
    """On this machine's /proc: a process that begins and ends while the watch runs, seen by
    neither its first reading nor its last (nor reaped by another process: this one waits for it),
    is counted by the readings in between, most of it under the name it gave itself. What it used
    before the first reading that read that name (its fork and the Python's start, 0.03–0.04 s,
    longer on a busy machine) is counted under the name it had then: the whole is counted by its pid
    (counted by its name alone, the test read 0.36–0.37 s of a 0.4-s burn on a busy machine)."""
    import subprocess
    import sys
    import time

    name = f"gb-burn-{os.getpid() % 100000}"
    burner = ("import ctypes, sys, time\n"
              f"ctypes.CDLL(None).prctl(15, {name.encode()!r}, 0, 0, 0)\n"  # PR_SET_NAME: its short command name
              "while time.process_time() < 0.4: pass\n"
              "print('burnt', flush=True)\n"
              "sys.stdin.read()")  # alive until the test has seen a reading of its burn, however busy the machine

    def counted(named: str | None = None) -> float:
        return sum(used for (pid, called), used in list(watch.used.items())
                   if pid == proc.pid and named in (None, called))

    watch = host_load.Watch(interval_s=0.05).start()
    with subprocess.Popen([sys.executable, "-c", burner], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, start_new_session=True) as proc:  # a group of its own
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == "burnt\n"
        until(lambda: counted() >= 0.38, 10)
        proc.stdin.close()  # it ends; this process waits for it
    time.sleep(0.1)
    during = watch.stop()
    assert during is not None
    assert counted() >= 0.38  # its 0.4 s, read in 10-ms ticks
    assert counted(name) >= 0.2  # the burn, after it named itself


def test_a_failed_reading_is_skipped_and_counts_no_process_twice(tmp_path):
    """The review's case: one reading of /proc failing (too many open files, say) made the next
    count a daemon's ten hours since boot as used over 15 s (2400 cores). The failed reading is
    skipped; a process unread at one reading but begun before it counts nothing for that span, and
    one begun since counts all of its time."""
    own = os.getpgrp()
    daemon = {"name": "daemon", "group": own + 1, "began_ticks": 5 * TICK}
    clock = iter([0.0, 10.0, 15.0])  # read at each good reading: the start, after 10 s and at the stop
    _write_proc(tmp_path, 36000, {300: {**daemon, "cpu_ticks": 36000 * TICK}})
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    away = tmp_path.with_name("away")
    tmp_path.rename(away)
    watch.read()  # /proc unreadable: skipped
    away.rename(tmp_path)
    _write_proc(tmp_path, 36010, {301: {"name": "late", "group": own + 2, "cpu_ticks": TICK,
                                        "began_ticks": 10 * TICK}})
    watch.read()  # the daemon's stat unread: it counts nothing here; "late" (begun at boot + 10 s) neither
    _write_proc(tmp_path, 36015, {300: {**daemon, "cpu_ticks": 36003 * TICK},
                                  302: {"name": "new", "group": own + 2, "cpu_ticks": 2 * TICK,
                                        "began_ticks": 36012 * TICK}})
    during = watch.stop()
    assert during is not None and during["seconds"] == 15.0
    assert during["other_cores"] == round(2 / 15, 2)  # only "new", begun since the last reading: 2 s
    assert [b["name"] for b in during["busy"]] == ["new"]


def test_a_child_read_before_its_setsid_counts_what_it_used_after_that_reading(tmp_path):
    """A process started in a session of its own is this process's child, in its group, from its
    fork to its ``setsid``: a reading landing there leaves it out as the run's own. At the next
    reading it is another process, begun before the last reading; it counts what it used since
    then (its Python's start-up, 1 s here), not nothing — the flaky miss of
    test_a_watch_reads_in_its_thread_what_a_short_process_used_between_its_start_and_stop."""
    own = os.getpgrp()
    child = {"name": "burner", "parent": os.getpid(), "began_ticks": 99 * TICK}
    clock = iter([0.0, 2.0, 4.0])
    _write_proc(tmp_path, 100, {500: {**child, "group": own, "cpu_ticks": TICK // 10}})  # forked, not yet setsid
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 102, {500: {**child, "group": 500, "cpu_ticks": TICK * 11 // 10}})
    watch.read()
    _write_proc(tmp_path, 104, {500: {**child, "group": 500, "cpu_ticks": TICK * 21 // 10}})
    during = watch.stop()
    assert during is not None and during["busy"] == [{"name": "burner", "cores": 0.5}]
    assert during["other_cores"] == 0.5  # 2 s over 4: its 0.1 s before the first reading is not counted


def test_a_child_reaped_by_a_process_that_left_the_runs_group_is_counted_once(tmp_path):
    """A wrapper (500) the run started, in its group, starts a daemon (501) in a session of its own,
    counted as another process; the wrapper then leaves the run's group (its own session) and waits
    for the daemon: the daemon's 3 s land in the wrapper's cutime, of which the 2 s counted already
    are taken off. 3 s in all, not 5."""
    own = os.getpgrp()
    wrapper = {"name": "wrapper", "parent": os.getpid(), "began_ticks": 50 * TICK}
    daemon = {"name": "daemon", "parent": 500, "group": 501, "began_ticks": 60 * TICK}
    clock = iter([0.0, 2.0, 4.0])
    _write_proc(tmp_path, 100, {500: {**wrapper, "group": own, "cpu_ticks": 0}, 501: {**daemon, "cpu_ticks": 0}})
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 102, {500: {**wrapper, "group": own, "cpu_ticks": 0}, 501: {**daemon, "cpu_ticks": 2 * TICK}})
    watch.read()
    _write_proc(tmp_path, 104, {500: {**wrapper, "group": 500, "cpu_ticks": 0, "reaped_ticks": 3 * TICK}})
    during = watch.stop()
    assert during is not None and during["other_cores"] == 0.75  # 3 s over 4
    assert during["busy"] == [{"name": "daemon", "cores": 0.5}, {"name": "wrapper", "cores": 0.25}]


def test_a_resumed_watch_adds_what_the_earlier_processes_counted_up_to_the_checkpoint(tmp_path):
    """A checkpoint keeps :meth:`Watch.counted` (read from /proc as it is saved); the process that
    resumes from it carries it on: ``during`` adds each name's CPU and the seconds watched, and
    says how many processes it adds up. A checkpoint's count that is not one is ignored."""
    own = os.getpgrp()
    stress = {"name": "stress", "group": own + 1, "began_ticks": 10 * TICK}
    clock = iter([0.0, 3.0])
    _write_proc(tmp_path, 100, {600: {**stress, "cpu_ticks": 0}})
    first = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 103, {600: {**stress, "cpu_ticks": 3 * TICK}})  # a core for 3 s
    kept = first.counted()  # what the checkpoint keeps: the process is then killed
    assert kept == {"used": {"stress": 3.0}, "seconds": 3.0, "attempts": 1}
    clock = iter([10.0, 11.0])
    _write_proc(tmp_path, 110, {600: {**stress, "cpu_ticks": 3 * TICK}})
    second = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    second.carry(json.loads(json.dumps(kept)))  # as the checkpoint gives it back
    _write_proc(tmp_path, 111, {600: {**stress, "cpu_ticks": 3 * TICK}, 601: {**stress, "name": "make",
                                                                       "cpu_ticks": TICK, "began_ticks": 11000}})
    during = second.stop()
    assert during is not None
    assert (during["seconds"], during["attempts"], during["other_cores"]) == (4.0, 2, 1.0)  # 3 + 1 s over 3 + 1 s
    assert during["busy"] == [{"name": "stress", "cores": 0.75}, {"name": "make", "cores": 0.25}]
    for broken in (None, [], {"used": {"x": -1.0}, "seconds": 1.0, "attempts": 1},
                   {"used": {}, "seconds": float("nan"), "attempts": 1}, {"used": {}, "seconds": 1.0, "attempts": 0},
                   {"used": {}, "seconds": -1.0, "attempts": 1}, {"used": {}, "seconds": 1.0, "attempts": True},
                   {"used": {"x": True}, "seconds": 1.0, "attempts": 1}):
        watch = host_load.Watch(interval_s=0, proc=tmp_path)
        watch.carry(broken)
        assert watch.counted() == {"used": {}, "seconds": 0.0, "attempts": 1}, broken


def test_a_watch_counts_the_children_a_process_reaped_between_its_readings_once(tmp_path):
    """``make -j`` runs compilers that begin and end between two readings: their CPU lands in
    make's ``cutime`` when it waits for them, and is counted under make's name; a child read at
    the last reading and reaped since adds only what it used after it."""
    own = os.getpgrp()
    make = {"name": "make", "group": own + 1, "began_ticks": 10 * TICK}
    cc1 = {"name": "cc1", "group": own + 1, "parent": 400, "began_ticks": 99 * TICK}
    clock = iter([0.0, 2.0, 4.0])
    _write_proc(tmp_path, 100, {400: {**make, "cpu_ticks": 0}, 401: {**cc1, "cpu_ticks": TICK}})
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    # cc1 401 ends with 1.5 s; two more compilers of 1 s each begin and end: make waited for all three
    _write_proc(tmp_path, 102, {400: {**make, "cpu_ticks": TICK // 10, "reaped_ticks": TICK * 35 // 10}})
    watch.read()
    _write_proc(tmp_path, 104, {400: {**make, "cpu_ticks": TICK // 10, "reaped_ticks": TICK * 35 // 10}})
    during = watch.stop()
    assert during is not None and during["busy"] == [{"name": "make", "cores": round(2.6 / 4, 2)}]
    assert during["other_cores"] == round(2.6 / 4, 2)  # 0.1 s make's own, 0.5 + 1 + 1 s its children's


def test_a_child_reaped_while_proc_is_read_is_not_counted_again_when_its_parent_holds_it(tmp_path):
    """Seen in a walk: "other processes used 16.92 of 2 cores (bash)". A child reaped between the
    reads of its parent's stat and its own is gone from that reading while the parent's ``cutime``
    does not hold it yet; when it does, a reading later, only what the child used after it was last
    read is counted."""
    own = os.getpgrp()
    shell = {"name": "bash", "group": own + 1, "began_ticks": 10 * TICK, "cpu_ticks": 0}
    child = {"name": "cc1", "group": own + 1, "parent": 500, "began_ticks": 20 * TICK}
    clock = iter([0.0, 2.0, 4.0, 6.0])
    _write_proc(tmp_path, 100, {500: shell, 501: {**child, "cpu_ticks": 20 * TICK}})  # 20 s used, counted before
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 102, {500: shell})  # reaped mid-read: gone, its parent's cutime not grown yet
    watch.read()
    _write_proc(tmp_path, 104, {500: {**shell, "reaped_ticks": 21 * TICK}})  # now it holds the child's 21 s
    watch.read()
    _write_proc(tmp_path, 106, {500: {**shell, "reaped_ticks": 23 * TICK}})  # and a later child's 2 s
    during = watch.stop()
    assert during is not None and during["busy"] == [{"name": "bash", "cores": round(3 / 6, 2)}]  # 1 s + 2 s


def test_a_child_and_its_parent_gone_together_are_taken_off_the_grandparents_growth_once(tmp_path):
    """make → sh → cc1, sh and cc1 ending between two readings: make's ``cutime`` grows by sh's
    total, which holds cc1's; what both had used when last read is taken off it (it was counted)."""
    own = os.getpgrp()
    make = {"name": "make", "group": own + 1, "began_ticks": 10 * TICK, "cpu_ticks": 0}
    sh = {"name": "sh", "group": own + 1, "parent": 600, "began_ticks": 20 * TICK, "cpu_ticks": TICK}
    cc1 = {"name": "cc1", "group": own + 1, "parent": 601, "began_ticks": 30 * TICK, "cpu_ticks": 20 * TICK}
    clock = iter([0.0, 4.0])
    _write_proc(tmp_path, 100, {600: make, 601: sh, 602: cc1})
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 104, {600: {**make, "reaped_ticks": 22 * TICK}})  # sh's 1 s, cc1's 20 s and 1 s more
    during = watch.stop()
    assert during is not None and during["busy"] == [{"name": "make", "cores": 0.25}]  # 1 s over 4 s


def test_a_child_the_kernel_reaped_owes_its_parent_nothing_after_one_more_reading(tmp_path):
    """A parent that ignores SIGCHLD has its children reaped by the kernel, never in its ``cutime``:
    what such a child had used is not taken off the parent's later children for the whole run."""
    own = os.getpgrp()
    parent = {"name": "server", "group": own + 1, "began_ticks": 10 * TICK, "cpu_ticks": 0}
    clock = iter([0.0, 2.0, 4.0, 6.0])
    _write_proc(tmp_path, 100, {700: parent, 701: {"name": "job", "group": own + 1, "parent": 700,
                                                   "began_ticks": 20 * TICK, "cpu_ticks": 5 * TICK}})
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 102, {700: parent})  # reaped by the kernel: not in the parent's cutime
    watch.read()
    _write_proc(tmp_path, 104, {700: parent})
    watch.read()
    _write_proc(tmp_path, 106, {700: {**parent, "reaped_ticks": 3 * TICK}})  # a later child it waited for: 3 s
    during = watch.stop()
    assert during is not None and during["busy"] == [{"name": "server", "cores": 0.5}]  # 3 s over 6 s


def test_goodbench_s_own_processes_above_a_run_are_not_other_processes(tmp_path, monkeypatch):
    """``goodbench run``'s supervisor (its worker leads a group of its own) and ``goodbench
    run-own``'s launcher (torchrun's ranks in groups of their own) stamp, supervise and wait: the
    run's own. A pid so named that is not above this process (another namespace's, an earlier
    job's) is another process."""
    from suite.meters import telemetry
    from suite.run import own_launch

    assert host_load.SUPERVISOR_PID == telemetry.SUPERVISOR_PID
    assert own_launch.launcher_environment() == {host_load.LAUNCHER_PID: str(os.getpid())}
    own, me = os.getpgrp(), os.getpid()
    _write_proc(tmp_path, 100, {
        900: {"name": "goodbench", "group": own + 1, "parent": 1, "cpu_ticks": TICK},  # the supervisor
        me: {"name": "worker", "group": own, "parent": 900, "cpu_ticks": TICK},
        901: {"name": "goodbench", "group": own + 2, "parent": 1, "cpu_ticks": TICK}})  # another job's
    monkeypatch.delenv(host_load.SUPERVISOR_PID, raising=False)
    monkeypatch.delenv(host_load.LAUNCHER_PID, raising=False)
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert set(host_load._cpu_seconds(tmp_path)) == {900, 901}
    monkeypatch.setenv(host_load.SUPERVISOR_PID, "900")
    monkeypatch.setenv(host_load.LAUNCHER_PID, "901")
    assert set(host_load._cpu_seconds(tmp_path)) == {901}


def test_a_watch_lists_the_busy_by_command_name_and_says_a_short_watchs_length(tmp_path):
    """Ten ``python`` workers at a twentieth of a core each are one busy name using half a core
    (listed per process, none was listed); a watch of a few milliseconds still says how long it
    watched, and its CPU ticks are averaged over a second at least, not read as cores."""
    own = os.getpgrp()

    def workers(ticks):
        return {pid: {"name": "python", "group": own + 1, "cpu_ticks": ticks} for pid in range(600, 610)}

    clock = iter([0.0, 10.0])
    _write_proc(tmp_path, 100, workers(0))
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 110, workers(TICK // 2))
    assert watch.stop()["busy"] == [{"name": "python", "cores": 0.5}]
    clock = iter([0.0, 0.004])
    _write_proc(tmp_path, 100, workers(0))
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    _write_proc(tmp_path, 100.004, workers(1))  # one tick each
    short = watch.stop()
    assert short is not None and short["seconds"] == 0.004
    assert short["other_cores"] == round(10 / TICK / host_load.SHORTEST_S, 2)


def test_without_proc_the_processes_are_not_measured(tmp_path):
    snap = host_load.snapshot(sample_s=0, proc=tmp_path / "absent")
    assert snap["other_cores"] is None and snap["busy"] is None
    assert host_load.Watch(proc=tmp_path / "absent").start().stop() is None
    _write_proc(tmp_path, 100, {})
    watch = host_load.Watch(interval_s=0, proc=tmp_path).start()
    tmp_path.rename(tmp_path.with_name("gone"))  # readable at the start only: nothing measured over the run
    assert watch.stop() is None
    assert load.under_load({"start": snap, "end": snap}) is None


def _quiet(other=0.1):
    return {"load_1m": 0.2, "cores": 2, "other_cores": other, "busy": []}


@pytest.mark.parametrize(("start", "end", "under"), [
    (0.1, 0.49, False),  # under half a core: quiet
    (0.5, 0.0, True),    # at the start
    (0.0, 1.7, True),    # at the end
    (None, None, False),  # not measured: never called loaded
])
def test_under_load_is_half_a_core_of_other_processes_at_the_start_or_the_end(start, end, under):
    record = {"start": _quiet(start), "end": _quiet(end), "gpu_other_processes_end": None}
    assert (load.under_load(record) is not None) is under


def test_a_file_without_the_record_is_not_called_loaded():
    assert load.under_load(None) is None
    assert load.runs_under_load([{"seed": 1}, "not a run"]) is None


def _doc_with_loads(*others):
    """A synthetic document whose runs' host records say these other-process loads at start."""
    import numpy as np
    from factories import synthetic_document

    doc = synthetic_document("loaded-box", rng=np.random.default_rng(3))
    first = doc["runs"][0]
    runs = [r for r in doc["runs"] if (r["workload"]["id"], r["scale"]) == (first["workload"]["id"], first["scale"])]
    for run, other in zip(runs, others):
        run["host_load"] = {"start": _quiet(other), "end": _quiet(), "gpu_other_processes_end": 0}
    return doc, runs


def test_a_run_measured_under_load_is_marked_on_its_row_its_run_page_and_in_compare():
    doc, runs = _doc_with_loads(1.2, 0.0)
    line = load.runs_under_load(runs)
    assert line is not None and line.startswith(f"1 of {len(runs)} runs measured under load (self-reported)")
    # the leaderboard's entry and its system cell
    entry = next(e for e in leaderboard.rows("f.json", doc) if e["workload"] == runs[0]["workload"]["id"]
                 and e["scale"] == runs[0]["scale"])
    assert entry["under_load"] == line
    said = columns.cell("system", entry, "", None)["caveats"]  # a badge, red as on the run page, its sentence whole
    assert {"text": columns.UNDER_LOAD, "badges": [{"words": "under load", "tone": "bad"}]} in said
    assert columns.UNDER_LOAD not in [c["text"] for c in columns.cell("system", {**entry, "under_load": None}, "", None)["caveats"]]
    # the run page of the loaded run, and of the quiet one
    loaded, quiet = run_page.host_load_context(runs[0]), run_page.host_load_context(runs[1])
    assert loaded["under"] == "other processes used 1.2 of 2 cores at its start"
    assert "at its start: load average 0.2 on 2 cores, other processes using 1.2 cores" in loaded["text"]
    assert "0 other compute processes on the GPU at its end" in loaded["text"]
    assert loaded["loads"] == "load average 0.2 at its start, 0.2 at its end"
    assert quiet["under"] is None
    assert quiet["text"].startswith("load at its start") and quiet["recorded"]  # the page reads "host load at its start: …"
    unrecorded = run_page.host_load_context({"seed": 1})  # "host load not recorded (…)", not "host not recorded"
    assert unrecorded["text"].startswith("load not recorded") and not unrecorded["recorded"]
    # compare's line for the file
    assert compare.describe(doc)["under_load"] == load.runs_under_load(doc["runs"])
    assert "MEASURED UNDER LOAD: 1 of" in _identity(doc)
    # a file without load records reads neither as loaded nor as quiet
    bare = {**doc, "runs": [{k: v for k, v in r.items() if k != "host_load"} for r in doc["runs"]]}
    assert "host load not recorded" in _identity(bare) and "host load not recorded" not in _identity(doc)
    # and below the table, one line: the verdicts do not weigh the load, so it says what they may mean
    from types import SimpleNamespace

    assert load_lines(bare, [SimpleNamespace(doc=bare)]) == []
    said = load_lines(bare, [SimpleNamespace(doc=bare), SimpleNamespace(doc=doc)])
    assert len(said) == 1 and said[0].startswith("NEW 2: MEASURED UNDER LOAD") and "goodbench check" in said[0]
    assert load_lines(doc, [SimpleNamespace(doc=doc)])[0].startswith("BASE, NEW: MEASURED UNDER LOAD")


def test_a_row_without_a_load_record_says_so_and_never_reads_as_quiet():
    doc, runs = _doc_with_loads(*[0.0] * len(_doc_with_loads()[1]))  # a record on every run of the entry
    entry = next(e for e in leaderboard.rows("f.json", doc) if e["workload"] == runs[0]["workload"]["id"]
                 and e["scale"] == runs[0]["scale"])
    assert entry["load_recorded"] and columns.LOAD_NOT_RECORDED not in _caveat_texts(entry)
    for run in doc["runs"]:
        run.pop("host_load", None)  # a file written before goodbench recorded the load
    entry = next(e for e in leaderboard.rows("f.json", doc) if e["workload"] == runs[0]["workload"]["id"]
                 and e["scale"] == runs[0]["scale"])
    assert entry["load_recorded"] is False and entry["under_load"] is None
    assert columns.LOAD_NOT_RECORDED in _caveat_texts(entry)
    [badge] = [c["badges"] for c in columns.cell("system", entry, "", None)["caveats"]
               if c["text"] == columns.LOAD_NOT_RECORDED]
    assert badge == [{"words": "load not recorded", "tone": "warn"}]


def _caveat_texts(entry: dict) -> list[str]:
    """The whole sentences of the badges under the entry's system."""
    return [c["text"] for c in columns.cell("system", entry, "", None)["caveats"]]


def test_a_run_started_on_a_busy_machine_is_warned_at_once_and_a_quiet_one_is_not(monkeypatch, capsys):
    """`goodbench run` and the library (``Benchmark.start``) say the same warning at a run's start
    (suite.run.progress.warn_if_busy), before anything is measured."""
    from suite.api import benchmark
    from suite.run import command, progress

    assert command.warn_if_busy is progress.warn_if_busy is benchmark.warn_if_busy  # one warning, both drivers
    busy = {"cores": 2, "other_cores": 1.5, "busy": [{"name": "make"}]}
    monkeypatch.setattr(host_load, "snapshot", lambda: busy)
    progress.warn_if_busy()
    assert capsys.readouterr().err == ("warning: other processes used 1.5 of 2 cores now (make): this run is flagged "
                                       "\"measured under load\" and left out of the site's comparisons if they use half a core or "
                                       "more at its start or its end, or on average over it (goodbench check says so "
                                       "before a run)\n")
    command.warn_at_start(waited=False)  # goodbench run names what would have waited (a new user's review)
    assert capsys.readouterr().err.endswith("(goodbench check says so before a run); goodbench run --wait-quiet 600 "
                                            "waits up to ten minutes for them to stop before it measures\n")
    command.warn_at_start(waited=True)  # it waited, and they went on
    assert capsys.readouterr().err.endswith("(goodbench check says so before a run)\n")
    monkeypatch.setattr(host_load, "snapshot", lambda: {**busy, "other_cores": 0.1})
    progress.warn_if_busy()
    command.warn_at_start(waited=False)
    assert capsys.readouterr().err == ""


def test_a_reproduction_started_on_a_busy_machine_is_warned_that_its_throughput_may_differ_for_it(monkeypatch,
                                                                                                capsys):
    """`goodbench reproduce` holds a throughput measured again to the recorded one, load or not:
    it says at its start, as `run` does, that the machine is busy and what that does to its verdicts."""
    from suite.commands import reproduce
    from suite.run import progress

    assert reproduce.warn_if_busy is progress.warn_if_busy
    monkeypatch.setattr(host_load, "snapshot", lambda: {"cores": 2, "other_cores": 1.26, "busy": [{"name": "python"}]})
    progress.warn_if_busy(reproduce.UNDER_LOAD)
    err = capsys.readouterr().err
    assert err.startswith("warning: other processes used 1.26 of 2 cores now (python): a throughput measured again")
    assert "inconclusive, not \"differs\"" in err and "flagged" not in err


def test_a_file_of_rules_v8_or_later_without_its_load_record_is_refused():
    """Trial 5: a v9 file measured under load, its host_load deleted, read "host load not recorded
    (dated before goodbench recorded it)"; every goodbench writing v8 or later records it."""
    import copy
    import json
    from pathlib import Path

    from suite.validate import check_document

    honest = json.loads((Path(__file__).parent / "fixtures" / "reference-smoke.json").read_text())
    assert honest["rules_version"] >= 8 and check_document(honest) == []
    deleted = copy.deepcopy(honest)
    del deleted["runs"][1]["host_load"], deleted["runs"][2]["host_load"]  # (one without its end: the schema's)
    problems = check_document(deleted)
    assert [(p.code, p.field) for p in problems] == [("load-not-recorded", "runs[1].host_load"),
                                                      ("load-not-recorded", "runs[2].host_load")]
    renamed = copy.deepcopy(deleted)
    renamed["rules_version"] = 7  # the sixth trial's L2: naming older rules took the rule away
    assert [p.code for p in check_document(renamed)].count("load-not-recorded") == 2
    older = copy.deepcopy(renamed)
    older["created_at"] = "2026-11-27T12:00:00Z"  # a file dated before v8 may lack it (its rows say "not recorded")
    del older["settings"]["matmul_ceiling"]["fp32"]["at_end"]  # a record only v8 on writes (it would hold it to v8)
    assert "load-not-recorded" not in {p.code for p in check_document(older)}


def test_a_load_watch_adding_up_more_processes_than_the_event_log_holds_is_refused():
    """``host_load.during.attempts`` counts the processes whose watches it adds up: never more than
    the event log's (a run of one process claiming 2, or 2.0, is refused; its page never says more)."""
    import copy

    from suite.validate import check_document

    honest = json.loads((Path(__file__).parent / "fixtures" / "reference-smoke.json").read_text())
    assert check_document(honest) == []
    watched = {"cores": 2, "other_cores": 0.0, "busy": [], "seconds": 1.5}  # (the fixture predates the watch)
    for claimed in (2, 2.0):
        edited = copy.deepcopy(honest)
        edited["runs"][0]["host_load"]["during"] = {**watched, "attempts": claimed}
        assert [(p.code, p.field, p.reason) for p in check_document(edited)] == [
            ("stream-run-bounds", "runs[0].host_load.during.attempts",
             "2 processes' load watches, but the event log holds 1 process")]
        said = run_page.host_load_context(edited["runs"][0])["text"]
        assert "on average over the run," in said and "attempts" not in said
    # the whole run watched by a supervisor that killed no worker: a run of one process, or one resumed
    # after a crash (no failure in its log), cannot claim it
    claimed = copy.deepcopy(honest)
    claimed["runs"][0]["host_load"]["during"] = {**watched, "watched": "supervisor"}
    assert [(p.code, p.field, p.reason) for p in check_document(claimed)] == [
        ("stream-run-bounds", "runs[0].host_load.during.watched",
         "watched whole by the supervisor that killed and restarted its workers, but the event log holds 0 "
         "failures for 0 restarts")]
    # an integer too large for a float: refused as every such number is, and the words of a resumed run
    # that claims it read it without an OverflowError (the page and the under-load line raised one)
    huge = copy.deepcopy(honest)
    huge["runs"][0]["host_load"]["during"] = {**watched, "other_cores": 0.9, "attempts": 10 ** 400}
    assert [p.code for p in check_document(huge)] == ["number-too-large"]
    resumed = {**huge["runs"][0], "goodput": {"restarts": 1}}
    assert "on average over its last attempt (resumed 1 time; the attempts" in run_page.host_load_context(resumed)["text"]
    assert load.run_under_load(resumed) == "other processes used 0.9 of 2 cores on average over its last attempt"


def test_a_file_holding_a_second_clock_without_its_load_record_is_refused_whatever_its_date():
    """Trial 7's D4: an own-code file wholly backdated before v8 and naming v7, its host_load
    deleted, read "host load not recorded (dated before goodbench recorded it)", yet its second
    clock is a record only goodbench writing v8 or later writes."""
    import json
    from pathlib import Path

    from suite.validate import check_document

    doc = json.loads((Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json").read_text())
    for run in doc["runs"]:
        del run["host_load"]
    doc["rules_version"], doc["created_at"] = 7, "2026-11-27T12:00:00Z"
    found = [p.reason for p in check_document(doc) if p.code == "load-not-recorded"]
    assert len(found) == 2 and "holds a second clock, which only goodbench writing v8 or later writes" in found[0]


def test_the_warning_names_own_code_as_its_rows_do():
    """A new user's free job was warned of as "first own seed 1" (its workload's id, "own")."""
    import json
    from pathlib import Path

    from suite.figures import naming, report
    from workloads import own

    doc = json.loads((Path(__file__).parent / "fixtures" / "own-loaded-short-steps.json").read_text())
    name = own.implementation_name(doc)
    line = report.load_warning(doc["runs"], name)
    assert line is not None and f"; first own: {naming.own_name(name)} seed {doc['runs'][0]['seed']}: other" in line
    assert "first own seed" in (report.load_warning(doc["runs"]) or "")  # no name given: the workload's id
    # compare's header and the leaderboard's row name it alike (a new user's review, finding 7)
    assert f"first {naming.workload_label(doc['runs'][0], name)} seed" in compare.describe(doc)["under_load"]
    assert f"(self-reported); first own: {naming.own_name(name)} seed" in _identity(doc)
    [entry] = leaderboard.rows("f.json", doc)
    assert entry["under_load"] == compare.describe(doc)["under_load"]


def test_a_run_page_says_what_other_processes_used_on_average_over_the_run():
    """The watch's record between the start and end: the average and the busiest processes; a run
    whose watch recorded nothing (``during`` null) says nothing of it."""
    during = {"cores": 2, "other_cores": 0.7, "busy": [{"name": "stress", "cores": 0.6}, {"name": "make", "cores": 0.1}],
              "seconds": 40.0}
    record = {"start": _quiet(0.0), "during": during, "end": _quiet(0.0), "gpu_other_processes_end": None}
    said = run_page.host_load_context({"host_load": record})
    assert "; on average over the run, other processes used 0.7 of 2 cores (busiest: stress, make); at its end" \
        in said["text"]
    assert said["under"] == "other processes used 0.7 of 2 cores on average over it (stress, make)"
    quiet = run_page.host_load_context({"host_load": {**record, "during": {**during, "busy": [], "other_cores": 0.1}}})
    assert "on average over the run, other processes used 0.1 of 2 cores; at its end" in quiet["text"]
    for unwatched in (None, {"cores": 2, "other_cores": None}):
        said = run_page.host_load_context({"host_load": {**record, "during": unwatched}})
        assert "over the run" not in said["text"] and said["text"].startswith("load at its start")
    resumed_run = {"host_load": record, "goodput": {"restarts": 1}}
    resumed = run_page.host_load_context(resumed_run)
    assert ("; on average over its last attempt (resumed 1 time; the attempts before it were not watched, 40 s "
            "watched), other processes used 0.7 of 2 cores") in resumed["text"]
    carried = {"host_load": {**record, "during": {**during, "attempts": 2}}}
    assert ("; on average over its 2 attempts (resumed 1 time; each earlier one watched up to the checkpoint the "
            "next went on from, 40 s watched), other processes used 0.7 of 2 cores") in \
        run_page.host_load_context({**carried, "goodput": {"restarts": 1}})["text"]
    assert "over 2 of its 3 attempts (resumed 2 times;" in \
        run_page.host_load_context({**carried, "goodput": {"restarts": 2}})["text"]
    claimed = {"host_load": {**record, "during": {**during, "attempts": 7.0}}, "goodput": {"restarts": 1}}
    assert "over its 2 attempts (resumed 1 time;" in run_page.host_load_context(claimed)["text"]  # no more than ran
    # the headline of a run under load says what its average was taken over, as the text does
    headline = {"it": {"host_load": record}, "its last attempt": resumed_run,
                "its 2 attempts": {**carried, "goodput": {"restarts": 1}},
                "2 of its 3 attempts": {**carried, "goodput": {"restarts": 2}}}
    whole = {"host_load": {**record, "during": {**during, "attempts": 2, "watched": "supervisor"}},
             "goodput": {"restarts": 1}}
    assert ("; on average over the whole run, its 2 attempts and the restart between them (resumed 1 time; watched "
            "by goodbench run's supervisor, which killed and restarted it, 40 s watched), other processes used 0.7 of 2 "
            "cores") in run_page.host_load_context(whole)["text"]
    headline["the whole run, its 2 attempts and the restart between them"] = whole
    for over, run in headline.items():
        assert run_page.host_load_context(run)["under"] == \
            f"other processes used 0.7 of 2 cores on average over {over} (stress, make)", over
        assert f"on average over {over} (stress, make)" in (load.runs_under_load([run]) or ""), over


def test_a_watch_leaves_out_the_processes_under_one_it_is_told_is_the_runs_own(tmp_path):
    """A sandbox goodbench started (pid 400, in this process's group) and what runs under it in a
    session of its own (401, 402) are the run's own once the watch is told (:meth:`Watch.own`);
    what a reading counted of them before that is taken back. Another process (500) is counted."""
    own = os.getpgrp()

    def write(ticks):
        _write_proc(tmp_path, 100 + ticks / TICK, {
            pid: {"name": name, "parent": parent, "group": group, "cpu_ticks": ticks}
            for pid, (name, parent, group) in {400: ("bwrap", 1, own), 401: ("bwrap", 400, 401),
                                               402: ("burner", 401, 402), 500: ("make", 1, own + 9)}.items()})

    clock = iter([0.0, 1.0, 2.0])
    write(0)
    watch = host_load.Watch(interval_s=0, proc=tmp_path, clock=lambda: next(clock)).start()
    write(TICK)
    watch.read()  # before it is told: the burner reads as another process
    assert {name for (_, name) in watch.used} == {"bwrap", "burner", "make"}
    watch.own(400)
    write(2 * TICK)
    during = watch.stop()
    assert during is not None and [b["name"] for b in during["busy"]] == ["make"]
    assert during["other_cores"] == 1.0  # make's 2 s over 2 s


def test_a_process_named_like_a_trust_label_is_recorded_withheld_and_the_name_rule_passes():
    """Trial 16's names rule refuses a trust label's word anywhere the run page shows goodbench's
    text, busy process names included; another program's name ("trustd", "verifier") on an honest
    machine got an honest run refused: the records are written with it withheld instead."""
    from suite.trust.labels import WITHHELD, label_refusal, names_withheld

    busy = [{"name": n, "cores": 0.6} for n in ("trustd", "verifier", "rerun-burner", "python")]
    said = names_withheld({"cores": 2, "other_cores": 2.4, "busy": busy})
    assert [b["name"] for b in said["busy"]] == [WITHHELD] * 3 + ["python"]
    assert [b["cores"] for b in said["busy"]] == [0.6] * 4 and said["other_cores"] == 2.4
    assert label_refusal(WITHHELD) is None and names_withheld(None) is None
    assert names_withheld({"cores": 2, "busy": None}) == {"cores": 2, "busy": None}


def test_the_watchs_thread_leaves_the_stop_signals_to_the_main_thread():
    """A process-wide SIGTERM goes to any thread that does not block it: taken by the watch's
    thread, one the main thread held back (signals.holding) was handled at once (a supervised
    worker stopped by a group SIGTERM then exited 130 without its record, test_faults)."""
    import signal
    import threading

    watch = host_load.Watch(interval_s=0.05).start()
    try:
        thread = watch._thread
        assert thread is not None and thread.native_id is not None
        status = Path(f"/proc/self/task/{thread.native_id}/status")
        blocked = until(lambda: int(next(line.split()[1] for line in status.read_text().splitlines()
                                         if line.startswith("SigBlk:")), 16), 10, 0.01)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            assert blocked & (1 << (signum - 1)), signum
        main = threading.main_thread().native_id
        mine = Path(f"/proc/self/task/{main}/status").read_text()
        assert not int(next(line.split()[1] for line in mine.splitlines() if line.startswith("SigBlk:")), 16) & (
            1 << (signal.SIGTERM - 1))
    finally:
        watch.stop()


def _cgroup(root: Path, self_cgroup: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A fake cgroup mount (``files``: path under it → text) and a fake /proc whose ``self/cgroup``
    reads ``self_cgroup``."""
    cgroup, proc = root / "cgroup", root / "proc"
    for name, text in files.items():
        (cgroup / name).parent.mkdir(parents=True, exist_ok=True)
        (cgroup / name).write_text(text)
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text(self_cgroup)
    return cgroup, proc


@pytest.mark.parametrize(("self_cgroup", "files", "quota"), [
    ("0::/job\n", {"job/cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs may use 2 at once
    ("0::/job/step\n", {"job/cpu.max": "300000 100000\n", "job/step/cpu.max": "max 100000\n"}, 3),  # the parent's
    ("0::/\n", {"cpu.max": "max 100000\n"}, None),
    ("0::/other\n", {"cpu.max": "100000 100000\n"}, 1),  # a namespace's own cgroup is its mount's root
    ("2:cpuacct,cpu:/box\n", {"cpuacct,cpu/box/cpu.cfs_quota_us": "400000\n",
                              "cpuacct,cpu/box/cpu.cfs_period_us": "100000\n"}, 4),  # cgroup v1
    ("1:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
])
def test_the_cores_a_run_may_use_are_bounded_by_its_cgroups_cpu_quota(tmp_path, self_cgroup, files, quota):
    cgroup, proc = _cgroup(tmp_path, self_cgroup, files)
    assert host_load.quota_cores(cgroup, proc) == quota
    affinity = len(os.sched_getaffinity(0))
    assert host_load.usable_cores(cgroup, proc) == (min(affinity, quota) if quota else affinity)


def test_the_cores_a_snapshot_and_a_watch_record_are_those_the_run_may_run_on(monkeypatch):
    """Its affinity, not its quota: other processes compete for cores, and a quota of 2 CPUs on a
    64-core host with 10 cores busy elsewhere leaves the run all it may use (review D, H1)."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(host_load, "quota_cores", lambda *a: 1)
    assert host_load.snapshot(0.0)["cores"] == 3 and host_load.snapshot(0.0)["host_cores"] == 64
    watch = host_load.Watch(interval_s=0).start()
    time.sleep(0.02)
    during = watch.stop()
    assert during is not None and during["cores"] == 3 and during["host_cores"] == 64


def test_a_cpus_ceiling_is_held_to_the_hosts_cores_not_to_its_quota():
    """A CPU quota (2 CPUs) lets short bursts run on the host's every core (64): the cores a
    record's snapshots count for the ceiling's bound are the host's (``host_cores``), the cores the
    run may use (``cores``) only where a file written before recorded no other."""
    from suite.validate.physics_rules import _load_cores

    quota = {"load_1m": 0.1, "cores": 2, "host_cores": 64, "other_cores": 0.0, "busy": []}
    assert _load_cores({"host_load": {"start": quota, "end": quota}}) == 64
    before = {key: value for key, value in quota.items() if key != "host_cores"}
    assert _load_cores({"host_load": {"start": before, "end": before}}) == 2


@pytest.mark.parametrize(("allowed", "mine", "share"), [
    ("0-3", {0, 1, 2, 3}, 1.0), ("4-7", {0, 1, 2, 3}, 0.0), ("2-5", {0, 1, 2, 3}, 0.5),
    ("0,2,4-5", {0, 1}, 0.25),
])
def test_what_another_process_used_counts_on_the_cores_the_run_may_run_on(tmp_path, monkeypatch, allowed, mine, share):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "status").write_text(f"Name:\tmake\nCpus_allowed_list:\t{allowed}\n")
    assert host_load.on_cores(tmp_path, 42, frozenset(mine)) == share
    assert host_load.on_cores(tmp_path, 42, frozenset(range(8))) == 1.0  # every core: nothing to weigh
    assert host_load.on_cores(tmp_path, 43, frozenset(mine)) == 1.0  # unreadable: counted whole


def _beside_a_burner(run_core: int, burner_core: int) -> tuple[int, dict]:
    """A burner's pid and a snapshot (``pids=True``) taken from ``run_core`` while the burner spins
    pinned to ``burner_core``."""
    burner = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{burner_core}}})\nwhile True: pass"],
                              start_new_session=True)  # another process's, not the test's own group
    try:
        time.sleep(0.3)
        # every busy process listed, not the 5 busiest: under a parallel test run's load the burner
        # could be sixth, and its absence would prove nothing
        probe = (f"import json, os; os.sched_setaffinity(0, {{{run_core}}}); from suite.meters import host_load; "
                 "host_load.LISTED = 10_000; print(json.dumps(host_load.snapshot(0.5, pids=True)))")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        return burner.pid, json.loads(done.stdout)
    finally:
        burner.kill()
        burner.wait()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_a_busy_process_pinned_to_another_core_is_no_load_on_the_run():
    """A burner pinned to one core and a snapshot taken from another: the run's one core was left
    free (review D, H1: it read ``cores 1, other_cores 1.0``, a full machine). Held against the same
    burner on the run's own core. The burner's own share is compared, not the sums: a parallel test
    run's workers load both cores, and their use changed by half a core between the two windows."""
    first, second = sorted(os.sched_getaffinity(0))[:2]
    (far, elsewhere), (near, alongside) = _beside_a_burner(first, second), _beside_a_burner(first, first)
    assert elsewhere["cores"] == alongside["cores"] == 1
    assert far not in {busy["pid"] for busy in elsewhere["busy"]}, elsewhere  # 0 on the run's core: not listed
    assert near in {busy["pid"] for busy in alongside["busy"]}, alongside  # at least BUSY_SHARE of the run's core
