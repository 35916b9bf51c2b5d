"""torchrun's entry under ``goodbench run --nproc-per-node``: ``python -m suite.run.death_once -m
MODULE ARGS`` (or ``-c CODE ARGS``) runs MODULE as ``python -m MODULE ARGS`` would, after taking
:data:`DEATH_SIGNAL`, the signal the kernel sends as the launcher dies (:func:`suite.run.stops.ending_with`),
and passing it on once, as SIGTERM.

The kernel sends a child its death signal (Linux's ``PR_SET_PDEATHSIG``) when the *thread* that forked
it ends, and hands the child to another live thread of the launcher, whose end sends it again
(prctl(2)). A launcher killed with SIGKILL while threads of its own run (torch's, CUDA's) sends it
once per thread that ends while another lives: a stand-in for torchrun counted 2 or 3 SIGTERMs in
most kills of a launcher running 8 threads, 1 in every kill of a single-threaded one. torchrun takes
a second SIGTERM in its shutdown as a new stop and ends there, before it has stopped its workers.
Until :func:`main` takes the signal (while the interpreter starts), SIGUSR2's default action holds:
a launcher dying then kills this process outright, without SIGTERM's stop, which loses nothing (no
worker has started yet). Torch-free."""
from __future__ import annotations

import os
import runpy
import signal
import sys

DEATH_SIGNAL = signal.SIGUSR2
"""The launcher's death, as the kernel sends it to this process (torchrun handles SIGTERM, SIGINT,
SIGHUP and SIGQUIT; not this, unless ``TORCHELASTIC_SIGNALS_TO_HANDLE`` names it)."""

_passed_on = False


def _on_death(signum, frame) -> None:
    """The first death signal: the rest ignored (the kernel drops them), SIGTERM sent to this process."""
    global _passed_on
    signal.signal(DEATH_SIGNAL, signal.SIG_IGN)
    if not _passed_on:
        _passed_on = True
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: list[str]) -> None:
    """Run ``-m MODULE ARGS`` or ``-c CODE ARGS`` with the death signal taken (:func:`_on_death`)."""
    if len(argv) < 2 or argv[0] not in ("-m", "-c"):
        raise SystemExit("usage: python -m suite.run.death_once (-m MODULE | -c CODE) [ARGS]")
    signal.signal(DEATH_SIGNAL, _on_death)
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]  # argv[0] becomes the module's file
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})


if __name__ == "__main__":
    main(sys.argv[1:])
