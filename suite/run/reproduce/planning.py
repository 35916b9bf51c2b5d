"""What can be reproduced here, and why not: each chosen run's workload version, spec hash (an
open-division run's declared change applied), seed, scale, precision, compile mode and process
layout checked against this suite and machine (:class:`CannotReproduce` says why not), and the
plan of the runs to train again."""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from suite.figures.naming import workload_text
from suite.figures.reproducibility import EXACT, CurveTolerance
from suite.record.errors import GoodbenchError
from suite.run.reproduce.inputs import Machine, Original, as_dict
from workloads import own


class CannotReproduce(GoodbenchError):
    """This machine cannot reproduce the run; the message is one line saying why."""


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
    tolerance: CurveTolerance = EXACT  # a curve beyond it is measured again (suite/run/reproduce/drift.py)
    implementation: str | None = None  # own code: the name its file records (workloads.own.implementation_name)

    def workload(self) -> str:
        """Its workload as every command names it: the id, or own code's "own: NAME (held to ID)"."""
        return workload_text(self.workload_id, self.implementation)

    def label(self) -> str:
        return f"{self.workload()} seed {self.seed}"


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
    cpu_threads: int | None = None  # the original's torch CPU threads (None: not recorded)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        precisions = sorted({t.precision for t in self.targets})
        threads = f", {self.cpu_threads} CPU thread{'s' if self.cpu_threads != 1 else ''} (as recorded)" \
            if self.cpu_threads is not None and self.device_type == "cpu" else ""
        return (f"{self.device_type}, {'/'.join(precisions)}, compile {self.compile}, {self.layout.describe()}"
                f"{threads}, {self.scale} scale")


def _label(run) -> str:
    workload = as_dict(as_dict(run).get("workload"))
    wid, seed = workload.get("id"), as_dict(run).get("seed")
    return f" ({wid} seed {seed})" if isinstance(wid, str) and isinstance(seed, int) else ""


def _layout(run: dict, settings: dict) -> Layout:
    """The run's process layout: its ``distributed`` section (or the file's); a single process
    records none, and its micro-batch (``--micro-batch`` without torchrun) only in the command."""
    section = as_dict(run.get("distributed")) or as_dict(settings.get("distributed"))
    if not section:
        option = _command_values(settings, "--micro-batch")
        return Layout(micro_batch=option[-1] if option else None)
    # the option as given (None: each rank's whole share); a run's own section gives the rows
    given = as_dict(settings.get("distributed"))
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

    from suite.run.runner import SEED_LIMIT, check_precision, locate_data, precision_for
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
    if not 0 <= run["seed"] < SEED_LIMIT:
        _refuse(f"seed {run['seed']} is not one goodbench can train with (0 to {SEED_LIMIT - 1})")
    batch = _spec(workload, run, scale, settings)
    device_type = str(run["device"]).split(":")[0]
    layout = _layout(run, settings)
    recorded_on = as_dict(as_dict(doc.get("system")).get("accelerator")).get("name")
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
    return Target(index, run, wid, int(run["seed"]), device_type, precision, layout, batch)


def own_code_steps(settings: dict, where: Path = Path(".")) -> str:
    """Why goodbench cannot train an own implementation's runs again itself, and how to: its
    recorded command, where its code is at hand — the named files found under ``where`` with the
    sha256 recorded, and the git commit to check out."""
    section = as_dict(settings.get("implementation"))
    code = as_dict(section.get("code"))
    dirty = uncommitted_refusal(settings)
    if dirty:
        return dirty
    files = as_dict(code.get("files"))
    found = [name for name, digest in files.items() if _digest_here(where, str(name)) == digest]
    command = " ".join(str(a) for a in section.get("command") or []) or "(none recorded)"
    commit = code.get("git_commit")
    at = f"git commit {str(commit)[:12]}{' with uncommitted changes' if code.get('git_dirty') else ''}" \
        if commit else "no git commit recorded"
    here = (f"{len(found)} of its {len(files)} named files are here with the sha256 recorded"
            + (f" (missing or changed: {', '.join(sorted(set(files) - set(found)))[:300]})" if len(found) < len(files) else "")
            if files else "it names no files")
    return (f"its runs were trained by own code ({section.get('name')!s}), not by goodbench's workloads: "
            f"goodbench runs its recorded command `{command}` again only where that code is checked out ({at}; "
            f"{here}); check it out and run `goodbench reproduce` from its work tree's root")


def uncommitted_refusal(settings: dict) -> str | None:
    """Why own code run with uncommitted changes (``git_dirty``) cannot be reproduced: no commit a
    reviewer checks out holds what ran, so goodbench neither points them to one nor runs it; None
    where its code was committed (or is in no git work tree)."""
    why = own.uncommitted(as_dict(settings.get("implementation")).get("code"))
    return f"cannot reproduce: {why}; its submitter must {own.COMMIT_FIRST}" if why else None


MAX_CODE_FILE_BYTES = 64 * 1024 * 1024  # a source file named for its sha256, not a dataset


def _digest_here(where: Path, name: str) -> str | None:
    """The sha256 of the file ``name`` names under ``where`` — a relative path inside it only (a
    file's names are a hostile file's text: no absolute path, no "..", no link out), a regular file
    of at most :data:`MAX_CODE_FILE_BYTES`, read in chunks; None otherwise."""
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    root = where.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file() or path.stat().st_size > MAX_CODE_FILE_BYTES:
        return None
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def plan(original: Original, indexes: list[int], data_dir: str | None, machine: Machine) -> Plan:
    """The plan of the runs ``indexes``, or :class:`CannotReproduce` with the first run's reason
    (and how many more runs cannot be reproduced)."""
    doc = original.doc
    settings = doc["settings"]
    if settings.get("division") == "own":
        raise CannotReproduce(own_code_steps(settings))
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
                cpu_threads=_threads(settings.get("cpu_threads")),
                notes=_notes(doc, machine, targets))


def _threads(value) -> int | None:
    """A recorded thread count a process can be set to (1..4096), else None."""
    return value if type(value) is int and 1 <= value <= 4096 else None


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def _notes(doc: dict, machine: Machine, targets: list[Target]) -> list[str]:
    """What the reproduction does not repeat, or repeats elsewhere, said before it trains."""
    settings, notes = doc["settings"], []
    device_type = targets[0].device_type
    again = "under other kernels (this CPU's default instruction set)" if device_type == "cpu" and \
        targets[0].layout.world_size == 1 else "once more (the same settings)"
    notes.append(f"each curve is held to {EXACT.rel:g} relative of this machine's re-run; one that differs "
                 f"is trained again {again} to measure how far this machine's kernels move it, and held "
                 "to twice that (at most twice the workload's seed spread)")
    if device_type == "cuda":
        notes.append("GPU curve tolerances are unverified: two same-seed runs on a GPU have not yet "
                     "measured how far they drift")
    if device_type == "cpu" and _threads(settings.get("cpu_threads")) is None:
        notes.append("the original does not record its CPU threads (files before they were recorded): "
                     "trained with this process's; a curve that depends on them may differ")
    if settings.get("inject_failures") or settings.get("failure_rate_per_hour"):
        notes.append("the original's injected failures are not injected again: its time to target "
                     "includes their recoveries, the reproduction's does not")
    recorded = str(as_dict(as_dict(doc.get("system")).get("accelerator")).get("name") or "")
    here = machine.cuda_name if device_type == "cuda" else None
    if here and recorded and here != recorded:
        notes.append(f"recorded on {recorded}, reproduced on {here}: throughput is compared across "
                     "device models")
    return notes
