"""``goodbench reproduce FILE``: train a results file's runs again on this machine, with the
settings they recorded, and say for each run whether it reproduced.

No self-reported file can prove that it is not made up: a forger who rewrites every record of a
run consistently passes every rule of the validator (docs/rules.md). Training the run again can
catch that, and this is the command that does it (docs/rules.md, "Reproducing a result"):

1. read the original as bytes (within the validator's limits, but *not* validated: a file that
   was edited is what this command is for) and hash them: the reproduction names the original
   by the sha256 of its bytes, which is also its name in the results store;
2. plan each chosen run — the same workload version and spec hash (an open-division run's
   declared change applied), seed, scale, precision, compile mode and parallel layout — or give
   the one-line reason this machine cannot (:class:`CannotReproduce`);
3. train them (in this process, or under torchrun like ``goodbench run --nproc-per-node`` when
   the original ran several processes), and compare each re-run with its original: the eval
   curve point by point (:func:`curve_agreement`), the steady-state throughput as a ratio with
   its 95% interval (:func:`throughput_ratio`), the time to target; a run whose throughput lies
   outside the tolerance is trained once more before that is called a difference;
4. write a results file of the re-runs whose ``settings.reproduces`` holds the original's
   sha256 and each run's comparison and verdict (``reproduced`` or ``differs: <why>``).

Torch-free at import (the command line imports it); training imports torch.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite import results
from suite.errors import GoodbenchError

Progress = Callable[..., None]

# ---------------------------------------------------------------- tolerances
THROUGHPUT_TOLERANCE = 0.20  # default of --tolerance: |re-run samples/s ÷ recorded − 1| at most this


@dataclass(frozen=True)
class CurveTolerance:
    """How far a re-run's eval curve may lie from the original's: each value within
    ``rel`` × the larger magnitude + ``abs``; ``verified`` when the bound rests on runs measured
    on that device kind, and ``basis`` says which."""

    rel: float
    abs: float
    verified: bool
    basis: str


# Measured on the CPU (2 shared cores, torch 2.13, AVX2, smoke scale, seed 1, one process): two
# runs of the same seed gave bit-identical curves for all five workloads, and so did 1 and 2
# threads (gpt2-124m, dlrm-small). The same runs under another vector instruction set (ATEN_CPU_CAPABILITY=default
# instead of AVX2, as another CPU model would pick) drifted apart, growing with the steps: at
# most 2e-7 relative for gpt2-124m, llama-1b and lm-char, 8e-4 for dlrm-small (train_loss at
# step 150), and 0.32 for fashion-cnn (test_accuracy 0.397 vs 0.586 at step 50, a network whose
# batch-norm statistics are still settling: as far apart as another seed).
#
# So a CPU re-run under the recorded kernels (the same CPU model, vector instruction set and
# torch version) must give the same curve: 1e-6 relative is ~8 float32 ulps where the measured
# spread is 0, and any edit a forger would make to move a time to target is far beyond it.
# Under other kernels (or a file that does not record them) a re-run may drift as far as
# another seed, and only an edit beyond that drift can be told from it: the bound is then
# DRIFT_FACTOR × the workload's SEED_SPREAD, the largest relative difference of any curve value
# between seeds 1 and 2 of the same smoke runs (fashion-cnn: its other-instruction-set drift,
# which was larger).
SAME_KERNELS_REL = 1e-6
SEED_SPREAD = {"lm-char": 0.041, "gpt2-124m": 0.0078, "fashion-cnn": 0.32, "llama-1b": 0.035,
               "dlrm-small": 0.099}
DRIFT_FACTOR = 2.0

CPU_SAME_KERNELS = CurveTolerance(
    rel=SAME_KERNELS_REL, abs=1e-9, verified=True,
    basis="CPU under the recorded kernels (CPU model, vector instruction set, torch version): "
          "measured bit-identical run to run and across thread counts")


def drift_tolerance(workload_id: str, device_type: str) -> CurveTolerance:
    """The bound of a re-run that may drift like another seed: on the CPU under other kernels
    than recorded (measured), or on a GPU (not measured there yet: GPU training is not
    bit-reproducible — atomic adds in backward kernels, cuBLAS/cuDNN algorithm choice, bf16
    rounding — and a re-run of the same seed drifts at most as far as a run of another seed;
    unverified until two same-seed GPU runs measure the real drift)."""
    spread = SEED_SPREAD.get(workload_id, max(SEED_SPREAD.values()))
    rel = round(DRIFT_FACTOR * spread, 4)
    if device_type == "cuda":
        return CurveTolerance(rel, 1e-6, verified=False, basis=(
            f"GPU: UNVERIFIED until measured on a GPU; {DRIFT_FACTOR:g} × {workload_id}'s seed-to-seed "
            f"spread on the CPU ({spread:g}): a nondeterministic re-run drifts at most as far as another seed"))
    return CurveTolerance(rel, 1e-6, verified=True, basis=(
        f"CPU under other kernels than recorded (or not recorded): {DRIFT_FACTOR:g} × {workload_id}'s "
        f"seed-to-seed spread ({spread:g}, measured), as far as such a re-run may drift"))


REPRODUCED = "reproduced"
DIFFERS = "differs: "
MAX_VERDICT_CHARS = 1500  # within the validator's 2,000-character strings


class Usage(ValueError):
    """A usage error (exit 2)."""


class CannotReproduce(GoodbenchError):
    """This machine cannot reproduce the run; the message is one line saying why."""


# ---------------------------------------------------------------- the original
@dataclass(frozen=True)
class Original:
    """The results file to reproduce: its path, the sha256 of its bytes and its document."""

    path: str
    sha256: str
    doc: dict


def read_original(path: str) -> Original:
    """The file's bytes, within the validator's limits (size, UTF-8, strict JSON), hashed and
    parsed. Not validated: an edited file is what a reproduction catches."""
    from suite.validate.reading import read_bounded

    raw, problems = read_bounded(Path(path))
    if problems or raw is None:
        raise GoodbenchError(problems[0].line(path) if problems else f"{path}: unreadable")
    try:
        doc = results.parse(raw, path)
    except results.Unreadable as exc:
        raise GoodbenchError(str(exc)) from None
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs or not isinstance(doc.get("settings"), dict):
        raise GoodbenchError(f"{path}: no runs to reproduce")
    return Original(path, hashlib.sha256(raw).hexdigest(), dict(doc))


def chosen(original: Original, indexes: list[int] | None) -> list[int]:
    """The runs ``--run`` names (each once, in the order given), or every run."""
    n = len(original.doc["runs"])
    if not indexes:
        return list(range(n))
    bad = [i for i in indexes if not 0 <= i < n]
    if bad:
        allowed = "0" if n == 1 else f"0 to {n - 1}"
        raise Usage(f"{original.path} has {n} run{'s' if n != 1 else ''}: --run {bad[0]} is not one of {allowed}")
    return list(dict.fromkeys(indexes))


# ---------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Machine:
    """What this machine offers a re-run."""

    cuda_devices: int
    cuda_name: str | None = None
    cpu_model: str | None = None
    cpu_capability: str | None = None
    torch: str | None = None


def this_machine() -> Machine:
    import torch

    from suite import system

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return Machine(n, torch.cuda.get_device_name(0) if n else None, system.cpu_info()["cpu_model"],
                   system.cpu_capability(), str(torch.__version__))


def curve_tolerance(doc: dict, workload_id: str, device_type: str, machine: Machine) -> tuple[CurveTolerance, str | None]:
    """The curve tolerance of a re-run of ``workload_id`` on this machine, and a note when a CPU
    re-run runs under other kernels than the original (so its curve may drift like another seed's)."""
    if device_type == "cuda":
        return drift_tolerance(workload_id, device_type), None
    system = _dict(doc.get("system"))
    host, software = _dict(system.get("host")), _dict(system.get("software"))
    recorded = {"CPU model": host.get("cpu_model"), "vector instruction set": host.get("cpu_capability"),
                "torch": software.get("torch")}
    here = {"CPU model": machine.cpu_model, "vector instruction set": machine.cpu_capability,
            "torch": machine.torch}
    unknown = [k for k, v in recorded.items() if v is None]
    other = [f"{k} {recorded[k]} here {here[k]}" for k in recorded if recorded[k] is not None and recorded[k] != here[k]]
    if not unknown and not other:
        return CPU_SAME_KERNELS, None
    why = "; ".join(other + ([f"the file does not record its {', '.join(unknown)}"] if unknown else []))
    tol = drift_tolerance(workload_id, device_type)
    return tol, (f"this CPU may run other kernels than the original's ({why}): {workload_id}'s curve may "
                 f"drift as far as another seed's, so it is held to {tol.rel:g} relative instead of "
                 f"{CPU_SAME_KERNELS.rel:g}")


@dataclass(frozen=True)
class Layout:
    """How a run's processes were laid out: world size, nodes, DDP/FSDP, micro-batch."""

    world_size: int = 1
    nnodes: int = 1
    mode: str = "ddp"
    micro_batch: int | None = None

    def describe(self) -> str:
        if self.world_size == 1:
            return "1 process" + (f", micro-batch {self.micro_batch}" if self.micro_batch else "")
        return (f"{self.world_size} processes ({self.mode}"
                + (f", micro-batch {self.micro_batch}" if self.micro_batch else "") + ")")


@dataclass(frozen=True)
class Target:
    """One run to train again: its index and record in the original, and what it ran."""

    index: int
    run: dict
    workload_id: str
    seed: int
    device_type: str
    precision: str
    layout: Layout
    global_batch: int | None  # open division: the declared global batch; None: as pinned
    tolerance: CurveTolerance = CPU_SAME_KERNELS

    def label(self) -> str:
        return f"{self.workload_id} seed {self.seed}"


@dataclass
class Plan:
    """Every run to train again, and the settings they share (one results file = one setting)."""

    original: Original
    targets: list[Target]
    scale: str
    device_type: str
    precision: str
    compile: str
    layout: Layout
    global_batch: int | None
    peak_tflops: float | None
    checkpoint_every: int | None
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        precisions = sorted({t.precision for t in self.targets})
        return (f"{self.device_type}, {'/'.join(precisions)}, compile {self.compile}, {self.layout.describe()}, "
                f"{self.scale} scale")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _label(run) -> str:
    workload = _dict(_dict(run).get("workload"))
    wid, seed = workload.get("id"), _dict(run).get("seed")
    return f" ({wid} seed {seed})" if isinstance(wid, str) and isinstance(seed, int) else ""


def _layout(run: dict, settings: dict) -> Layout:
    """The run's process layout: its ``distributed`` section (or the file's); a single process
    records none, and its micro-batch (``--micro-batch`` without torchrun) only in the command."""
    section = _dict(run.get("distributed")) or _dict(settings.get("distributed"))
    if not section:
        option = _command_values(settings, "--micro-batch")
        return Layout(micro_batch=option[-1] if option else None)
    # the option as given (None: each rank's whole share); a run's own section gives the rows
    given = _dict(settings.get("distributed"))
    micro = given.get("micro_batch") if "micro_batch" in given else section.get("micro_batch")
    return Layout(world_size=int(section.get("world_size", 1)), nnodes=int(section.get("nnodes", 1) or 1),
                  mode=str(section.get("parallel") or "ddp"),
                  micro_batch=int(micro) if isinstance(micro, int) else None)


_CHANGE = re.compile(r"^(?P<id>[^:]+): global batch (?P<batch>\d+) \(pinned \d+\)")


def declared_batches(settings: dict, workload_id: str) -> list[int]:
    """The global batches an open-division file declares for ``workload_id``: from its
    ``open_changes`` lines (as ``goodbench run --global-batch`` writes them) and its command line."""
    found = []
    for line in settings.get("open_changes") or []:
        match = _CHANGE.match(str(line))
        if match and match["id"] == workload_id:
            found.append(int(match["batch"]))
    found += _command_values(settings, "--global-batch")
    return list(dict.fromkeys(found))


def _command_values(settings: dict, option: str) -> list[int]:
    """The integer values of ``option`` in the file's recorded command line."""
    command = [str(a) for a in settings.get("command") or []] if isinstance(settings.get("command"), list) else []
    found = []
    for i, arg in enumerate(command):
        value = arg.split("=", 1)[1] if arg.startswith(option + "=") else \
            command[i + 1] if arg == option and i + 1 < len(command) else None
        if value is not None and value.isdigit():
            found.append(int(value))
    return found


def _spec(workload, run: dict, scale: str, settings: dict) -> int | None:
    """The global batch that gives the run's spec hash (None: the pinned spec), or
    CannotReproduce: the hash is neither the pinned spec's nor a declared change's."""
    recorded = run["workload"]["spec_hash"]
    pinned = workload.spec_hash(scale)
    if recorded == pinned:
        return None
    for batch in declared_batches(settings, workload.id):
        if workload.with_spec_changes(scale, batch_size=batch).spec_hash(scale) == recorded:
            return batch
    changes = [str(c) for c in settings.get("open_changes") or [] if str(c).startswith(f"{workload.id}:")]
    declared = f"nor of its declared change ({'; '.join(changes)})" if changes else \
        "and the file declares no change of it that this suite can make (--global-batch)"
    return _refuse(f"spec hash {str(recorded)[:12]}… is not this suite's {workload.id} v{workload.version} "
                   f"{scale} spec ({pinned[:12]}…) {declared}")


def _refuse(why: str):
    raise CannotReproduce(why)


def _target(index: int, run: dict, doc: dict, data_dir: str | None, machine: Machine) -> Target:
    """What run ``index`` trained, checked against what this suite and machine can train."""
    import torch

    from suite.runner import check_precision, locate_data, precision_for
    from workloads import registry
    from workloads.data import DataNotFound
    from workloads.pinned import COMPILE_MODES

    settings = doc["settings"]
    if run.get("status") != "complete":
        _refuse(f"the run is {run.get('status')!r}: only complete runs are reproduced")
    wid, version, scale = run["workload"]["id"], run["workload"]["version"], run["scale"]
    if wid not in registry.WORKLOADS:
        _refuse(f"unknown workload {wid!r} (this suite has {', '.join(registry.WORKLOADS)})")
    workload = registry.get(wid)
    if version != workload.version:
        _refuse(f"recorded with {wid} version {version}; this suite has version {workload.version}")
    if scale not in workload.variants:
        _refuse(f"unknown scale {scale!r}")
    batch = _spec(workload, run, scale, settings)
    device_type = str(run["device"]).split(":")[0]
    layout = _layout(run, settings)
    recorded_on = _dict(_dict(doc.get("system")).get("accelerator")).get("name")
    if device_type == "cuda" and machine.cuda_devices == 0:
        _refuse(f"recorded on CUDA ({run['device']}{', ' + recorded_on if recorded_on else ''}); "
                "this machine has no CUDA device")
    if device_type not in ("cpu", "cuda"):
        _refuse(f"recorded on {run['device']!r}, a device this suite does not train on")
    if layout.nnodes > 1:
        _refuse(f"trained on {layout.nnodes} nodes; a reproduction runs on this machine only")
    if device_type == "cuda" and layout.world_size > machine.cuda_devices:
        _refuse(f"trained on {layout.world_size} GPUs; this machine has {machine.cuda_devices}")
    precision = precision_for(workload, scale, torch.device(device_type))
    if run["precision"] != precision:
        _refuse(f"trained in {run['precision']}; this suite trains {wid} in {precision} on {device_type}")
    check_precision(precision)
    compile_mode = settings.get("compile", "off")
    if compile_mode not in COMPILE_MODES:
        _refuse(f"compile mode {compile_mode!r} is not one of {', '.join(COMPILE_MODES)}")
    try:
        locate_data(workload, data_dir)
    except DataNotFound as exc:
        _refuse(str(exc))
    return Target(index, run, wid, int(run["seed"]), device_type, precision, layout, batch,
                  curve_tolerance(doc, wid, device_type, machine)[0])


def plan(original: Original, indexes: list[int], data_dir: str | None, machine: Machine) -> Plan:
    """The plan of the runs ``indexes``, or :class:`CannotReproduce` with the first run's reason
    (and how many more runs cannot be reproduced)."""
    doc = original.doc
    settings = doc["settings"]
    targets: list[Target] = []
    reasons: list[str] = []
    for i in indexes:
        run = doc["runs"][i]
        try:
            targets.append(_target(i, run, doc, data_dir, machine))
        except CannotReproduce as exc:
            reasons.append(f"run {i}{_label(run)}: {exc}")
        except GoodbenchError as exc:  # a precision this suite refuses to train
            reasons.append(f"run {i}{_label(run)}: {exc}")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            reasons.append(f"run {i}{_label(run)}: lacks what a reproduction needs ({exc!r})")
    if reasons:
        more = f" (and {len(reasons) - 1} more run{'s' if len(reasons) > 2 else ''} that cannot be)" \
            if len(reasons) > 1 else ""
        raise CannotReproduce(f"cannot reproduce {reasons[0]}{more}")
    shared = {(t.device_type, t.layout, t.global_batch, t.run["scale"]) for t in targets}
    if len(shared) > 1:
        raise CannotReproduce("the chosen runs were trained with different devices, parallel settings, "
                              "scales or global batches; reproduce them apart with --run")
    first = targets[0]
    return Plan(original, targets, scale=first.run["scale"], device_type=first.device_type,
                precision=first.precision, compile=settings.get("compile", "off"), layout=first.layout,
                global_batch=first.global_batch,
                peak_tflops=_number(settings.get("peak_tflops_override")),
                checkpoint_every=settings.get("checkpoint_every") if isinstance(settings.get("checkpoint_every"), int)
                else None,
                notes=_notes(doc, machine, targets))


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def _notes(doc: dict, machine: Machine, targets: list[Target]) -> list[str]:
    """What the reproduction does not repeat, or repeats elsewhere, said before it trains."""
    settings, notes = doc["settings"], []
    device_type = targets[0].device_type
    for wid in dict.fromkeys(t.workload_id for t in targets):
        kernels = curve_tolerance(doc, wid, device_type, machine)[1]
        if kernels:
            notes.append(kernels)
    if device_type == "cuda":
        notes.append("GPU curve tolerances are unverified: two same-seed runs on a GPU have not yet "
                     "measured how far they drift")
    if settings.get("inject_failures") or settings.get("failure_rate_per_hour"):
        notes.append("the original's injected failures are not injected again: its time to target "
                     "includes their recoveries, the reproduction's does not")
    recorded = str(_dict(_dict(doc.get("system")).get("accelerator")).get("name") or "")
    here = machine.cuda_name if device_type == "cuda" else None
    if here and recorded and here != recorded:
        notes.append(f"recorded on {recorded}, reproduced on {here}: throughput is compared across "
                     "device models")
    return notes


# ---------------------------------------------------------------- comparing a re-run with its original
@dataclass(frozen=True)
class CurveAgreement:
    """The eval curves compared point by point (every value but ``step`` and ``time_s``)."""

    agrees: bool
    identical: bool
    points: int      # the original's points
    compared: int    # values compared
    max_abs_diff: float
    max_rel_diff: float
    first_difference: str | None
    tolerance: CurveTolerance
    device: str

    def to_json(self) -> dict[str, Any]:
        return {"agrees": self.agrees, "identical": self.identical, "points": self.points,
                "compared": self.compared, "max_abs_diff": self.max_abs_diff,
                "max_rel_diff": self.max_rel_diff, "first_difference": self.first_difference,
                "rel_tolerance": self.tolerance.rel, "abs_tolerance": self.tolerance.abs,
                "device": self.device, "verified": self.tolerance.verified, "basis": self.tolerance.basis}


def _value(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def curve_agreement(original: list, rerun: list, tol: CurveTolerance, device_type: str) -> CurveAgreement:
    """Whether ``rerun``'s eval points are the original's: the same steps, the same metrics,
    every value within ``tol`` (:func:`curve_tolerance`)."""
    first: str | None = None
    compared, max_abs, max_rel = 0, 0.0, 0.0
    a_steps = [_dict(p).get("step") for p in original]
    b_steps = [_dict(p).get("step") for p in rerun]
    if a_steps != b_steps:
        first = (f"eval steps differ: recorded {_steps(a_steps)}, re-run {_steps(b_steps)}")
    for p, q in zip(original, rerun):
        p, q = _dict(p), _dict(q)
        if p.get("step") != q.get("step"):
            break
        for key in sorted((set(p) | set(q)) - {"step", "time_s"}):
            a, b = _value(p.get(key)), _value(q.get(key))
            if a is None and b is None and p.get(key) == q.get(key):  # both null (no loss yet)
                continue
            if a is None or b is None:
                first = first or f"{key} at step {p.get('step')}: recorded {p.get(key)!r}, re-run {q.get(key)!r}"
                continue
            compared += 1
            diff = abs(a - b)
            rel = diff / max(abs(a), abs(b)) if diff else 0.0
            max_abs, max_rel = max(max_abs, diff), max(max_rel, rel)
            if diff > tol.rel * max(abs(a), abs(b)) + tol.abs and first is None:
                first = (f"{key} at step {p['step']}: recorded {a:.6g}, re-run {b:.6g} "
                         f"({rel:.2g} relative; tolerance {tol.rel:g})")
    return CurveAgreement(agrees=first is None, identical=first is None and max_abs == 0.0,
                          points=len(original), compared=compared, max_abs_diff=max_abs,
                          max_rel_diff=max_rel, first_difference=first, tolerance=tol, device=device_type)


def _steps(steps: list) -> str:
    shown = ", ".join(str(s) for s in steps[:8])
    return f"[{shown}{', …' if len(steps) > 8 else ''}] ({len(steps)} points)"


@dataclass(frozen=True)
class ThroughputRatio:
    """Re-run samples/s ÷ recorded samples/s, its 95% interval (None: none possible, ``method``
    says why) and whether the ratio lies within the tolerance (None: neither run has a
    steady-state throughput)."""

    original_samples_per_s: float | None
    samples_per_s: float | None
    ratio: float | None
    low: float | None
    high: float | None
    method: str
    tolerance: float
    within: bool | None

    def to_json(self) -> dict[str, Any]:
        return {"original_samples_per_s": self.original_samples_per_s, "samples_per_s": self.samples_per_s,
                "ratio": self.ratio, "ci95": None if self.low is None else [self.low, self.high],
                "method": self.method, "tolerance": self.tolerance, "within": self.within}


def throughput_ratio(original: dict, rerun: dict, tolerance: float) -> ThroughputRatio:
    """The ratio of steady-state samples/s with its 95% interval from :mod:`suite.compare`
    (each side's mean step time by non-overlapping batch means over its window, combined on the
    log scale with a Welch t), and whether it is within ``tolerance`` of 1."""
    from suite import compare

    a = results.samples_per_s(original)
    b = results.samples_per_s(rerun) if rerun.get("status") == "complete" else None
    if a is None or b is None:
        within = None if a is None and b is None else False
        why = "no steady-state throughput in " + ("either run" if within is None else
                                                  "the recorded run" if a is None else "the re-run")
        return ThroughputRatio(a, b, None, None, None, why, tolerance, within)
    ratio = b / a
    try:
        base = compare.step_estimates([original], 0)["samples_per_s"]
        new = compare.step_estimates([rerun], 1)["samples_per_s"]
        r = compare.ratio_interval(base, new)
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # an original edited out of shape
        return ThroughputRatio(a, b, ratio, None, None, f"no interval: the recorded window cannot be read ({exc!r})",
                               tolerance, abs(ratio - 1) <= tolerance)
    if r.low is None or r.high is None:
        method = f"no interval: {base.reason or new.reason or 'one side has no spread'}"
        low = high = None
    else:
        method = f"{base.method} (recorded), {new.method} (re-run); 95% t interval of the ratio on the log scale"
        low, high = r.low, r.high
    return ThroughputRatio(a, b, ratio, low, high, method, tolerance, abs(ratio - 1) <= tolerance)


def tta_difference(original: dict, rerun: dict) -> dict[str, Any]:
    """Times to target (s) of both runs and their difference (re-run − recorded); None where
    a run has none (a throughput workload, or the target not reached)."""
    a = _value(_dict(original.get("metrics")).get("tta_s"))
    b = _value(_dict(rerun.get("metrics")).get("tta_s"))
    return {"original_s": a, "reproduction_s": b, "difference_s": None if a is None or b is None else b - a}


@dataclass
class Comparison:
    """One run compared with its original, and the verdict."""

    target: Target
    record: dict
    curve: CurveAgreement
    throughput: ThroughputRatio
    tta: dict
    measurements: int = 1
    first_ratio: float | None = None
    first_within: bool | None = None

    @property
    def repeat(self) -> bool:
        """Measure again: the curve agrees but the throughput is outside the tolerance, which on
        a busy machine may be noise rather than a difference."""
        return self.measurements == 1 and self.curve.agrees and self.throughput.within is False \
            and self.record.get("status") == "complete"

    def reasons(self) -> list[str]:
        out = []
        if self.record.get("status") != "complete":
            out.append(f"the re-run is {self.record.get('status')}: {self.record.get('error')}")
        if not self.curve.agrees:
            out.append(f"curve: {self.curve.first_difference}")
        t = self.throughput
        if t.within is False:
            if t.ratio is None:
                out.append(f"throughput: {t.method}")
            else:
                again = f" (first measurement {self.first_ratio:.3f}×, measured again)" \
                    if self.measurements > 1 and self.first_ratio is not None else ""
                out.append(f"throughput: {t.ratio:.3f}× the recorded samples/s, outside ±{t.tolerance:.0%}{again}")
        return out

    @property
    def verdict(self) -> str:
        reasons = self.reasons()
        if not reasons:
            return REPRODUCED
        text = DIFFERS + "; ".join(reasons)
        return text if len(text) <= MAX_VERDICT_CHARS else text[:MAX_VERDICT_CHARS - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        return {"original_run_id": str(self.target.run.get("run_id")), "original_index": self.target.index,
                "run_id": self.record["run_id"], "workload": self.target.workload_id, "seed": self.target.seed,
                "verdict": self.verdict, "measurements": self.measurements,
                "first_ratio": self.first_ratio, "curve": self.curve.to_json(),
                "throughput": self.throughput.to_json(), "tta": self.tta}


def compare_run(target: Target, record: dict, tolerance: float, earlier: Comparison | None = None) -> Comparison:
    """The re-run ``record`` against its original; ``earlier``: the first measurement, when this
    is the repeat."""
    original = target.run
    curve: list = record["curve"] if isinstance(record.get("curve"), list) else []
    c = Comparison(target, record, curve_agreement(original.get("curve") or [], curve, target.tolerance,
                                                   target.device_type),
                   throughput_ratio(original, record, tolerance), tta_difference(original, record))
    if earlier is not None:
        c.measurements, c.first_ratio, c.first_within = 2, earlier.throughput.ratio, earlier.throughput.within
    return c


# ---------------------------------------------------------------- training and the document
@dataclass
class Reproduction:
    """What rank 0 wrote: the document and each run's comparison."""

    doc: dict
    comparisons: list[Comparison]

    @property
    def reproduced(self) -> bool:
        return all(c.verdict == REPRODUCED for c in self.comparisons)


def section(original: Original, comparisons: list[Comparison], tolerance: float) -> dict[str, Any]:
    """The ``settings.reproduces`` section (docs/results-format.md)."""
    return {"sha256": original.sha256, "file": Path(original.path).name[:200],
            "throughput_tolerance": tolerance, "runs": [c.to_json() for c in comparisons]}


def default_output() -> Path:
    return Path("runs") / (dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-reproduction.json")


def train(the_plan: Plan, out: Path, *, data_dir: str | None, tolerance: float, progress: Progress,
          report: Callable[[str], None], system_name: str | None = None, system_overrides: dict | None = None,
          command: list[str] | None = None) -> Reproduction | None:
    """Train every target again (this process is one rank of a torchrun run when the plan's
    layout has several processes) and, on rank 0, write the reproduction into ``out``
    (reserved here) and return it; None on the other ranks."""
    import torch

    from suite import distributed
    from suite.runner import stop_on_sigterm

    layout = the_plan.layout
    device = torch.device(the_plan.device_type)
    parallel = distributed.from_env(device.type, layout.mode, layout.micro_batch)  # type: ignore[arg-type]
    if parallel.world_size != layout.world_size:
        raise GoodbenchError(f"the original ran {layout.world_size} processes; this is one of "
                             f"{parallel.world_size}")
    reservation = results.Reservation.take(out) if parallel.is_main else None
    try:
        stop_on_sigterm()
        device = distributed.init(parallel, device)
        try:
            found = _train_all(the_plan, out, device, parallel, data_dir, tolerance, progress, report,
                               system_name, system_overrides, command or [])
        except BaseException:
            distributed.shutdown(wait=False)
            raise
        distributed.shutdown(wait=True)
        if found is not None and reservation is not None:
            reservation.write(found.doc)
        return found
    finally:
        if reservation is not None:
            reservation.release()


def _train_all(the_plan: Plan, out: Path, device, parallel, data_dir, tolerance: float, progress: Progress,
               report: Callable[[str], None], system_name, system_overrides, command) -> Reproduction | None:
    from dataclasses import replace

    from suite import derive, distributed, session, system
    from suite.runner import RunOptions, run_one

    splan = session.SuitePlan(
        workload_ids=list(dict.fromkeys(t.workload_id for t in the_plan.targets)), scale=the_plan.scale,
        seeds=0, explicit=True, system_name=system_name, system_overrides=system_overrides, command=command,
        global_batch=the_plan.global_batch)
    options = RunOptions(device=device, data_dir=data_dir, peak_tflops=the_plan.peak_tflops,
                         checkpoint_every=the_plan.checkpoint_every, parallel=parallel,
                         compile=the_plan.compile)
    if parallel.is_main:
        problems = session.preflight(splan, options)
        if problems:
            raise GoodbenchError(f"the reproduction would be refused, not training: {problems[0].field}: "
                                 f"{problems[0].reason} [{problems[0].code}]; fix --system-name")
    workloads, open_changes = splan.workloads()
    by_id = {w.id: w for w in workloads}
    checkpoints = out.with_suffix(".ckpt") if the_plan.checkpoint_every else None
    comparisons: list[Comparison] = []
    quiet: Progress = lambda *a, **k: None
    try:
        for n, target in enumerate(the_plan.targets):
            earlier: Comparison | None = None
            for attempt in (1, 2):
                opts = options if checkpoints is None else \
                    replace(options, checkpoint_dir=str(checkpoints / f"run{n}-attempt{attempt}"))
                record = run_one(by_id[target.workload_id], the_plan.scale, target.seed, opts,
                                 progress if parallel.is_main else quiet)
                found = compare_run(target, record, tolerance, earlier) if parallel.is_main else None
                if not distributed.broadcast(found is not None and found.repeat, parallel):
                    break
                if found is not None:
                    report(f"[{target.label()}] throughput {found.throughput.ratio:.3f}× the recorded "
                           f"samples/s, outside ±{tolerance:.0%}: training it once more (a busy machine's "
                           "noise is not a difference)")
                earlier = found
            if found is not None:
                comparisons.append(found)
    finally:
        if checkpoints is not None and parallel.is_main:
            shutil.rmtree(checkpoints, ignore_errors=True)
    if not parallel.is_main:
        return None
    settings = session._settings(splan, options, splan.workload_ids, [], open_changes, {}, False, None)
    settings["seeds_per_workload"] = None
    settings["reproduces"] = section(the_plan.original, comparisons, tolerance)
    runs = [c.record for c in comparisons]
    doc = results.new_document(system.describe(device, system_name, system_overrides), settings, runs)
    doc["summary"] = derive.summary(runs)
    return Reproduction(doc, comparisons)


# ---------------------------------------------------------------- reporting
def _num(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def report_lines(reproduction: Reproduction) -> list[str]:
    """The report of every run: curve, throughput, time to target, verdict."""
    lines = []
    for c in reproduction.comparisons:
        t, curve, tput, tta = c.target, c.curve, c.throughput, c.tta
        lines.append(f"run {t.index}: {t.workload_id} {t.run['scale']} seed {t.seed} → {c.verdict}")
        tol = curve.tolerance
        lines.append(f"  curve       {curve.points} points, {curve.compared} values compared: largest difference "
                     f"{_num(curve.max_abs_diff)} ({_num(curve.max_rel_diff, 2)} relative)"
                     f"{', bit-identical' if curve.identical else ''}; tolerance {tol.rel:g} relative + "
                     f"{tol.abs:g} — {'agrees' if curve.agrees else 'differs'}")
        lines.append(f"              (tolerance: {tol.basis})")
        if tput.ratio is None:
            lines.append(f"  throughput  {tput.method}")
        else:
            ci = f"95% interval {tput.low:.3f}–{tput.high:.3f}" if tput.low is not None else tput.method
            again = f"; measured twice, first {c.first_ratio:.3f}×" if c.measurements > 1 and \
                c.first_ratio is not None else ""
            lines.append(f"  throughput  {_num(tput.original_samples_per_s)} → {_num(tput.samples_per_s)} "
                         f"samples/s: ratio {tput.ratio:.3f}, {ci}; tolerance ±{tput.tolerance:.0%} — "
                         f"{'within' if tput.within else 'outside'}{again}")
        if tput.low is not None:
            lines.append(f"              ({tput.method})")
        if tta["original_s"] is None and tta["reproduction_s"] is None:
            lines.append("  TTA         — (no time to target in either run)")
        else:
            diff = tta["difference_s"]
            lines.append(f"  TTA         {_num(tta['original_s'])} s → {_num(tta['reproduction_s'])} s"
                         + (f" ({diff:+.3g} s)" if diff is not None else ""))
    return lines


def exit_status(doc: dict) -> int:
    """0 when every run of a reproduction document reproduced, else 1."""
    runs = _dict(_dict(doc.get("settings")).get("reproduces")).get("runs") or []
    return 0 if runs and all(_dict(r).get("verdict") == REPRODUCED for r in runs) else 1


# ---------------------------------------------------------------- the command
def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def command(args, progress: Progress) -> int:
    """``goodbench reproduce``: plan, train (here or under torchrun), write, report; the exit
    status (0: every run reproduced, 1: a run differs)."""
    from suite import launch

    if not 0 < args.tolerance <= 1000:
        raise Usage(f"--tolerance {args.tolerance:g}: a percentage above 0 and at most 1000")
    tolerance = args.tolerance / 100
    original = read_original(args.file)
    indexes = chosen(original, args.run)
    the_plan = plan(original, indexes, args.data_dir, this_machine())
    out = Path(args.output) if args.output else default_output()
    if not launch.in_torchrun():  # the launcher, or the one process: rank 0 reports the rest
        _say(f"reproducing {len(indexes)} run{'s' if len(indexes) != 1 else ''} of {args.file} "
             f"(sha256 {original.sha256[:12]}…) on this machine: {the_plan.describe()}")
        for note in the_plan.notes:
            _say(f"note: {note}")
    if the_plan.layout.world_size > 1 and not launch.in_torchrun():
        return _launch(args, the_plan, out)
    overrides = None
    if args.system_overrides:
        from suite.system import load_overrides

        overrides = load_overrides(args.system_overrides)
    found = train(the_plan, out, data_dir=args.data_dir, tolerance=tolerance, progress=progress, report=_say,
                  system_name=args.system_name, system_overrides=overrides,
                  command=["goodbench", *args.argv])
    if found is None:  # another rank: rank 0 reports
        return 0
    for line in report_lines(found):
        print(line, flush=True)
    n = len(found.comparisons)
    done = sum(c.verdict == REPRODUCED for c in found.comparisons)
    print(f"reproduction written to {out} (names {Path(args.file).name} by sha256 {original.sha256[:12]}…): "
          f"{done} of {n} run{'s' if n != 1 else ''} reproduced", flush=True)
    if launch.in_torchrun():
        return 0  # the launcher reads the verdicts from the file: a differing run is no failed worker
    return 0 if found.reproduced else 1


def _launch(args, the_plan: Plan, out: Path) -> int:
    """Run this command under torchrun with the original's world size, as ``goodbench run
    --nproc-per-node`` does (suite/launch.py), and take the exit status from the verdicts rank 0
    wrote."""
    from suite import launch

    try:
        reservation = results.Reservation.take(out)
    except results.NameTaken as exc:
        raise GoodbenchError(str(exc)) from None
    reservation.close()  # unlocked: rank 0 takes it over
    try:
        status = launch.launch(args.argv, str(out), the_plan.layout.world_size)
    finally:
        reservation.release()  # the name is free again when the workers wrote nothing
    if status in (130, 143):
        return status
    try:
        doc = results.load(out)
    except (results.Unreadable, OSError):
        raise GoodbenchError(f"the workers wrote no reproduction (torchrun's exit status {status})") from None
    return exit_status(dict(doc))
