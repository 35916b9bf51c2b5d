"""Every derived figure of a results file, computed from the run's raw records in one place.

A run keeps raw records (the step times, the eval curve, the event log, energy readings, the
measured matmul ceiling, the probe's step times) and figures derived from them (throughput,
phases, MFU, time to target, energy per sample, mean power, goodput, the communication share,
the summary). The runner writes the figures with these functions, the validator recomputes them
with the same functions, and the tests' documents (``tests/factories.py``) are built with them:
no formula is written twice. Pure: numpy only, no torch, no device, no clock.

Where a module of its own holds the formula (:mod:`suite.figures.throughput`,
:mod:`suite.figures.mfu`, :mod:`suite.figures.tta`, :mod:`suite.figures.goodput`, :mod:`suite.figures.summary`),
the function here delegates to it, so this module is the one entry point for every figure.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, overload

import numpy as np

from suite.figures import goodput as goodput_log
from suite.figures import mfu as mfu_meter
from suite.figures import summary as summary_module
from suite.figures import throughput as throughput_meter
from suite.figures import tta as tta_meter
from suite.record import mllog
from suite.record.results import mig_enabled, world_size
from workloads.pinned import FULL_TTA_SEEDS

__all__ = [
    "ENERGY_KEYS", "MEASURED_PHASES", "PHASES", "all_devices", "ceiling_spread", "communication",
    "LOOP_RATES_SINCE", "batch_wait_share", "batch_waits", "counts_batch_waits",
    "energy_figures", "energy_per", "energy_spans", "exposed_share", "final_quality", "first_hit",
    "flop_rate", "flops_to_target",
    "goodput", "mean_power", "metrics", "mfu", "mfu_status", "other_phase", "peak", "phases",
    "rank_step_times", "required_seeds", "resume_steps", "share_of_ceiling", "step_phases",
    "straggler_spread", "summary", "target_record", "throughput", "time_to_target", "tta_score",
    "tta_status", "warmup_mask", "window_seconds", "window_steps", "world_size",
]

# ---------------------------------------------------------------- throughput and its window
warmup_mask = throughput_meter.warmup_mask


def throughput(step_times_s: Sequence[float] | np.ndarray, *, warmup_steps: int, samples_per_step: int,
               tokens_per_step: int | None, resumed_at: Sequence[int] = (),
               min_window_steps: int = throughput_meter.MIN_WINDOW_STEPS,
               batch_waits_s: float | None = None) -> tuple[dict | None, str]:
    """Steady-state throughput and its window from the step times and, from rules v10 on, the
    window's batch waits (:func:`batch_waits`), and its status
    (:func:`suite.figures.throughput.summarize`; none over fewer than ``min_window_steps``)."""
    return throughput_meter.summarize(step_times_s, warmup_steps=warmup_steps,
                                      samples_per_step=samples_per_step,
                                      tokens_per_step=tokens_per_step, resumed_at=resumed_at,
                                      min_window_steps=min_window_steps, batch_waits_s=batch_waits_s)


LOOP_RATES_SINCE = 10
"""The rules version from which rates count the steady steps' batch waits beside their step time
(docs/measurement.md, "Throughput"): where a step ends and its batch wait begins is the run's own
clock, so a file that moved step time into its waits read a higher samples/s with every record
agreeing (trial V: 2x). Files of older rules keep the rates they were written with."""


def counts_batch_waits(rules_version: Any) -> bool:
    """Whether a file of ``rules_version`` (its ``rules_version``; none: v1) has rates over its steps
    and their batch waits (:data:`LOOP_RATES_SINCE` on), not its steps alone."""
    return isinstance(rules_version, int) and not isinstance(rules_version, bool) and rules_version >= LOOP_RATES_SINCE


def batch_waits(event_log: Sequence[str] | None, rules_version: int | None, recorded: Any = None) -> float | None:
    """What the window's rates count beside its step time: the steady steps' batch waits from the
    event log (:func:`suite.figures.goodput.steady_batch_waits`) for a file of rules
    :data:`LOOP_RATES_SINCE` or later; None for an older file (its rates over the step time alone).
    A log that cannot be read gives the ``recorded`` waits (the window's ``batch_wait_s``), else 0:
    the rules refuse that log itself (``goodput-mismatch``, ``stream-event-log``)."""
    if not counts_batch_waits(rules_version):
        return None
    try:
        return goodput_log.steady_batch_waits(event_log or [])
    except ValueError:
        return float(recorded) if isinstance(recorded, (int, float)) and math.isfinite(recorded) else 0.0


def batch_wait_share(run: Mapping) -> float | None:
    """The share of a run's steady loop spent waiting for batches: its window's batch waits (the
    event log's, :func:`suite.figures.goodput.steady_batch_waits`) over them and its step time. The
    rates of a file of rules before :data:`LOOP_RATES_SINCE` leave them out, and where a step ends
    and its wait begins is the run's own clock, so the site says this share beside them (trial V).
    None without a window or a readable log."""
    tput = (run.get("metrics") or {}).get("throughput")
    if not tput:
        return None
    try:
        waited = goodput_log.steady_batch_waits(run.get("event_log") or [])
    except ValueError:
        return None
    loop = float(tput["window"]["seconds"]) + waited
    return waited / loop if loop > 0 else None


def window_steps(window: Mapping) -> int:
    """Steps of the window over which its energy was read: its last segment's (the worker that
    trained last; the whole window when it was not cut by a resume)."""
    return throughput_meter.last_segment_steps(dict(window))


def window_seconds(step_times_s: Sequence[float] | np.ndarray, window: Mapping) -> float:
    """The summed step times of the window's last segment (:func:`window_steps`): the least time
    its energy was read over, which also held its batch waits and the loop."""
    parts = window.get("segments") or [[window["first_step"], window["last_step"]]]
    first, last = parts[-1]
    return math.fsum(float(t) for t in step_times_s[first - 1:last])


def resume_steps(event_log: Iterable[str], steps: int | None = None) -> list[int]:
    """The checkpoint steps the run's later workers resumed from, in order, read from its event
    log with the one guarded reader (:func:`suite.figures.goodput.resume_step`). Raises ValueError for a
    log that cannot be read, or a resume step that is not a whole number from 0 to ``steps``."""
    attempts = goodput_log.split_attempts(mllog.parse(event_log))
    found = (goodput_log.resume_step(a, steps) for a in attempts[1:])
    return [s for s in found if s is not None]


# ---------------------------------------------------------------- phases
PHASES = ("data_load", "init", "compile_warmup", "train", "eval", "other")
"""The phases of a run's wall time, in the order the record writes them."""
MEASURED_PHASES = ("data_load", "init", "eval")
"""The phases the runner times on their own; the others follow from the step times and the wall."""


def step_phases(step_times_s: Sequence[float] | np.ndarray, warm: Sequence[bool] | np.ndarray) -> tuple[float, float]:
    """(compile_warmup, train): the summed times of the warm-up steps and of the others."""
    return (math.fsum(float(t) for t, w in zip(step_times_s, warm) if w),
            math.fsum(float(t) for t, w in zip(step_times_s, warm) if not w))


def other_phase(phases_s: Mapping[str, float], wall_s: float) -> float:
    """The wall time no other phase covers (never below 0)."""
    return max(0.0, wall_s - math.fsum(v for k, v in phases_s.items() if k != "other"))


def phases(step_times_s: Sequence[float] | np.ndarray, warm: Sequence[bool] | np.ndarray,
           measured: Mapping[str, float], wall_s: float) -> dict[str, float]:
    """Every phase: the ``measured`` ones (:data:`MEASURED_PHASES`), the warm-up and steady
    steps' times (``warm``: :func:`warmup_mask`) and the rest of the wall time."""
    out = dict.fromkeys(PHASES, 0.0)
    out.update(measured)
    out["compile_warmup"], out["train"] = step_phases(step_times_s, warm)
    out["other"] = other_phase(out, wall_s)
    return out


# ---------------------------------------------------------------- peak, MFU and the ceiling's share
@overload
def all_devices(per_device: float, devices: int) -> float: ...
@overload
def all_devices(per_device: None, devices: int) -> None: ...
@overload
def all_devices(per_device: float | None, devices: int) -> float | None: ...
def all_devices(per_device: float | None, devices: int) -> float | None:
    """A per-device figure (peak FLOP/s, matmul ceiling, board power) for all the ``devices`` one
    step of the global batch ran on; None stays None."""
    return per_device * devices if per_device is not None else None


def peak(device_name: str, precision: str, override_tflops: float | None = None, *, mig: bool = False,
         devices: int = 1) -> tuple[float | None, str]:
    """The dense peak FLOP/s of ``devices`` devices named ``device_name`` at ``precision`` (the
    table's, or ``override_tflops`` per device), and where it came from (``× N devices`` where
    there are several) or why there is none."""
    per_device, source = mfu_meter.peak_flops(device_name, precision, override_tflops, mig=mig)
    if devices > 1 and per_device is not None:
        source = f"{source} × {devices} devices"
    return all_devices(per_device, devices), source


def flop_rate(flops_per_step: float, tput: Mapping | None) -> float | None:
    """Model FLOP/s over the steady-state window's step time (not its batch waits: what the device
    did while it stepped, which the physics rules bound); None without a window."""
    return flops_per_step * tput["window"]["steps"] / tput["window"]["seconds"] if tput else None


def fastest_device_rate(runs: Iterable[dict], precision: str) -> float | None:
    """The most model FLOP/s one device reached over a steady-state window among ``runs`` at
    ``precision`` (each run's rate over its world size); None where no run has a window."""
    rates = [rate / world_size(run) for run in runs if run.get("precision") == precision
             for rate in [flop_rate((run.get("metrics") or {}).get("flops_per_step") or 0,
                                    (run.get("metrics") or {}).get("throughput"))] if rate]
    return max(rates) if rates else None


def mfu(flops_per_step: float, tput: Mapping | None, peak_flops: float | None) -> float | None:
    """Model FLOPs utilisation: FLOP/s over the window / the peak (None without either)."""
    return mfu_meter.mfu(flops_per_step, tput["steps_per_s"], peak_flops) if tput else None


MAX_CEILING_SPREAD = 0.5
"""The most a ceiling's spread widens its bound (rule ``above-ceiling``): a batch is the file's
word, so a made-up slow one could otherwise double the bound. Measured honest: 0.39 at most over
12 measurements of the 2-core CPU at load 4.2–4.6, 0.225 in the stored files (docs/rules.md)."""


def ceiling_spread(trials_flops: Sequence[float | None] | None) -> float:
    """How far the matmul ceiling's timed batches (:func:`suite.meters.ceiling.matmul_ceiling`)
    spread: (fastest − slowest) / fastest of the positive ones, at most :data:`MAX_CEILING_SPREAD`;
    0 with fewer than two."""
    rates = [float(t) for t in trials_flops or [] if isinstance(t, (int, float)) and t > 0]
    return min((max(rates) - min(rates)) / max(rates), MAX_CEILING_SPREAD) if len(rates) > 1 else 0.0


def share_of_ceiling(flops_per_step: float, tput: Mapping | None, ceiling: float | None) -> float | None:
    """FLOP/s over the window's step time (:func:`flop_rate`) / the measured matmul ceiling (None
    without either)."""
    rate = flop_rate(flops_per_step, tput)
    return rate / ceiling if rate is not None and ceiling is not None and ceiling > 0 else None


def mfu_status(mfu_value: float | None, tput: Mapping | None, peak_source: str) -> str:
    """What the MFU figure is measured against, or why it is not measured."""
    if mfu_value is not None:
        return f"ok: against {peak_source}"
    if tput is None:
        return "not measured: no steady-state throughput"
    return f"not measured: {peak_source}"


def run_peak(doc: Mapping, run: dict) -> tuple[float | None, str]:
    """:func:`peak` for a run of a results file: its system's device, its precision, the file's
    ``--peak-tflops`` and the run's world size; a MIG slice where its telemetry found one."""
    return peak(doc["system"]["accelerator"]["name"], run["precision"], doc["settings"].get("peak_tflops_override"),
                mig=mig_enabled(run), devices=world_size(run))


def run_mfu_status(doc: Mapping, run: dict) -> str:
    """The MFU status goodbench gives a run of a results file, whatever the file's says (the site
    shows this one: a file's status is its word)."""
    metrics = run["metrics"]
    return mfu_status(metrics.get("mfu"), metrics.get("throughput"), run_peak(doc, run)[1])


# ---------------------------------------------------------------- the target and time to target
def target_record(target: Any) -> dict | None:
    """A quality target (:class:`workloads.base.Target`) as a results file records it."""
    if target is None:
        return None
    return {"metric": target.metric, "direction": target.direction, "value": target.value}


def first_hit(curve: Sequence[Mapping], target: Any) -> Mapping | None:
    """The first eval point whose value of the target's metric meets the target (None: none)."""
    if target is None:
        return None
    return next((p for p in curve if isinstance(p.get(target.metric), (int, float))
                 and target.met(p[target.metric])), None)


def time_to_target(curve: Sequence[Mapping], target: Any) -> float | None:
    """Seconds from run start to the end of the first evaluation meeting the target."""
    hit = first_hit(curve, target)
    return hit["time_s"] if hit is not None else None


def flops_to_target(curve: Sequence[Mapping], target: Any, flops_per_step: float) -> float | None:
    """Model FLOPs of the steps up to the first evaluation meeting the target (None: none meets it)."""
    hit = first_hit(curve, target)
    return hit["step"] * flops_per_step if hit is not None else None


def tta_status(target: Any, tta_s: float | None, curve: Sequence[Mapping], steps: int) -> str:
    """Whether (and at which step) the run reached its target, or why it has none."""
    if target is None:
        return "throughput workload: no quality target"
    if tta_s is not None:
        return f"reached {target.describe()} at step {curve[-1]['step']}"
    return f"not reached: {target.describe()} not met within {steps} steps"


def final_quality(curve: Sequence[Mapping]) -> dict | None:
    """The last eval point's values (quality metrics and training loss)."""
    return {k: v for k, v in curve[-1].items() if k not in ("step", "time_s")} if curve else None


def tta_score(tta_by_seed: dict[int, float | None]) -> dict:
    """The MLPerf-style score of the seeds' times to target (:func:`suite.figures.tta.score`)."""
    return tta_meter.score(tta_by_seed)


# ---------------------------------------------------------------- energy and power
ENERGY_KEYS = ("energy_to_train_j", "energy_to_target_j", "energy_window_j", "energy_per_sample_j",
               "energy_per_token_j")
J_PER_KWH = 3.6e6  # joules in a kilowatt-hour: energies are recorded in J and shown in kWh


def energy_spans(readings: Mapping[str, float | None]) -> tuple[float | None, float | None, float | None]:
    """(to train, to target, steady-state window) joules from a meter's cumulative readings at
    ``run_start``, ``target``, ``window_start`` and ``end`` (the window less its
    ``window_pauses``: evaluations and checkpoints inside it). None where a reading is missing."""
    start, end = readings.get("run_start"), readings.get("end")
    if start is None or end is None:
        return None, None, None
    target, window_start = readings.get("target"), readings.get("window_start")
    return (end - start,
            target - start if target is not None else None,
            end - window_start - (readings.get("window_pauses") or 0.0) if window_start is not None else None)


def energy_window_error_j(window_j: float | None, pauses: int, devices: int, update_s: float | None,
                          max_power_w: float | None) -> float | None:
    """The most a steady-state window's energy can be off by the meter's update period: the window
    is its end reading less its start reading, less each pause's (an evaluation, a checkpoint)
    end less start, and each reading is short by up to ``update_s`` × the device's most power. The
    end and start errors partly cancel: the sum is off by at most (1 + pauses) such amounts per
    device (``pauses`` summed over the devices). None where the window, the meter's period or the
    device's most power is not known."""
    if window_j is None or update_s is None or max_power_w is None:
        return None
    return (devices + pauses) * update_s * max_power_w


def energy_per(window_j: float | None, window: Mapping | None, per_step: int | None) -> float | None:
    """Window energy / what the window's steps processed (``per_step`` samples or tokens)."""
    if window_j is None or window is None or not per_step:
        return None
    return window_j / (window_steps(window) * per_step)


def energy_figures(method: str | None, status: str, spans: tuple[float | None, float | None, float | None],
                   tput: Mapping | None, samples_per_step: int, tokens_per_step: int | None) -> dict:
    """The record's energy figures from the meter's ``method``/``status`` and the ``spans`` of
    :func:`energy_spans`; a window's energy needs a steady-state window."""
    to_train, to_target, window = spans
    window = window if tput is not None else None
    return {"energy_method": method, "energy_status": status,
            "energy_to_train_j": to_train, "energy_to_target_j": to_target, "energy_window_j": window,
            "energy_per_sample_j": energy_per(window, tput and tput["window"], samples_per_step),
            "energy_per_token_j": energy_per(window, tput and tput["window"], tokens_per_step)}


def mean_power(energy_j: float | None, seconds: float) -> float | None:
    """Mean power over the timed run: energy to train / time to train."""
    return energy_j / seconds if energy_j is not None and seconds > 0 else None


# ---------------------------------------------------------------- one run's metrics
def metrics(*, flops_per_step: float, samples_per_step: int, tokens_per_step: int | None,
            step_times_s: Sequence[float], warmup_steps: int, resumed_at: Sequence[int] = (),
            peak_flops: float | None, peak_source: str, ceiling: float | None = None, target: Any = None,
            tta_s: float | None = None, curve: Sequence[Mapping] = (), energy_method: str | None = None,
            energy_status: str = "not measured",
            energy: tuple[float | None, float | None, float | None] = (None, None, None),
            batch_waits_s: float | None = None) -> dict:
    """A run's ``metrics`` (all but power) from its raw records: the per-step figures, the step
    times and the window's batch waits (:func:`batch_waits`), the peak and ceiling of its devices
    (:func:`peak`, :func:`all_devices`), its target, its measured time to target, its curve and
    its energy spans (:func:`energy_spans`)."""
    tput, tput_status = throughput(step_times_s, warmup_steps=warmup_steps, samples_per_step=samples_per_step,
                                   tokens_per_step=tokens_per_step, resumed_at=resumed_at,
                                   batch_waits_s=batch_waits_s)
    mfu_value = mfu(flops_per_step, tput, peak_flops)
    return {
        "flops_per_step": flops_per_step,
        "samples_per_step": samples_per_step,
        "tokens_per_step": tokens_per_step,
        "throughput": tput,
        "throughput_status": tput_status,
        "peak_flops": peak_flops,
        "mfu": mfu_value,
        "mfu_status": mfu_status(mfu_value, tput, peak_source),
        "matmul_ceiling_flops": ceiling,
        "share_of_ceiling": share_of_ceiling(flops_per_step, tput, ceiling),
        "target": target_record(target),
        "tta_s": tta_s,
        "tta_status": tta_status(target, tta_s, curve, len(step_times_s)),
        "final_quality": final_quality(curve),
        **energy_figures(energy_method, energy_status, energy, tput, samples_per_step, tokens_per_step),
    }


# ---------------------------------------------------------------- goodput
def goodput(event_log: Iterable[str], flops_per_step: float | None, peak_flops: float | None) -> dict:
    """Goodput and the badput buckets from the event log alone (:func:`suite.figures.goodput.from_event_log`;
    raises ValueError for a log that cannot be read as a run's)."""
    return goodput_log.from_event_log(event_log, flops_per_step, peak_flops)


# ---------------------------------------------------------------- a distributed run
def exposed_share(step_s_with_sync: float | None, step_s_without_sync: float | None) -> float | None:
    """The share of a synced step that communication adds beyond compute: 1 − without / with
    (never below 0); None without both times."""
    if step_s_with_sync is None or step_s_without_sync is None or not step_s_with_sync > 0:
        return None
    return max(0.0, 1.0 - step_s_without_sync / step_s_with_sync)


def communication(step_s_with_sync: float | None, step_s_without_sync: float | None, method: str,
                  status: str = "ok") -> dict:
    """A distributed run's ``communication`` section from the probe's median step times."""
    return {"exposed_share": exposed_share(step_s_with_sync, step_s_without_sync),
            "step_s_with_sync": step_s_with_sync, "step_s_without_sync": step_s_without_sync,
            "method": method, "status": status}


def rank_step_times(steady_s: Sequence[float] | np.ndarray) -> dict | None:
    """One rank's steady-state step times summarised (mean, p50, max, steps); None without any."""
    times = np.asarray(steady_s, dtype=np.float64)
    if times.size == 0:
        return None
    return {"mean": float(times.mean()), "p50": float(np.median(times)), "max": float(times.max()),
            "steps": int(times.size)}


def straggler_spread(rank_means: Sequence[float], ranks: int) -> float | None:
    """max / median of the ranks' mean step times; None unless all ``ranks`` have one."""
    if len(rank_means) != ranks or not rank_means or not np.median(rank_means) > 0:
        return None
    return float(max(rank_means) / np.median(rank_means))


# ---------------------------------------------------------------- the document's summary
def required_seeds(scale: str, kind: str) -> int:
    """Seeds a workload needs: :data:`~workloads.pinned.FULL_TTA_SEEDS` for a full-scale
    time-to-accuracy result (MLPerf-style scoring), else 1."""
    return FULL_TTA_SEEDS if scale == "full" and kind == "tta" else 1


def summary(runs: list[dict]) -> dict[str, dict]:
    """The per-workload summary of a document's runs (:func:`suite.figures.summary.summarize`)."""
    return summary_module.summarize(runs)
