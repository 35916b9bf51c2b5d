"""Pinned synthetic token data for the throughput language-model workloads (no download).

Tokens come from a fixed random first-order Markov chain over ``vocab_size`` tokens: every
token has ``branching`` successors drawn once from a generator seeded with ``seed``, and the
next token is one of them, uniformly. A model can learn it, so the loss really falls from
ln(vocab_size) towards the chain's entropy, at most ln(branching) nats per token. Streams are
drawn on the CPU and stepped on the device, so every device holds the same tokens.
:class:`SyntheticLMJob` is the training run that the synthetic-token workloads share.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from workloads.base import Spec, autocast
from workloads.lm_char import lr_at
from workloads.nn.gpt import adamw

# Streams are generated as chains of this many tokens stepped side by side, then laid end to
# end: one token in 4096 is a fresh uniform start rather than a successor.
_CHAIN_LENGTH = 4096


@dataclass(frozen=True)
class MarkovSource:
    """A pinned random Markov chain over ``vocab_size`` tokens with ``branching`` successors each."""

    vocab_size: int
    branching: int
    seed: int

    def successors(self) -> torch.Tensor:
        """The (vocab_size, branching) successor table, identical for a given source."""
        gen = torch.Generator(device="cpu").manual_seed(self.seed)
        return torch.randint(self.vocab_size, (self.vocab_size, self.branching), generator=gen)

    def stream(self, n_tokens: int, stream_seed: int,
               device: torch.device | str = "cpu") -> torch.Tensor:
        """``n_tokens`` int64 tokens of the chain on ``device``, pinned by ``stream_seed``.

        The random draws are made on the CPU and the chain is stepped on ``device``: the
        stepping is exact integer indexing, so every device yields the same tokens.
        """
        gen = torch.Generator(device="cpu").manual_seed(self.seed * 1_000_003 + stream_seed)
        length = min(_CHAIN_LENGTH, n_tokens)
        chains = -(-n_tokens // length)
        choice = torch.randint(self.branching, (length, chains), generator=gen, dtype=torch.uint8)
        start = torch.randint(self.vocab_size, (chains,), generator=gen)
        table = self.successors().to(device)
        choice = choice.to(device)
        out = torch.empty(length, chains, dtype=torch.long, device=device)
        out[0] = start.to(device)
        for i in range(1, length):
            out[i] = table[out[i - 1], choice[i].long()]
        return out.t().reshape(-1)[:n_tokens].contiguous()


def windows(data: torch.Tensor, batch_size: int, length: int, gen: torch.Generator,
            device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of random ``length``-token windows of ``data`` and their next-token targets."""
    starts = torch.randint(len(data) - length - 1, (batch_size,), generator=gen)
    offsets = starts.to(device)[:, None] + torch.arange(length + 1, device=device)
    window = data[offsets]
    return window[:, :-1], window[:, 1:]


@dataclass(frozen=True, kw_only=True)
class SyntheticLMSpec(Spec):
    """Pinned fields shared by language models trained on a :class:`MarkovSource`."""

    vocab_size: int
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
    data_seed: int
    branching: int
    train_tokens: int
    val_tokens: int

    def source(self) -> MarkovSource:
        return MarkovSource(self.vocab_size, self.branching, self.data_seed)


class SyntheticLMJob:
    """One seeded language-model run on pinned Markov tokens held on the device.

    The train stream (stream seed 0) and the held-out stream (stream seed 1) are fixed by the
    spec; the run seed picks the model init and which windows each batch reads. AdamW (fused on
    CUDA) with warm-up and cosine decay, gradient clipping, autocast at the run's precision.
    """

    def __init__(self, spec: SyntheticLMSpec, model: nn.Module, *, device: torch.device,
                 seed: int, precision: str):
        self.spec, self.device, self.precision = spec, device, precision
        source = spec.source()
        self.train_data = source.stream(spec.train_tokens, stream_seed=0, device=device)
        self.val_data = source.stream(spec.val_tokens, stream_seed=1, device=device)
        self.model = model.to(device)
        self.optimizer = adamw(self.model, spec.lr, (spec.beta1, spec.beta2), spec.weight_decay,
                               device)
        self.batch_gen = torch.Generator(device="cpu").manual_seed(seed)
        self.step = 0

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The next training batch (inputs, targets)."""
        return windows(self.train_data, self.spec.batch_size, self.spec.block_size,
                       self.batch_gen, self.device)

    def train_step(self, batch: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        self.model.train()
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(self.step, self.spec)
        x, y = batch if batch is not None else self.next_batch()
        with autocast(self.device, self.precision):
            loss = self.model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.spec.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return loss.detach()

    def state_dict(self) -> dict:
        """Model, optimizer, batch-generator state (the data position) and step counter."""
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "batch_gen": self.batch_gen.get_state(), "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.batch_gen.set_state(state["batch_gen"])
        self.step = state["step"]

    def state_dict(self) -> dict:
        """Model, optimizer, batch-generator state (the data position) and step counter."""
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "batch_gen": self.batch_gen.get_state(), "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.batch_gen.set_state(state["batch_gen"])
        self.step = state["step"]

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Mean loss over ``eval_batches`` pinned held-out windows (the same every eval)."""
        self.model.eval()
        gen = torch.Generator(device="cpu").manual_seed(0)
        losses = torch.zeros(self.spec.eval_batches, device=self.device)
        for i in range(self.spec.eval_batches):
            x, y = windows(self.val_data, self.spec.batch_size, self.spec.block_size, gen,
                           self.device)
            with autocast(self.device, self.precision):
                losses[i] = self.model(x, y)
        return {"val_loss": float(losses.mean())}
