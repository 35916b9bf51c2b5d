"""Waiting for the machine to go quiet before measuring: ``--wait-quiet SECONDS`` of ``goodbench
check``, ``run``, ``run-own`` and ``reproduce`` (before its first re-run).

A result measured while other processes use :data:`~suite.figures.load.UNDER_LOAD_CORES` cores
or more between them is recorded "measured under load" and left out of the site's comparisons
(:mod:`suite.figures.load`). :func:`wait` samples that load (:func:`suite.meters.host_load.snapshot`:
``/proc`` read twice, 0.25 s apart), sleeping :data:`INTERVAL_S` seconds between samples so that
it spins no core, until it is under the threshold — at the first sample, or, once load was seen, for
:data:`SETTLE_SAMPLES` samples in a row, so that a lull between a busy job's bursts is not taken
for quiet — or the time is up; then it says so in one line and the command goes on.

It waits once, before anything is measured: before ``check``'s checks, before ``run``'s first
workload (and its matmul ceiling) or, with ``--nproc-per-node``, before torchrun starts the
workers (on one node: ``run`` refuses it with ``--nnodes`` above 1, see :data:`ON_SEVERAL_NODES`),
and before ``run-own`` starts the script. Never inside a timed window, and not between
workloads: each run records the load at its own start and end and over it (``host_load``), so a run that a
later load reached is flagged like any other. It records nothing: a wait that ran out leaves the
runs to be flagged by their own snapshots.
"""
from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import time
from collections.abc import Callable
from typing import IO, Any, NamedTuple

from suite.figures.load import UNDER_LOAD_CORES, other_load
from suite.meters import host_load

INTERVAL_S = 1.0  # sleep between two samples (each itself a host_load.SAMPLE_S window)
SETTLE_SAMPLES = 3  # quiet samples in a row that end a wait once load was seen
MAX_S = 24 * 3600  # the longest --wait-quiet
INTERRUPTED = "while waiting for the machine to go quiet, before anything was measured"
# goodbench run refuses --wait-quiet with --nnodes above 1: each node's launcher would wait for its
# own machine, up to a day, while torchrun on the nodes already quiet gives up joining the
# rendezvous (its join timeout: 600 s unless --rdzv-conf join_timeout says otherwise)
ON_SEVERAL_NODES = ("--wait-quiet waits on this node only, while torchrun on the other nodes gives up joining "
                    "after 600 s: run goodbench check --wait-quiet SECONDS on each node, then this command "
                    "without --wait-quiet")


def seconds(text: str) -> float:
    """The argparse type of ``--wait-quiet``: a number of seconds above 0, at most :data:`MAX_S`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_S):
        raise argparse.ArgumentTypeError(f"{text!r} is out of range: above 0 and at most {MAX_S} (24 h)")
    return value


def add_argument(parser: argparse.ArgumentParser, before: str, after: str) -> None:
    """``--wait-quiet SECONDS``: its wait comes ``before`` ("before training"); ``after``: what
    happens when the time runs out."""
    parser.add_argument("--wait-quiet", type=seconds, metavar="SECONDS",
                        help=f"{before}, wait up to SECONDS (at most {MAX_S}) until other processes use "
                             f"under {UNDER_LOAD_CORES:g} cores between them ({SETTLE_SAMPLES} samples in a "
                             f"row, {INTERVAL_S:g} s apart, once they were busy); {after}")


class Waited(NamedTuple):
    """How a wait ended: ``quiet`` (None where the load is not measured), after ``seconds``,
    with the ``last`` snapshot."""

    quiet: bool | None
    seconds: float
    last: dict[str, Any]


def wait(limit_s: float, then: str, *, snapshot: Callable[[], dict[str, Any]] | None = None,
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
         stream: IO[str] | None = None) -> Waited:
    """Wait up to ``limit_s`` seconds for the other processes' load to go under
    :data:`UNDER_LOAD_CORES`; ``then``: what the command does next when the time runs out
    ("training anyway"). Silent when quiet at the first sample; otherwise one line on ``stream``
    (stderr) saying what it waits for, the load seen and the time left — rewritten in place on a
    terminal, cut to its width — and one when it ends. Ctrl-C raises KeyboardInterrupt saying
    :data:`INTERRUPTED` (suite/cli.py prints it in one line). ``snapshot`` (:func:`suite.meters.host_load.snapshot`), ``clock`` and ``sleep``: for tests."""
    look = snapshot or functools.partial(host_load.snapshot, pids=True)
    out = stream or sys.stderr
    live = getattr(out, "isatty", lambda: False)()
    start = clock()
    in_row, shown = 0, False

    def show(text: str, final: bool) -> None:
        if live:  # a progress line kept to one row: \r goes back to the start of the row, not of a wrapped line
            cut = text if final else text[:columns(out) - 1]
            out.write(f"\r{cut}\x1b[K" + ("\n" if final else ""))
        elif final or not shown:
            out.write(text + "\n")
        out.flush()

    try:
        while True:
            snap = look()
            other = snap.get("other_cores")
            waited = clock() - start
            if other is None:
                show("--wait-quiet: other processes' load is not measured on this machine (no /proc); "
                     "not waiting", True)
                return Waited(None, waited, snap)
            in_row = in_row + 1 if other < UNDER_LOAD_CORES else 0
            if in_row and (not shown or in_row >= SETTLE_SAMPLES):
                if shown:
                    show(f"quiet after {waited:.0f} s: other processes use {other_load(snap)}", True)
                return Waited(True, waited, snap)
            left = limit_s - waited
            if left <= 0:  # the last samples may have been quiet, but too few in a row
                only = f", quiet for only {in_row} of the {SETTLE_SAMPLES} samples in a row it needs" if in_row else ""
                show(f"still not quiet after {waited:.0f} s (--wait-quiet {limit_s:g}): other processes use "
                     f"{other_load(snap)}{only}; {then}", True)
                return Waited(False, waited, snap)
            quiet = f", quiet for {in_row} of {SETTLE_SAMPLES} samples" if in_row else ""
            show(f"waiting for the machine to go quiet (other processes under {UNDER_LOAD_CORES:g} cores, "
                 f"{SETTLE_SAMPLES} samples in a row): they use {other_load(snap)}{quiet}; {math.ceil(left)} s left",
                 False)
            shown = True
            sleep(min(INTERVAL_S, left))
    except KeyboardInterrupt as exc:
        if live and shown:
            out.write("\n")
            out.flush()
        if type(exc) is KeyboardInterrupt:  # Ctrl-C; SIGTERM's Terminated goes on as it is
            raise KeyboardInterrupt(INTERRUPTED) from None
        raise


def columns(stream: IO[str]) -> int:
    """The width of the terminal ``stream`` writes to (stderr's, where stdout may go to a file):
    ``$COLUMNS`` where set (as :func:`shutil.get_terminal_size` takes it), else the terminal's own,
    else 80 (a stream with no file descriptor, or one that is no terminal)."""
    try:
        given = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        given = 0
    if given > 0:
        return given
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both of the last two
        return 80
    return width if width > 0 else 80
