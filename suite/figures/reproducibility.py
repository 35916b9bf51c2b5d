"""How far a re-run may lie from its original: the eval curve's tolerance, which comes from the
reproducing machine's own measurement and the workload's measured seed spread — never from what
the original says of its machine — and the throughput's.

A re-run is first held to :data:`EXACT`: the same seed trained again under this machine's
kernels. Measured on the CPU (2 shared cores, torch 2.13, AVX2, smoke scale): two runs of the
same seed with the same thread count gave bit-identical curves for all five workloads (1 and 2
threads differ for fashion-cnn, so the thread count is recorded and trained with); so an
original made with the same kernels agrees to 1e-6 relative (about 8 float32 ulps, where the
measured spread is 0), and any edit that moves a time to target is far beyond it.

A re-run that differs by more may differ because the original ran other kernels (another CPU
model picks another vector instruction set; a GPU is not bit-reproducible run to run). That is
measured here, on this machine, for this run (:func:`measured`): the run is trained once more
under other kernels — the CPU's ``default`` instruction set instead of its own, or on a GPU (or
several processes) the same again — and its curve compared with the first re-run's. The bound is
:data:`DRIFT_FACTOR` × that measured drift, never below :data:`EXACT` and never above the drift
factor × the workload's seed-to-seed spread (:data:`SEED_SPREAD`, measured: a re-run drifts at
most as far as another seed), which is also the bound where the drift cannot be measured.

Measured on the CPU with ``ATEN_CPU_CAPABILITY=default`` against AVX2: at most 2e-7 relative for
gpt2-124m, llama-1b and lm-char, 8e-4 for dlrm-small (train_loss at step 150), and 0.32 for
fashion-cnn (test_accuracy 0.397 vs 0.586 at step 50, a network whose batch-norm statistics are
still settling: as far apart as another seed).
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads import registry

THROUGHPUT_TOLERANCE = 0.20  # default of --tolerance: |re-run samples/s ÷ recorded − 1| at most this

EXACT_REL = 1e-6
SEED_SPREAD = {w.id: w.seed_spread for w in registry.WORKLOADS.values() if w.seed_spread is not None}
"""Each workload's seed-to-seed spread, as its folder states it (``seed_spread`` of its spec module,
:class:`workloads.base.Workload`): the largest relative difference of any curve value between
seeds 1 and 2 of the same smoke runs on the CPU (fashion-cnn: its other-instruction-set drift,
which was larger)."""
DRIFT_FACTOR = 2.0


@dataclass(frozen=True)
class CurveTolerance:
    """How far a re-run's eval curve may lie from the original's: each value within
    ``rel`` × the larger magnitude + ``abs``; ``verified`` when the bound rests on runs measured
    on that device kind, and ``basis`` says which."""

    rel: float
    abs: float
    verified: bool
    basis: str


EXACT = CurveTolerance(
    rel=EXACT_REL, abs=1e-9, verified=True,
    basis="this machine's re-run of the same seed under its own kernels (measured bit-identical run to "
          "run with the same thread count on the CPU)")


def seed_spread(workload_id: str) -> float | None:
    """The workload's seed-to-seed spread as its folder states it (read from the registry when
    asked: a workload registered later counts too), or None where not measured."""
    workload = registry.WORKLOADS.get(workload_id)
    return workload.seed_spread if workload is not None else None


def seed_bound(workload_id: str) -> float:
    """:data:`DRIFT_FACTOR` × the workload's seed-to-seed spread: the farthest a re-run may drift
    (every registered workload declares its spread, workloads.registry.checked; for an id the
    suite does not know, the largest spread of :data:`SEED_SPREAD`)."""
    spread = seed_spread(workload_id)
    return round(DRIFT_FACTOR * (spread if spread is not None else max(SEED_SPREAD.values())), 4)


def spread_words(workload_id: str) -> str:
    """Whose seed-to-seed spread the bound of ``workload_id`` rests on, in words: its own, or, for an
    id the suite does not know, the suite's largest, named as such."""
    spread = seed_spread(workload_id)
    if spread is not None:
        return f"{workload_id}'s seed-to-seed spread ({spread:g})"
    largest = max(SEED_SPREAD, key=lambda w: SEED_SPREAD[w])
    return (f"the suite's largest seed-to-seed spread ({largest}'s {SEED_SPREAD[largest]:g}; not measured "
            f"for {workload_id})")


MAX_THROUGHPUT_TOLERANCE = 0.5
"""The widest throughput tolerance a reproduction may claim (docs/rules.md, "Reproducing a
result"): its ratio's 95% interval within 1 ± 50% at most. Wider, a re-run at a third of the
speed would still "reproduce" (a reproduction once claimed ±1000%)."""
FREE_JOB_CURVE_BOUND = 0.01  # own code's free job: its re-run's curve within 1% (its determinism not measured)
MAX_CURVE_ABS_TOLERANCE = 1e-6  # the absolute slack any curve bound adds (goodbench writes 1e-6 or 1e-9)


def curve_bound(workload_id: str, free_job: bool) -> float:
    """The widest relative curve tolerance a reproduction of a run of ``workload_id`` may claim:
    :func:`seed_bound` for a workload whose seed-to-seed spread is measured (what a measured
    drift is capped at), :data:`FREE_JOB_CURVE_BOUND` for own code's free job."""
    return FREE_JOB_CURVE_BOUND if free_job and seed_spread(workload_id) is None else seed_bound(workload_id)


def measured(workload_id: str, device_type: str, drift_rel: float | None, how: str) -> CurveTolerance:
    """The bound of a re-run whose curve differs beyond :data:`EXACT`, from the drift measured on
    this machine (``drift_rel``: the largest relative difference between its two re-runs, ``how``
    they differed; None: not measured, ``how`` says why)."""
    ceiling = seed_bound(workload_id)
    if drift_rel is None:
        return CurveTolerance(ceiling, 1e-6, verified=device_type != "cuda", basis=(
            f"the drift could not be measured here ({how}): {DRIFT_FACTOR:g} × {spread_words(workload_id)}, "
            "as far as a re-run may drift"))
    rel = min(max(DRIFT_FACTOR * drift_rel, EXACT_REL), ceiling)
    gpu = "; GPU drift UNVERIFIED until measured on a GPU" if device_type == "cuda" else ""
    return CurveTolerance(rel, 1e-6, verified=device_type != "cuda", basis=(
        f"measured here: {how} drifted {drift_rel:.3g} relative; {DRIFT_FACTOR:g} × that, at least "
        f"{EXACT_REL:g} and at most {DRIFT_FACTOR:g} × {workload_id}'s seed spread ({ceiling:g}){gpu}"))


WITHIN, OUTSIDE, INCONCLUSIVE = "within", "outside", "inconclusive"


def interval_judgement(low: float | None, high: float | None, tolerance: float) -> str:
    """Where a throughput ratio's 95% interval lies against the band ``1 ± tolerance``:
    :data:`WITHIN` when the whole interval is inside it, :data:`OUTSIDE` when the whole interval
    is beyond one edge, :data:`INCONCLUSIVE` when it reaches across an edge or there is none.

    The ratio itself decides nothing: on a busy machine a ratio of 1.77 came with an interval of
    0.46–6.8, which holds 1 as well as 1.77, and a ratio of 1.0 can come with an interval far wider
    than the band. A reproduction says "reproduced" or "differs" only where the measurement can
    tell them apart (docs/rules.md, "Reproducing a result")."""
    if low is None or high is None:
        return INCONCLUSIVE
    if 1 - tolerance <= low and high <= 1 + tolerance:
        return WITHIN
    if high < 1 - tolerance or low > 1 + tolerance:
        return OUTSIDE
    return INCONCLUSIVE


MEDIAN_MARGIN = 1.8
"""How far beyond the band a median ratio's interval must lie to show a difference
(:func:`median_judgement`). Measured on the 32 stored steady-state windows of 20 steps or more
(tests/fixtures/reference-smoke.json, results/, tests/corpus/valid/): an honest window's median
step time is 0.68–1.21× its mean (0.98–1.01× in the reference smoke file), so two honest
windows' median ratio may stand 0.68 ÷ 1.21 = 0.56 or 1.78× from their mean ratio: 1.8 covers
both extremes at once."""


def median_judgement(ratio: float | None, low: float | None, high: float | None, tolerance: float) -> str:
    """Where a throughput whose mean ratio's interval cannot decide lies on the median step time
    (docs/rules.md, "Reproducing a result"): :data:`OUTSIDE` when the mean ``ratio`` itself is
    beyond one edge of ``1 ± tolerance`` and the median ratio's 95% interval (``low``–``high``)
    wholly beyond that edge widened by :data:`MEDIAN_MARGIN`; else :data:`INCONCLUSIVE`, never
    :data:`WITHIN` — a few huge steps move the mean, not the median, so a median within the band
    cannot show the mean throughput within it."""
    if ratio is None or low is None or high is None:
        return INCONCLUSIVE
    if ratio < 1 - tolerance and high < (1 - tolerance) / MEDIAN_MARGIN:
        return OUTSIDE
    if ratio > 1 + tolerance and low > (1 + tolerance) * MEDIAN_MARGIN:
        return OUTSIDE
    return INCONCLUSIVE


def decided_ratio(ratio: float | None, low: float | None, high: float | None, tolerance: float,
                  median: tuple[float | None, float | None, float | None] | None = None) -> float | None:
    """The throughput ratio a verdict rests on: the median step's (``median``: its ratio and its 95%
    interval) where the mean ``ratio``'s interval (``low``–``high``) cannot decide and the median
    lies far outside (:func:`median_judgement`), else the mean's — what the load is judged against
    (:func:`suite.figures.load.load_explains`), by ``goodbench reproduce`` and by the validator alike."""
    if median is not None and median[0] is not None and interval_judgement(low, high, tolerance) == INCONCLUSIVE \
            and median_judgement(ratio, median[1], median[2], tolerance) == OUTSIDE:
        return median[0]
    return ratio


TTA_MARGIN = 2.0
"""How far beyond the throughput's band a re-run's time to target may lie before it differs
(:func:`tta_differs`): with the curve agreeing the target is met at the same evaluation, so the
time scales as the throughput does, plus what the band does not hold — the evaluations' and
checkpoints' time up to it (at a smoke scale's cadence as long as the steps between them) and the
first steps' warm-up; twice the band holds both."""
TTA_ABS_S = 0.25  # seconds of a time to target never judged: a process's first step and evaluation


def interrupted(run: dict) -> bool:
    """Whether a run's time to target holds time a re-run does not spend: it was killed and
    resumed (``faults.kills``, ``goodput.failures``, lost work or its recovery) or paused
    (``faults.paused_s``, Ctrl-Z). Its wall-clock time to target is then not held to a re-run's
    (:func:`tta_differs`; review C: an honest resumed original read "differs: time to target")."""
    faults, goodput = run.get("faults"), run.get("goodput")
    faults = faults if isinstance(faults, dict) else {}
    goodput = goodput if isinstance(goodput, dict) else {}
    badput = goodput.get("badput_s")
    badput = badput if isinstance(badput, dict) else {}
    return any(isinstance(v, (int, float)) and v > 0 for v in (
        faults.get("kills"), faults.get("paused_s"), goodput.get("failures"), badput.get("lost_work"),
        badput.get("restart_recovery")))


def tta_differs(original_s: float | None, rerun_s: float | None, tolerance: float) -> bool:
    """Whether a re-run's time to target differs from the recorded one (docs/rules.md,
    "Reproducing a result"): both reached the target, their difference is over :data:`TTA_ABS_S`,
    and the speed ratio ``original_s / rerun_s`` lies beyond the throughput's band ``1 ± tolerance``
    widened by :data:`TTA_MARGIN` (trial 17: 0.019 s recorded, 0.369 s re-run, read "reproduced")."""
    if original_s is None or rerun_s is None or original_s <= 0 or rerun_s <= 0:
        return False
    if abs(rerun_s - original_s) <= TTA_ABS_S:
        return False
    ratio = original_s / rerun_s
    return ratio < (1 - tolerance) / TTA_MARGIN or ratio > (1 + tolerance) * TTA_MARGIN


def tta_words(original_s: float, rerun_s: float) -> str:
    """Two times to target in words: "0.01886 s recorded, 0.3691 s re-run (0.051× the speed)"."""
    return f"{original_s:.4g} s recorded, {rerun_s:.4g} s re-run ({original_s / rerun_s:.3f}× the speed)"


def tta_band(tolerance: float) -> str:
    """What :func:`tta_differs` holds a time to target to, in words: "±20% widened 2× (0.40–2.40×) and 0.25 s"."""
    return (f"±{tolerance:.0%} widened {TTA_MARGIN:g}× ({(1 - tolerance) / TTA_MARGIN:.2f}–"
            f"{(1 + tolerance) * TTA_MARGIN:.2f}×) and {TTA_ABS_S:g} s")
