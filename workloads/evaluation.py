"""goodbench's pinned evaluation for own implementations held to a workload's quality target
(docs/own-code.md): the workload's pinned data, split and held-out batches, and its metric
computed by goodbench's code from the model's outputs, so that "val_loss ≤ 1.55" means the same
for every implementation. It runs in the submitter's process: the file cannot prove it ran
(self-reported, like every figure of an own implementation's quality).

Each workload's evaluator is in its own folder (``workloads/<name>/evaluator.py``), named by
its spec's ``evaluator`` (a dotted path, as ``job`` is): lm-char, fashion-cnn and dlrm-small
have one; gpt2-124m and llama-1b have none yet. :func:`evaluator` finds it through the
registry. This module holds what they share.

The model never sees the answer it is graded on. lm-char's windows hold their own targets (the
inputs shifted by one), so its evaluation probes the model's causality every time, among its
own calls (:mod:`workloads.causality`): a model whose logits at a position change when only
later tokens change reads the future, and the evaluation is refused (:class:`ModelRefused`). fashion-cnn's
and dlrm-small's models are given the images, or the dense and sparse features, and never the
labels (tests/test_own_evaluators.py pins what the model is called with).

Its errors are :class:`suite.record.errors.GoodbenchError`, which the library and the commands
turn into one line: the one name ``workloads/`` takes from ``suite/``."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from suite.record.errors import GoodbenchError
from workloads import registry
from workloads.base import named

Logits = Callable[[torch.Tensor], torch.Tensor]  # token ids (batch, context) -> logits (batch, context, vocab)


class ModelRefused(GoodbenchError):
    """The pinned evaluation refuses the model: it reads what it is graded on (``reason``)."""


@dataclass(frozen=True)
class Probe:
    """What a causality probe found: the largest change of an earlier position's log-probabilities
    when later tokens changed (``max_difference``, nats), against ``tolerance``, over ``positions``
    positions of ``windows`` windows, in ``seconds``."""

    max_difference: float
    tolerance: float
    windows: int
    positions: int
    seconds: float

    @property
    def passed(self) -> bool:
        return self.max_difference <= self.tolerance


class Evaluator(Protocol):
    """A workload's pinned evaluator at one scale, built as ``Evaluator(scale, device, data_dir)``:
    its target's ``metric``, its pinned ``data`` (what an own loop trains on), and, called with
    the model's logits function, the quality metrics; ``last_probe``, the causality probe of its
    latest evaluation (None where the model is given no answer to read)."""

    metric: str
    data: Any
    last_probe: Probe | None

    def __call__(self, logits_of: Callable[..., torch.Tensor]) -> dict[str, float]: ...


def evaluated() -> list[str]:
    """The ids of the registry's workloads that have a pinned evaluator, in its order."""
    return [w.id for w in registry.WORKLOADS.values() if w.evaluator is not None]


def evaluator(workload_id: str, scale: str, device: torch.device, data_dir: str | None = None) -> Evaluator:
    """The pinned evaluator of ``workload_id`` at ``scale``, the one its spec names (imported now);
    :class:`GoodbenchError` for a workload without one."""
    workload = registry.WORKLOADS.get(workload_id)
    if workload is None or workload.evaluator is None:
        raise GoodbenchError(f"no pinned evaluator for own code held to {workload_id!r} yet: one of "
                             f"{', '.join(evaluated())} (or a free job: against=None)")
    return named(workload.evaluator)(scale, device, data_dir)
