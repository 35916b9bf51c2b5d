"""Goodput at cluster scale, projected from one measured run (see docs/goodput.md).

Each of N GPUs fails independently (exponential, mean H hours), so the job fails every
M = 3600·H/N seconds on average and any failure stops the whole job. Work proceeds in segments:
τ seconds of steps, then a checkpoint save of δ seconds. A failure loses the segment in
progress; the job restarts (R seconds: process start, init, checkpoint load; a failure during
the restart restarts it) and redoes the segment. The expected time of one segment is then
exactly M·e^(R/M)·(e^((τ+δ)/M) − 1) (Daly 2006), and the failure/checkpoint factor of goodput
is τ over that. τ defaults to Daly's optimum √(2δM) − δ (Young's √(2δM) to first order),
τ = M when δ ≥ M/2. The projected goodput is that factor times the measured run's steady
efficiency: productive time over productive + data wait + eval + other time (init and
compilation are one-off costs a long job amortizes).
"""
from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass

import numpy as np

from suite.figures import goodput

GPU_COUNTS = (1, 10, 100, 1_000, 10_000, 100_000)


@dataclass(frozen=True)
class Measured:
    """What the projection takes from a run: seconds per step, checkpoint save, restart."""

    step_s: float
    checkpoint_s: float
    restart_s: float
    steady_efficiency: float
    restart_source: str


@dataclass(frozen=True)
class Point:
    """The projection at one GPU count."""

    gpus: int
    mtbf_s: float
    interval_s: float
    interval_steps: float
    failures_per_day: float
    lost_per_failure_s: float
    failure_factor: float
    goodput: float


class CannotProject(ValueError):
    """The run lacks a measurement the projection needs."""


def measured_from_run(run: dict, restart_seconds: float | None = None) -> Measured:
    """Step time, checkpoint cost, restart cost and steady efficiency from a run's event log."""
    g = goodput.from_event_log(run["event_log"], None, None)
    if g["steady_step_s"] is None:
        raise CannotProject("the run has no steady-state steps")
    if g["checkpoint"]["save_s_mean"] is None:
        raise CannotProject("the run saved no checkpoint (run it with --checkpoint-every)")
    if restart_seconds is not None:
        restart, source = restart_seconds, "--restart-seconds"
    elif g["recovery_s"]:
        n = len(g["recovery_s"])
        restart = float(np.mean(g["recovery_s"]))
        source = "1 measured restart" if n == 1 else f"mean of {n} measured restarts"
    else:
        raise CannotProject("the run has no restart to measure (inject a failure or pass --restart-seconds)")
    b = g["badput_s"]
    steady = g["productive_s"] / (g["productive_s"] + b["data_wait"] + b["eval"] + b["other"])
    return Measured(g["steady_step_s"], g["checkpoint"]["save_s_mean"], restart, steady, source)


def optimal_interval(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly's first-order optimum √(2δM) − δ for δ < M/2, else M."""
    if checkpoint_s >= mtbf_s / 2:
        return mtbf_s
    return math.sqrt(2 * checkpoint_s * mtbf_s) - checkpoint_s


LOG_FLOAT_MAX = math.log(sys.float_info.max)


def _log_expm1(x: float) -> float:
    """log(e^x − 1) for x > 0, without overflow for large x nor loss of precision for small x."""
    return x + math.log1p(-math.exp(-x)) if x > 1.0 else math.log(math.expm1(x))


def log_expected_segment_s(interval_s: float, checkpoint_s: float, restart_s: float,
                           mtbf_s: float) -> float:
    """log of :func:`expected_segment_s`, finite where the segment time itself overflows."""
    return math.log(mtbf_s) + restart_s / mtbf_s + _log_expm1((interval_s + checkpoint_s) / mtbf_s)


def expected_segment_s(interval_s: float, checkpoint_s: float, restart_s: float,
                       mtbf_s: float) -> float:
    """Expected wall time to finish τ of work plus its checkpoint under exponential failures
    (``math.inf`` where it exceeds the largest float)."""
    log_e = log_expected_segment_s(interval_s, checkpoint_s, restart_s, mtbf_s)
    return math.exp(log_e) if log_e < LOG_FLOAT_MAX else math.inf


def failure_factor(interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """Share of wall time that is kept work: τ / E[segment time], computed as a difference of
    logs so that it goes smoothly to 0 (never overflows) when failures outpace the work."""
    if interval_s <= 0:
        return 0.0
    log_e = log_expected_segment_s(interval_s, checkpoint_s, restart_s, mtbf_s)
    return math.exp(min(0.0, math.log(interval_s) - log_e))


def lost_per_failure_s(work_s: float, mtbf_s: float) -> float:
    """Expected work lost per failure, E[x | x < τ+δ] = M − a/(e^(a/M) − 1) with a = τ+δ.

    For a ≪ M the difference cancels (both terms ≈ M): there the series
    a·(1/2 − x/12 + x³/720 − x⁵/30240), x = a/M, is used (its next term is below 1e-20 of
    the first for x < 0.01). For a ≫ M, a/(e^x − 1) = a·e^(−x)/(1 − e^(−x)) does not overflow."""
    x = work_s / mtbf_s
    if x < 0.01:
        return work_s * (0.5 - x / 12 + x ** 3 / 720 - x ** 5 / 30240)
    return mtbf_s - work_s * math.exp(-x) / -math.expm1(-x)


def project(m: Measured, gpus: int, mtbf_hours: float, interval_steps: float | None = None) -> Point:
    """Projected goodput of the measured run on ``gpus`` GPUs of per-GPU MTBF ``mtbf_hours``."""
    mtbf = 3600.0 * mtbf_hours / gpus
    tau = optimal_interval(m.checkpoint_s, mtbf) if interval_steps is None else interval_steps * m.step_s
    factor = failure_factor(tau, m.checkpoint_s, m.restart_s, mtbf)
    return Point(gpus=gpus, mtbf_s=mtbf, interval_s=tau, interval_steps=tau / m.step_s,
                 failures_per_day=86400.0 / mtbf,
                 lost_per_failure_s=lost_per_failure_s(tau + m.checkpoint_s, mtbf),
                 failure_factor=factor, goodput=factor * m.steady_efficiency)


def table(m: Measured, mtbf_hours: float, gpu_counts: tuple[int, ...] = GPU_COUNTS,
          interval_steps: float | None = None) -> list[dict]:
    """One projected point per GPU count, as dicts (the JSON the site reads)."""
    return [asdict(project(m, n, mtbf_hours, interval_steps)) for n in gpu_counts]
