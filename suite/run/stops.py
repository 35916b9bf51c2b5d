"""A launcher's stops: the SIGTERM, SIGHUP and Ctrl-C that stop a launcher while its child runs, noted
(the launcher exits with the signal's status, 143 or 130) and passed on, so that the child writes
its runs so far and the launcher waits for it. ``goodbench run-own`` passes SIGTERM on as SIGTERM
(:mod:`suite.run.own_launch`); ``goodbench run --nproc-per-node`` hands torchrun SIGINT, noted as
SIGTERM for the workers (:mod:`suite.run.launch`). SIGHUP (the terminal closed) is a SIGTERM to all
that follows.

torchrun runs in a process group of its own (:func:`start_own_group`), as ``goodbench run``'s worker
does (:mod:`suite.run.supervisor`): a signal sent to the launcher's whole group (``kill -TERM -PGID``,
``timeout``, a shell's ``kill %1``, a terminal's Ctrl-C) reaches the launcher alone, which passes it
on once. Sharing the group, torchrun got such a SIGTERM twice, the group's and the launcher's, took
the second in its shutdown as a new stop and ended there, before its ranks had written their runs.
A launcher killed outright (SIGKILL) has the kernel send torchrun a signal (:func:`ending_with`), once
for each of the launcher's threads that ends while another lives: run-own's torchrun gets SIGKILL
(:mod:`suite.run.own_launch`: no file can be stamped without the launcher), ``goodbench run``'s a
signal of its own, which :mod:`suite.run.death_once` passes on once as SIGTERM (rank 0 writes the
runs so far). Torch-free."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any


def ending_with(launcher: int, death_signal: int = signal.SIGTERM):
    """A ``preexec_fn`` that has the kernel send the child ``death_signal`` when its launcher dies
    (Linux's ``PR_SET_PDEATHSIG``; nothing elsewhere). A launcher killed with SIGKILL left torchrun
    and its ranks training on, orphaned, and rank 0 wrote the file long after the user thought the
    run killed. Where the launcher died before the child could ask, the child sends itself the
    signal. The kernel sends it again as each other thread of the launcher ends (prctl(2): the
    child's parent is the thread that forked it, then another live one): a launcher with threads of
    its own sends more than one, which only SIGKILL, or a signal taken once
    (:mod:`suite.run.death_once`), bears."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: nothing is imported after the fork
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, death_signal)
        if os.getppid() != launcher:
            os.kill(os.getpid(), death_signal)

    return preexec


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def start_own_group(command: list[str], death_signal: int, **popen: Any) -> subprocess.Popen:
    """Start ``command`` (torchrun) leading a process group of its own, sent ``death_signal`` when
    this process dies (:func:`ending_with`: once per thread of this process, SIGKILL or a signal
    ``command`` takes once); ``popen``: Popen's other arguments. Its stops reach it through the
    launcher's :class:`Stops` alone, once each."""
    return subprocess.Popen(command, process_group=0, preexec_fn=ending_with(os.getpid(), death_signal), **popen)


def leads_own_group(child: subprocess.Popen) -> bool:
    """True where ``child`` leads a process group other than this process's: a signal to this
    process's group (a terminal's Ctrl-C) does not reach it."""
    try:
        return os.getpgid(child.pid) == child.pid != os.getpgrp()
    except OSError:
        return False


def send_sigterm(child: subprocess.Popen) -> None:
    """Pass SIGTERM on as SIGTERM (run-own's script, or torchrun, which hands it to every rank)."""
    os.kill(child.pid, signal.SIGTERM)


class Stops:
    """The signals that stopped the launcher while its child ran, or while the child's file was
    sealed: SIGTERM (and SIGHUP, taken as SIGTERM), passed on to the child through ``pass_on``
    (default :func:`send_sigterm`) while it runs, and Ctrl-C, passed on as SIGINT to a child that
    leads a process group of its own (a terminal's Ctrl-C reaches one in the launcher's group
    itself). Left unhandled, SIGTERM ended the launcher at once, silently, and the child trained on
    as an orphan. Use as a context manager: the handlers are the launcher's while it is open
    (SIGHUP's only where it has its default: ``nohup`` leaves it ignored)."""

    def __init__(self, pass_on: Callable[[subprocess.Popen], None] = send_sigterm) -> None:
        self.received: list[int] = []
        self.child: subprocess.Popen | None = None
        self.pass_on = pass_on
        self._open = False  # the handlers are the launcher's only while open
        self._previous_int: Any = None
        self._previous_hup: Any = None
        self.hung_up = False  # the SIGTERM came as SIGHUP
        self.own_group = False  # the child leads a process group of its own: Ctrl-C is passed on

    def __enter__(self) -> Stops:
        self._previous = signal.signal(signal.SIGTERM, self._on_sigterm)
        if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:
            self._previous_hup = signal.signal(signal.SIGHUP, self._on_sighup)
        self._open = True
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)
        if self._previous_hup is not None:
            signal.signal(signal.SIGHUP, self._previous_hup)
            self._previous_hup = None
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

    def _on_sighup(self, signum, frame) -> None:
        self.hung_up = True
        self._on_sigterm(signal.SIGTERM, frame)

    def started(self, child: subprocess.Popen) -> None:
        """The child, started: a SIGTERM that came before is passed on now."""
        self.child = child
        self.own_group = leads_own_group(child)
        if signal.SIGTERM in self.received:
            self.forward()

    def forward(self) -> None:
        """Pass SIGTERM on to the child, where it runs."""
        if self.child is not None and self.child.returncode is None:
            with contextlib.suppress(OSError):
                self.pass_on(self.child)

    def interrupted(self) -> None:
        """A Ctrl-C: noted, and passed on as SIGINT to a running child in a process group of its own."""
        self.received.append(signal.SIGINT)
        child = self.child
        if self.own_group and child is not None and child.returncode is None:
            with contextlib.suppress(OSError):
                child.send_signal(signal.SIGINT)

    @property
    def status(self) -> int | None:
        """The shell's status of the stop: 143 after SIGTERM, 130 after Ctrl-C; None: not stopped."""
        if signal.SIGTERM in self.received:
            return 143
        return 130 if signal.SIGINT in self.received else None

    @property
    def words(self) -> str:
        """What stopped it, as run-own says it ("stopped by SIGTERM", "stopped by SIGHUP, as by
        SIGTERM", "interrupted")."""
        if self.status != 143:
            return "interrupted"
        return "stopped by SIGHUP, as by SIGTERM" if self.hung_up else "stopped by SIGTERM"
