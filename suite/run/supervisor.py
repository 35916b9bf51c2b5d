"""Fault injection: a supervisor runs the training worker as a child process, kills it with a
real SIGKILL at injected steps (or at random times of a given rate), and restarts it; the
restarted worker resumes from the run's newest good checkpoint.

The worker reports every finished step on its stdout (``step N``); the supervisor kills it when
it reports an injected step, or when the next failure time of a Poisson process of
``failure_rate_per_hour`` (seeded) comes. Every injected step fires once. The supervisor logs
``failure`` (with the last step the worker reported) and ``restart`` into the run's event log,
between the dead worker's events and the new worker's; the new worker logs its checkpoint load
and the steps lost. The last worker writes the run's record, which the supervisor returns.

Run as ``python -m suite.run.supervisor TASK`` this module is the worker.
"""
from __future__ import annotations

import contextlib
import json
import os
import pickle
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from suite.figures import goodput
from suite.meters import host_load
from suite.meters.telemetry import SUPERVISOR_PID
from suite.record import mllog
from suite.record.errors import GoodbenchError
from suite.record.results import write_atomic
from suite.run.job_control import JobControl, paused_s
from suite.run.runner import Progress, RunOptions, run_dir, run_one
from suite.run.signals import ORPHANED_STATUS, Terminated, hangup_as_sigterm, holding
from suite.trust.labels import names_withheld
from workloads.base import Workload

MAX_RANDOM_FAILURES = 10  # a rate-driven run stops injecting after this many kills

STOP_WAIT_S = 120.0
"""How long an interrupted supervisor waits for its worker to write its partial record and end
before it kills it (:func:`_stopped`)."""


@dataclass
class WorkerTask:
    """What a worker process runs; pickled into the run's directory."""

    workload: Workload
    scale: str
    seed: int
    options: RunOptions
    progress: Progress | None
    record_path: str


@dataclass
class Outcome:
    """How a worker ended: killed by the supervisor (at ``step``, for ``cause``) or exited."""

    killed: bool
    step: int
    cause: str = ""
    time_s: float = 0.0


def failure_times(rate_per_hour: float, seed: int, count: int = MAX_RANDOM_FAILURES) -> list[float]:
    """Offsets in seconds of the first ``count`` failures of a Poisson process of this rate."""
    gaps = np.random.default_rng(seed).exponential(3600.0 / rate_per_hour, size=count)
    return np.cumsum(gaps).tolist()


def run_supervised(workload: Workload, scale: str, seed: int, options: RunOptions,
                   progress: Progress = lambda *a, **k: None) -> dict:
    """Run one seeded run under the supervisor, injecting the failures ``options`` asks for."""
    directory = run_dir(options, workload, seed)
    if directory is None:
        raise GoodbenchError("failure injection needs a checkpoint directory")
    directory.mkdir(parents=True, exist_ok=True)
    task_path, record_path = directory / "worker-task.pkl", directory / "record.json"
    record_path.unlink(missing_ok=True)
    worker_options = replace(options, inject_failures=(), failure_rate_per_hour=None)
    task = WorkerTask(workload, scale, seed, worker_options, _picklable(progress), str(record_path))
    task_path.write_bytes(pickle.dumps(task))
    log = mllog.EventLog(directory / "events.log")
    # a resumed suite continues the run's failure schedules: what fired does not fire again
    logged = log.all_lines()
    causes = [str(e.metadata.get("cause", "")) for e in mllog.parse(logged) if e.key == "failure"]
    attempt = len(causes)
    injected = sum(1 for c in causes if c.startswith("injected"))
    pending = sorted(set(options.inject_failures))[injected:]
    began = time.time()
    deadlines = []
    if options.failure_rate_per_hour:  # the Poisson process goes on from its last failure
        done = attempt - injected
        times = failure_times(options.failure_rate_per_hour, options.failure_seed)
        offset = times[done - 1] if 0 < done <= len(times) else 0.0
        deadlines = [began + t - offset for t in times[done:]]
    # a run begun here is watched whole, every worker and the restarts between them (_whole_watch)
    watch = host_load.Watch().start() if not logged else None
    stops = contextlib.ExitStack()
    try:
        # the terminal closed (SIGHUP): a stop as SIGTERM is, passed on; the worker, in a group of its own
        # (_spawn), would not see it and would train on unrecorded
        stops.enter_context(hangup_as_sigterm())
        # Ctrl-Z (SIGTSTP) reaches this process alone too: the worker's group is stopped and continued with it
        job = stops.enter_context(JobControl(directory / "events.log"))
        while True:
            proc = _spawn(task_path)
            if watch is not None:
                watch.own(proc.pid)  # the worker and every process under it are the run's own
            job.worker = proc
            try:
                outcome = _watch(proc, pending, deadlines)
            except KeyboardInterrupt as exc:
                # passed on at once, SIGTERM as SIGTERM and SIGINT as SIGINT (the worker records which):
                # the worker has a process group of its own (_spawn), so a terminal's Ctrl-C reaches
                # this process alone, as do kill -INT PID, an IDE's stop and timeout -s INT. A SIGTERM
                # that also reached the worker (Slurm's scancel signals every process of the step) is
                # the same stop to it (signals.ECHO_S)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
                with holding():  # a second Ctrl-C or SIGTERM now would drop the worker's partial record
                    ended = _stopped(proc, STOP_WAIT_S)
                if record_path.exists():
                    exc.record = json.loads(record_path.read_text())  # type: ignore[attr-defined]  # for session.run_suite
                if not ended:
                    progress("unstopped", workload=workload.id, seed=seed, waited_s=STOP_WAIT_S,
                             kept=record_path.exists())
                raise
            if not outcome.killed:
                break
            log.drop_torn_tail()  # the killed worker may have died inside a line of the shared log
            log.event("failure", "SIGKILL", {"step": outcome.step, "attempt": attempt,
                                             "cause": outcome.cause}, time_s=outcome.time_s)
            progress("killed", workload=workload.id, seed=seed, step=outcome.step,
                     cause=outcome.cause)
            attempt += 1
            log.event("restart", attempt, {"attempt": attempt})
    finally:
        stops.close()
        log.close()
        whole = watch.stop() if watch is not None else None
    if proc.returncode != 0 or not record_path.exists():
        raise GoodbenchError(f"the training worker of {workload.id} seed {seed} exited with "
                             f"status {proc.returncode} (see its output above)")
    record = json.loads(record_path.read_text())
    if attempt > 0:
        _whole_watch(record, whole)
    record["faults"] = {"inject_failures": sorted(set(options.inject_failures)),
                        "failure_rate_per_hour": options.failure_rate_per_hour,
                        "failure_seed": options.failure_seed if options.failure_rate_per_hour else None,
                        "kills": attempt}
    paused = paused_s(record.get("event_log") or [])
    if paused:  # the worker's clock ran on while it was stopped (Ctrl-Z): its timed window holds the pause
        record["faults"]["paused_s"] = paused
    return record


def _whole_watch(record: dict, whole: dict | None) -> None:
    """Put the supervisor's watch of a killed and restarted run (``whole``: every worker's life and
    the restarts between them, what a killed worker watched after its last checkpoint included) in
    place of the last worker's ``host_load.during``, which adds each earlier worker's watch up to the
    checkpoint the next went on from only; ``attempts``: the worker processes the run's event log
    holds (what the validator counts), ``watched``: "supervisor". Nothing where the supervisor did not
    watch the run from its start (a resumed suite: an earlier supervisor saw its first workers), or
    its watch read nothing."""
    load_record = record.get("host_load")
    if whole is None or not isinstance(load_record, dict):
        return
    events = mllog.parse(record.get("event_log") or [])
    attempts = len(goodput.split_attempts(events))
    load_record["during"] = {**(names_withheld(whole) or whole), **({"attempts": attempts} if attempts > 1 else {}),
                             "watched": "supervisor"}


def _picklable(progress: Progress) -> Progress | None:
    try:
        pickle.dumps(progress)
        return progress
    except (pickle.PicklingError, AttributeError, TypeError):
        return None


def _spawn(task_path: Path) -> subprocess.Popen:
    """Start a worker; it imports what this process can (same ``sys.path``). It is told this
    process's PID: this process holds a CUDA context on a GPU run (the matmul ceiling was
    measured here), which the worker's telemetry must not count as another process. It leads a
    process group of its own: a terminal's Ctrl-C reaches this process alone, which passes it on
    once (:func:`run_supervised`), and a kill of the worker can take its children too."""
    from suite.run import child_python

    env = child_python.environment({**os.environ, SUPERVISOR_PID: str(os.getpid())}, path=[p for p in sys.path if p])
    return subprocess.Popen(child_python.command("-m", "suite.run.supervisor", str(task_path)),
                            stdout=subprocess.PIPE, env=env, process_group=0)


def _kill_worker(proc: subprocess.Popen) -> None:
    """SIGKILL the worker and, where it leads a process group of its own (:func:`_spawn`), the
    whole group: its children (DataLoader workers) are not left running."""
    try:
        own_group = os.getpgid(proc.pid) == proc.pid != os.getpgrp()
    except ProcessLookupError:
        own_group = False
    try:
        if own_group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _watch(proc: subprocess.Popen, pending: list[int], deadlines: list[float]) -> Outcome:
    """Follow the worker's step reports; SIGKILL it at the next injected step or deadline."""
    stdout = proc.stdout
    if stdout is None:
        raise ValueError("the worker was started without a stdout pipe")
    fd = stdout.fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    buffer, step = b"", 0
    interrupted = False
    try:
        while True:
            timeout = max(0.0, deadlines[0] - time.time()) if deadlines else None
            if not selector.select(timeout):
                deadlines.pop(0)
                return _kill(proc, step, "random failure (rate)")
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait()
                return Outcome(killed=False, step=step)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.startswith(b"step "):
                    step = int(line[5:])
            if pending and step >= pending[0]:
                cause = f"injected at step {pending.pop(0)}"
                return _kill(proc, step, cause)
    except KeyboardInterrupt:  # the pipe stays open until the worker has stopped (_stopped), so that
        interrupted = True     # a step it reports meanwhile is not taken for its supervisor gone (reporter)
        raise
    finally:
        selector.close()
        if not interrupted:  # an error (a malformed report, a failed read) closes it: the worker ends
            stdout.close()   # at its next report, as it would with its supervisor gone


def _stopped(proc: subprocess.Popen, wait_s: float) -> bool:
    """Wait at most ``wait_s`` seconds for an interrupted worker to end, reading its stdout
    meanwhile (its reports dropped) so that a worker that writes on is not blocked on a full pipe,
    then close the pipe. A worker still running then is killed (SIGKILL), with its process group
    (:func:`_kill_worker`): False."""
    deadline = time.monotonic() + wait_s
    stdout = proc.stdout
    try:
        if stdout is not None and not stdout.closed:
            fd = stdout.fileno()
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                while (left := deadline - time.monotonic()) > 0 and proc.poll() is None:
                    if selector.select(min(left, 0.1)) and not os.read(fd, 65536):
                        break  # its end of the pipe closed: the worker has ended
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            return True
        except subprocess.TimeoutExpired:
            _kill_worker(proc)
            proc.wait()
            return False
    finally:
        if stdout is not None:
            stdout.close()


def _kill(proc: subprocess.Popen, step: int, cause: str) -> Outcome:
    """The injected failure: SIGKILL the worker with its process group (:func:`_kill_worker`), as a
    lost node takes every process of it: a child it started (torch.compile's pool) is not left
    running, orphaned, into the next worker's time, where the supervisor's watch would count it as
    another process."""
    when = time.time()
    _kill_worker(proc)
    proc.wait()
    return Outcome(killed=True, step=step, cause=cause, time_s=when)


def reporter(fd: int, parent: int) -> Callable[[int], None]:
    """The worker's step report, written to ``fd`` (its stdout, the supervisor's pipe). A supervisor
    gone (the pipe broken, or this process's parent is no longer ``parent``) ends the worker at
    once, as the supervisor's kill would have: no record is written — a failed one kept in the
    run's directory would be handed back by ``--resume`` as the run's end —, so that ``goodbench
    run … --resume`` goes on from the newest checkpoint."""

    def report(step: int) -> None:
        try:
            if os.getppid() != parent:
                raise BrokenPipeError("the supervisor is gone")
            os.write(fd, b"step %d\n" % step)
        except BrokenPipeError:
            with contextlib.suppress(OSError):
                os.write(2, b"goodbench: the training worker's supervisor (goodbench run) is gone: the worker ends "
                            b"here, keeping no record, as if killed with it; goodbench run ... --resume DIR goes on "
                            b"from the newest checkpoint\n")
            os._exit(ORPHANED_STATUS)

    return report


def worker_main(task_path: str) -> int:
    """The worker: run the task, reporting each step on stdout; write the record as JSON. A SIGTERM
    stops it as Ctrl-C does (the supervisor's, passed on, or one Slurm sends every process of the
    step), its partial record written."""
    from suite.run.signals import stop_on_sigterm

    stop_on_sigterm()
    parent = int(os.environ.get(SUPERVISOR_PID) or os.getppid())  # the supervisor (_spawn names it)
    task: WorkerTask = pickle.loads(Path(task_path).read_bytes())
    status = 0
    try:
        record = run_one(task.workload, task.scale, task.seed, task.options,
                         task.progress or (lambda *a, **k: None), on_step=reporter(1, parent))
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "record", None)
        if partial is None:
            return 130
        record, status = partial, 130
    with holding():  # a SIGTERM now waits until the record is written, then is dropped: the record is the
        # run's outcome either way, and a supervisor stopped too reads it and stops the suite
        write_atomic(task.record_path, json.dumps(record, allow_nan=False))
    return status


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1]))
