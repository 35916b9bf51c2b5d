"""Steady-state throughput: rates and the step-time distribution over the window after warm-up."""
from __future__ import annotations

import numpy as np


def summarize(step_times_s: list[float], *, warmup_steps: int, samples_per_step: int,
              tokens_per_step: int | None) -> tuple[dict | None, str]:
    """Throughput over steps ``warmup_steps+1 .. len(step_times_s)`` (1-based step numbers).

    Rates are window steps over the summed step time of the window (evaluation between steps
    is not step time). Returns ``(figures, status)``; figures is None when the window is empty.
    """
    window = np.asarray(step_times_s[warmup_steps:], dtype=np.float64)
    if window.size == 0:
        return None, (f"not measured: the run ended after {len(step_times_s)} steps, "
                      f"inside the {warmup_steps} warm-up steps")
    seconds = float(window.sum())
    steps_per_s = window.size / seconds
    p50, p90, p99 = np.percentile(window, [50, 90, 99])
    figures = {
        "steps_per_s": steps_per_s,
        "samples_per_s": steps_per_s * samples_per_step,
        "tokens_per_s": steps_per_s * tokens_per_step if tokens_per_step else None,
        "window": {"first_step": warmup_steps + 1, "last_step": len(step_times_s),
                   "steps": int(window.size), "seconds": seconds},
        "step_time_s": {"mean": float(window.mean()), "p50": float(p50), "p90": float(p90),
                        "p99": float(p99), "max": float(window.max())},
    }
    return figures, "ok"
