"""Signals in a training process: SIGTERM turned into an interrupt, held back while a finished
run's record is saved, and an interrupt lost inside a callback raised again at the next step.
"""
from __future__ import annotations

import contextlib


class Terminated(KeyboardInterrupt):
    """SIGTERM (see :func:`stop_on_sigterm`), handled as an interrupt so that the runs so far
    are written. Slurm, ``timeout`` and ``docker stop`` send it; torchrun sends it to the
    other workers after one failed."""


class _Sigterm:
    """SIGTERM's state in a torchrun worker: raised at once while a run trains (``armed``);
    noted (``pending``) while the run's record is being put together, so that it is not lost."""

    armed = True
    pending = False
    received = False


class _Undelivered:
    """The interrupt a signal raised and no run has caught yet. Python raises it wherever the
    main thread is, and one raised inside a weak-reference callback or a finalizer (torch.compile
    runs many) is printed and lost; the step loop raises it again (:func:`stop_if_signalled`)."""

    interrupt: type[KeyboardInterrupt] | None = None


def stop_on_sigterm() -> None:
    """Turn SIGTERM into :class:`Terminated` in this process, and note SIGINT (still raised as
    KeyboardInterrupt) so that one lost in a callback is raised again at the next step."""
    import signal

    def on_sigterm(signum, frame):
        _Sigterm.received = True
        if not _Sigterm.armed:
            _Sigterm.pending = True
            return
        _Undelivered.interrupt = Terminated
        raise Terminated()

    def on_sigint(signum, frame):
        _Undelivered.interrupt = KeyboardInterrupt
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
        signal.signal(signal.SIGINT, on_sigint)


def stop_if_signalled() -> None:
    """Raise the interrupt of a signal whose exception was lost (see :class:`_Undelivered`)."""
    if _Undelivered.interrupt is not None:
        raise _Undelivered.interrupt()


def sigterm_received() -> bool:
    """True once this process has received SIGTERM."""
    return _Sigterm.received


@contextlib.contextmanager
def sigterm_deferred():
    """Hold SIGTERM back while a finished run's record is put together and saved."""
    was, _Sigterm.armed = _Sigterm.armed, False
    try:
        yield
    finally:
        _Sigterm.armed = was

