"""What no device can do (rules v7 to v9; docs/rules.md, "Physics"): a matmul ceiling that is not a
measurement of the device, model FLOP/s beyond the run's own measured ceiling, a time to target or
an evaluation shorter than its model FLOPs take at the fastest rate the device allows, and a mean
power outside the device class's physical band or below what its work takes; on a CPU, model
FLOP/s beyond its cores × FLOPs a cycle × clock (v9). Every device and division is held to them; the device facts
and their reasons are in the peak table (:mod:`suite.figures.mfu`).
"""
from __future__ import annotations

import functools
import math

from suite.figures import ceiling_method, derive
from suite.figures import mfu as mfu_meter
from suite.record import results
from suite.record.results import division
from suite.validate.registry import Problem, code, document_rule, run_rule
from suite.validate.shared import V7, V8, V9, read_log
from suite.validate.tolerance import POWER_MARGIN, REL_TOLERANCE
from workloads import own, registry

code("ceiling-implausible", "a measured matmul ceiling that cannot be a measurement of the device: below the "
     "stated share of its class's peak (a CPU's floor), above the peak, without timed batches or not the fastest of "
     "them, or a method text that is not goodbench's or claims other than the record", since=V7)
code("above-ceiling", "model FLOP/s above the run's own measured matmul ceiling beyond the ceiling's measured "
     "spread", since=V7)
code("tta-too-fast", "a time to target shorter than the model FLOPs to the first qualifying evaluation (its "
     "steps and, in the closed division, its evaluations) take at the fastest rate the device allows", since=V7)
code("eval-too-fast", "an evaluation shorter than the model FLOPs of its eval set's forward passes take at the "
     "fastest rate the device allows", since=V8)
code("power-band", "mean power over a measured span outside the device class's physical band, or below what "
                   "the window's model FLOPs take", since=V7)
code("step-too-fast", "a step on a GPU shorter than the launch of its kernels allows", since=V7)
code("cpu-too-fast", "a CPU's measured matmul ceiling, or a CPU run's model FLOP/s over its window or an evaluation, "
     "above what its recorded cores do at the most any CPU core does per cycle and the highest clock of any (the "
     "core count is self-reported: the file's own word for its host)", since=V9)


def _ceiling_entry(doc: dict, precision: str) -> dict | None:
    """The ceiling measured for ``precision`` in ``settings.matmul_ceiling`` (None: none)."""
    entry = (doc["settings"].get("matmul_ceiling") or {}).get(precision)
    return entry if isinstance(entry, dict) and isinstance(entry.get("flops"), (int, float)) else None


def _measurements(entry: dict) -> list[tuple[str, dict]]:
    """The measurements of one ceiling entry, each with its field's prefix: the one before the runs
    (``""``) and, where the file has it, the one after them (``"at_end."``, :func:`suite.meters.ceiling.with_end`)."""
    end = entry.get("at_end")
    found = [("", entry)]
    if isinstance(end, dict) and isinstance(end.get("flops"), (int, float)) and not isinstance(end.get("flops"), bool):
        found.append(("at_end.", end))
    return found


def _table_peak(doc: dict, run: dict, precision: str) -> tuple[float | None, mfu_meter.Peak | None]:
    """One device's dense peak at ``precision`` from the table, and its entry (None, None: no known peak)."""
    entry = mfu_meter.known_peak(doc["system"]["accelerator"]["name"], precision, results.mig_enabled(run))
    return (entry.tflops[precision] * 1e12, entry) if entry else (None, None)


def ceiling_bounds(doc: dict, run: dict, precision: str) -> tuple[float | None, float | None, str]:
    """(least, most) FLOP/s a measured matmul ceiling of one device at ``precision`` can be, and
    what they come from: a share of the table's dense peak and the peak itself on a known device,
    the CPUs' floor on a CPU; (None, None) on a device the table does not know."""
    if doc["system"]["accelerator"]["type"] == "cpu":
        return mfu_meter.CPU_CEILING_FLOOR_FLOPS, None, "the least matmul ceiling of any CPU"
    peak, entry = _table_peak(doc, run, precision)
    if peak is None or entry is None:
        return None, None, "no known peak"
    most = entry.most_flops(precision) or peak
    if most < peak:
        return (mfu_meter.CEILING_FLOOR_SHARE * peak, most * (1 + REL_TOLERANCE),
                f"the most one {entry.name} reaches at {precision}, {most:.4g} FLOP/s ({most / peak:.1%} of its "
                f"dense peak: its measured best share and {mfu_meter.BEST_SHARE_SLACK:.0%})")
    return (mfu_meter.CEILING_FLOOR_SHARE * peak, peak * (1 + REL_TOLERANCE),
            f"the {entry.name} {precision} dense peak of {peak:.4g} FLOP/s")


@document_rule("ceiling-implausible", "device-evidence")
def _check_ceiling_is_a_measurement(doc: dict, runs: list, now) -> list[Problem]:
    """Each measured matmul ceiling is the fastest of its batches, within its device class's bounds.

    The one measured again after the runs (``at_end``) only widens the bound of the runs' rates, so
    its floor is no ``ceiling-implausible``; below it, it is a measurement of another device than the
    one claimed (a CPU's 78 GFLOP/s in a file relabelled as an H100's), ``device-evidence`` (v9)."""
    problems: list[Problem] = []
    by_precision = {run["precision"]: run for _, run in runs}
    for precision, run in sorted(by_precision.items()):
        entry = _ceiling_entry(doc, precision)
        if entry is None:
            continue  # ceiling-missing says so
        low, high, basis = ceiling_bounds(doc, run, precision)
        for prefix, measured in _measurements(entry):
            field = f"settings.matmul_ceiling.{precision}.{prefix}"
            trials = measured.get("trials_flops") or []
            numbers = [t for t in trials if isinstance(t, (int, float))]
            if not trials or len(numbers) != len(trials) or any(t <= 0 for t in numbers):
                problems.append(Problem("ceiling-implausible", f"{field}trials_flops",
                                        "no timed batch: the ceiling is the fastest of its batches" if not trials else
                                        "a timed batch without a positive rate is not a measurement"))
                continue
            problems += _method_problems(measured.get("method"), field, precision, entry.get("n"), len(trials))
            if numbers and abs(measured["flops"] - max(numbers)) > REL_TOLERANCE * max(numbers):
                problems.append(Problem("ceiling-implausible", f"{field}flops",
                                        f"{measured['flops']:.4g} FLOP/s, but the ceiling is the fastest of its timed "
                                        f"batches, {max(numbers):.4g}"))
            fastest = max([measured["flops"], *numbers])
            if low is not None and measured["flops"] < low:
                problems.append(Problem("ceiling-implausible" if not prefix else "device-evidence", f"{field}flops",
                                        f"{measured['flops']:.4g} FLOP/s is not a measurement of this device: below "
                                        f"{low:.4g}, {_share_text(low, high)}{basis}"
                                        f"{'' if not prefix else ' (measured after the runs)'}"))
            if high is not None and fastest > high:
                problems.append(Problem("ceiling-implausible", f"{field}flops",
                                        f"{fastest:.4g} FLOP/s measured, above {basis}"))
    return problems


def _method_problems(method: object, field: str, precision: str, n: object, batches: int) -> list[Problem]:
    """What a ceiling's method text claims against its record (:mod:`suite.figures.ceiling_method`):
    a text goodbench writes, of the entry's matrix size and precision, as many timed batches as
    it records and, measured again, at most as many measurements as goodbench makes. None
    claims nothing (and nothing is shown)."""
    if method is None:
        return []
    claims = ceiling_method.claims(method) if isinstance(method, str) else None
    if claims is None:
        return [Problem("ceiling-implausible", f"{field}method", "not a method goodbench writes: its claims cannot "
                        "be held to the measurement (torch.mm NxN PRECISION, random data, W warm-up products, "
                        "fastest of K timed batches)")]
    wrong = []
    if claims["n"] != n:
        wrong.append(f"{claims['n']}x{claims['n']} matrices, but n is {n}")
    if claims["precision"] != precision:
        wrong.append(f"{claims['precision']}, but the ceiling is for {precision}")
    if claims["batches"] != batches:
        wrong.append(f"the fastest of {claims['batches']} timed batches, but {batches} are recorded")
    if "made" in claims and not field.endswith("at_end."):
        wrong.append(f"the fastest of {claims['made']} measurements made after the runs, but this one was made "
                     "before them")
    elif "made" in claims and not 2 <= claims["made"] <= ceiling_method.MOST_MEASUREMENTS_AGAIN:
        wrong.append(f"the fastest of {claims['made']} measurements, but goodbench makes 2 to "
                     f"{ceiling_method.MOST_MEASUREMENTS_AGAIN}")
    return [Problem("ceiling-implausible", f"{field}method", f"the method says {w}") for w in wrong]


def _share_text(low: float, high: float | None) -> str:
    return f"{mfu_meter.CEILING_FLOOR_SHARE:.0%} of " if high is not None else ""


def ceiling_rate(doc: dict, run: dict) -> tuple[float | None, str]:
    """The most model FLOP/s the run's own measured ceiling allows: the ceiling of its precision —
    the faster of the measurements before and after the runs, where both were made — × its devices,
    widened by the spread that measurement's own timed batches showed (:func:`suite.figures.derive.ceiling_spread`;
    pooling both, taken under different loads, widened a bound to 3× the first ceiling) and the 1%
    of rounding; (None, why) without a ceiling."""
    entry = _ceiling_entry(doc, run["precision"])
    if entry is None:
        return None, "no measured ceiling"
    measured = _measurements(entry)
    fastest = max(m["flops"] for _, m in measured)
    spread = max(derive.ceiling_spread(m.get("trials_flops") if isinstance(m.get("trials_flops"), list) else None)
                 for _, m in measured if m["flops"] == fastest)  # the faster measurement's own batches
    devices = results.world_size(run)
    again = len(measured) > 1 and measured[1][1]["flops"] > entry["flops"]
    ceiling = derive.all_devices(float(fastest), devices)
    bound = ceiling * (1 + spread) * (1 + REL_TOLERANCE)
    _, most, basis = ceiling_bounds(doc, run, run["precision"])
    if most is not None and bound > derive.all_devices(most, devices):  # a widened ceiling stays within the class's
        return (derive.all_devices(most, devices), f"{basis}{f' × {devices} devices' if devices > 1 else ''} "
                f"(the measured ceiling {ceiling:.4g} FLOP/s + its spread of {spread:.1%} would allow more)")
    return (bound, f"the measured {run['precision']} matmul ceiling {ceiling:.4g} FLOP/s"
            f"{' (measured again after the runs)' if again else ''}"
            f"{f' ({devices} devices)' if devices > 1 else ''} + its measured spread of {spread:.1%}")


@run_rule("above-ceiling")
def _check_rate_below_ceiling(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Model FLOP/s over the window stay within the run's own measured matmul ceiling and its spread."""
    rate = derive.flop_rate(run["metrics"]["flops_per_step"], facts["expected"])
    bound, basis = ceiling_rate(doc, run)
    if rate is None or bound is None or rate <= bound:
        return []
    return [Problem("above-ceiling", f"{where}.step_times_s",
                    f"{rate:.4g} model FLOP/s from the FLOP model and the step times, {rate / bound:.3g}× the "
                    f"most allowed, {bound:.4g} FLOP/s: {basis}")]


def fastest_rate(doc: dict, run: dict) -> tuple[float | None, str]:
    """The most model FLOP/s the run's devices allow: the lesser of the table's dense peak ×
    devices and :func:`ceiling_rate`; (None, why) where neither is known."""
    options = []
    peak, entry = _table_peak(doc, run, run["precision"])
    if peak is not None and entry is not None:
        devices = results.world_size(run)
        options.append((derive.all_devices(peak, devices) * (1 + REL_TOLERANCE),
                        f"the {entry.name} {run['precision']} dense peak{f' × {devices}' if devices > 1 else ''}"))
    bound, basis = ceiling_rate(doc, run)
    if bound is not None:
        options.append((bound, basis))
    return min(options) if options else (None, "no peak and no ceiling")


def eval_flops(doc: dict, run: dict, facts: dict | None = None) -> float | None:
    """Model FLOPs of one of the run's evaluations (:meth:`workloads.base.Workload.eval_flops`), where
    the file gives them: in the closed division its workload's pinned eval set (``facts``, else
    computed); in the open division the pinned spec's at the run's global batch, the one change an
    open run of goodbench makes (rule ``log-spec`` holds the file to it; a spec hash that is not
    that spec's gives none); in the own division, held to a workload's target, that workload's
    pinned eval set (goodbench's pinned evaluator runs it) at a third of the declared step's model
    FLOPs per token (per sample where either side counts no tokens). None for an own free job (its
    evaluator is its own) and wherever a figure is missing: its evaluation time is self-reported."""
    kind = division(doc)
    try:
        if kind == "closed":
            flops = facts.get("eval_flops") if facts is not None else \
                _closed_eval_flops(run["workload"]["id"], run["workload"]["version"], run["scale"])
        elif kind == "open":
            flops = _open_eval_flops(run["workload"]["id"], run["scale"], run["metrics"]["samples_per_step"],
                                     run["workload"]["spec_hash"])
        elif kind == own.DIVISION:
            flops = _own_eval_flops(doc, run)
        else:
            flops = None
    except (KeyError, TypeError, ValueError, AttributeError):  # an unknown workload, scale or declaration
        return None
    if isinstance(flops, bool) or not isinstance(flops, (int, float)) or not math.isfinite(flops) or flops <= 0:
        return None
    return float(flops)


@functools.lru_cache(maxsize=64)
def _closed_eval_flops(workload_id: str, version: int, scale: str) -> float | None:
    workload = registry.get(workload_id)
    return workload.eval_flops(workload.spec(scale))


@functools.lru_cache(maxsize=256)
def _open_eval_flops(workload_id: str, scale: str, batch: int, spec_hash: str) -> float | None:
    """An open run's evaluation FLOPs: the pinned spec's at global batch ``batch``, when ``spec_hash`` is that spec's."""
    workload = registry.get(workload_id)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        return None
    changed = workload if batch == workload.spec(scale).batch_size else workload.with_spec_changes(scale, batch_size=batch)
    if changed.spec_hash(scale) != spec_hash:
        return None
    return changed.eval_flops(changed.spec(scale))


def _own_eval_flops(doc: dict, run: dict) -> float | None:
    """An own run's evaluation FLOPs: the pinned eval set of the workload it is held to, each token
    (each sample) at a third of the declared step's model FLOPs per token (per sample)."""
    implementation = doc["settings"].get("implementation")
    against = implementation.get("against") if isinstance(implementation, dict) else None
    if not isinstance(against, str):
        return None  # a free job: its evaluator is its own
    reference, mine = registry.get(against), registry.of_run(run, doc)
    theirs, spec = reference.spec(run["scale"]), mine.spec(run["scale"])
    samples = reference.eval_samples(theirs)
    if samples is None:
        return None
    their_tokens, my_tokens = reference.tokens_per_step(theirs), mine.tokens_per_step(spec)
    if their_tokens and my_tokens:
        return samples * their_tokens / reference.samples_per_step(theirs) * mine.flops_per_step(spec) / (3 * my_tokens)
    return samples * mine.flops_per_step(spec) / (3 * mine.samples_per_step(spec))


def class_rate(doc: dict, run: dict) -> tuple[float | None, str]:
    """The most model FLOP/s the run's device class allows, whatever its own ceiling says: the
    most one device of the table's entry reaches at the run's precision (:func:`ceiling_bounds`)
    × devices; (None, why) on a device the table cannot bound (a CPU, an unknown name). An
    evaluation is held to it rather than to the run's own ceiling: it lasts a moment, and a
    machine may be idler then than while its ceiling was measured (measured: the reference smoke
    file's first lm-char evaluation ran at 9.6× its 2-core CPU's ceiling)."""
    _, most, basis = ceiling_bounds(doc, run, run["precision"])
    if most is None or doc["system"]["accelerator"]["type"] == "cpu":
        return None, "no known peak"
    devices = results.world_size(run)
    return derive.all_devices(most, devices), basis + (f" × {devices} devices" if devices > 1 else "")


def _rate_precisions(run: dict) -> tuple[str, ...]:
    """The precisions an open or own run's evaluation may reach the peak of: its own, and for fp32
    also tf32 (code not goodbench's may leave cuDNN's or the matmuls' TF32 on)."""
    return (run["precision"], "tf32") if run["precision"] == "fp32" else (run["precision"],)


def eval_rate(doc: dict, run: dict) -> tuple[float | None, str]:
    """The most model FLOP/s one evaluation of the run may reach (rules v8, ``eval-too-fast``): in the
    closed division on a device of the table, :func:`class_rate`; an open or own run on a device of
    the table, its dense peak (the tf32 one for fp32, where higher) × devices; on a device the table
    does not know (or a MIG slice), the fastest dense peak of any device in the table at that
    precision × devices — nothing trains faster than the fastest chip known. (None, why) on a CPU
    (``cpu-too-fast`` holds its evaluations) or a precision no device of the table has."""
    if doc["system"]["accelerator"]["type"] == "cpu":
        return None, "a CPU"
    devices = results.world_size(run)
    times = f" × {devices} devices" if devices > 1 else ""
    if division(doc) == "closed":
        rate, basis = class_rate(doc, run)
        if rate is not None:
            return rate, basis
    entry = mfu_meter.known_peak(doc["system"]["accelerator"]["name"], run["precision"], results.mig_enabled(run))
    if entry is not None:
        precision, tflops = max(((p, entry.tflops[p]) for p in _rate_precisions(run) if p in entry.tflops),
                                key=lambda pair: pair[1])
        return derive.all_devices(tflops * 1e12, devices), f"the {entry.name} {precision} dense peak{times}"
    known = [(p.tflops[x], p.name, x) for p in mfu_meter.PEAKS for x in _rate_precisions(run) if x in p.tflops]
    if not known:
        return None, f"no device of the table has a {run['precision']} peak"
    tflops, name, precision = max(known)
    return (derive.all_devices(tflops * 1e12, devices),
            f"the fastest {precision} dense peak of the table, the {name}'s{times} (the device is not in the table)")


def tta_least(doc: dict, run: dict, facts: dict) -> tuple[float, float, str] | None:
    """(seconds to target, the least they may be, why) for ``tta-too-fast``: the steps' model FLOPs to
    the target at the fastest rate the devices allow, and — where the file gives its evaluations'
    FLOPs and a rate bounds them — its evaluations up to the first meeting the target at their floor
    (:func:`eval_floor`); None where the run met no target or no rate is known."""
    target, m = facts["target"], run["metrics"]
    hit = derive.first_hit(run["curve"], target)
    flops = derive.flops_to_target(run["curve"], target, m["flops_per_step"])
    if m["tta_s"] is None or hit is None or flops is None:
        return None
    rate, basis = fastest_rate(doc, run)
    if rate is None:
        return None
    evaluating = eval_floor(doc, run, facts)
    evals = sum(1 for point in run["curve"] if point["step"] <= hit["step"]) if evaluating else 0
    least = flops / rate + evals * (evaluating[0] if evaluating else 0.0)
    also = f", and its {evals} evaluations at least {evals * evaluating[0]:.4g} s" if evaluating and evals else ""
    return (min(m["tta_s"], hit["time_s"]), least,
            f"its {hit['step']} steps' {flops:.4g} model FLOPs take at least {flops / rate:.4g} s at {basis}{also}")


@run_rule("tta-too-fast")
def _check_tta_possible(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A time to target takes at least what :func:`tta_least` says."""
    found = tta_least(doc, run, facts)
    if found is None or found[0] >= found[1]:
        return []
    seconds, _, why = found
    return [Problem("tta-too-fast", f"{where}.metrics.tta_s", f"{seconds:.4g} s to target, but {why}")]


def eval_floor(doc: dict, run: dict, facts: dict | None = None) -> tuple[float, str] | None:
    """The least time one evaluation of the run takes: :func:`eval_flops` at :func:`eval_rate`,
    and what it comes from; None where either is not known."""
    flops = eval_flops(doc, run, facts)
    rate, basis = eval_rate(doc, run)
    if flops is None or rate is None:
        return None
    return flops / rate, f"its eval set's forward passes, {flops:.4g} model FLOPs, take at least that at {basis}"


EVAL_SELF_REPORTED = "evaluation time self-reported"
"""What a run page says where no rule bounds its evaluations' time (:func:`eval_time_unbounded`)."""


def eval_time_unbounded(doc: dict, run: dict) -> str | None:
    """Why no rule gives the run's evaluations a least time — :data:`EVAL_SELF_REPORTED` and the
    reason —, or None where one does (``eval-too-fast``, or ``cpu-too-fast`` on a CPU) or the run
    evaluated nothing."""
    if not run.get("curve"):
        return None
    if eval_flops(doc, run) is None:
        implementation = doc["settings"].get("implementation")
        free = division(doc) == own.DIVISION and not (isinstance(implementation, dict) and implementation.get("against"))
        why = "its evaluator is its own code's (a free job)" if free else "the file does not give its evaluation's model FLOPs"
        return f"{EVAL_SELF_REPORTED}: {why}, so nothing bounds how short an evaluation may be"
    cpu = doc["system"]["accelerator"]["type"] == "cpu"
    if (cpu_most(doc, run, run["precision"]) if cpu else eval_rate(doc, run)[0]) is None:
        return f"{EVAL_SELF_REPORTED}: no device rate is known at {run['precision']}, so nothing bounds how short an evaluation may be"
    return None


@run_rule("eval-too-fast")
def _check_eval_possible(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Each evaluation of the event log (``eval_start`` … ``eval_stop``) takes at least its model
    FLOPs at the most its device allows (:func:`eval_floor`: the class's best in the closed
    division, the dense peak for open and own code, the table's fastest peak on a device it does not
    know): the time a run spends evaluating is inside its time to target, so a retimed run may not
    shrink it to nothing."""
    floor = eval_floor(doc, run, facts)
    log = read_log(run, facts)
    if floor is None or log is None:
        return []
    least, basis = floor
    short = sorted((item.seconds, step) for step, item in log.evals.items() if item.seconds < least * (1 - REL_TOLERANCE))
    if not short:
        return []
    seconds, step = short[0]
    return [Problem("eval-too-fast", f"{where}.event_log",
                    f"{len(short)} of its {len(log.evals)} evaluations shorter than {least * 1e3:.4g} ms (the one at "
                    f"step {step}: {seconds * 1e3:.4g} ms): {basis}")]


def power_band(doc: dict, run: dict) -> tuple[float, float | None, str] | None:
    """(floor, ceiling or None, the class) of the mean power the run's devices draw while training:
    a GPU of the table from its measured idle (else a share of its board power) — its ceiling is
    :func:`~suite.validate.run_rules` ``power-implausible``'s —, a CPU from its RAPL package
    figures; None where the class is unknown (the table gives no board power, a MIG slice)."""
    acc = doc["system"]["accelerator"]
    if acc["type"] == "cpu":
        host = doc["system"].get("host")
        sockets = (results.count(host.get("cpu_sockets")) if isinstance(host, dict) else None) or 1
        return (mfu_meter.CPU_PACKAGE_FLOOR_W, mfu_meter.CPU_PACKAGE_CEILING_W * POWER_MARGIN * sockets,
                f"a CPU's RAPL package power ({mfu_meter.CPU_PACKAGE_FLOOR_W:g}–"
                f"{mfu_meter.CPU_PACKAGE_CEILING_W:g} W per package + 10%, × {sockets} socket(s))")
    entry = None if results.mig_enabled(run) else mfu_meter.find_peak(str(acc["name"]))
    floor = entry.power_floor_w if entry is not None else None
    if entry is None or floor is None:
        return None
    devices = results.world_size(run)
    measured = "its measured idle" if entry.idle_w is not None else \
        f"{mfu_meter.IDLE_FLOOR_SHARE:.0%} of its board power"
    return derive.all_devices(floor, devices), None, f"the {entry.name}'s floor, {measured}" + \
        (f", × {devices} devices" if devices > 1 else "")


def work_floor(doc: dict, run: dict, flops: float, seconds: float) -> tuple[float, str] | None:
    """The least mean power that does ``flops`` model FLOPs in ``seconds`` on the run's devices
    (:meth:`suite.figures.mfu.Peak.most_flops_per_joule`), and what it comes from; None where the
    table gives no peak per watt for the device and precision (a CPU, an unknown device, a MIG slice)."""
    _, entry = _table_peak(doc, run, run["precision"])
    per_joule = entry.most_flops_per_joule(run["precision"]) if entry is not None else None
    if entry is None or per_joule is None or seconds <= 0:
        return None
    return (flops / seconds / per_joule,
            f"its {flops / seconds:.4g} model FLOP/s need at least that at {per_joule / 1e12:.3g} model TFLOP per "
            f"joule, {mfu_meter.WORK_PER_JOULE_SLACK:.3g}× the {entry.name}'s {run['precision']} dense peak per "
            "watt of its board power")


def _window_work(run: dict) -> tuple[float, float] | None:
    """(model FLOPs, seconds) of the window's last segment, the span its energy was read over."""
    window = (run["metrics"]["throughput"] or {}).get("window")
    if not window:
        return None
    return (run["metrics"]["flops_per_step"] * derive.window_steps(window),
            derive.window_seconds(run["step_times_s"], window))


def power_spans(doc: dict, run: dict) -> list[tuple[str, float, float, float | None, str]]:
    """Each span whose energy the run gives (over the run, to its target, over its window), as
    (the energy's key, mean watts, the least watts allowed, the most or None, what the least comes
    from): the least is the device class's floor (:func:`power_band`), and over the window the
    window's work where that is more (:func:`work_floor`); empty where the class is unknown."""
    band = power_band(doc, run)
    m = run["metrics"]
    if band is None:
        return []
    floor, ceiling, basis = band
    work = _window_work(run)
    spans = [("energy_to_train_j", run["time_to_train_s"]), ("energy_to_target_j", m["tta_s"]),
             ("energy_window_j", work[1] if work else None)]
    out = []
    for key, seconds in spans:
        energy = m.get(key)
        if energy is None or seconds is None or seconds <= 0:
            continue
        least = work_floor(doc, run, work[0], seconds) if work and key == "energy_window_j" else None
        low, why = least if least is not None and least[0] > floor else (floor, basis)
        out.append((key, energy / seconds, low, None if key == "energy_window_j" else ceiling, why))
    return out


@run_rule("power-band")
def _check_power_band(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Mean power over the run, to its target and over its window lies in the device class's band,
    and over the window it is at least what the window's model FLOPs take (:func:`power_spans`)."""
    problems = []
    for key, watts, least, most, why in power_spans(doc, run):
        if watts < least * (1 - REL_TOLERANCE):
            problems.append(Problem("power-band", f"{where}.metrics.{key}",
                                    f"{watts:.4g} W mean over its span, below {least:.4g} W: {why}"))
        elif most is not None and watts > most:
            problems.append(Problem("power-band", f"{where}.metrics.{key}",
                                    f"{watts:.4g} W mean over its span, above {most:.4g} W: {why}"))
    return problems


@run_rule("step-too-fast")
def _check_step_floor(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """Every step on a GPU takes at least the launch of its kernels (:data:`suite.figures.mfu.GPU_STEP_FLOOR_S`)."""
    if doc["system"]["accelerator"]["type"] != "cuda" or not len(facts["times"]):
        return []
    fastest = float(facts["times"].min())
    if fastest >= mfu_meter.GPU_STEP_FLOOR_S:
        return []
    step = int(facts["times"].argmin()) + 1
    return [Problem("step-too-fast", f"{where}.step_times_s",
                    f"step {step} took {fastest * 1e6:.3g} µs; a training step on a GPU launches tens of kernels, "
                    f"at least {mfu_meter.GPU_STEP_FLOOR_S * 1e6:.3g} µs")]


CORES_SELF_REPORTED = "the core count is self-reported: a file recording more cores than its host has passes"
"""What every statement of the CPU bound says of its core count (``system.host``, the file's word for its host)."""


def cpu_most(doc: dict, run: dict, precision: str) -> tuple[float, str] | None:
    """The most FLOP/s a CPU run's machine can do at ``precision``: its recorded cores (physical,
    else logical; at most :data:`~suite.figures.mfu.CPU_SOCKET_MOST_CORES` per recorded socket) ×
    nodes × :data:`~suite.figures.mfu.CPU_CORE_MOST_FLOP_PER_CYCLE` × :data:`~suite.figures.mfu.CPU_MOST_CLOCK_HZ`,
    and what it comes from; None on a GPU or an unknown precision."""
    per_cycle = mfu_meter.CPU_CORE_MOST_FLOP_PER_CYCLE.get(precision)
    if doc["system"]["accelerator"]["type"] != "cpu" or per_cycle is None:
        return None
    host = doc["system"].get("host")
    host = host if isinstance(host, dict) else {}
    sockets = results.count(host.get("cpu_sockets")) or 1
    most_cores = sockets * mfu_meter.CPU_SOCKET_MOST_CORES
    cores = min(results.count(host.get("cpu_physical_cores")) or results.count(host.get("cpu_logical_cores"))
                or most_cores, most_cores)
    seen = _load_cores(run)
    if seen is not None:  # the host's cores the run's host-load snapshots counted bound them too
        cores = min(cores, seen)
    nodes = results.count((run.get("distributed") or {}).get("nnodes", 1)) or 1
    flops = nodes * cores * per_cycle * mfu_meter.CPU_MOST_CLOCK_HZ
    return flops, (f"{cores} recorded core{'s' if cores != 1 else ''}{f' × {nodes} nodes' if nodes > 1 else ''} × "
                   f"{per_cycle} {precision} FLOPs per cycle × {mfu_meter.CPU_MOST_CLOCK_HZ / 1e9:g} GHz, the most any "
                   f"CPU core does ({CORES_SELF_REPORTED})")


def _load_cores(run: dict) -> int | None:
    """The most host cores any of the run's host-load snapshots counted (``host_load.*.host_cores``,
    else ``cores``, the host's before ``host_cores`` was recorded: :func:`suite.meters.host_load.snapshot`),
    or None where it recorded none: a file claiming 288 cores in ``system.host`` beside snapshots that
    counted 2 is held to 2 (trial 5). Not the cores the run may use: a CPU quota lets short bursts
    run on more."""
    load = run.get("host_load")
    snaps = [snap for snap in load.values() if isinstance(snap, dict)] if isinstance(load, dict) else []
    counted = [c for snap in snaps if (c := results.count(snap.get("host_cores", snap.get("cores")))) is not None]
    return max(counted) if counted else None


@document_rule("cpu-too-fast")
def _check_cpu_ceiling(doc: dict, runs: list, now) -> list[Problem]:
    """A CPU's measured matmul ceiling is at most what its recorded cores (a self-reported count) can
    do (:func:`cpu_most`)."""
    problems: list[Problem] = []
    by_precision = {run["precision"]: run for _, run in runs}
    for precision, run in sorted(by_precision.items()):
        entry, most = _ceiling_entry(doc, precision), cpu_most(doc, run, precision)
        if entry is None or most is None:
            continue
        numbers = [t for _, m in _measurements(entry) for t in [m["flops"], *(m.get("trials_flops") or [])]
                   if isinstance(t, (int, float))]
        fastest = max(numbers)
        if fastest > most[0] * (1 + REL_TOLERANCE):
            problems.append(Problem("cpu-too-fast", f"settings.matmul_ceiling.{precision}.flops",
                                    f"{fastest:.4g} FLOP/s measured, above {most[0]:.4g}: {most[1]}"))
    return problems


@run_rule("cpu-too-fast")
def _check_cpu_rate(run: dict, where: str, doc: dict, facts: dict) -> list[Problem]:
    """A CPU run's model FLOP/s over its window, and each evaluation's (its FLOPs where the file
    gives them, :func:`eval_flops`), are at most what its recorded cores (a self-reported count)
    can do (:func:`cpu_most`)."""
    most = cpu_most(doc, run, run["precision"])
    if most is None:
        return []
    problems = []
    rate = derive.flop_rate(run["metrics"]["flops_per_step"], facts["expected"])
    if rate is not None and rate > most[0] * (1 + REL_TOLERANCE):
        problems.append(Problem("cpu-too-fast", f"{where}.step_times_s", f"{rate:.4g} model FLOP/s from the FLOP "
                                f"model and the step times, above {most[0]:.4g}: {most[1]}"))
    flops, log = eval_flops(doc, run, facts), read_log(run, facts)
    if flops is not None and log is not None:
        least = flops / most[0]
        short = sorted((item.seconds, step) for step, item in log.evals.items() if item.seconds < least * (1 - REL_TOLERANCE))
        if short:
            problems.append(Problem("cpu-too-fast", f"{where}.event_log",
                                    f"{len(short)} of its {len(log.evals)} evaluations shorter than {least * 1e3:.4g} "
                                    f"ms (the one at step {short[0][1]}: {short[0][0] * 1e3:.4g} ms): its eval set's "
                                    f"{flops:.4g} model FLOPs at {most[0]:.4g} FLOP/s, {most[1]}"))
    return problems
