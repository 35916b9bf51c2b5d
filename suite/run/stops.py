"""A launcher's stops: the SIGTERM and Ctrl-C that stop a launcher while its child runs, noted (the
launcher exits with the signal's status, 143 or 130) and SIGTERM passed on, so that the child writes
its runs so far and the launcher waits for it. ``goodbench run-own`` passes SIGTERM on as SIGTERM
(:mod:`suite.run.own_launch`); ``goodbench run --nproc-per-node`` hands torchrun SIGINT, noted as
SIGTERM for the workers (:mod:`suite.run.launch`). A SIGTERM sent to the launcher's whole process
group has reached a child in that group already (torchrun under run-own): it is not sent another
(:class:`GroupWitness`). Torch-free."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any


def send_sigterm(child: subprocess.Popen) -> None:
    """Pass SIGTERM on as SIGTERM (run-own's script, or torchrun, which hands it to every rank)."""
    os.kill(child.pid, signal.SIGTERM)


WITNESS_WAIT_S = 1.0
"""How long a SIGTERM's handler waits for the :class:`GroupWitness` to end of it: a group-wide
SIGTERM ends it at once (the kernel's default action, no Python run), so it is gone within the
moment its exit takes; one still there after this is taken as not reached (the SIGTERM is passed on,
as without a witness)."""

# the witness: Ctrl-C ignored, SIGTERM's default kept; it ends itself within a second of its launcher's end
_WITNESS = ("import os, signal, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "while os.getppid() == int(sys.argv[1]):\n    time.sleep(1.0)\n")


class GroupWitness:
    """A process in the launcher's process group that SIGTERM ends (its default action; Ctrl-C it
    ignores). Where a SIGTERM that reached the launcher ended it too, the SIGTERM was sent to the
    whole group (``kill -TERM -PGID``, ``timeout``, a shell's ``kill %1``), and so reached the
    launcher's child as well where the child shares the group (torchrun under ``run-own
    --nproc-per-node``): the launcher does not send it another. Where it did not, the SIGTERM was
    the launcher's alone (``kill PID``, ``docker stop``) and is passed on. A signal handler cannot
    tell one from the other: Linux gives the same ``si_code`` to both."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _WITNESS, str(os.getpid())], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def reached(self, wait_s: float = WITNESS_WAIT_S) -> bool:
        """True where a SIGTERM ended the witness (waiting at most ``wait_s`` for it to end)."""
        try:
            return self.proc.wait(timeout=wait_s) == -signal.SIGTERM
        except subprocess.TimeoutExpired:
            return False

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        self.proc.wait()


def shares_group(child: subprocess.Popen) -> bool:
    """True where ``child`` is in this process's process group (a group-wide signal reaches both)."""
    try:
        return os.getpgid(child.pid) == os.getpgrp()
    except OSError:
        return False


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
        self.witness: GroupWitness | None = None
        self.group_wide = False  # a SIGTERM to the whole group reached the child too: none sent

    def __enter__(self) -> Stops:
        self._previous = signal.signal(signal.SIGTERM, self._on_sigterm)
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)
        if self.witness is not None:
            self.witness.close()
            self.witness = None
        if self._previous_int is not None:
            signal.signal(signal.SIGINT, self._previous_int)
        self._open, self._previous_int = False, None

    def hold_interrupts(self) -> None:
        """From the child's end until the context closes, a Ctrl-C is noted, not raised: the
        launcher is adding the second clock to what the child wrote, which a raised interrupt
        would leave one clock and unsigned."""
        if self._open and self._previous_int is None:
            self._previous_int = signal.signal(signal.SIGINT, lambda signum, frame: self.interrupted())

    def watch_group(self) -> None:
        """Before a child that shares the launcher's process group starts: a SIGTERM sent to the
        whole group, which reaches the child too, is not passed on again (:class:`GroupWitness`).
        torchrun takes a second SIGTERM in its shutdown as a new one and ends there, before its
        ranks have stopped and written their runs."""
        if self._open and self.witness is None:
            self.witness = GroupWitness()

    def _on_sigterm(self, signum, frame) -> None:
        self.received.append(signal.SIGTERM)
        child, witness = self.child, self.witness
        if child is not None and witness is not None and shares_group(child):
            self.witness = None  # one delivery told apart: a later SIGTERM is passed on
            reached = witness.reached()
            witness.close()
            if reached:
                self.group_wide = True
                return
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
