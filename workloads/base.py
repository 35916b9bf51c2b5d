"""What a reference workload is: a pinned spec per scale, and a job the runner trains.

A workload module defines a frozen spec dataclass (every pinned value: model config,
hyperparameters, schedule, quality target), one variant of it per scale, an analytic
FLOP model, and ``build``, which turns a spec into a :class:`Job` the runner drives.
The harness in ``suite/`` never looks inside a job beyond this interface.

This module and every workload's spec module are torch-free, so that reading, validating and
rendering results never loads a training stack: a workload names the function that builds its
job by a dotted path (``job``, "module:function"), which ``build`` imports (and with it the
model and torch) only when a run is built. The job module imports its spec module, never the
other way round. The torch helpers jobs share are in :mod:`workloads.training`.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, Self, TypeVar

from workloads.data import DataFile
from workloads.pinned import COMPILE_MODES, SCALES
from workloads.placement import SINGLE, Parallel

if TYPE_CHECKING:  # the job side needs torch; describing a workload does not
    import torch

__all__ = ["COMPILE_MODES", "SCALES", "Scale", "Target", "Spec", "Job", "Workload", "canonical_json", "job_builder",
           "named"]
Scale = Literal["smoke", "full"]


@dataclass(frozen=True)
class Target:
    """A quality target: ``metric`` must reach ``value`` (``<=`` for "min", ``>=`` for "max")."""

    metric: str
    direction: Literal["min", "max"]
    value: float

    def met(self, measured: float) -> bool:
        """True when ``measured`` reaches the target (NaN never does)."""
        if not math.isfinite(measured):
            return False
        return measured <= self.value if self.direction == "min" else measured >= self.value

    def describe(self) -> str:
        return f"{self.metric} {'<=' if self.direction == 'min' else '>='} {self.value:g}"


@dataclass(frozen=True, kw_only=True)
class Spec:
    """Fields every workload spec pins; workloads subclass it with their own."""

    max_steps: int
    eval_every: int
    warmup_steps: int  # steps before the steady-state window (compilation, caches, allocator)
    log_every: int
    batch_size: int
    precision: str  # precision on an accelerator; CPU runs use fp32
    target: Target | None  # None: a throughput workload


class Job(Protocol):
    """One training run of a workload, ready to step. Built by ``Workload.build``.

    A job also has ``precision_flags``, the math it trains with as
    :func:`workloads.training.set_precision` set it when the job was built; the run records it."""

    def train_step(self) -> torch.Tensor:
        """One optimizer step on the next batch; returns the loss as a device tensor (no sync).

        Optional: a job that also has ``next_batch()`` (returning the next training batch) gets
        that batch as ``train_step(batch)``, and the runner times the fetch as data wait; a job
        without it fetches inside ``train_step`` and its data wait is reported as not measured.
        """

    def evaluate(self) -> dict[str, float]:
        """Quality metrics on the pinned eval set (the target's metric among them)."""

    def state_dict(self) -> dict:
        """Everything needed to continue bit-for-bit: model, optimizer, the job's own RNGs
        (batch generators, i.e. the data position) and step counter, as tensors and plain
        containers (checkpoints load with ``weights_only=True``). The global torch/numpy/python
        RNGs are saved by the harness."""

    def load_state_dict(self, state: dict) -> None:
        """Restore a state returned by :meth:`state_dict`."""


S = TypeVar("S", bound=Spec)


class Workload(ABC, Generic[S]):
    """A reference workload: identity, pinned variants, data, FLOP model and job factory.

    Generic over its spec class ``S``: a subclass is ``Workload[ItsSpec]``, and its FLOP model
    and ``build`` take that spec."""

    id: ClassVar[str]
    version: ClassVar[int]
    task: ClassVar[str]
    # "module:function" of the job side (torch): the function build calls, see job_builder
    job: ClassVar[str]
    data_files: ClassVar[tuple[DataFile, ...]] = ()
    # set in the class body; an open-division copy (with_spec_changes) has its own
    variants: dict[str, S]
    supports_fsdp: ClassVar[bool] = False  # a model of transformer blocks that FSDP2 shards per block
    # the largest relative difference of any curve value between seeds 1 and 2 of the same smoke
    # runs on the CPU, measured (suite/figures/reproducibility.py: how far a re-run may drift);
    # None: not measured. Not pinned: the spec hash does not cover it.
    seed_spread: ClassVar[float | None] = None
    # "module:Class" of the pinned evaluator that own code held to this workload's target is graded
    # by (workloads.evaluation; its folder's evaluator.py), imported only then; None: none yet.
    # Outside what the spec hash covers, as seed_spread is.
    evaluator: ClassVar[str | None] = None

    @property
    def kind(self) -> str:
        """"tta" when the workload has a quality target at full scale, else "throughput"."""
        return "tta" if self.variants["full"].target is not None else "throughput"

    def spec(self, scale: str) -> S:
        """The pinned spec of one scale."""
        return self.variants[scale]

    def with_spec_changes(self, scale: str, **changes: Any) -> Self:
        """A copy of this workload whose ``scale`` spec has ``changes`` (an open-division run:
        its spec hash is that of the changed spec)."""
        changed = copy.copy(self)
        changed.variants = {**self.variants, scale: dataclasses.replace(self.variants[scale], **changes)}
        return changed

    def spec_hash(self, scale: str) -> str:
        """sha256 of the canonical JSON of everything pinned for this workload variant."""
        return hashlib.sha256(canonical_json(self.pinned(scale)).encode()).hexdigest()

    def pinned(self, scale: str) -> dict[str, Any]:
        """The pinned definition that the spec hash covers."""
        return {
            "id": self.id,
            "version": self.version,
            "scale": scale,
            "spec": dataclasses.asdict(self.spec(scale)),
            "data": [dataclasses.asdict(f) for f in self.data_files],
        }

    def samples_per_step(self, spec: S) -> int:
        """Training samples consumed by one optimizer step."""
        return spec.batch_size

    def tokens_per_step(self, spec: S) -> int | None:
        """Tokens consumed by one optimizer step; None where tokens mean nothing."""
        return None

    @abstractmethod
    def flops_per_step(self, spec: S) -> float:
        """Analytic model FLOPs of one training step (forward + backward), no recompute."""

    def eval_samples(self, spec: S) -> int | None:
        """Samples one evaluation runs forward (its pinned eval set); None where not known."""
        return None

    def eval_flops(self, spec: S) -> float | None:
        """Model FLOPs of one evaluation (rules v8, ``eval-too-fast``): its samples' forward passes,
        a third of a training step's FLOPs per sample — every FLOP model here is 3 × the forward
        (PaLM's 6N + 12·L·H·Q·T is 2N + 4·L·H·Q·T forward; the CNN and DLRM count 3 × forward).
        None where the eval set's size is not known."""
        samples = self.eval_samples(spec)
        if samples is None:
            return None
        return samples * self.flops_per_step(spec) / (3 * self.samples_per_step(spec))

    def build(self, spec: S, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> Job:
        """Build model, optimizer and data for one seeded run; ``files`` maps data file names to
        paths; ``parallel`` is this process's place in a distributed run (workloads.parallel);
        ``compile`` is a :data:`COMPILE_MODES` entry for the module the job trains. The function
        that ``job`` names does it, called with this workload and the same arguments."""
        return job_builder(self.job)(self, spec, device=device, seed=seed, precision=precision,
                                     files=files, parallel=parallel, compile=compile)


def job_builder(path: str) -> Callable[..., Job]:
    """The function a workload's ``job`` names (``"workloads.dlrm_small.job:build_job"``), imported
    now: the job module and torch load when a run is built, not when a spec is read."""
    return named(path)


def named(path: str) -> Any:
    """What a dotted path ``"module:name"`` names (a workload's ``job`` or ``evaluator``), its
    module imported now."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the form that hashes are taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
