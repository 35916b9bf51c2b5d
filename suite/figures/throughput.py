"""Steady-state throughput: rates and the step-time distribution over the window after warm-up."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MIN_WINDOW_STEPS = 20
"""The fewest steady-state steps a throughput figure is given over (docs/rules.md): fewer say
little about a steady state, and let a chosen fast step stand for a run. Every complete run of
every workload has more (the shortest, a smoke run stopping at its first evaluation, 40)."""


def warmup_mask(steps: int, warmup_steps: int, resumed_at: Sequence[int] = ()) -> np.ndarray:
    """For steps 1..``steps``: True where the step is a warm-up step.

    Every worker process warms up again (allocator, kernels, compilation): the first
    ``warmup_steps`` steps it trained are warm-up, whether it started the run or resumed it
    from the checkpoint of step r (``resumed_at``, in order; then steps r+1..r+warmup). A
    step's kept time comes from the last worker that trained it: the last resume before it.
    """
    started = np.zeros(steps, dtype=np.int64)  # the step the worker that trained step i+1 began at
    for r in resumed_at:
        started[max(0, int(r)):] = int(r)
    return np.arange(1, steps + 1) <= started + warmup_steps


def segments(steady: np.ndarray) -> list[list[int]]:
    """[first, last] step numbers (1-based) of each run of consecutive True in ``steady``."""
    edges = np.diff(np.concatenate(([0], steady.astype(np.int8), [0])))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [[int(a) + 1, int(b)] for a, b in zip(starts, stops)]


def summarize(step_times_s: Sequence[float] | np.ndarray, *, warmup_steps: int, samples_per_step: int,
              tokens_per_step: int | None, resumed_at: Sequence[int] = (),
              min_window_steps: int = MIN_WINDOW_STEPS, batch_waits_s: float | None = None) -> tuple[dict | None, str]:
    """Throughput over the steady-state steps: all but each worker's warm-up (:func:`warmup_mask`;
    an unbroken run: steps ``warmup_steps+1 .. len(step_times_s)``, 1-based).

    Rates are window steps over the summed step time of the window and ``batch_waits_s``, the
    time those steps waited for their batches (rules v10 on; None: a file of older rules, whose
    rates are over the step time alone). Evaluation between steps is neither. The window gives
    its first and last step, its step count, its ``seconds`` of step time, its ``batch_wait_s``
    (when given) and its ``segments`` (one for an unbroken run; a resume cuts out the new
    worker's warm-up). The step-time distribution is of the step times alone. Returns
    ``(figures, status)``; figures is None when the window holds fewer than ``min_window_steps``
    steps (:data:`MIN_WINDOW_STEPS`).
    """
    times = np.asarray(step_times_s, dtype=np.float64)
    steady = ~warmup_mask(times.size, warmup_steps, resumed_at)
    window = times[steady]
    if window.size == 0:
        return None, (f"not measured: the run ended after {times.size} steps, "
                      f"inside the {warmup_steps} warm-up steps"
                      + (" of the worker that trained last" if len(resumed_at) else ""))
    if window.size < min_window_steps:
        return None, (f"not measured: a steady-state window of {window.size} steps, fewer than the "
                      f"{min_window_steps} a throughput figure needs")
    seconds = float(window.sum())
    steps_per_s = window.size / (seconds + (batch_waits_s or 0.0))
    p50, p90, p99 = np.percentile(window, [50, 90, 99])
    parts = segments(steady)
    figures = {
        "steps_per_s": steps_per_s,
        "samples_per_s": steps_per_s * samples_per_step,
        "tokens_per_s": steps_per_s * tokens_per_step if tokens_per_step else None,
        "window": {"first_step": parts[0][0], "last_step": parts[-1][1],
                   "steps": int(window.size), "seconds": seconds, "segments": parts,
                   **({} if batch_waits_s is None else {"batch_wait_s": float(batch_waits_s)})},
        "step_time_s": {"mean": float(window.mean()), "p50": float(p50), "p90": float(p90),
                        "p99": float(p99), "max": float(window.max())},
    }
    return figures, "ok"


def last_segment_steps(window: dict) -> int:
    """Steps in the window's last segment: those of the worker that trained last, over which
    the energy window is read (a window without ``segments`` is one segment)."""
    parts = window.get("segments")
    return parts[-1][1] - parts[-1][0] + 1 if parts else window["steps"]
