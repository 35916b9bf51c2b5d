"""lm-char: nanoGPT's shakespeare-char model on Tiny Shakespeare (character-level language model).

Follows nanoGPT's ``config/train_shakespeare_char.py``: 6 layers, 6 heads, 384 dim, context 256,
batch 64, dropout 0.2, AdamW lr 1e-3 (β2 0.99) with linear warm-up and cosine decay to 1e-4.
The first 90% of the text trains, the last 10% is the validation set; the vocabulary is the
65 characters of the text. Stresses small-model step latency and launch overhead.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from workloads.base import Job, Spec, Target, Workload, autocast
from workloads.data import DataFile
from workloads.nn.gpt import GPT, GPTConfig, adamw, train_flops_per_token

TINY_SHAKESPEARE = DataFile(
    name="tinyshakespeare/input.txt",
    url="https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
    sha256="86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    size=1_115_394,
)


@dataclass(frozen=True, kw_only=True)
class LmCharSpec(Spec):
    n_layer: int
    n_head: int
    n_embd: int
    block_size: int
    dropout: float
    lr: float
    min_lr: float
    lr_warmup_steps: int
    lr_decay_steps: int
    beta1: float = 0.9
    beta2: float = 0.99
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_batches: int
    train_fraction: float = 0.9


class LmChar(Workload):
    id = "lm-char"
    version = 1
    task = "character-level language modelling (Tiny Shakespeare)"
    data_files = (TINY_SHAKESPEARE,)
    variants = {
        "smoke": LmCharSpec(
            n_layer=2, n_head=4, n_embd=128, block_size=64, dropout=0.0,
            batch_size=32, lr=2e-3, min_lr=2e-4, lr_warmup_steps=20, lr_decay_steps=300,
            max_steps=300, eval_every=50, eval_batches=8, warmup_steps=10, log_every=10,
            precision="fp32", target=Target("val_loss", "min", 2.4),
        ),
        "full": LmCharSpec(
            n_layer=6, n_head=6, n_embd=384, block_size=256, dropout=0.2,
            batch_size=64, lr=1e-3, min_lr=1e-4, lr_warmup_steps=100, lr_decay_steps=5000,
            max_steps=5000, eval_every=250, eval_batches=200, warmup_steps=50, log_every=100,
            precision="bf16", target=Target("val_loss", "min", 1.55),
        ),
    }

    @staticmethod
    def model_config(spec: LmCharSpec, vocab_size: int = 65) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, block_size=spec.block_size, n_layer=spec.n_layer,
                         n_head=spec.n_head, n_embd=spec.n_embd, dropout=spec.dropout)

    def tokens_per_step(self, spec: LmCharSpec) -> int:
        return spec.batch_size * spec.block_size

    def flops_per_step(self, spec: LmCharSpec) -> float:
        """PaLM's 6N + 12·L·H·Q·T per token × batch × context (tied head counted once in N)."""
        return train_flops_per_token(self.model_config(spec)) * spec.batch_size * spec.block_size

    def build(self, spec: LmCharSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path]) -> Job:
        text = files[TINY_SHAKESPEARE.name].read_text(encoding="utf-8")
        return LmCharJob(spec, text, device=device, seed=seed, precision=precision)


def encode(text: str) -> tuple[torch.Tensor, list[str]]:
    """Characters → ids over the sorted character set of ``text`` (at most 256 characters)."""
    chars = sorted(set(text))
    codes = torch.tensor([ord(c) for c in chars])
    points = torch.frombuffer(bytearray(text.encode("utf-32-le")), dtype=torch.int32).long()
    return torch.searchsorted(codes, points).to(torch.uint8), chars


def lr_at(step: int, spec: LmCharSpec) -> float:
    """Linear warm-up to ``lr``, then cosine decay to ``min_lr`` at ``lr_decay_steps``."""
    if step < spec.lr_warmup_steps:
        return spec.lr * (step + 1) / (spec.lr_warmup_steps + 1)
    if step > spec.lr_decay_steps:
        return spec.min_lr
    ratio = (step - spec.lr_warmup_steps) / (spec.lr_decay_steps - spec.lr_warmup_steps)
    return spec.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (spec.lr - spec.min_lr)


class LmCharJob:
    """One seeded lm-char training run; the whole text sits on the device."""

    def __init__(self, spec: LmCharSpec, text: str, *, device: torch.device, seed: int,
                 precision: str):
        self.spec, self.device, self.precision = spec, device, precision
        data, chars = encode(text)
        split = int(spec.train_fraction * len(data))
        self.train_data = data[:split].to(device=device, dtype=torch.long)
        self.val_data = data[split:].to(device=device, dtype=torch.long)
        torch.manual_seed(seed)
        self.model = GPT(LmChar.model_config(spec, len(chars))).to(device)
        self.optimizer = adamw(self.model, spec.lr, (spec.beta1, spec.beta2), spec.weight_decay,
                               device)
        self.batch_gen = torch.Generator(device="cpu").manual_seed(seed)
        self.step = 0

    def _batch(self, data: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        t = self.spec.block_size
        starts = torch.randint(len(data) - t - 1, (self.spec.batch_size,), generator=gen)
        offsets = starts.to(self.device)[:, None] + torch.arange(t + 1, device=self.device)
        window = data[offsets]
        return window[:, :-1], window[:, 1:]

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The next training batch (inputs, targets)."""
        return self._batch(self.train_data, self.batch_gen)

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

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Mean loss over ``eval_batches`` pinned validation batches (same batches every eval)."""
        self.model.eval()
        gen = torch.Generator(device="cpu").manual_seed(0)
        losses = torch.zeros(self.spec.eval_batches, device=self.device)
        for i in range(self.spec.eval_batches):
            x, y = self._batch(self.val_data, gen)
            with autocast(self.device, self.precision):
                losses[i] = self.model(x, y)
        return {"val_loss": float(losses.mean())}
