"""Every field the site shows, in words with its unit: one table from a results file's keys to a
label and a unit, and the text of a value in that unit (:mod:`suite.site.formatting`).

A key is the field's dotted path in the results file: ``goodput.wall_s`` and
``metrics.throughput.step_time_s.p99`` within a run, ``settings.…`` and ``system.…`` within the
document. ``*`` in a key stands for one name (a precision, a metric) and fills ``{}`` in its
label; ``[]`` stands for a list index, ``{i}`` in the label for its position counted from 1. The
pages show the label and keep the key in the row's ``title`` (and the raw results JSON holds
every value exactly). A key the table lacks is shown in words all the same (underscores as
spaces, a unit read from its suffix); the tests require every key of a real results file to be
in the table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from suite.record.interconnect_status import plain_status
from suite.record.privacy import shown_command
from suite.site import formatting as f
from suite.trust.labels import COPY_TEXT

CURVE_METRICS = {  # the evaluation points' metrics
    "train_loss": "training loss", "val_loss": "validation loss", "test_loss": "test loss",
    "log_loss": "log loss", "test_accuracy": "test accuracy", "auc": "AUC", "teacher_auc": "teacher AUC",
}
TIME_PARTS = {  # a run's phases and goodput buckets
    "data_load": "dataset loading (setup)", "init": "initialization", "compile_warmup": "compilation and warm-up",
    "train": "training", "eval": "evaluation", "other": "other", "productive": "productive",
    "data_wait": "waiting for data (in training)", "checkpoint_save": "checkpoint saving",
    "restart_recovery": "restart recovery", "lost_work": "lost work",
}

RUN_FIELDS = {
    # the run
    "wall_s": ("wall time", "s"), "time_to_train_s": ("time to train", "s"), "steps": ("steps", "count"),
    "phases_s.*": ("{}", "s"),
    # goodput
    "goodput.wall_s": ("wall time", "s"), "goodput.productive_s": ("productive time", "s"),
    "goodput.badput_s.*": ("{}", "s"), "goodput.goodput": ("goodput", "share"),
    "goodput.effective_goodput": ("effective goodput", "share"),
    "goodput.effective_goodput_status": ("effective goodput status", "status"),
    "goodput.data_wait_status": ("waiting for data status", "status"),
    "goodput.steps_kept": ("steps kept", "count"), "goodput.steady_step_s": ("steady-state step time, mean", "s"),
    "goodput.failures": ("failures", "count"), "goodput.restarts": ("restarts", "count"),
    "goodput.lost_steps": ("lost steps", "count"), "goodput.recovery_s": ("recovery times", "s"),
    "goodput.checkpoint.saves": ("checkpoint saves", "count"),
    "goodput.checkpoint.save_s_mean": ("checkpoint save time, mean", "s"),
    "goodput.checkpoint.loads": ("checkpoint loads", "count"),
    "goodput.checkpoint.load_s_mean": ("checkpoint load time, mean", "s"),
    # metrics
    "metrics.flops_per_step": ("work per step", "FLOP"), "metrics.samples_per_step": ("samples per step", "count"),
    "metrics.tokens_per_step": ("tokens per step", "count"),
    "metrics.throughput_status": ("throughput status", "status"),
    "metrics.peak_flops": ("peak compute of the device", "FLOP/s"), "metrics.mfu": ("MFU", "share"),
    "metrics.mfu_status": ("MFU status", "status"),
    "metrics.matmul_ceiling_flops": ("measured matmul ceiling (self-reported)", "FLOP/s"),
    "metrics.share_of_ceiling": ("share of the matmul ceiling (a self-reported ceiling)", "share"),
    "metrics.target": ("target", "target"), "metrics.tta_s": ("time to target", "s"),
    "metrics.tta_status": ("time to target status", "status"),
    "metrics.final_quality.*": ("final {}", "quality"),
    "metrics.energy_method": ("energy meter", "text"), "metrics.energy_status": ("energy status", "status"),
    "metrics.energy_to_train_j": ("energy to train", "J"), "metrics.energy_to_target_j": ("energy to target", "J"),
    "metrics.energy_window_j": ("energy in the throughput window", "J"),
    "metrics.energy_per_sample_j": ("energy per sample", "J"), "metrics.energy_per_token_j": ("energy per token", "J"),
    "metrics.mean_power_w": ("mean power", "W"), "metrics.max_power_w": ("peak power", "W"),
    "metrics.peak_memory_allocated_gib": ("peak memory allocated (tensors; self-reported)", "GiB"),
    "metrics.peak_memory_reserved_gib": ("peak memory reserved (allocator; self-reported)", "GiB"),
    "metrics.peak_memory_status": ("peak memory status", "status"),
    "metrics.energy_window_error_j": ("energy of the window: most error from the meter's update period (self-reported)", "J"),
    # throughput (the steady-state window)
    "metrics.throughput.steps_per_s": ("steps per second", "steps/s"),
    "metrics.throughput.samples_per_s": ("samples per second", "samples/s"),
    "metrics.throughput.tokens_per_s": ("tokens per second", "tokens/s"),
    "metrics.throughput.window.first_step": ("steady-state window: first step", "count"),
    "metrics.throughput.window.last_step": ("steady-state window: last step", "count"),
    "metrics.throughput.window.steps": ("steady-state window: steps", "count"),
    "metrics.throughput.window.seconds": ("steady-state window: duration", "s"),
    "metrics.throughput.window.segments": ("steady-state window: segments", "ranges"),
    "metrics.throughput.step_time_s.mean": ("step time, mean", "s"),
    "metrics.throughput.step_time_s.p50": ("step time p50 (median)", "s"),
    "metrics.throughput.step_time_s.p90": ("step time p90", "s"),
    "metrics.throughput.step_time_s.p99": ("step time p99", "s"),
    "metrics.throughput.step_time_s.max": ("step time, max", "s"),
    "metrics.throughput.step_time_s.min": ("step time, min", "s"),
    # distributed runs
    "distributed.world_size": ("world size (processes)", "count"), "distributed.nnodes": ("nodes", "count"),
    "distributed.local_world_size": ("processes per node", "count"), "distributed.backend": ("backend", "text"),
    "distributed.parallel": ("parallel mode", "text"), "distributed.global_batch": ("global batch", "count"),
    "distributed.per_rank_batch": ("per-rank batch", "count"), "distributed.micro_batch": ("micro-batch", "count"),
    "distributed.grad_accumulation_steps": ("gradient accumulation steps", "count"),
    "distributed.straggler_spread": ("straggler spread (max / median of the ranks' mean step time)", "ratio"),
    "distributed.communication.exposed_share": ("exposed communication share", "share"),
    "distributed.communication.step_s_with_sync": ("step with gradient sync", "s"),
    "distributed.communication.step_s_without_sync": ("step without gradient sync", "s"),
    "distributed.communication.method": ("communication method", "text"),
    "distributed.communication.status": ("communication status", "status"),
}

DOC_FIELDS = {
    # settings
    "settings.scale": ("scale", "text"), "settings.device": ("device", "text"),
    "settings.workloads": ("workloads", "text"), "settings.seeds_per_workload": ("seeds per workload", "count"),
    "settings.repeat": ("runs per seed (--repeat)", "count"),
    "settings.peak_tflops_override": ("peak compute given on the command line", "TFLOP/s"),
    "settings.checkpoint_every": ("checkpoint every", "steps"),
    "settings.inject_failures": ("failures injected at", "step"),
    "settings.failure_rate_per_hour": ("failures injected per hour", "count"),
    "settings.compile": ("compile mode", "text"), "settings.skipped": ("workloads skipped", "text"),
    "settings.skipped[].workload": ("skipped workload {i}", "text"),
    "settings.skipped[].reason": ("skipped workload {i}: why (self-reported)", "text"),
    "settings.cpu_threads": ("CPU threads used by PyTorch", "count"),
    "settings.matmul_ceiling": ("matmul ceiling measured per precision", "text"),
    "settings.interrupted": ("interrupted", "bool"), "settings.aborted": ("aborted (its reason self-reported)", "text"),
    "settings.division": ("division", "text"), "settings.open_changes": ("open-division changes", "text"),
    "settings.implementation.kind": ("implementation", "text"),
    "settings.implementation.name": ("own code's name (self-reported)", "text"),
    "settings.implementation.trains": ("what the own code trains (self-reported)", "text"),
    "settings.implementation.against": ("held to the target of", "text"),
    "settings.implementation.code.git_commit": ("git commit of the code (self-reported)", "text"),
    "settings.implementation.code.git_dirty": ("uncommitted changes in the code (self-reported)", "text"),
    "settings.implementation.code.files": ("sha256 of the code's files (self-reported)", "files"),
    "settings.implementation.code.workdir": ("folder the code was run from (self-reported)", "text"),
    "settings.implementation.command": ("command of the own code (self-reported; home and temporary folders shown "
                                        "as <home>, <tmp>, the data folder as <data-dir>)", "command"),
    "settings.implementation.spec.samples_per_step": ("declared samples per step", "count"),
    "settings.implementation.spec.tokens_per_step": ("declared tokens per step", "count"),
    "settings.implementation.spec.flops_per_step": ("declared model FLOPs per step", "FLOP"),
    "settings.implementation.spec.flops_source": ("model FLOPs per step: counted or given", "text"),
    "settings.implementation.spec.warmup_steps": ("declared warm-up steps", "count"),
    "settings.implementation.spec.max_steps": ("declared step budget", "count"),
    "settings.implementation.spec.eval_every": ("declared evaluation cadence (steps)", "count"),
    "settings.implementation.spec.log_every": ("declared loss-logging cadence (steps)", "count"),
    "settings.implementation.spec.precision": ("declared precision", "text"),
    "settings.command": ("command line (home and temporary folders shown as <home>, <tmp>, the data folder as "
                         "<data-dir>)", "command"),
    "settings.matmul_ceiling.*.flops": ("matmul ceiling ({}), best trial", "FLOP/s"),
    "settings.matmul_ceiling.*.trials_flops": ("matmul ceiling ({}), each trial", "FLOP/s"),
    "settings.matmul_ceiling.*.n": ("matmul ceiling ({}), matrix size", "count"),
    "settings.matmul_ceiling.*.precision": ("matmul ceiling ({}), precision", "text"),
    "settings.matmul_ceiling.*.method": ("matmul ceiling ({}), method", "text"),
    "settings.matmul_ceiling.*.at_end.flops": ("matmul ceiling ({}) measured again after the runs, best trial", "FLOP/s"),
    "settings.matmul_ceiling.*.at_end.trials_flops": ("matmul ceiling ({}) measured again after the runs, each trial", "FLOP/s"),
    "settings.matmul_ceiling.*.at_end.method": ("matmul ceiling ({}) measured again after the runs, method", "text"),
    "settings.distributed.world_size": ("distributed: world size (processes)", "count"),
    "settings.distributed.nnodes": ("distributed: nodes", "count"),
    "settings.distributed.backend": ("distributed: backend", "text"),
    "settings.distributed.parallel": ("distributed: parallel mode", "text"),
    "settings.distributed.micro_batch": ("distributed: micro-batch", "count"),
    "settings.session.id": ("session id", "text"), "settings.session.started_at": ("session started", "time"),
    "settings.reproduces.sha256": ("reproduces: original file's sha256", "text"),
    "settings.reproduces.file": ("reproduces: original file", "text"),
    "settings.reproduces.throughput_tolerance": ("reproduces: throughput tolerance", "share"),
    "settings.reproduces.code_read.commit": ("reproduces: the reviewer attests reading the code at commit", "text"),
    "settings.reproduces.runs[].original_run_id": ("reproduced run {i}: original run id", "text"),
    "settings.reproduces.runs[].original_index": ("reproduced run {i}: original run's position", "count"),
    "settings.reproduces.runs[].run_id": ("reproduced run {i}: run id", "text"),
    "settings.reproduces.runs[].workload": ("reproduced run {i}: workload", "text"),
    "settings.reproduces.runs[].seed": ("reproduced run {i}: seed", "count"),
    "settings.reproduces.runs[].verdict": ("reproduced run {i}: verdict", "text"),
    "settings.reproduces.runs[].measurements": ("reproduced run {i}: measurements", "count"),
    "settings.reproduces.runs[].first_ratio": ("reproduced run {i}: first measurement's ratio", "ratio"),
    "settings.reproduces.runs[].measuring.measurements": ("reproduced run {i}: re-runs pooled", "count"),
    "settings.reproduces.runs[].measuring.batches": ("reproduced run {i}: batches pooled", "count"),
    "settings.reproduces.runs[].measuring.steps": ("reproduced run {i}: steps pooled", "count"),
    "settings.reproduces.runs[].measuring.seconds": ("reproduced run {i}: time measuring", "s"),
    "settings.reproduces.runs[].measuring.samples_per_s": ("reproduced run {i}: pooled throughput", "samples/s"),
    "settings.reproduces.runs[].measuring.ratio": ("reproduced run {i}: pooled throughput ratio", "ratio"),
    "settings.reproduces.runs[].measuring.ci95": ("reproduced run {i}: pooled throughput ratio, 95% CI", "ratio"),
    "settings.reproduces.runs[].measuring.method": ("reproduced run {i}: pooled by", "text"),
    "settings.reproduces.runs[].measuring.stopped": ("reproduced run {i}: measuring stopped", "text"),
    "settings.reproduces.runs[].measuring.why": ("reproduced run {i}: measuring stopped because", "text"),
    "settings.reproduces.runs[].measuring.host_loads": ("reproduced run {i}: each pooled re-run's host load", "text"),
    "settings.reproduces.runs[].measuring.median.original_samples_per_s": (
        "reproduced run {i}: original's throughput at its median step", "samples/s"),
    "settings.reproduces.runs[].measuring.median.samples_per_s": (
        "reproduced run {i}: pooled throughput at the median step", "samples/s"),
    "settings.reproduces.runs[].measuring.median.ratio": ("reproduced run {i}: median-step throughput ratio", "ratio"),
    "settings.reproduces.runs[].measuring.median.ci95": (
        "reproduced run {i}: median-step throughput ratio, 95% CI", "ratio"),
    "settings.reproduces.runs[].measuring.median.margin": ("reproduced run {i}: median-step margin", "ratio"),
    "settings.reproduces.runs[].measuring.median.method": ("reproduced run {i}: median step compared by", "text"),
    "settings.reproduces.runs[].measuring.cap.measurements": ("reproduced run {i}: cap on re-runs", "count"),
    "settings.reproduces.runs[].measuring.cap.batches": ("reproduced run {i}: cap on batches", "count"),
    "settings.reproduces.runs[].measuring.cap.seconds": ("reproduced run {i}: cap on time measuring", "s"),
    "settings.reproduces.runs[].curve.agrees": ("reproduced run {i}: curve agrees", "bool"),
    "settings.reproduces.runs[].curve.identical": ("reproduced run {i}: curve identical", "bool"),
    "settings.reproduces.runs[].curve.points": ("reproduced run {i}: curve points", "count"),
    "settings.reproduces.runs[].curve.compared": ("reproduced run {i}: curve points compared", "count"),
    "settings.reproduces.runs[].curve.max_abs_diff": ("reproduced run {i}: largest absolute difference", "quality"),
    "settings.reproduces.runs[].curve.max_rel_diff": ("reproduced run {i}: largest relative difference", "share"),
    "settings.reproduces.runs[].curve.first_difference": ("reproduced run {i}: first difference", "text"),
    "settings.reproduces.runs[].curve.rel_tolerance": ("reproduced run {i}: relative tolerance", "share"),
    "settings.reproduces.runs[].curve.abs_tolerance": ("reproduced run {i}: absolute tolerance", "quality"),
    "settings.reproduces.runs[].curve.device": ("reproduced run {i}: curve compared on", "text"),
    "settings.reproduces.runs[].curve.verified": ("reproduced run {i}: curve verified", "bool"),
    "settings.reproduces.runs[].curve.basis": ("reproduced run {i}: curve tolerance from", "text"),
    "settings.reproduces.runs[].throughput.original_samples_per_s":
        ("reproduced run {i}: original throughput", "samples/s"),
    "settings.reproduces.runs[].throughput.samples_per_s": ("reproduced run {i}: throughput", "samples/s"),
    "settings.reproduces.runs[].throughput.ratio": ("reproduced run {i}: throughput ratio", "ratio"),
    "settings.reproduces.runs[].throughput.ci95": ("reproduced run {i}: throughput ratio, 95% CI", "ratio"),
    "settings.reproduces.runs[].throughput.method": ("reproduced run {i}: throughput compared by", "text"),
    "settings.reproduces.runs[].throughput.tolerance": ("reproduced run {i}: throughput tolerance", "share"),
    "settings.reproduces.runs[].throughput.within": ("reproduced run {i}: throughput within tolerance", "bool"),
    "settings.reproduces.runs[].tta.original_s": ("reproduced run {i}: original time to target", "s"),
    "settings.reproduces.runs[].tta.reproduction_s": ("reproduced run {i}: time to target", "s"),
    "settings.reproduces.runs[].tta.difference_s": ("reproduced run {i}: time to target difference", "s"),
    "settings.reproduces.runs[].tta.original_interrupted": (
        "reproduced run {i}: original killed, resumed or paused (time to target not judged)", "bool"),
    # system
    "system.name": ("system name", "text"), "system.accelerator.type": ("accelerator type", "text"),
    "system.accelerator.name": ("accelerator", "text"), "system.accelerator.count": ("accelerators", "count"),
    "system.accelerator.memory_gib": ("accelerator memory", "GiB"),
    "system.accelerator.compute_capability": ("compute capability", "text"),
    "system.accelerator.multiprocessors": ("multiprocessors", "count"),
    "system.accelerator.nvlink_active_links": ("active NVLink links", "count"),
    "system.host.cpu_model": ("CPU model", "text"), "system.host.cpu_cores": ("CPU cores", "count"), "system.host.cpu_logical_cores": ("CPU logical cores", "count"),
    "system.host.cpu_physical_cores": ("CPU physical cores", "count"),
    "system.host.cpu_sockets": ("CPU sockets", "count"), "system.host.cpu_governor": ("CPU frequency governor", "text"),
    "system.host.cpu_capability": ("CPU vector instructions", "text"),
    "system.host.memory_gib": ("host memory", "GiB"), "system.host.os": ("operating system", "text"),
    "system.host.kernel": ("kernel", "text"), "system.host.arch": ("architecture", "text"),
    "system.host.container": ("container", "text"), "system.host.cloud": ("cloud", "text"),
    "system.host.infiniband": ("InfiniBand devices", "text"),
    "system.interconnect.summary": ("interconnect", "text"),
    "system.interconnect.summary_status": ("interconnect status", "link status"),
    "system.interconnect.gpus_status": ("GPU links status", "link status"),
    "system.interconnect.gpus": ("GPUs and their links", "items"),
    "system.interconnect.gpu_pairs": ("GPU pairs and their paths", "items"),
    "system.interconnect.infiniband": ("InfiniBand devices and ports", "items"),
    "system.software.goodbench": ("goodbench", "text"), "system.software.python": ("Python", "text"),
    "system.software.implementation": ("Python implementation", "text"),
    "system.software.torch": ("PyTorch", "text"), "system.software.cuda": ("CUDA", "text"),
    "system.software.hip": ("ROCm (HIP)", "text"),
    "system.software.cudnn": ("cuDNN", "text"), "system.software.nccl": ("NCCL", "text"),
    "system.software.triton": ("Triton", "text"), "system.software.numpy": ("NumPy", "text"),
    "system.software.driver": ("driver", "text"),
    "system.overridden": ("fields given on the command line", "text"),
}

# the leaderboard tables' columns (suite/site/tables.py), by the entry's key: header, kind
# (how the table sorts and aligns it) and unit; a unit in the header leaves the cells bare
# an entry's figures on the compare page (suite/site/pages.py): label, unit
ENTRY_FIGURES = {"score_s": ("time to target", "s"), "samples_per_s": ("samples/s", "samples/s"),
                 "tokens_per_s": ("tokens/s", "tokens/s"), "mfu": ("MFU", "share"),
                 "energy_per_sample_j": ("energy per sample", "J"), "goodput": ("goodput", "share")}
# the unit of each figure of suite/compare/estimates.py
FIGURE_UNITS = {"samples_per_s": "samples/s", "tokens_per_s": "tokens/s", "step_time_p50": "s", "step_time_p99": "s",
                "mfu": "share", "tta": "s", "energy_per_sample": "J", "goodput": "share"}

# a unit's text of one value (lists: each item)
UNITS = {
    "s": f.seconds, "J": lambda v: f.si(v, "J"), "W": lambda v: f.si(v, "W"), "GiB": lambda v: f.si(v, "GiB", False, False),
    "kWh": lambda v: f.si(v * 3.6e6 if f.number(v) is not None else v, "J"),  # shown in J, with a prefix
    "FLOP": lambda v: f.si(v, "FLOP"), "FLOP/s": lambda v: f.si(v, "FLOP/s"),
    "TFLOP/s": lambda v: f.si(v * 1e12 if f.number(v) is not None else v, "FLOP/s"),
    "share": f.share, "count": f.count, "quality": f.quality, "time": f.timestamp,
    "steps/s": lambda v: f.rate(v, "steps/s"), "samples/s": lambda v: f.rate(v, "samples/s"),
    "tokens/s": lambda v: f.rate(v, "tokens/s"),
    "step": lambda v: f"step {f.count(v)}" if f.number(v) is not None else f.count(v),
    "steps": lambda v: f"{f.count(v)} steps" if f.number(v) is not None else f.count(v),
    "ratio": f.factor,
    "bool": lambda v: "yes" if v is True else "no" if v is False else f.num(v), "text": lambda v: f.num(v, 6),
    "status": lambda v: prose(f.num(v, 6)),
    # a CPU run's "not queried: the device is the CPU" (as recorded before) in plain words
    "link status": lambda v: f.num(plain_status(v), 6),
}
WHOLE = {  # units whose value is shown whole, not item by item
    # a command recorded before goodbench left home and temporary folders out is shown without them too,
    # and every recorded command without its data folder (suite/record/privacy.py)
    "ranges": f.steps_ranges, "command": lambda v: " ".join(shown_command(list(map(str, v))))
    if isinstance(v, list) else f.num(v),
    "items": lambda v: f"{len(v)} (each in the raw results JSON)" if isinstance(v, list) and v else f.num(v),
    "target": lambda v: target_text(v),
    # {file name: sha256}: one row, as a name may hold dots that a dotted key would split
    "files": lambda v: "; ".join(f"{name} {str(digest)[:12]}…" for name, digest in v.items())
    if isinstance(v, dict) and v else f.num(v),
}
SUFFIX_UNITS = (("_per_s", "/s"), ("_s", "s"), ("_j", "J"), ("_w", "W"), ("_gib", "GiB"), ("_flops", "FLOP/s"))


@dataclass(frozen=True)
class Field:
    """A key's label and unit; ``known`` False for a key that the table lacks (labelled from its name)."""

    key: str
    label: str
    unit: str
    known: bool = True


def words(name: str) -> str:
    """A key's name in words: the table's word for a metric or a time bucket, else underscores as spaces."""
    return CURVE_METRICS.get(name) or TIME_PARTS.get(name) or name.replace("_", " ")


def prose(text: str) -> str:
    """A recorded sentence (a status) with the metrics it names in words: "reached test accuracy >= 0.75"."""
    return _METRIC_NAMES.sub(lambda m: CURVE_METRICS[m.group(0)], text)


_METRIC_NAMES = re.compile(r"\b(" + "|".join(sorted(CURVE_METRICS, key=len, reverse=True)) + r")\b")


@cache
def _patterns() -> list[tuple[re.Pattern, str, str]]:
    out = []
    for key, (label, unit) in {**RUN_FIELDS, **DOC_FIELDS}.items():
        if "*" in key:
            out.append((re.compile(re.escape(key).replace(r"\*", r"([^.\[\]]+)") + "$"), label, unit))
    return out


def field(key: str) -> Field:
    """The label and unit of ``key`` (a dotted path: ``goodput.wall_s``, ``settings.command``)."""
    indices = [int(i) + 1 for i in re.findall(r"\[(\d+)\]", key)]
    general = re.sub(r"\[\d+\]", "[]", key)
    position = indices[-1] if indices else ""
    entry = RUN_FIELDS.get(general) or DOC_FIELDS.get(general)
    if entry:
        return Field(key, entry[0].format(i=position), entry[1])
    for pattern, label, unit in _patterns():
        if match := pattern.match(general):
            return Field(key, label.format(words(match.group(1)), i=position), unit)
    name = general.rsplit(".", 1)[-1].replace("[]", "")
    unit = next((u for suffix, u in SUFFIX_UNITS if name.endswith(suffix)), "text")
    stem = name.removesuffix(next((s for s, u in SUFFIX_UNITS if u == unit and name.endswith(s)), ""))
    return Field(key, words(stem), unit if unit in UNITS else "text", known=False)


def value_text(value, unit: str) -> str:
    """``value`` as text in ``unit``: "7.07 s", "36.5 ms", "41.2%", "1.23 kJ", "13,009 tokens/s"."""
    if unit in WHOLE:
        return WHOLE[unit](value)
    one = UNITS.get(unit, UNITS["text"])
    if isinstance(value, list):
        return ", ".join(one(v) for v in value) if value else "—"
    return one(value)


def show(key: str, value) -> tuple[str, str]:
    """(label, value text) of field ``key``."""
    spec = field(key)
    return spec.label, value_text(value, spec.unit)


def flatten(value, prefix: str) -> list[tuple[str, object]]:
    """(dotted key, value) of every field under ``prefix`` that the pages show, in order: nested
    dicts and lists of dicts open up, except where the table shows the value whole (a target, step
    ranges, a list of devices)."""
    if prefix and field(prefix).unit in WHOLE:
        return [(prefix, value)]
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [pair for i, v in enumerate(value) for pair in flatten(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


def target_text(target) -> str:
    """A target (a :class:`workloads.base.Target` or its dict) in words: "test accuracy ≥ 0.75"."""
    get = target.get if isinstance(target, dict) else lambda k: getattr(target, k, None)
    metric, direction, value = get("metric"), get("direction"), get("value")
    if metric is None:
        return "—"
    sign = "≤" if direction == "min" else "≥"
    return f"{words(str(metric))} {sign} {value:g}" if isinstance(value, (int, float)) else f"{words(str(metric))} {sign} {value}"


OWN_TIMING = "one clock (self-timed): timed in the submitter's process, self-reported, never ranked"
"""What every own-code row and run page without a second clock says of its timings: the library's
clocks run in the process the submitter's code controls (which could replace them), and no clock
outside it stamped the steps and evaluations (issue 44, finding 6), so the entry is never ranked
(:func:`suite.leaderboard.rows.one_clock`)."""
TWO_CLOCKS = ("two clocks: step and evaluation edges stamped by goodbench run-own's process too, within "
              "tolerance; that process ran on the submitter's machine, so its stamps are self-reported until a "
              "reviewer's reproduction stamps its own, and what runs between them is the code's own unless a "
              "reviewer attests reading it")
"""What an own-code row and run page says when ``goodbench run-own`` stamped every run's edges on its
own clock and the validator found the two clocks agree (rule second-clock)."""
TWO_CLOCKS_RESTAMPED = ("two clocks: step and evaluation edges stamped by goodbench run-own's process too, within "
                        "tolerance; that process ran on the submitter's machine, so these stamps are self-reported; "
                        "a trusted reviewer's reproduction stamped its own on the reviewer's machine (its badge says "
                        "what it found), and what runs between them is the code's own unless a reviewer attests "
                        "reading it")
""":data:`TWO_CLOCKS` for a row a trusted reviewer's reproduction stands beside (``reviewed_by``)."""


SHORT_STEPS = ("two clocks, steps too short for them: on a CPU the second clock holds steps of 5 ms or more, so "
               "these step times are the submitter's process's word, self-reported, never ranked")
"""What an own-code row and run page says when ``goodbench run-own`` stamped a CPU run whose median step
is shorter than the second clock's per-step tolerance (:func:`suite.figures.clock_cover.steps_held`)."""


STEPS_SUM = ("one clock: its steps' sum and the launcher's disagree beyond 5% + 75 ms: on a CPU the second clock "
             "holds a run's steps only where the sum of its steady steps agrees with the launcher's stamps that well, so "
             "these step times are the submitter's process's word, self-reported, never ranked")
"""What an own-code row and run page says when ``goodbench run-own`` stamped a CPU run whose steps are
long enough for the second clock but whose steady steps' sum it does not hold
(:data:`suite.figures.clock_cover.SUM_OFF`)."""


GPU_STEPS = ("; on a GPU its step times are CUDA events, which that process cannot see: they are compared with "
             "its span only, so they, and the throughput they give, are the submitter's process's word")
"""What an own-code GPU run's two-clock label adds (trial 10: a CPU file relabelled as two H100s, its
steps made 10× faster and every device record edited alike, read "two clocks", while only a CPU's
steps are compared one by one)."""


REPRODUCTION_TWO_CLOCKS = ("two clocks: step and evaluation edges stamped by goodbench reproduce's process too, "
                           "outside the sandbox on the reviewer's machine, within tolerance: the reviewer's word, "
                           "counted where a trusted reviewer's key signed this file; what runs between them is the "
                           "submitter's code's own unless the reviewer attests reading it")
"""What a reproduction's run page says of its timings where ``goodbench reproduce`` stamped the re-run's
edges (docs/own-code.md, "A second clock for the re-run"): not the submitter's machine's stamps."""
REPRODUCTION_SHORT_STEPS = ("two clocks, steps too short for them: on a CPU the second clock holds steps of 5 ms or "
                            "more, so these step times are the word of the re-run's process, the submitter's code "
                            "in the sandbox")
""":data:`SHORT_STEPS` on a reproduction's run page."""
REPRODUCTION_STEPS_SUM = ("one clock: its steps' sum and the launcher's disagree beyond 5% + 75 ms, so these step "
                          "times are the word of the re-run's process, the submitter's code in the sandbox")
""":data:`STEPS_SUM` on a reproduction's run page."""
REPRODUCTION_ONE_CLOCK = ("one clock: timed in the re-run's process, the submitter's code in the sandbox; no clock "
                          "outside it stamped the steps")
""":data:`OWN_TIMING` on a reproduction's run page (a reproduction stored before the re-run was stamped)."""
GPU_STEPS_RERUN = ("; on a GPU its step times are CUDA events, which that process cannot see: they are compared with "
                   "its span only, so they, and the throughput they give, are the re-run's process's word")
""":data:`GPU_STEPS` on a reproduction's run page."""


def own_timing(two_clocks: bool, short_steps: bool = False, gpu: bool = False, restamped: bool = False,
               reproduction: bool = False, steps_sum: bool = False) -> str:
    """An own-code row's or run page's words on its timings: :data:`TWO_CLOCKS` (with
    :data:`GPU_STEPS` on a GPU; :data:`TWO_CLOCKS_RESTAMPED` where a trusted reviewer's reproduction,
    ``restamped``, stamped its own), :data:`SHORT_STEPS` (stamped, but steps too short for the clock
    to hold), :data:`STEPS_SUM` (stamped, but the steps' sum not held: ``steps_sum``) or
    :data:`OWN_TIMING`; on a ``reproduction``'s own page, what goodbench reproduce
    stamped on the reviewer's machine (:data:`REPRODUCTION_TWO_CLOCKS` and the others)."""
    if reproduction:
        return (REPRODUCTION_TWO_CLOCKS + (GPU_STEPS_RERUN if gpu else "")) if two_clocks \
            else REPRODUCTION_SHORT_STEPS if short_steps else REPRODUCTION_STEPS_SUM if steps_sum \
            else REPRODUCTION_ONE_CLOCK
    two = TWO_CLOCKS_RESTAMPED if restamped else TWO_CLOCKS
    return (two + (GPU_STEPS if gpu else "")) if two_clocks else SHORT_STEPS if short_steps \
        else STEPS_SUM if steps_sum else OWN_TIMING


def copy_words(status: str, owner: str | None) -> dict:
    """What a row or run page says of a run another stored file holds too (suite/trust/ownership.py):
    ``lead``, the kept run's signer (``owner``, None when unsigned), ``tail``, and the ``link``
    text to the kept run."""
    key = "disputed" if status == "disputed" else "copy-unsigned" if owner is None else "copy-signed"
    lead, tail = COPY_TEXT[key]
    link = {"disputed": "the run stored first", "copy-unsigned": "the run kept", "copy-signed": "the signed run"}[key]
    return {"lead": lead, "owner": owner if key != "copy-unsigned" else None, "tail": tail, "link": link}
