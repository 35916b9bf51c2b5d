"""``--wait-quiet SECONDS`` of check, run and run-own (suite/run/quiet.py): waiting for other
processes to go under the load a run is flagged at, before anything is measured. A fake machine
stands for host_load.snapshot, the clock and sleep: nothing here sleeps."""
from __future__ import annotations

import functools
import io

import factories
import pytest

from suite.cli import main
from suite.figures import load
from suite.meters import host_load
from suite.run import check, quiet
from suite.run.signals import Terminated

WAIT = quiet.wait  # the real one, which the command tests give a fake machine
INTERRUPTED_LINE = "goodbench: interrupted while waiting for the machine to go quiet, before anything was measured"


class Machine:
    """A fake clock, sleep and :func:`suite.meters.host_load.snapshot`: each snapshot takes
    host_load.SAMPLE_S of the clock and sees the next of ``loads`` (the other processes' cores;
    the last one for ever after)."""

    def __init__(self, *loads: float | None):
        self.loads, self.now, self.slept, self.looks = list(loads), 1000.0, [], 0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def snapshot(self) -> dict:
        self.now += host_load.SAMPLE_S
        other = self.loads[min(self.looks, len(self.loads) - 1)]
        self.looks += 1
        busy = [{"name": "make", "cores": other}] if other is not None and other >= host_load.BUSY_SHARE else []
        return {"load_1m": 1.5, "cores": 2, "other_cores": other, "busy": busy}

    def wait(self, limit_s: float, stream=None, then: str = "training anyway") -> quiet.Waited:
        return WAIT(limit_s, then, snapshot=self.snapshot, clock=self.clock, sleep=self.sleep,
                          stream=stream if stream is not None else io.StringIO())

    def install(self, monkeypatch, sleep=None) -> None:
        """The commands' waits and check's own snapshot see this machine."""
        monkeypatch.setattr(quiet, "wait", functools.partial(WAIT, snapshot=self.snapshot, clock=self.clock,
                                                             sleep=sleep or self.sleep))
        monkeypatch.setattr(host_load, "snapshot", lambda *a, **k: self.snapshot())


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


BUSY, QUIET = 1.4, 0.05
assert QUIET < load.UNDER_LOAD_CORES <= BUSY


def test_a_quiet_machine_is_not_waited_for_and_nothing_is_said():
    machine, out = Machine(QUIET), io.StringIO()
    waited = machine.wait(60, out)
    assert waited.quiet is True and waited.last["other_cores"] == QUIET
    assert machine.looks == 1 and machine.slept == [] and out.getvalue() == ""


def test_a_busy_machine_is_waited_for_until_quiet_for_three_samples_in_a_row_with_one_line_and_its_end():
    machine, out = Machine(BUSY, 1.2, QUIET, QUIET, QUIET), io.StringIO()
    waited = machine.wait(60, out)
    assert waited.quiet is True and machine.looks == 2 + quiet.SETTLE_SAMPLES
    assert machine.slept == [quiet.INTERVAL_S] * 4  # it sleeps between samples: no core spun
    assert waited.seconds == pytest.approx(5 * host_load.SAMPLE_S + 4 * quiet.INTERVAL_S)
    assert out.getvalue().splitlines() == [
        "waiting for the machine to go quiet (other processes under 0.5 cores, 3 samples in a row): "
        "they use 1.4 of 2 cores (make); 60 s left",
        "quiet after 5 s: other processes use 0.05 of 2 cores"]


def test_a_lull_between_bursts_is_not_taken_for_quiet():
    machine = Machine(BUSY, QUIET, QUIET, BUSY, QUIET, QUIET, QUIET)
    assert machine.wait(60).quiet is True
    assert machine.looks == 7  # the two quiet samples before the second burst did not end it


def test_a_machine_busy_throughout_times_out_in_one_line_and_goes_on():
    machine, out = Machine(BUSY), io.StringIO()
    waited = machine.wait(5, out)
    assert waited.quiet is False and waited.last["other_cores"] == BUSY
    assert sum(machine.slept) <= 5 and max(machine.slept) <= quiet.INTERVAL_S
    assert 5 <= waited.seconds <= 5 + host_load.SAMPLE_S  # not a sample beyond the time given
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].endswith("they use 1.4 of 2 cores (make); 5 s left")
    assert lines[1] == "still not quiet after 5 s (--wait-quiet 5): other processes use 1.4 of 2 cores (make); training anyway"


def test_on_a_terminal_the_waiting_line_is_rewritten_in_place(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    machine, out = Machine(BUSY, BUSY, 0.9, QUIET, QUIET, QUIET), Terminal()
    assert machine.wait(60, out).quiet is True
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line on the screen, ended once
    assert text.count("\r") == machine.looks  # each sample's line, the last one's the end
    assert "0.9 of 2 cores (make); 58 s left" in text and "quiet for 2 of 3 samples" in text
    assert text.rsplit("\r", 1)[1] == "quiet after 6 s: other processes use 0.05 of 2 cores\x1b[K\n"


def test_on_a_narrow_terminal_the_waiting_line_is_cut_to_one_row(monkeypatch):
    """A line wider than the terminal wraps, and \r goes back only to the start of its last row:
    each rewrite would leave a row behind."""
    monkeypatch.setenv("COLUMNS", "60")
    machine, out = Machine(BUSY, BUSY, BUSY, QUIET, QUIET, QUIET), Terminal()
    assert machine.wait(60, out).quiet is True
    *progress, end = out.getvalue().split("\r")[1:]
    assert len(progress) == 5 and all(len(row.removesuffix("\x1b[K")) == 59 for row in progress)
    assert end == "quiet after 6 s: other processes use 0.05 of 2 cores\x1b[K\n"


def test_where_the_load_is_not_measured_it_says_so_and_does_not_wait():
    machine, out = Machine(None), io.StringIO()
    waited = machine.wait(60, out)
    assert waited.quiet is None and machine.slept == []
    assert out.getvalue() == ("--wait-quiet: other processes' load is not measured on this machine (no /proc); "
                              "not waiting\n")


def test_ctrl_c_ends_the_wait_saying_where_and_sigterm_goes_on_as_it_is():
    machine, out = Machine(BUSY), Terminal()

    def interrupted(seconds):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as caught:
        quiet.wait(60, "x", snapshot=machine.snapshot, clock=machine.clock, sleep=interrupted, stream=out)
    assert str(caught.value) == quiet.INTERRUPTED and out.getvalue().endswith("\n")  # the line is ended

    def terminated(seconds):
        raise Terminated

    with pytest.raises(Terminated):
        quiet.wait(60, "x", snapshot=machine.snapshot, clock=machine.clock, sleep=terminated, stream=io.StringIO())


@pytest.mark.parametrize("command", [["check"], ["run"], ["run-own"]])
@pytest.mark.parametrize("given, why", [
    ("0", "'0' is out of range: above 0 and at most 86400 (24 h)"),
    ("-5", "'-5' is out of range: above 0 and at most 86400 (24 h)"),
    ("86401", "'86401' is out of range: above 0 and at most 86400 (24 h)"),
    ("inf", "'inf' is out of range: above 0 and at most 86400 (24 h)"),
    ("nan", "'nan' is out of range: above 0 and at most 86400 (24 h)"),
    ("10s", "'10s' is not a number of seconds")])
def test_wait_quiet_takes_seconds_above_0_up_to_a_day(command, given, why, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command, f"--wait-quiet={given}", *(["script.py"] if command == ["run-own"] else [])])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"goodbench {command[0]}: error: argument --wait-quiet: {why}; see " \
        f"goodbench {command[0]} --help"
    assert "Traceback" not in err
    assert quiet.seconds("0.5") == 0.5 and quiet.seconds("86400") == quiet.MAX_S


def _check(machine: Machine, monkeypatch, capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    machine.install(monkeypatch)
    monkeypatch.setattr(check, "_host_checks", lambda: [check.busy_check(host_load.snapshot())])
    status = main(["check", "--device", "cpu", *argv])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.splitlines()


def test_check_waits_for_quiet_and_then_is_fit(monkeypatch, capsys):
    status, out, err = _check(Machine(BUSY, QUIET, QUIET, QUIET), monkeypatch, capsys, "--wait-quiet", "30")
    assert status == 0 and out[-1] == "fit for a CPU run"
    assert out[-2] == "ok    other processes   0.05 of 2 cores used by other processes"  # a sample after the wait
    assert len(err) == 2 and err[0].startswith("waiting for the machine to go quiet") and err[1].startswith("quiet after")


def test_check_busy_throughout_says_it_timed_out_and_is_not_fit_naming_the_remedy(monkeypatch, capsys):
    status, out, err = _check(Machine(BUSY), monkeypatch, capsys, "--wait-quiet", "3")
    assert status == 1 and out[-1] == "not fit for a CPU run: fix the failed checks"
    assert err[-1].startswith("still not quiet after 3 s (--wait-quiet 3)") and err[-1].endswith("; checking now")
    assert out[-2].startswith("fail  other processes   other processes used 1.4 of 2 cores now (make)")
    assert out[-2].endswith("stop them, or wait for quiet: --wait-quiet SECONDS (of check, run, run-own and reproduce) "
                            "waits up to SECONDS")


def test_check_without_wait_quiet_does_not_wait(monkeypatch, capsys):
    machine = Machine(BUSY)
    status, _, err = _check(machine, monkeypatch, capsys)
    assert status == 1 and machine.looks == 1 and machine.slept == [] and err == []


def test_ctrl_c_while_check_waits_is_one_line_and_exit_130(monkeypatch, capsys):
    def interrupted(seconds):
        raise KeyboardInterrupt

    Machine(BUSY).install(monkeypatch, sleep=interrupted)
    assert main(["check", "--device", "cpu", "--wait-quiet", "60"]) == 130
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == INTERRUPTED_LINE and "Traceback" not in err
    assert not any(line.startswith(("ok ", "fail ")) for line in out.splitlines())  # no check ran


def test_run_waits_once_before_it_measures_anything(monkeypatch, tmp_path, capsys):
    """The wait comes before the session starts (its ceiling, its first workload): nothing timed
    runs while it waits. Ctrl-C there writes nothing and frees the results file's name."""
    seen: list = []
    machine = Machine(BUSY, QUIET)

    def waiting(limit_s, then, **kw):
        seen.append(("wait", limit_s, then))
        return machine.wait(limit_s)

    def measuring(*a, **k):
        seen.append(("measure",))
        raise KeyboardInterrupt

    monkeypatch.setattr(quiet, "wait", waiting)
    factories.fake_training(monkeypatch, measuring)
    monkeypatch.setattr(host_load, "snapshot", lambda *a, **k: machine.snapshot())
    out = tmp_path / "out.json"
    status = main(["run", "-w", "lm-char", "--device", "cpu", "--no-sign", "-o", str(out), "--wait-quiet", "90"])
    assert status == 130 and seen == [("wait", 90.0, "training anyway"), ("measure",)]
    assert not out.exists()


def test_run_under_nproc_per_node_waits_in_the_launcher_and_the_workers_do_not(monkeypatch, tmp_path):
    from suite.run import launch

    seen: list = []
    monkeypatch.setattr(quiet, "wait", lambda limit_s, then, **kw: seen.append(("wait", limit_s, then)))
    monkeypatch.setattr(launch, "launch", lambda argv, *a, **k: seen.append(("launch", launch.worker_argv(argv, "o"))) or 0)
    assert main(["run", "-w", "lm-char", "--device", "cpu", "--no-sign", "--nproc-per-node", "2",
                 "--wait-quiet", "7", "-o", str(tmp_path / "out.json")]) == 0
    assert seen[0] == ("wait", 7.0, "launching the workers anyway") and seen[1][0] == "launch"
    assert "--wait-quiet" not in seen[1][1] and "7" not in seen[1][1]
    assert launch.worker_argv(["run", "--wait-quiet=7", "--seeds", "1"], "o") == ["run", "--seeds", "1", "-o", "o"]


def test_a_torchrun_worker_refuses_wait_quiet(monkeypatch, capsys):
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0")):
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit_:
        main(["run", "-w", "lm-char", "--wait-quiet", "5"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "goodbench run: error: --wait-quiet waits before torchrun starts the workers, not in a worker: "
        "give it to goodbench run --nproc-per-node N")


def test_run_own_waits_before_it_starts_the_script(monkeypatch, tmp_path, capsys):
    from suite.record.errors import GoodbenchError
    from suite.run import own_launch

    seen: list = []
    monkeypatch.setattr(quiet, "wait", lambda limit_s, then, **kw: seen.append(("wait", limit_s, then)))

    def launching(script, args, **kw):
        seen.append(("launch", script, args))
        raise GoodbenchError("not started in this test")

    monkeypatch.setattr(own_launch, "launch", launching)
    assert main(["run-own", "--wait-quiet", "12.5", "mine.py", "--wait-quiet", "3"]) == 1
    assert seen == [("wait", 12.5, "starting the script anyway"), ("launch", "mine.py", ["--wait-quiet", "3"])]
    assert capsys.readouterr().err.splitlines()[-1] == "goodbench: error: not started in this test"


def test_a_wait_that_runs_out_while_quiet_too_few_samples_in_a_row_says_so():
    machine, out = Machine(BUSY, QUIET), io.StringIO()
    waited = machine.wait(2, out)
    assert waited.quiet is False and waited.last["other_cores"] == QUIET
    assert out.getvalue().splitlines()[-1] == (
        "still not quiet after 2 s (--wait-quiet 2): other processes use 0.05 of 2 cores, quiet for only 2 of "
        "the 3 samples in a row it needs; training anyway")


def test_the_line_is_cut_to_the_width_of_the_terminal_it_is_written_to_not_stdouts(monkeypatch):
    """``goodbench run > log`` on a terminal: stdout is a file, stderr (the line) the terminal."""
    import fcntl
    import os
    import struct
    import termios

    monkeypatch.delenv("COLUMNS", raising=False)
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    try:
        with open(follower, "w", closefd=False) as tty:
            assert quiet.columns(tty) == 50
            monkeypatch.setenv("COLUMNS", "70")  # as shutil.get_terminal_size takes it
            assert quiet.columns(tty) == 70
    finally:
        os.close(follower)
        os.close(leader)
    monkeypatch.delenv("COLUMNS")
    reading, writing = os.pipe()
    try:
        with open(writing, "w", closefd=False) as pipe:
            assert quiet.columns(pipe) == 80  # no terminal
    finally:
        os.close(reading)
        os.close(writing)
    assert quiet.columns(Terminal()) == 80  # no file descriptor (io.UnsupportedOperation)

    class NoFileno:
        def isatty(self) -> bool:
            return True

    assert quiet.columns(NoFileno()) == 80  # type: ignore[arg-type]


def test_the_load_is_said_without_a_core_count_where_the_snapshot_has_none():
    snap = {"load_1m": 1.5, "other_cores": 1.4, "busy": [{"name": "make", "cores": 1.4}]}
    assert load.other_load(snap) == "1.4 cores (make)"
    assert load.other_load({**snap, "cores": 2}) == "1.4 of 2 cores (make)"
    assert load.other_load({**snap, "cores": None, "busy": None}, when="now") == "1.4 cores now"
    assert load.under_load({"start": snap}) == "other processes used 1.4 cores at its start (make)"
    machine, out = Machine(1.4), io.StringIO()
    coreless = machine.snapshot
    machine.snapshot = lambda: {key: value for key, value in coreless().items() if key != "cores"}  # type: ignore[method-assign]
    assert machine.wait(1, out).quiet is False
    assert out.getvalue().splitlines() == [
        "waiting for the machine to go quiet (other processes under 0.5 cores, 3 samples in a row): they use "
        "1.4 cores (make); 1 s left",
        "still not quiet after 1 s (--wait-quiet 1): other processes use 1.4 cores (make); training anyway"]


@pytest.mark.parametrize("given, meant", [(["--wait", "7"], "--wait for --wait-quiet"),
                                          (["--wait=7"], "--wait for --wait-quiet"),
                                          (["--nproc", "2"], "--nproc for --nproc-per-node")])
def test_run_refuses_an_abbreviated_option_naming_it(given, meant, monkeypatch, capsys):
    """argparse would take ``--wait`` for ``--wait-quiet``, and the launcher, which drops its own
    options by their full names, would pass it on to the workers, which refuse it."""
    from suite.run import launch

    monkeypatch.setattr(quiet, "wait", lambda *a, **k: pytest.fail("waited"))
    monkeypatch.setattr(launch, "launch", lambda *a, **k: pytest.fail("launched"))
    with pytest.raises(SystemExit) as exit_:
        main(["run", "-w", "lm-char", "--nproc-per-node", "2", *given])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"goodbench run: error: unrecognized arguments: {' '.join(given)} (goodbench run "
                                    f"takes its options in full, not abbreviated: {meant}?); see goodbench run --help")
    assert "Traceback" not in err


def test_worker_argv_never_passes_a_launch_option():
    from suite.cli import build_parser
    from suite.run import launch

    argv = ["run", "-w", "lm-char", "--nproc-per-node", "2", "--nnodes=2", "--node-rank", "1",
            "--rdzv-endpoint", "h:29500", "--max-restarts=3", "--wait-quiet", "7", "--seeds", "1", "-o", "x.json"]
    parser = build_parser()
    given, worker = parser.parse_args(argv), parser.parse_args(launch.worker_argv(argv, "o.json"))
    defaults = parser.parse_args(["run"])
    for option in launch.LAUNCH_OPTIONS:
        dest = option.removeprefix("--").replace("-", "_")
        assert getattr(given, dest) != getattr(defaults, dest)  # each was given
        assert getattr(worker, dest) == getattr(defaults, dest), option  # and none reaches a worker
    assert worker.workload == ["lm-char"] and worker.seeds == 1 and worker.output == "o.json"


def test_run_refuses_wait_quiet_on_several_nodes_naming_what_to_do_instead(monkeypatch, capsys):
    """Each node's launcher would wait on its own, up to a day, while torchrun on the nodes that
    went on gives up joining the rendezvous after 600 s."""
    from suite.run import launch

    monkeypatch.setattr(quiet, "wait", lambda *a, **k: pytest.fail("waited"))
    monkeypatch.setattr(launch, "launch", lambda *a, **k: pytest.fail("launched"))
    with pytest.raises(SystemExit) as exit_:
        main(["run", "-w", "lm-char", "--nproc-per-node", "2", "--nnodes", "2", "--rdzv-endpoint", "h:29500",
              "--wait-quiet", "60"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("goodbench run: error: --wait-quiet waits on this node only, while torchrun on the other "
                       "nodes gives up joining after 600 s: run goodbench check --wait-quiet SECONDS on each "
                       "node, then this command without --wait-quiet")
