"""What the rules of one run compare against, computed once per run: the values the suite pins
for its workload variant (cached per process), the step times as an array, the warm-up and the
throughput recomputed from the step times."""
from __future__ import annotations

import functools

import numpy as np

from suite.figures import derive
from suite.record.results import division
from workloads import own, registry
from workloads.base import Workload


@functools.cache
def pinned_values(workload_id: str, version: int, scale: str) -> dict:
    """What the suite pins for a workload variant, computed once per process."""
    return values_of(registry.get(workload_id), scale)


def pinned_of(run: dict, doc: dict) -> dict:
    """What a run of ``doc`` is held to: its workload variant's pinned values, or in the own
    division the implementation's declaration (:func:`workloads.registry.of_run`)."""
    if division(doc) == own.DIVISION:
        return values_of(registry.of_run(run, doc), run["scale"])
    return pinned_values(run["workload"]["id"], run["workload"]["version"], run["scale"])


def values_of(workload: Workload, scale: str) -> dict:
    """A workload's pinned values at ``scale``: spec hash, warm-up, per-step figures, target."""
    spec = workload.spec(scale)
    target = spec.target
    return {
        "spec_hash": workload.spec_hash(scale),
        "warmup_steps": spec.warmup_steps,
        "samples_per_step": workload.samples_per_step(spec),
        "tokens_per_step": workload.tokens_per_step(spec),
        "flops_per_step": workload.flops_per_step(spec),
        "eval_flops": workload.eval_flops(spec),
        "target": None if target is None else target,
    }


def run_facts(run: dict, doc: dict, pinned: dict) -> dict:
    """What the rules of one run compare against, computed once: the pinned values, the step
    times as an array, the warm-up (pinned; an open result's own), the steps its later workers
    resumed from (its event log) and the recomputed throughput."""
    reported = run["metrics"]["throughput"]
    times = np.asarray(run["step_times_s"], dtype=np.float64)
    resumed_at = _resume_steps(run, times.size)
    warm = pinned["warmup_steps"]
    if division(doc) == "open" and reported is not None \
            and reported["window"]["first_step"] != first_steady_step(times.size, warm, resumed_at):
        warm = reported["window"]["first_step"] - 1  # an open run's own warm-up (window-too-short says so)
    warm = min(max(warm, 0), times.size)
    expected, _ = derive.throughput(times, warmup_steps=warm, samples_per_step=run["metrics"]["samples_per_step"],
                                    tokens_per_step=run["metrics"].get("tokens_per_step"),
                                    resumed_at=resumed_at,
                                    batch_waits_s=derive.batch_waits(run.get("event_log"), doc.get("rules_version"),
                                                                     (reported or {}).get("window", {}).get("batch_wait_s")))
    return {**pinned, "warm": warm, "times": times, "expected": expected, "resumed_at": resumed_at,
            "warm_mask": derive.warmup_mask(times.size, warm, resumed_at)}


def first_steady_step(steps: int, warmup_steps: int, resumed_at: list[int]) -> int | None:
    """The first step after every worker's warm-up (:func:`suite.figures.derive.warmup_mask`): where a
    throughput window begins; None when every step is a warm-up step."""
    steady = np.flatnonzero(~derive.warmup_mask(steps, warmup_steps, resumed_at))
    return int(steady[0]) + 1 if steady.size else None


def _resume_steps(run: dict, steps: int) -> list[int]:
    """The steps the run's later workers resumed from, in order, from its event log
    (:func:`suite.figures.derive.resume_steps`); a log that cannot be read, or whose resume steps are
    not steps of this run, gives none (the goodput and cross-check rules report it)."""
    try:
        return derive.resume_steps(run.get("event_log") or [], steps)
    except ValueError:
        return []
