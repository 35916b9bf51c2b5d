"""Signals in a training process: SIGTERM turned into an interrupt, SIGTERM and SIGINT held back
while a run's record is put together and saved (a second Ctrl-C then does not drop the run the
first one ended), and an interrupt lost inside a callback raised again at the next step.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM (see :func:`stop_on_sigterm`), handled as an interrupt so that the runs so far
    are written. Slurm, ``timeout`` and ``docker stop`` send it; torchrun sends it to the
    other workers after one failed."""


class Stopped(Terminated):
    """SIGTERM to ``goodbench run --nproc-per-node``'s launcher, which hands the workers SIGINT (torchrun
    passes it on; :mod:`suite.run.launch`) and notes SIGTERM in the file ``$GOODBENCH_STOP_NOTE``
    names: recorded as SIGTERM, and, unlike torchrun's own SIGTERM after a worker failed, an
    interrupt of the whole job, not a failure."""


STOP_NOTE_ENV = "GOODBENCH_STOP_NOTE"

ORPHANED_STATUS = 1
"""The exit status of a process that ends at once, as a kill would have ended it, because what
watched it is gone: run-own's launcher or torchrun (:func:`suite.api.edges.orphaned`), or
``goodbench run``'s fault-injection supervisor (:func:`suite.run.supervisor.reporter`)."""


def stopped_by_launcher() -> bool:
    """True where this worker's launcher noted that SIGTERM stopped it (:class:`Stopped`)."""
    import os

    note = os.environ.get(STOP_NOTE_ENV)
    if not note:
        return False
    try:
        with open(note, encoding="ascii") as f:
            return f.read(16).strip() == "SIGTERM"
    except (OSError, ValueError):
        return False


ECHO_S = 1.0
"""A SIGTERM this soon after the first (raised at once, or held while a record was kept and raised
after it) is the same stop come twice: ``kill -TERM -PGID`` (or Slurm's ``scancel``) reaches the
script and ``goodbench run-own``, which passes it on (:class:`suite.run.stops.Stops`), or a
supervised worker and its supervisor. Raised again, it could land where the first one's runs are
about to be kept, before they are held, and lose them; it is noted instead (``pending``), as a
SIGTERM held while a record is kept is. One noted so and still not taken when a hold begins
:data:`ECHO_S` or more after it came (a script caught the first interrupt and went on) is
forgotten there, not raised at that later, unrelated hold."""


class _Sigterm:
    """SIGTERM's and SIGINT's state in a training process: raised at once while a run trains
    (``armed``); noted while the run's record is being put together (``pending`` for SIGTERM,
    ``interrupted`` for SIGINT), so that the record is kept and the signal is not lost.
    ``first_at``: when the first SIGTERM of the latest stop came, raised or held (its echoes, within
    :data:`ECHO_S`, do not move it); ``echo_at``: when the echo that made ``pending`` came, None
    where a SIGTERM held while a record was kept did."""

    armed = True
    pending = False
    interrupted = False
    received = False
    hung_up = False
    first_at: float | None = None
    echo_at: float | None = None


class _Undelivered:
    """The interrupt a signal raised and no run has caught yet. Python raises it wherever the
    main thread is, and one raised inside a weak-reference callback or a finalizer (torch.compile
    runs many) is printed and lost; the step loop raises it again (:func:`stop_if_signalled`)."""

    interrupt: type[KeyboardInterrupt] | None = None


def stop_on_sigterm() -> dict:
    """Turn SIGTERM into :class:`Terminated` in this process (a second one within :data:`ECHO_S`
    noted, not raised), and note SIGINT (still raised as KeyboardInterrupt) so that one lost in a
    callback is raised again at the next step; both held inside :func:`holding`. Returns
    the handlers replaced (for :func:`restore`)."""
    import signal
    import time

    previous = {signal.SIGTERM: signal.getsignal(signal.SIGTERM)}

    def on_sigterm(signum, frame):
        _Sigterm.received = True
        now = time.monotonic()
        echo = _Sigterm.first_at is not None and now - _Sigterm.first_at < ECHO_S
        if not echo:  # the first of a stop opens the window, held or raised
            _Sigterm.first_at = now
        if not _Sigterm.armed:  # held while a record is kept: taken when the hold ends
            _Sigterm.pending, _Sigterm.echo_at = True, None
            return
        if echo:
            if not _Sigterm.pending:
                _Sigterm.echo_at = now
            _Sigterm.pending = True
            return
        _Undelivered.interrupt = Terminated
        raise Terminated()

    def on_sigint(signum, frame):
        if not _Sigterm.armed:  # a second Ctrl-C while the interrupted run's record is kept
            _Sigterm.interrupted = True
            return
        interrupt = Stopped if stopped_by_launcher() else KeyboardInterrupt
        _Undelivered.interrupt = interrupt
        raise interrupt()

    signal.signal(signal.SIGTERM, on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
        previous[signal.SIGINT] = signal.default_int_handler
        signal.signal(signal.SIGINT, on_sigint)
    return previous


def restore(previous: dict, installed: dict | None = None) -> None:
    """Put back the handlers :func:`stop_on_sigterm` replaced, and forget what they noted (an
    interrupt, a held signal, SIGTERM received), so that a later session in the process starts
    clean. With ``installed`` (:func:`installed`, read right after :func:`stop_on_sigterm`), a
    signal's handler is put back only where the installed one is still there: a handler another
    library set meanwhile (a training framework's) is left alone."""
    import signal

    for signum, handler in previous.items():
        if installed is None or signal.getsignal(signum) is installed.get(signum):
            signal.signal(signum, handler)
    _Undelivered.interrupt = None
    _Sigterm.armed, _Sigterm.pending, _Sigterm.interrupted, _Sigterm.received = True, False, False, False
    _Sigterm.hung_up = False
    _Sigterm.first_at = _Sigterm.echo_at = None


def installed(previous: dict) -> dict:
    """The handlers now set for the signals :func:`stop_on_sigterm` replaced (``previous``)."""
    import signal

    return {signum: signal.getsignal(signum) for signum in previous}


def _held_interrupt() -> KeyboardInterrupt | None:
    """The interrupt a signal held (:func:`holding`) or noted as an echo (:data:`ECHO_S`) asks for
    (cleared): :class:`Terminated` after SIGTERM, KeyboardInterrupt after SIGINT; None when none
    came."""
    held: KeyboardInterrupt | None = None
    if _Sigterm.pending:
        held = Terminated()
    elif _Sigterm.interrupted:
        held = KeyboardInterrupt()
    _Sigterm.pending = _Sigterm.interrupted = False
    _Sigterm.echo_at = None
    return held


def _forget_stale_echo() -> None:
    """Forget an echo noted :data:`ECHO_S` or more ago and never taken (the first interrupt was
    caught and the script went on): it is not a stop of what runs now."""
    import time

    echo_at = _Sigterm.echo_at
    if _Sigterm.pending and echo_at is not None and time.monotonic() - echo_at >= ECHO_S:
        _Sigterm.pending, _Sigterm.echo_at = False, None


def caught() -> None:
    """A run has caught the interrupt a signal raised and ends on it: the step loop no longer raises
    it again (:class:`_Undelivered`), and a later run in this process is not stopped by it."""
    _Undelivered.interrupt = None


def stop_if_signalled() -> None:
    """Raise the interrupt of a signal whose exception was lost (see :class:`_Undelivered`)."""
    if _Undelivered.interrupt is not None:
        raise _Undelivered.interrupt()


def sigterm_received() -> bool:
    """True once this process has received SIGTERM (or SIGHUP taken as one: :func:`hangup_as_sigterm`)."""
    return _Sigterm.received


def hangup_received() -> bool:
    """True once SIGHUP has stopped this process as SIGTERM (:func:`hangup_as_sigterm`)."""
    return _Sigterm.hung_up


@contextlib.contextmanager
def hangup_as_sigterm() -> Iterator[None]:
    """While the block runs, SIGHUP (the terminal closed, an ssh session dropped) stops this process
    as SIGTERM does: SIGTERM's handler (:func:`stop_on_sigterm`'s) takes it, so it is a SIGTERM to
    everything after (status 143, passed on as SIGTERM, recorded as SIGTERM), and
    :func:`hangup_received` says it came as SIGHUP. Left alone where SIGHUP is ignored (``nohup``)
    or handled already, or where SIGTERM has no handler here; put back at the block's end."""
    import signal

    sigterm = signal.getsignal(signal.SIGTERM)
    if not callable(sigterm) or signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL:
        yield
        return

    def on_sighup(signum, frame):
        _Sigterm.hung_up = True
        sigterm(signal.SIGTERM, frame)

    signal.signal(signal.SIGHUP, on_sighup)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGHUP) is on_sighup:
            signal.signal(signal.SIGHUP, signal.SIG_DFL)


class Held:
    """What came while :func:`holding`'s block ran: ``interrupt``, the interrupt a held signal asks
    for, None when none came or until the block has ended."""

    interrupt: KeyboardInterrupt | None = None


@contextlib.contextmanager
def holding(deliver: bool = False) -> Iterator[Held]:
    """Hold SIGTERM and SIGINT back while the block runs (the handlers of :func:`stop_on_sigterm`),
    then take what came meanwhile (cleared), before they are armed again: raised at the block's end
    with ``deliver``, else left in the yielded :class:`Held` for the caller to raise, return or drop.
    A block that raises takes nothing: its own error goes on, and a signal held meanwhile becomes
    the pending interrupt the next step raises (:func:`stop_if_signalled`; :func:`caught` clears
    it), so that a script that catches the error and goes on still stops promptly, not at some
    later, unrelated hold (a hold inside another leaves it noted for the outer one). An echo noted
    :data:`ECHO_S` or more before the hold begins, never taken, is forgotten."""
    held = Held()
    was, _Sigterm.armed = _Sigterm.armed, False
    _forget_stale_echo()
    try:
        yield held
    except BaseException:
        if was:  # the outermost hold: what it held is raised at the next step
            late = _held_interrupt()
            if late is not None and _Undelivered.interrupt is None:
                _Undelivered.interrupt = type(late)
        _Sigterm.armed = was
        raise
    held.interrupt = _held_interrupt()
    _Sigterm.armed = was
    came = _held_interrupt()  # one that came between the take and arming again: held too
    if held.interrupt is None:
        held.interrupt = came
    if deliver and held.interrupt is not None:
        raise held.interrupt


def killed_if_uncaught(stopped: Terminated, said: str) -> None:
    """Where ``stopped`` (raised by this process's SIGTERM handler) reaches the top of the script
    uncaught, end the process as SIGTERM's default would have (status 143 to a shell, -15 to its
    parent: Slurm, ``timeout``, systemd and torchrun see a stop, not a failure), saying ``said`` in
    one line rather than a traceback. Python turns only an exact KeyboardInterrupt into a death
    by its signal; a subclass ends with status 1. The exit handlers (:mod:`atexit`) run first, as
    they do for an uncaught KeyboardInterrupt; caught, the exception changes nothing."""
    import os
    import signal
    import sys

    previous = sys.excepthook

    def hook(kind, value, traceback) -> None:
        if value is not stopped:
            previous(kind, value, traceback)
            return
        sys.excepthook = previous
        try:
            print(said, file=sys.stderr, flush=True)
            import atexit

            atexit._run_exitfuncs()
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
        except BaseException:  # ending regardless
            pass
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        os._exit(128 + signal.SIGTERM)  # where the signal is blocked in this thread

    sys.excepthook = hook
