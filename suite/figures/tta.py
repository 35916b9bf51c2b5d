"""Time-to-accuracy over seeds, scored the MLPerf way: olympic mean, spread, 95% CI."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

MAX_NON_CONVERGED = 1  # MLPerf: at most one run may fail to reach the target


def olympic_mean(times_s: list[float]) -> float:
    """Mean after dropping the fastest and the slowest (plain mean below three values)."""
    values = np.sort(np.asarray(times_s, dtype=np.float64))
    if values.size >= 3:
        values = values[1:-1]
    return float(values.mean())


def confidence_interval(times_s: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student-t confidence interval of the mean time, clipped at 0; None below two values.

    With few seeds the t interval can reach below 0 (two seeds: t = 12.7 standard errors), but
    a mean time cannot: clipping at 0 removes only impossible values, so the interval still
    covers the true mean whenever the unclipped one does (same coverage, same estimator as the
    reported means). An interval on log times could not go negative either, but it bounds the
    geometric mean, not the mean it would be printed beside."""
    values = np.asarray(times_s, dtype=np.float64)
    if values.size < 2:
        return None
    # imported when an interval is due, and scipy.special rather than scipy.stats (whose import
    # took 0.4 s of every `goodbench validate` of a file with seeds): reading results stays light
    from scipy.special import stdtrit

    mean, sem = float(values.mean()), float(values.std(ddof=1)) / math.sqrt(values.size)
    if sem == 0 or not math.isfinite(sem):
        return (mean, mean)
    half = float(stdtrit(values.size - 1, 0.5 + level / 2)) * sem
    return max(0.0, mean - half), mean + half


def score_before_2026_12_01(tta_by_seed: dict[int, float | None]) -> dict:
    """What :func:`score` gave until 2026-12-01, where it differs: one of two seeds missing the
    target scored the other seed's time, valid. A summary a goodbench wrote then keeps it
    (``summary-mismatch``); the leaderboard scores every file anew with :func:`score`."""
    result = score(tta_by_seed)
    converged = [t for t in tta_by_seed.values() if t is not None]
    if len(tta_by_seed) == 2 and len(converged) == 1:
        result.update(valid=True, reason="ok", olympic_mean_s=float(converged[0]))
    return result


def estimator(result: dict) -> str:
    """What a score's ``olympic_mean_s`` is (see :func:`score`): "olympic mean" when the
    fastest and the slowest time were dropped, i.e. over at least three seeds, a seed that
    did not converge counting as the slowest; below three seeds nothing is dropped: "mean"."""
    converged, missed = result["converged"], result["seeds"] - result["converged"]
    return "olympic mean" if converged >= 3 or (missed and converged >= 2) else "mean"


def score(tta_by_seed: dict[int, float | None]) -> dict:
    """Score a set of seeds' times to target (None = did not converge).

    A non-converged seed counts as infinitely slow: it is the one dropped as slowest, so with
    one such seed the olympic mean is over the rest; more than one makes the result invalid, and
    so does one beside a single converged seed (below three seeds nothing is dropped, so the
    miss would be in the mean: MLCommons' summarizer gives no score there either).
    """
    converged = [t for t in tta_by_seed.values() if t is not None]
    missed = len(tta_by_seed) - len(converged)
    result: dict[str, Any] = {"seeds": len(tta_by_seed), "converged": len(converged), "valid": True,
              "olympic_mean_s": None, "mean_s": None, "min_s": None, "max_s": None,
              "std_s": None, "ci95_s": None, "reason": "ok"}
    if missed > MAX_NON_CONVERGED:
        result.update(valid=False, reason=f"{missed} seeds did not reach the target (at most "
                                          f"{MAX_NON_CONVERGED} may miss)")
    elif missed and len(converged) == 1:
        result.update(valid=False, reason=f"{missed} of {len(tta_by_seed)} seeds did not reach the target: below "
                                          "three seeds none is dropped, so there is no mean to score")
    if not converged:
        return result
    values = sorted(converged)
    # With a missing seed, that seed is the slowest dropped: drop only the fastest here.
    if missed and len(values) == 1:
        olympic = None  # the miss would be the slowest of two, and nothing is dropped
    else:
        olympic = float(np.mean(values[1:])) if missed else olympic_mean(values)
    result.update(
        olympic_mean_s=olympic, mean_s=float(np.mean(values)),
        min_s=values[0], max_s=values[-1],
        std_s=float(np.std(values, ddof=1)) if len(values) > 1 else None,
        ci95_s=confidence_interval(values),
    )
    return result
