"""Fault injection with a real SIGKILL: the supervisor kills, restarts and resumes the worker."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from factories import bucket_sum
from short_lmchar import run_short
from waiting import ended, until

from suite.record import mllog
from suite.record.errors import GoodbenchError
from suite.run import signals, supervisor


@pytest.fixture(scope="module")
def runs(data_dir, tmp_path_factory):
    """A clean run, and a supervised one killed at step 25 and resumed, with its checkpoint
    directory (resumed again by a test)."""
    # its own clean run, right before the killed one: their goodputs are compared, and the
    # shared run of tests/conftest.py may have been trained under another load
    clean = run_short(data_dir, tmp_path_factory.mktemp("clean"), checkpoint_every=10)
    folder = tmp_path_factory.mktemp("killed")
    killed = run_short(data_dir, folder, supervised=True, checkpoint_every=10, inject_failures=(25,))
    return clean, killed, folder


@pytest.mark.dist
def test_killed_run_resumes_to_the_same_losses(runs):
    clean, killed, _ = runs
    assert killed["status"] == "complete" and killed["steps"] == 40
    strip = lambda curve: [{k: v for k, v in p.items() if k != "time_s"} for p in curve]
    assert strip(killed["curve"]) == strip(clean["curve"])
    last = lambda run: {e.metadata["step"]: e.value for e in mllog.parse(run["event_log"])
                        if e.key == "train_loss"}
    assert last(killed) == last(clean)


@pytest.mark.dist
def test_log_and_record_show_failure_restart_and_lost_work(runs):
    clean, killed, _ = runs
    keys = [e.key for e in mllog.parse(killed["event_log"])]
    for key in ("failure", "restart", "checkpoint_load_start", "lost_steps"):
        assert key in keys
    failure = next(e for e in mllog.parse(killed["event_log"]) if e.key == "failure")
    assert failure.value == "SIGKILL" and failure.metadata["step"] >= 25
    g = killed["goodput"]
    assert (g["failures"], g["restarts"]) == (1, 1)
    assert g["lost_steps"] >= 5  # killed at step ≥ 25, resumed from the checkpoint of step 20
    assert g["badput_s"]["lost_work"] > 0 and g["recovery_s"][0] > 0
    assert g["badput_s"]["restart_recovery"] == pytest.approx(g["recovery_s"][0])
    assert killed["faults"] == {"inject_failures": [25], "failure_rate_per_hour": None,
                                "failure_seed": None, "kills": 1}
    assert abs(bucket_sum(g) - g["wall_s"]) <= 0.01 * g["wall_s"]
    assert g["goodput"] < clean["goodput"]["goodput"]


@pytest.mark.dist
def test_the_resumed_runs_load_watch_adds_the_killed_process_up_to_its_checkpoint(runs):
    """The last worker's own record (``record.json``, which the supervisor reads): the first
    worker's watch counted up to the checkpoint of step 20 (kept in it, read while it is saved),
    the second's from its own start to its clock's stop; ``during`` adds both (``attempts`` 2). A
    run never resumed has no ``attempts``."""
    clean, killed, folder = runs
    [record] = folder.rglob("record.json")
    during = json.loads(record.read_text())["host_load"]["during"]
    assert during["attempts"] == 2 and "watched" not in during
    assert "attempts" not in clean["host_load"]["during"] and "watched" not in clean["host_load"]["during"]
    events = mllog.parse(killed["event_log"])
    first, last = [e.t for e in events if e.key == "init_start"]
    kept = [e.t for e in events if e.key in ("checkpoint_start", "checkpoint_stop") and e.metadata.get("step") == 20]
    second = events[-1].t - last  # to run_stop; the watch starts just before init_start and stops just after
    assert (kept[0] - first) + second - 0.05 <= during["seconds"] <= (kept[-1] - first) + second + 0.3


@pytest.mark.dist
def test_the_supervisor_watches_a_killed_run_whole(runs):
    """The run the supervisor returns holds its watch instead, from before the first worker to after
    the last: what the killed worker watched after its checkpoint and the restart between them are
    in it (``watched`` "supervisor", ``attempts``: the event log's workers)."""
    _, killed, folder = runs
    during = killed["host_load"]["during"]
    assert (during["watched"], during["attempts"]) == ("supervisor", 2)
    events = mllog.parse(killed["event_log"])
    span = events[-1].t - events[0].t  # first init_start to the last worker's run_stop
    [record] = folder.rglob("record.json")
    carried = json.loads(record.read_text())["host_load"]["during"]["seconds"]
    assert during["seconds"] >= span - 0.05 > carried
    assert set(during) == {"cores", "host_cores", "other_cores", "busy", "seconds", "attempts", "watched"}
    # the validator takes it: the log holds the supervisor's failure before the restart
    from suite.validate import shared, stream_rules

    assert stream_rules._watched_attempts(killed, "runs[0]", shared.read_log(killed, {})) == []
    resumed = {**killed, "event_log": [line for line in killed["event_log"] if '"key": "failure"' not in line]}
    [refused] = stream_rules._watched_attempts(resumed, "runs[0]", shared.read_log(resumed, {}))
    assert refused.field == "runs[0].host_load.during.watched" and "holds 0 failures for 1 restart" in refused.reason


def test_kill_is_a_real_sigkill_of_the_workers_group():
    """The worker (in a group of its own, as the supervisor starts it) and the child it started die
    together."""
    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, process_group=0)
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    outcome = supervisor._kill(proc, 7, "test")
    assert outcome.killed and outcome.step == 7
    assert proc.returncode == -signal.SIGKILL
    assert ended(child, 10)


def test_failure_times_are_seeded_poisson():
    a = supervisor.failure_times(12.0, seed=3, count=2000)
    assert a == supervisor.failure_times(12.0, seed=3, count=2000)
    assert a != supervisor.failure_times(12.0, seed=4, count=2000)
    gaps = np.diff([0.0, *a])
    assert gaps.mean() == pytest.approx(300.0, rel=0.1)  # 12 per hour: 300 s apart on average


@pytest.mark.slow
def test_a_finished_run_is_kept_not_trained_again(data_dir, tmp_path):
    """After a restart of the whole suite (torchrun --max-restarts, or --resume), a run that
    already finished in its checkpoint directory returns its record instead of training."""
    first = run_short(data_dir, tmp_path, checkpoint_every=10)
    events_before = (tmp_path / "lm-char-seed1" / "events.log").read_text()
    again = run_short(data_dir, tmp_path, checkpoint_every=10)
    assert again == first
    assert (tmp_path / "lm-char-seed1" / "events.log").read_text() == events_before


@pytest.mark.slow
def test_a_finished_run_with_other_settings_is_refused_not_reused(data_dir, tmp_path):
    """A finished record answers only the run it was: resuming with another setting (here the
    compile mode; an open-division batch changes the spec hash alike) is refused, naming it."""
    run_short(data_dir, tmp_path, checkpoint_every=10)
    with pytest.raises(GoodbenchError, match=r"other settings \(compile 'off' → 'default'\)"):
        run_short(data_dir, tmp_path, checkpoint_every=10, compile="default")
    (tmp_path / "lm-char-seed1" / "finished-record.json").write_text("{not json")
    with pytest.raises(GoodbenchError, match="is unreadable"):
        run_short(data_dir, tmp_path, checkpoint_every=10)


@pytest.mark.dist
def test_a_resumed_suite_does_not_inject_a_fired_failure_again(data_dir, runs):
    """The supervisor reads the failures already in the run's log: resuming the killed run
    (its directory holds the record and a log with one failure) injects nothing new, and the
    kills it reports still equal the log's failures."""
    _, killed, folder = runs
    again = run_short(data_dir, folder, supervised=True, checkpoint_every=10,
                      inject_failures=(25,))
    assert again["faults"]["kills"] == killed["faults"]["kills"] == again["goodput"]["failures"] == 1
    assert again["run_id"] == killed["run_id"]


@pytest.mark.dist
def test_the_resumed_workers_warm_up_is_left_out_of_the_steady_state(runs):
    """Killed at step ≥ 25 and resumed from step 20: the new worker warms up again (steps
    21-25), so those steps are warm-up in the log, outside the throughput window, and their
    excess is compile_warmup badput; the validator's recomputation from the log agrees."""
    from suite.record.rules_version import RULES_VERSION
    from suite.validate import facts, run_rules

    clean, killed, _ = runs
    assert killed["metrics"]["throughput"]["window"]["segments"] == [[6, 20], [26, 40]]
    assert clean["metrics"]["throughput"]["window"]["segments"] == [[6, 40]]
    warmups = [e.metadata["first_step"] for e in mllog.parse(killed["event_log"])
               if e.key == "warmup_start"]
    assert warmups == [1, 21]
    doc = {"settings": {"division": "closed"}, "rules_version": RULES_VERSION}  # rates with the batch waits (v10)
    run_facts = facts.run_facts(killed, doc, {"warmup_steps": 5})
    for rule in (run_rules._check_throughput, run_rules._check_phases, run_rules._check_goodput):
        assert rule(killed, "runs[0]", doc, run_facts) == []


@pytest.mark.parametrize("gone", ["pipe broken", "parent changed"])
def test_a_worker_whose_supervisor_is_gone_ends_keeping_no_record(gone):
    """The supervisor killed (SIGKILL of goodbench run): the worker's next step report finds it
    gone and the worker ends at once, as the kill would have ended it — no failed
    ``BrokenPipeError`` record that ``--resume`` would hand back instead of resuming."""
    script = ("import os\n"
              "from suite.run.supervisor import reporter\n"
              "r, w = os.pipe()\n"
              f"{'os.close(r)' if gone == 'pipe broken' else 'pass'}\n"
              f"parent = os.getppid(){'' if gone == 'pipe broken' else ' + 1'}\n"
              "reporter(w, parent)(5)\n"
              "print('trained on')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == signals.ORPHANED_STATUS, done.stderr
    assert "trained on" not in done.stdout
    assert "supervisor (goodbench run) is gone: the worker ends here, keeping no record" in done.stderr


def _stopped_supervised(data_dir, checkpoint_dir, progress, *, injected: tuple[int, ...] = (1000,),
                        stop: type[BaseException] = signals.Terminated, then=lambda: None,
                        missing: str = "the worker wrote no record") -> dict:
    """A short lm-char smoke run under the supervisor, stopped by ``stop``, which ``progress`` (the
    worker's step report) brings about; ``then`` runs before the signal handlers are put back. The
    record the stopped worker wrote (asserted there, else ``missing``)."""
    import torch
    from short_lmchar import ShortLmChar

    from suite.run.runner import RunOptions

    options = RunOptions(device=torch.device("cpu"), data_dir=str(data_dir), checkpoint_dir=str(checkpoint_dir),
                         inject_failures=injected)
    previous = signals.stop_on_sigterm()
    try:
        with pytest.raises(stop) as stopped:
            supervisor.run_supervised(ShortLmChar(), "smoke", 1, options, progress=progress)
        then()
    finally:
        signals.restore(previous)
    record = getattr(stopped.value, "record", None)
    assert record is not None, missing
    return record


@pytest.mark.slow
def test_a_group_sigterm_keeps_the_supervised_runs_partial_record(data_dir, tmp_path):
    """``kill -TERM -PGID`` reaches the supervisor and its worker at once: the worker, its own SIGTERM
    a stop like the supervisor's, writes its partial record (it was killed by SIGTERM's default,
    and the run was lost). Where the one the supervisor passes on lands is left to timing here (most
    often inside the worker's hold, where any SIGTERM is held); the next test places the echo."""
    from short_lmchar import group_sigterm_at_step_10

    record = _stopped_supervised(data_dir, tmp_path, group_sigterm_at_step_10, injected=(30,))
    assert record["status"] == "partial" and record["error"].startswith("interrupted (SIGTERM) after ")
    assert record["steps"] >= 10


@pytest.mark.slow  # a supervised worker process: 6 s (the fast loop stays under 3 minutes)
def test_a_sigint_to_the_supervisor_alone_reaches_its_worker_at_once(data_dir, tmp_path, monkeypatch):
    """``kill -INT PID`` (an IDE's stop button, ``timeout -s INT``) reaches the supervisor alone: it
    passes the interrupt on at once, so the worker stops there and writes its partial record, rather
    than training on until the wait is over and being killed without one. The worker leads a process
    group of its own, so a terminal's Ctrl-C reaches the supervisor alone and is passed on once."""
    import time

    from short_lmchar import sigint_to_the_supervisor_alone_at_step_10

    note = tmp_path / "group"
    monkeypatch.setenv("GOODBENCH_TEST_GROUP_NOTE", str(note))
    monkeypatch.setattr(supervisor, "STOP_WAIT_S", 120.0)
    began = time.monotonic()
    record = _stopped_supervised(data_dir, tmp_path / "ckpt", sigint_to_the_supervisor_alone_at_step_10,
                                 stop=KeyboardInterrupt)
    assert time.monotonic() - began < 110
    assert record["status"] == "partial" and record["error"].startswith("interrupted (KeyboardInterrupt) "), record
    assert record["steps"] == 10  # stopped in step 10's report, where the worker waits for it
    assert note.read_text() == "own"


@pytest.mark.slow  # the supervisor passing a stop on alone: the SIGINT's test; SIGHUP as SIGTERM: test_cli_messages
def test_a_sighup_to_the_supervisor_stops_its_worker_as_sigterm_does(data_dir, tmp_path, sighup_at_default):
    """The terminal closed (SIGHUP to the supervisor alone; its worker, in a group of its own, gets
    none): the supervisor takes it as SIGTERM and passes SIGTERM on, so the worker stops and writes its
    partial record, rather than training on, unrecorded, until its next report finds the supervisor
    gone. The stop is a SIGTERM to what follows (status 143), and says it came as SIGHUP."""
    from short_lmchar import sighup_to_the_supervisor_alone_at_step_10

    def noted() -> None:
        assert signals.hangup_received() and signals.sigterm_received()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL  # put back

    record = _stopped_supervised(data_dir, tmp_path, sighup_to_the_supervisor_alone_at_step_10, then=noted)
    assert record["status"] == "partial" and record["error"].startswith("interrupted (SIGTERM) after "), record
    assert record["steps"] == 10  # stopped in step 10's report, where the worker waits for it


def test_a_sighup_is_left_alone_where_it_is_ignored():
    """``nohup goodbench run``: SIGHUP ignored stays ignored under the supervisor."""
    import signal as signal_module

    previous = signals.stop_on_sigterm()
    before = signal_module.signal(signal_module.SIGHUP, signal_module.SIG_IGN)
    try:
        with signals.hangup_as_sigterm():
            assert signal_module.getsignal(signal_module.SIGHUP) is signal_module.SIG_IGN
    finally:
        signal_module.signal(signal_module.SIGHUP, before)
        signals.restore(previous)


def test_a_worker_that_does_not_stop_is_killed_with_its_process_group():
    """The final kill of a worker that leads a process group of its own takes its children too."""
    worker = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\n"
                               "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                               "print(child.pid, flush=True)\ntime.sleep(60)\n"],
                              stdout=subprocess.PIPE, process_group=0)
    assert worker.stdout is not None
    child = int(worker.stdout.readline())
    assert not supervisor._stopped(worker, 0.2)
    assert worker.returncode == -signal.SIGKILL

    def running(pid: int) -> bool:  # a zombie (killed, not yet reaped by its new parent) is not
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    if not until(lambda: not running(child), 5):
        os.kill(child, signal.SIGKILL)
        pytest.fail("the worker's child was left running")


@pytest.mark.slow
def test_the_echo_of_a_group_sigterm_after_the_workers_hold_keeps_its_record(data_dir, tmp_path):
    """The group's SIGTERM reaches the supervised worker while it keeps its finished run's record
    (held, raised when the hold ends), and the same kill's echo reaches it right after that hold,
    before the record is written (signals.ECHO_S): the echo is the same stop, noted, not raised
    there, and the run's record reaches the supervisor, which the kill stopped too."""
    from short_lmchar import group_sigterm_in_the_records_hold_then_its_echo

    record = _stopped_supervised(data_dir, tmp_path, group_sigterm_in_the_records_hold_then_its_echo,
                                 missing="the worker wrote no record: the echo was raised before it")
    assert record["status"] == "complete" and record["steps"] == 40


def test_an_interrupted_watch_leaves_the_workers_pipe_open_until_it_has_stopped():
    """Ctrl-C or SIGTERM while the supervisor follows its worker: the worker's step pipe stays open,
    so that a step it reports before the stop reaches it is not taken for its supervisor gone
    (which ends it keeping no record); run_supervised closes it once the worker has ended."""
    import threading
    import time

    worker = subprocess.Popen([sys.executable, "-c", "import time; print('step 1', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            supervisor._watch(worker, [], [time.time() + 60])
        assert worker.stdout is not None and not worker.stdout.closed
    finally:
        timer.cancel()
        worker.kill()
        worker.wait()
    ended = supervisor._watch(worker, [], [])  # the worker ended: the watch reads to its end and closes the pipe
    assert not ended.killed and worker.stdout.closed


def test_a_watch_that_fails_closes_the_workers_pipe():
    """Only an interrupt leaves the pipe open: a malformed step report (or a failed read) ends the
    watch with its error, the pipe closed at once, so that the worker, left on its own, ends at its
    next report (reporter) rather than when the pipe is collected."""
    worker = subprocess.Popen([sys.executable, "-c", "import time; print('step x', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE)
    try:
        with pytest.raises(ValueError):
            supervisor._watch(worker, [], [])
        assert worker.stdout is not None and worker.stdout.closed
    finally:
        worker.kill()
        worker.wait()


def test_a_stopping_worker_that_writes_on_is_read_meanwhile_not_blocked():
    """While the supervisor waits for its interrupted worker, the worker's stdout is read: one that
    writes more than a pipe holds as it stops still ends by itself, at once."""
    import time

    worker = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdout.write('x' * 1_000_000); sys.stdout.flush()"],
                              stdout=subprocess.PIPE)
    began = time.monotonic()
    assert supervisor._stopped(worker, 60.0)
    assert time.monotonic() - began < 30 and worker.returncode == 0 and worker.stdout is not None and worker.stdout.closed


def test_a_worker_that_does_not_stop_is_killed_and_the_interrupt_stays_the_outcome(tmp_path, monkeypatch):
    """A worker that ignores the SIGTERM passed on (or sits in a long C call) is killed once the wait
    is over, and said so; the suite still ends as interrupted (Terminated, not a TimeoutExpired
    that would count the run as aborted), and no worker is left training."""
    import time

    import torch
    from short_lmchar import ShortLmChar

    from suite.run.runner import RunOptions

    started: list[subprocess.Popen] = []

    def deaf_worker(task_path):
        worker = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                                   "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                   "print('step 1', flush=True)\n"
                                   "while True:\n    sys.stdout.write('step 1\\n' * 1000); sys.stdout.flush(); time.sleep(0.01)\n"],
                                  stdout=subprocess.PIPE)
        started.append(worker)
        return worker

    def watch_then_stopped(proc, pending, deadlines):
        assert proc.stdout is not None and proc.stdout.readline() == b"step 1\n"  # it has set SIGTERM aside
        raise signals.Terminated()

    said = []
    monkeypatch.setattr(supervisor, "_spawn", deaf_worker)
    monkeypatch.setattr(supervisor, "_watch", watch_then_stopped)
    monkeypatch.setattr(supervisor, "STOP_WAIT_S", 1.0)
    options = RunOptions(device=torch.device("cpu"), checkpoint_dir=str(tmp_path), inject_failures=(30,))
    began = time.monotonic()
    try:
        with pytest.raises(signals.Terminated) as stopped:
            supervisor.run_supervised(ShortLmChar(), "smoke", 1, options,
                                      progress=lambda event, **f: said.append((event, f)))
    finally:
        for worker in started:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    assert time.monotonic() - began < 30
    assert type(stopped.value) is signals.Terminated and getattr(stopped.value, "record", None) is None
    assert started[0].returncode == -signal.SIGKILL
    assert said == [("unstopped", {"workload": "lm-char", "seed": 1, "waited_s": 1.0, "kept": False})]


def test_a_supervised_worker_holds_a_sigterm_while_it_writes_its_record(tmp_path, monkeypatch):
    """A SIGTERM that lands while the worker writes its record (a second stop, past the echo window)
    waits until the record is written: the run is not lost."""
    import pickle

    record = {"status": "complete", "steps": 40}
    task = supervisor.WorkerTask(None, "smoke", 1, None, None, str(tmp_path / "record.json"))  # type: ignore[arg-type]
    (tmp_path / "task.pkl").write_bytes(pickle.dumps(task))
    write = supervisor.write_atomic

    def sigterm_then_write(path, text):
        os.kill(os.getpid(), signal.SIGTERM)
        write(path, text)

    monkeypatch.setattr(supervisor, "run_one", lambda *a, **k: dict(record))
    monkeypatch.setattr(supervisor, "write_atomic", sigterm_then_write)
    monkeypatch.setattr(signals, "ECHO_S", 0.0)
    previous = {signal.SIGTERM: signal.getsignal(signal.SIGTERM), signal.SIGINT: signal.getsignal(signal.SIGINT)}
    try:
        try:
            status = supervisor.worker_main(str(tmp_path / "task.pkl"))
        except signals.Terminated:
            pytest.fail("the SIGTERM was raised inside the record's write")
    finally:
        signals.restore(previous)
    assert status == 0
    assert json.loads((tmp_path / "record.json").read_text()) == record


def test_an_orphaned_process_ends_with_one_status_defined_once():
    """The supervisor's worker and run-own's script (or rank) end with the same status when what
    watched them is gone, defined once (suite/run/signals.py): a failure's 1, neither a stop's
    130/143 nor a kill's."""
    import ast
    from pathlib import Path

    from suite.api import edges as edges_api

    suite = Path(__file__).resolve().parent.parent / "suite"
    defined = [str(path.relative_to(suite)) for path in sorted(suite.rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ORPHANED_STATUS" for t in node.targets)]
    assert defined == ["run/signals.py"]
    assert signals.ORPHANED_STATUS == edges_api.ORPHANED_STATUS == supervisor.ORPHANED_STATUS == 1


def test_a_worker_reports_its_steps_while_its_supervisor_lives():
    r, w = os.pipe()
    try:
        supervisor.reporter(w, os.getppid())(7)
        assert os.read(r, 100) == b"step 7\n"
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.slow
def test_a_run_failed_by_a_full_disk_goes_on_under_resume(data_dir, tmp_path, monkeypatch):
    """An OSError (here ENOSPC writing the step-20 checkpoint) fails the run, but keeps no
    finished record: run again, it goes on from the step-10 checkpoint, as after a kill."""
    import errno

    from suite.run import runner

    real_save = runner.save_checkpoint
    saved = []

    def full_at_20(*args, **kwargs):
        saved.append(1)
        if len(saved) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(*args, **kwargs)

    monkeypatch.setattr(runner, "save_checkpoint", full_at_20)
    first = run_short(data_dir, tmp_path, checkpoint_every=10)
    assert first["status"] == "failed" and first["error"].startswith("OSError after 20 of")
    assert not (tmp_path / "lm-char-seed1" / "finished-record.json").exists()
    monkeypatch.setattr(runner, "save_checkpoint", real_save)
    again = run_short(data_dir, tmp_path, checkpoint_every=10)
    assert again["status"] == "complete"
    loads = [e for e in mllog.parse((tmp_path / "lm-char-seed1" / "events.log").read_text().splitlines())
             if e.key == "checkpoint_load_stop"]
    assert [e.metadata.get("step") for e in loads] == [10]


def test_a_run_failed_by_its_own_file_error_is_kept_as_finished(data_dir, tmp_path, monkeypatch):
    """Only the machine's errors (runner.MACHINE_ERRNOS: a full disk, a failing or read-only one)
    leave a failed run to go on under --resume; a FileNotFoundError of the run's own is its failure,
    kept as finished (review of the full-disk change, L3)."""
    from suite.run import runner

    real_save = runner.save_checkpoint
    saved = []

    def missing_at_20(*args, **kwargs):
        saved.append(1)
        if len(saved) == 2:
            raise FileNotFoundError(2, "No such file or directory", "the-run's-own-file")
        return real_save(*args, **kwargs)

    monkeypatch.setattr(runner, "save_checkpoint", missing_at_20)
    first = run_short(data_dir, tmp_path, checkpoint_every=10)
    assert first["status"] == "failed" and first["error"].startswith("FileNotFoundError after 20 of")
    assert (tmp_path / "lm-char-seed1" / "finished-record.json").exists()
