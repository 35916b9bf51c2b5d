"""What every language-model workload pins (context, AdamW and its schedule), its tokens and
FLOPs per step, and the synthetic-token variant. Torch-free: the training run is
:mod:`workloads.lm.job`."""
from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import TypeVar

from workloads.base import Spec, Workload


@dataclass(frozen=True, kw_only=True)
class LanguageModelSpec(Spec):
    """Pinned fields every language-model workload has: context, AdamW and its schedule."""

    block_size: int
    lr: float
    min_lr: float
    lr_warmup_steps: int
    lr_decay_steps: int
    beta1: float = 0.9
    beta2: float = 0.95
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_batches: int


L = TypeVar("L", bound=LanguageModelSpec)


class LanguageModelWorkload(Workload[L]):
    """A workload that trains a decoder on ``batch_size × block_size`` tokens per step."""

    def tokens_per_step(self, spec: L) -> int:
        return spec.batch_size * spec.block_size

    @abstractmethod
    def flops_per_token(self, spec: L) -> float:
        """Training FLOPs per token: PaLM's 6N + 12·L·H·Q·T (each model states its N)."""

    def eval_samples(self, spec: L) -> int:
        """``eval_batches`` windows of ``batch_size`` sequences (:meth:`workloads.lm.job.LanguageModelJob.evaluate`)."""
        return spec.eval_batches * spec.batch_size

    def flops_per_step(self, spec: L) -> float:
        """PaLM's 6N + 12·L·H·Q·T per token × batch × context, no recomputation."""
        return self.flops_per_token(spec) * self.tokens_per_step(spec)


def lr_at(step: int, spec: LanguageModelSpec) -> float:
    """Linear warm-up to ``lr``, then cosine decay to ``min_lr`` at ``lr_decay_steps``."""
    if step < spec.lr_warmup_steps:
        return spec.lr * (step + 1) / (spec.lr_warmup_steps + 1)
    if step > spec.lr_decay_steps:
        return spec.min_lr
    ratio = (step - spec.lr_warmup_steps) / (spec.lr_decay_steps - spec.lr_warmup_steps)
    return spec.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (spec.lr - spec.min_lr)


@dataclass(frozen=True, kw_only=True)
class SyntheticLMSpec(LanguageModelSpec):
    """Pinned fields shared by language models trained on a pinned Markov chain
    (:func:`workloads.lm.synthetic.source` is the chain of a spec)."""

    vocab_size: int
    data_seed: int
    branching: int
    train_tokens: int
    val_tokens: int
