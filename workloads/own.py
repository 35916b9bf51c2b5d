"""Own implementations (docs/own-code.md): a run of the submitter's own training code, measured
by goodbench's library (:mod:`goodbench`), described by what its file declares instead of a
pinned spec.

A results file of the ``own`` division holds ``settings.implementation`` (:data:`FIELDS`): the
code's name and identity, the command, what it trains, the figures of one step it declares
(samples, tokens, model FLOPs and whether they were counted or given, warm-up, step budget,
evaluation cadence, precision) and, for a run held to a goodbench workload's quality target,
that workload (``against``). :func:`own_workload` turns that section into a :class:`Workload`
whose spec is the declaration, so that every rule, figure and page that reads a run's spec
reads an own run's the same way (:func:`workloads.registry.of_run`). Its spec hash covers the
declaration and the code's identity. A run held to a workload's target bears that workload's
id and version; a free job bears :data:`FREE_JOB`. Torch-free.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, ClassVar

from suite.record.results import division
from workloads.base import Spec, Target, Workload

DIVISION = "own"
FREE_JOB = "own"  # the workload id of a run held to no goodbench target
FLOPS_SOURCES = ("counted", "given")  # torch's FLOP counter on one step, or the submitter's figure

# the declared figures of one step, and their types: what settings.implementation.spec holds
SPEC_FIELDS: dict[str, type | tuple[type, ...]] = {"samples_per_step": int, "tokens_per_step": (int, type(None)), "flops_per_step": (int, float),
               "flops_source": str, "warmup_steps": int, "max_steps": int, "eval_every": int,
               "log_every": int, "precision": str}
FIELDS = ("kind", "name", "trains", "against", "code", "command", "spec")


class NotOwn(ValueError):
    """A section that does not describe an own implementation (the reason is the message)."""


@dataclass(frozen=True, kw_only=True)
class OwnSpec(Spec):
    """The declared figures of one step of an own implementation (``batch_size``: samples)."""

    tokens_per_step: int | None
    flops_per_step: float
    flops_source: str


class OwnWorkload(Workload[OwnSpec]):
    """An own implementation as a workload: its one variant, at the run's scale, is its declaration."""

    id: ClassVar[str] = FREE_JOB
    version: ClassVar[int] = 1
    task: ClassVar[str] = "own implementation"
    job: ClassVar[str] = ""  # never built: the submitter's code trains, goodbench measures
    implementation: dict[str, Any]

    def samples_per_step(self, spec: OwnSpec) -> int:
        return spec.batch_size

    def tokens_per_step(self, spec: OwnSpec) -> int | None:
        return spec.tokens_per_step

    def flops_per_step(self, spec: OwnSpec) -> float:
        return spec.flops_per_step

    @property
    def kind(self) -> str:
        """"tta" when held to a goodbench workload's target, else "throughput" (a free job)."""
        return "tta" if self.implementation.get("against") else "throughput"

    def pinned(self, scale: str) -> dict[str, Any]:
        """What the spec hash covers: the declaration and the code's identity, name and command."""
        return {**super().pinned(scale), "implementation": {
            key: self.implementation.get(key) for key in ("name", "trains", "against", "code", "command")}}


def own_workload(implementation: Any, scale: str, reference: Workload | None) -> OwnWorkload:
    """The workload of an own implementation described by ``implementation`` (a file's
    ``settings.implementation``) at ``scale``; ``reference``: the goodbench workload it is held
    to (its ``against``), whose id, version, data and target at ``scale`` it takes.
    :class:`NotOwn` when the section cannot describe one."""
    if not isinstance(implementation, dict) or implementation.get("kind") != DIVISION:
        raise NotOwn("settings.implementation does not describe an own implementation (kind 'own')")
    declared = implementation.get("spec")
    if not isinstance(declared, dict):
        raise NotOwn("settings.implementation.spec is missing")
    for key, kind in SPEC_FIELDS.items():
        value = declared.get(key)
        if isinstance(value, bool) or not isinstance(value, kind):
            raise NotOwn(f"settings.implementation.spec.{key} is missing or not a {_name(kind)}")
    for key in ("samples_per_step", "max_steps", "eval_every", "log_every"):
        if declared[key] < 1:
            raise NotOwn(f"settings.implementation.spec.{key} is at least 1")
    if not 0 <= declared["warmup_steps"] < declared["max_steps"]:
        raise NotOwn("settings.implementation.spec.warmup_steps is from 0 to max_steps - 1")
    if not declared["flops_per_step"] > 0 or (declared["tokens_per_step"] is not None and declared["tokens_per_step"] < 1):
        raise NotOwn("settings.implementation.spec: flops_per_step above 0, tokens_per_step at least 1 (or null)")
    if declared["flops_source"] not in FLOPS_SOURCES:
        raise NotOwn(f"settings.implementation.spec.flops_source is one of {', '.join(FLOPS_SOURCES)}")
    if (implementation.get("against") is None) != (reference is None):
        raise NotOwn("settings.implementation.against names no workload of this suite")
    target: Target | None = reference.spec(scale).target if reference is not None else None
    if reference is not None and target is None:
        raise NotOwn(f"settings.implementation.against: {reference.id} has no quality target at {scale} scale "
                     "to hold a run to")
    spec = OwnSpec(max_steps=declared["max_steps"], eval_every=declared["eval_every"],
                   warmup_steps=declared["warmup_steps"], log_every=declared["log_every"],
                   batch_size=declared["samples_per_step"], precision=declared["precision"], target=target,
                   tokens_per_step=declared["tokens_per_step"], flops_per_step=float(declared["flops_per_step"]),
                   flops_source=declared["flops_source"])
    attributes: dict[str, Any] = {"variants": {scale: spec}}
    if reference is not None:
        attributes.update(id=reference.id, version=reference.version, data_files=reference.data_files,
                          task=f"own implementation, held to {reference.id}'s target")
    workload = type("OwnWorkload", (OwnWorkload,), attributes)()
    workload.implementation = dict(implementation)
    return workload


def declaration(spec: OwnSpec) -> dict[str, Any]:
    """The ``settings.implementation.spec`` section of ``spec`` (the inverse of :func:`own_workload`'s reading)."""
    fields = dataclasses.asdict(spec)
    return {"samples_per_step": fields["batch_size"], **{k: fields[k] for k in SPEC_FIELDS if k in fields}}


def implementation_name(doc: Any) -> str | None:
    """The name of the own implementation a results document of the own division measured (its
    ``settings.implementation.name``, as the file records it: self-reported, not yet made safe to
    print); None for a document of goodbench's own workloads, or one that names none."""
    return _declared(doc, "name")


def implementation_trains(doc: Any) -> str | None:
    """What the own implementation a results document of the own division measured declares it
    trains (its ``settings.implementation.trains``, as :func:`implementation_name` reads its name)."""
    return _declared(doc, "trains")


def held_to(doc: Any) -> str | None:
    """The workload a results document of the own division is held to (``settings.implementation.against``);
    None for a free job or a document of goodbench's own workloads."""
    return _declared(doc, "against")


COMMIT_FIRST = "commit and run again to be reproducible"
"""What a submitter whose code had uncommitted changes does (docs/own-code.md, "Commit before you run")."""


def uncommitted(code: Any) -> str | None:
    """Why own code whose identity is ``code`` (``settings.implementation.code``) cannot be
    reproduced: its work tree had uncommitted changes (``git_dirty``), so no commit a reviewer
    can check out holds what ran; None where it was committed, or is in no git work tree."""
    if not isinstance(code, dict) or code.get("git_dirty") is not True:
        return None
    commit = code.get("git_commit")
    at = f"git commit {commit[:12]}" if isinstance(commit, str) and commit.isalnum() else "its git commit"
    return f"uncommitted changes in the code (at {at}): no commit a reviewer checks out holds what ran"


def unreproducible_line(doc: Any) -> str | None:
    """One line for a results document of own code that cannot be reproduced, as ``goodbench
    submit``, ``run-own`` and the Benchmark end with it: its code had uncommitted changes
    (:func:`uncommitted`), or its recorded command's arguments name a path outside the code
    (:func:`argument_refusal`: an absolute ``--data-dir``, which a reviewer's re-run refuses);
    None for any other."""
    settings = doc.get("settings") if isinstance(doc, dict) else None
    if not isinstance(settings, dict) or division(doc) != DIVISION:
        return None
    section = settings.get("implementation")
    why = uncommitted(section.get("code") if isinstance(section, dict) else None)
    if why:
        return f"not reproducible: {why}; {COMMIT_FIRST}"
    command = section.get("command") if isinstance(section, dict) else None
    words = [str(a) for a in command] if isinstance(command, list) else []
    script_at = 2 if words[:1] == ["python"] else 3 if words[:1] == ["torchrun"] else None
    refused = argument_refusal(words[script_at:]) if script_at is not None else None
    return f"not reproducible as recorded: {refused}; {PATHS_INSIDE}" if refused else None


PATHS_INSIDE = ("name a data folder as $GOODBENCH_DATA_DIR instead (a reviewer gives theirs: reproduce "
                "--data-dir) and run again")
"""What a submitter whose command names a path outside the code does (docs/own-code.md)."""


def argument_refusal(args: list[str]) -> str | None:
    """Why one of the recorded ``args`` may not be passed, or None: an argument, or the value after
    any ``=`` in it (``--out=``, ``data.path=``), naming a path outside the copy of the code —
    absolute, from a home (``~``), or climbing out with ``..`` — is refused; relative paths inside
    the code are what a re-run may name."""
    for arg in args:
        if any(_outside(piece) for piece in _pieces(arg)):
            return (f"the recorded argument {arg[:200]!r} names a path outside the copy of the code (absolute, `~` or "
                    "`..`): a re-run's arguments may name only paths inside its code, relative to its working folder")
    return None


def _pieces(arg: str) -> list[str]:
    """Every value an argument may hand a program as a path: itself, what follows each ``=`` (an
    option's ``--x=value``, a Hydra or OmegaConf override's ``data.path=value``, ``--define=key=value``:
    trial 11 passed the last two), a short option's glued value (``-o/etc/x``), each part of a list
    (``a,/etc/x``, ``a:/b``, a URL's ``file:///etc/x``) and a response file's name (``@/etc/x``):
    trial 5 passed the last five."""
    parts = arg.split("=")
    values = [arg, *("=".join(parts[i:]) for i in range(1, len(parts)))]
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
        values.append(arg[2:])
    return [p.lstrip("@") for v in values for p in (v, *re.split(r"[,:;]", v))]


def _outside(value: str) -> bool:
    return value.startswith(("/", "~", "\\")) or ".." in PurePosixPath(value.replace("\\", "/")).parts


def _declared(doc: Any, key: str) -> str | None:
    """The text ``settings.implementation[key]`` of a document of the own division; None: none."""
    settings = doc.get("settings") if isinstance(doc, dict) else None
    if not isinstance(settings, dict) or division(doc) != DIVISION:
        return None
    section = settings.get("implementation")
    value = section.get(key) if isinstance(section, dict) else None
    return value if isinstance(value, str) else None


def _name(kind: Any) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({int: "whole number", float: "number", str: "text"}.get(k, "null") for k in kinds)
