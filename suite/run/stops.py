"""A launcher's stops: the SIGTERM and Ctrl-C that stop a launcher while its child runs, noted (the
launcher exits with the signal's status, 143 or 130) and SIGTERM passed on, so that the child writes
its runs so far and the launcher waits for it. ``goodbench run-own`` passes SIGTERM on as SIGTERM
(:mod:`suite.run.own_launch`); ``goodbench run --nproc-per-node`` hands torchrun SIGINT, noted as
SIGTERM for the workers (:mod:`suite.run.launch`). Torch-free."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any


def send_sigterm(child: subprocess.Popen) -> None:
    """Pass SIGTERM on as SIGTERM (run-own's script, or torchrun, which hands it to every rank)."""
    os.kill(child.pid, signal.SIGTERM)


class Stops:
    """The signals that stopped the launcher while its child ran, or while the child's file was
    sealed: Ctrl-C (which the terminal sends the child too) and SIGTERM, passed on to the child
    through ``pass_on`` (default :func:`send_sigterm`) while it runs. Left unhandled, SIGTERM ended
    the launcher at once, silently, and the child trained on as an orphan. Use as a context
    manager: the handler is the launcher's while it is open."""

    def __init__(self, pass_on: Callable[[subprocess.Popen], None] = send_sigterm) -> None:
        self.received: list[int] = []
        self.child: subprocess.Popen | None = None
        self.pass_on = pass_on
        self._open = False  # the handlers are the launcher's only while open
        self._previous_int: Any = None

    def __enter__(self) -> Stops:
        self._previous = signal.signal(signal.SIGTERM, self._on_sigterm)
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)
        if self._previous_int is not None:
            signal.signal(signal.SIGINT, self._previous_int)
        self._open, self._previous_int = False, None

    def hold_interrupts(self) -> None:
        """From the child's end until the context closes, a Ctrl-C is noted, not raised: the
        launcher is adding the second clock to what the child wrote, which a raised interrupt
        would leave one clock and unsigned."""
        if self._open and self._previous_int is None:
            self._previous_int = signal.signal(signal.SIGINT, lambda signum, frame: self.interrupted())

    def _on_sigterm(self, signum, frame) -> None:
        self.received.append(signal.SIGTERM)
        self.forward()

    def started(self, child: subprocess.Popen) -> None:
        """The child, started: a SIGTERM that came before is passed on now."""
        self.child = child
        if signal.SIGTERM in self.received:
            self.forward()

    def forward(self) -> None:
        """Pass SIGTERM on to the child, where it runs."""
        if self.child is not None and self.child.returncode is None:
            with contextlib.suppress(OSError):
                self.pass_on(self.child)

    def interrupted(self) -> None:
        self.received.append(signal.SIGINT)

    @property
    def status(self) -> int | None:
        """The shell's status of the stop: 143 after SIGTERM, 130 after Ctrl-C; None: not stopped."""
        if signal.SIGTERM in self.received:
            return 143
        return 130 if signal.SIGINT in self.received else None

    @property
    def words(self) -> str:
        """What stopped it, as run-own says it ("stopped by SIGTERM", "interrupted")."""
        return "stopped by SIGTERM" if self.status == 143 else "interrupted"
