"""A shortened lm-char for tests of checkpoints, faults and goodput (importable by workers)."""
from __future__ import annotations

import dataclasses

from workloads.lm_char.spec import LmChar

SHORT = dataclasses.replace(
    LmChar.variants["smoke"], n_layer=1, n_head=2, n_embd=32, block_size=32, batch_size=8,
    max_steps=40, eval_every=20, log_every=5, warmup_steps=5, eval_batches=2)


class ShortLmChar(LmChar):
    """lm-char with a 40-step, tiny smoke variant."""

    variants = {**LmChar.variants, "smoke": SHORT}


def run_short(data_dir, checkpoint_dir=None, supervised: bool = False, **options) -> dict:
    """One seed-1 CPU run of the short workload; ``supervised`` runs it under the supervisor."""
    import torch

    from suite.run.runner import RunOptions, run_one
    from suite.run.supervisor import run_supervised

    opts = RunOptions(device=torch.device("cpu"), data_dir=str(data_dir),
                      checkpoint_dir=None if checkpoint_dir is None else str(checkpoint_dir),
                      **options)
    run = run_supervised if supervised else run_one
    return run(ShortLmChar(), "smoke", 1, opts)


def group_sigterm_at_step_10(event: str, **fields) -> None:
    """A worker's progress (picklable) that, at step 10, sends SIGTERM to the worker and to its
    supervisor at once, as ``kill -TERM -PGID`` (Slurm's scancel) reaches both: the worker's own
    SIGTERM, and whatever the supervisor passes on meanwhile, are delivered together."""
    import os
    import signal

    if event == "step" and fields.get("step") == 10:
        held = {signal.SIGTERM, signal.SIGINT}
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getppid(), signal.SIGTERM)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def sigint_to_the_supervisor_alone_at_step_10(event: str, **fields) -> None:
    """A worker's progress (picklable) that, at step 10, sends SIGINT to its supervisor alone, as
    ``kill -INT PID``, an IDE's stop button or ``timeout -s INT`` do; it notes in the file
    ``$GOODBENCH_TEST_GROUP_NOTE`` names whether this worker leads a process group of its own.
    It then waits, up to 60 s, for the interrupt its supervisor passes on, rather than racing it
    through the steps left: stopped at step 10 however busy the machine, and trained on to the
    end only where nothing was passed on."""
    import os
    import signal
    import time

    if event == "step" and fields.get("step") == 10:
        note = os.environ.get("GOODBENCH_TEST_GROUP_NOTE")
        if note:
            with open(note, "w") as f:
                f.write("own" if os.getpgrp() == os.getpid() else "shared")
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(60)  # the passed-on SIGINT raises KeyboardInterrupt here


def group_sigterm_in_the_records_hold_then_its_echo(event: str, **fields) -> None:
    """A worker's progress (picklable) that times a group kill where it is hardest: SIGTERM reaches
    the worker and its supervisor while the worker keeps its finished run's record (inside run_one's
    hold, so held and raised when the hold ends), and a second SIGTERM reaches the worker right after
    that hold, before it writes the record (what the supervisor, or run-own, passes on of the same
    kill, landing late). It places both by wrapping, in the worker, ``driver.close_record`` and the
    worker's ``holding``; nothing else of the worker changes."""
    import os
    import signal
    import sys

    if event != "run_start":
        return
    from suite.run import driver

    close_record, worker = driver.close_record, sys.modules["__main__"]
    holding = worker.holding

    def close_then_group_sigterm(*args, **kwargs):
        closed = close_record(*args, **kwargs)
        os.kill(os.getppid(), signal.SIGTERM)  # the supervisor
        os.kill(os.getpid(), signal.SIGTERM)  # this worker: held, raised when run_one's hold ends
        return closed

    def echo_then_hold(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # the echo, after run_one's hold, before the record is written
        return holding(*args, **kwargs)

    driver.close_record = close_then_group_sigterm  # type: ignore[assignment]
    worker.holding = echo_then_hold  # type: ignore[attr-defined]


def sighup_to_the_supervisor_alone_at_step_10(event: str, **fields) -> None:
    """A worker's progress (picklable) that, at step 10, sends SIGHUP to its supervisor alone, as a
    closed terminal or a dropped ssh session does (the worker, in a group of its own, gets none);
    then it waits, up to 60 s, for the SIGTERM its supervisor passes on, rather than racing it."""
    import os
    import signal
    import time

    if event == "step" and fields.get("step") == 10:
        os.kill(os.getppid(), signal.SIGHUP)
        time.sleep(60)  # the passed-on SIGTERM raises here


def sigtstp_to_the_supervisor_at_step_10(event: str, **fields) -> None:
    """A worker's progress (picklable) that, at step 10, sends SIGTSTP to its supervisor alone, as a
    terminal's Ctrl-Z does (the worker, in a group of its own, gets none)."""
    import os
    import signal

    if event == "step" and fields.get("step") == 10:
        os.kill(os.getppid(), signal.SIGTSTP)
