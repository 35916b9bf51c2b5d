"""goodbench's helper threads, which leave the stop signals to the main thread.

Linux delivers a signal sent to the whole process (``kill``, a group's SIGTERM, a terminal's
Ctrl-C) to any thread that does not block it, and Python runs the handler in the main thread
whichever thread took it. Taken by a helper thread, a stop the main thread holds back (blocked with
``pthread_sigmask``) is handled at once, and one the main thread waits in a system call for does not
interrupt the wait. Each helper thread goodbench starts where stop signals are handled (a training
process, a launcher) blocks them first (:func:`daemon`). Torch-free.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Callable

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP, signal.SIGCONT,
                          signal.SIGUSR1, signal.SIGUSR2})
"""The signals a helper thread never takes, so that they reach the main thread."""


def daemon(target: Callable[[], object], name: str) -> threading.Thread:
    """A daemon thread named ``name`` (not started) that runs ``target`` with :data:`STOP_SIGNALS`
    blocked in it (the mask is set as the thread begins, before ``target`` runs)."""

    def run() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        target()

    return threading.Thread(target=run, name=name, daemon=True)
