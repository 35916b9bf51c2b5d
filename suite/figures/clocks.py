"""How far a run's own clock and the launcher's second clock agree (``goodbench run-own``,
docs/own-code.md "A second clock"): one derivation, used by the launcher to summarize its record
and by the validator to refuse a file whose clocks disagree (rule ``second-clock``).

Compared, each within :data:`RELATIVE` of the launcher's figure plus an absolute allowance —
:data:`PER_STAMP_S` for a figure read from two stamps, :data:`PER_STEP_S` per step for one made of
steps (measured on honest runs: docs/rules.md, "A second clock"):

- ``clock``: the span from the first edge to the last on the child's clock against the launcher's;
- ``step_p50_s`` and ``window_s`` (CPU runs only; a GPU's step clock is CUDA events the launcher
  cannot see): the median and the sum of the steady steps' times, the record's against the
  launcher's stamps of each step's edges;
- ``evaluation_s``: each evaluation's time on the run's clock (its curve point) against the
  launcher's, from the run's start to the evaluation's end (the worst is kept);
- each evaluation's duration in the event log (``eval_start`` to ``eval_stop``) against the
  launcher's stamps of its two edges (the worst is kept): an evaluation cut in the log, its end
  moved with the curve, once passed (trial 5).

On a CPU the steps' sum also decides whether the clock holds the steps (:func:`window_held`):
within :data:`RELATIVE` plus :data:`WINDOW_S`, however many steps (trial 16), or the run is
timed by one clock (:mod:`suite.figures.clock_cover`), its file valid.

A run's stamps begin at its first step, unless its log says the run went on from a checkpoint
there (:func:`unexplained_start`): edges held back until a late step once made a run with slowed
clocks read "two clocks" (trial 5).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from suite.figures import goodput as goodput_log
from suite.record import mllog

RELATIVE = 0.05      # of the launcher's figure
PER_STAMP_S = 0.05   # seconds, on top of it, for a span between two stamps (the launcher woken late)
PER_STEP_S = 0.005   # seconds per step, for a step's median or the sum of steps
WINDOW_S = 0.075     # seconds, on top of RELATIVE, for the sum of the steady steps to hold them (whatever their number)
WINDOW = "steady window (sum of step times)"  # the comparison of the steps' sum


def window_held(found: Comparison) -> bool:
    """Whether the steady steps' sum on both clocks (``found``, a :data:`WINDOW` comparison) agree
    closely enough for the second clock to hold the steps: within :data:`RELATIVE` plus
    :data:`WINDOW_S`, not plus :data:`PER_STEP_S` per step. A step claimed a few milliseconds
    shorter than the launcher saw it is inside the per-step allowance, so the steps' median and a
    sum allowed :data:`PER_STEP_S` per step held nothing against it (trial 16: steps of about 10 ms
    each claimed 4.8 ms shorter, 2.2× the throughput, read "two clocks"); over a run's steps such a
    claim adds up, while the honest launcher's lateness does not (docs/rules.md, "A second clock").
    A file whose sum is beyond this but within the per-step allowance is valid, and timed by one
    clock (:func:`suite.figures.clock_cover.steps_held`)."""
    return abs(found.own - found.launcher) <= WINDOW_S + RELATIVE * abs(found.launcher)


def compared_as(doc: dict[str, Any]) -> tuple[int, bool]:
    """What every comparison of the second clock takes from the file ``doc``: own code's declared
    warm-up steps (0 where it declares none) and whether its device is a CPU (only a CPU's steps
    are compared one by one)."""
    spec = ((doc.get("settings") or {}).get("implementation") or {}).get("spec") or {}
    warmup = spec.get("warmup_steps")
    cpu = ((doc.get("system") or {}).get("accelerator") or {}).get("type") == "cpu"
    return (warmup if isinstance(warmup, int) and not isinstance(warmup, bool) else 0), cpu


@dataclass(frozen=True)
class Comparison:
    """One figure on both clocks: the record's (``own``) and the launcher's."""

    what: str
    own: float
    launcher: float
    allowance_s: float = PER_STAMP_S

    @property
    def agrees(self) -> bool:
        return abs(self.own - self.launcher) <= self.allowance_s + RELATIVE * abs(self.launcher)

    def describe(self) -> str:
        return (f"{self.what} {self.own:.6g} s on the run's clock, {self.launcher:.6g} s on the launcher's (tolerance "
                f"{RELATIVE:.0%} + {self.allowance_s:.3g} s)")


def missing(run: dict[str, Any], entry: dict[str, Any]) -> str | None:
    """What the launcher's ``entry`` lacks for the ``run`` (None: it saw every edge this process made)."""
    first, step_s = entry["first_step"], entry["step_s"]
    last = first + len(step_s) - 1
    steps = len(run["step_times_s"])
    if step_s and last != steps:
        return f"its edges end at step {last}, the run's step times at step {steps}"
    if not step_s and steps >= first:
        return f"no step edge for the run's {steps} steps"
    stamped = {e["step"] for e in entry["evaluations"]}
    unseen = [p["step"] for p in run.get("curve") or [] if p["step"] >= first and p["step"] not in stamped]
    if unseen:
        return f"no evaluation edge for the evaluation at step {unseen[0]}"
    return None


def resumed_from(run: dict[str, Any]) -> set[int]:
    """The checkpoint steps the ``run``'s event log says later processes went on from (none for a
    log that cannot be read)."""
    try:
        attempts = goodput_log.split_attempts(mllog.parse(run.get("event_log") or []))
        found = (goodput_log.resume_step(a, len(run["step_times_s"])) for a in attempts[1:])
        return {step for step in found if step is not None}
    except (ValueError, TypeError):
        return set()


def unexplained_start(run: dict[str, Any], entry: dict[str, Any]) -> str | None:
    """Why ``entry``'s stamps may not begin where they do (None: they may): at step 1 with the run's
    start, or at the step after one the run's event log says a later process went on from."""
    first = entry["first_step"]
    if first == 1 and (entry["run_start_s"] is not None or not entry["step_s"]):
        return None
    if first - 1 in resumed_from(run):
        return None
    if first == 1:
        return "its edges do not stamp the run's start, though no earlier process ran it"
    return f"its edges begin at step {first}, but the run's log records no process going on from step {first - 1}"


def comparisons(run: dict[str, Any], entry: dict[str, Any], warmup_steps: int, cpu: bool) -> list[Comparison]:
    """Every figure of :func:`missing`-free ``entry`` compared with the ``run``'s record."""
    out = []
    child, stamps = entry["child_clock_s"], entry["stamps_s"]
    if len(child) == 2 and len(stamps) == 2:
        out.append(Comparison("clock span", child[1] - child[0], stamps[1] - stamps[0]))
    first, times = entry["first_step"], run["step_times_s"]
    steady = [s for s in range(max(first, warmup_steps + 1), first + len(entry["step_s"])) if s <= len(times)]
    if cpu and steady:
        own = [times[s - 1] for s in steady]
        launcher = [entry["step_s"][s - first] for s in steady]
        out.append(Comparison("steady step time p50", statistics.median(own), statistics.median(launcher), PER_STEP_S))
        out.append(Comparison(WINDOW, sum(own), sum(launcher), PER_STEP_S * len(own)))
    start = entry["run_start_s"]
    if start is not None:
        curve = {p["step"]: p["time_s"] for p in run.get("curve") or []}
        evaluations = [Comparison(f"evaluation at step {e['step']} (time from the run's start)", curve[e["step"]],
                                  e["stop_s"] - start) for e in entry["evaluations"] if e["step"] in curve]
        if evaluations:
            out.append(max(evaluations, key=lambda c: abs(c.own - c.launcher)))
    logged = log_evaluations(run)
    durations = [Comparison(f"evaluation at step {e['step']} (its duration)", logged[e["step"]], e["stop_s"] - e["start_s"])
                 for e in entry["evaluations"] if e["step"] in logged]
    if durations:  # an evaluation cut in the log, its end moved with the curve, still lasted what the launcher saw
        out.append(max(durations, key=lambda c: abs(c.own - c.launcher)))
    return out


def log_evaluations(run: dict[str, Any]) -> dict[int, float]:
    """Each evaluation's seconds in the run's event log, ``eval_start`` to ``eval_stop``, by step (a
    step evaluated again after a resume: the last); empty for a log that cannot be read (the
    stream rules say why)."""
    try:
        events = mllog.parse(run.get("event_log") or [])
    except (ValueError, TypeError):
        return {}
    opened: dict[Any, float] = {}
    found: dict[int, float] = {}
    for event in events:
        step = event.metadata.get("step") if isinstance(event.metadata, dict) else None
        if event.key == "eval_start":
            opened[step] = event.time_ms
        elif event.key == "eval_stop" and step in opened and isinstance(step, int):
            found[step] = (event.time_ms - opened.pop(step)) / 1000
    return found


def summary(found: list[Comparison]) -> dict[str, Any]:
    """The launcher's summary of one run's agreement: each figure on both clocks, and whether all agree."""
    return {"agree": all(c.agrees for c in found),
            "figures": [{"what": c.what, "own_s": round(c.own, 7), "launcher_s": round(c.launcher, 7)} for c in found]}
