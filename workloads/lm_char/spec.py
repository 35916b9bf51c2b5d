"""lm-char: nanoGPT's shakespeare-char model on Tiny Shakespeare (character-level language model).

Follows nanoGPT's ``config/train_shakespeare_char.py``: 6 layers, 6 heads, 384 dim, context 256,
batch 64, dropout 0.2, AdamW lr 1e-3 (β2 0.99) with linear warm-up and cosine decay to 1e-4.
The first 90% of the text trains, the last 10% is the validation set; the vocabulary is the
65 characters of the text. Stresses small-model step latency and launch overhead.
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.base import Target
from workloads.data import DataFile
from workloads.lm.gpt_config import GPTConfig, train_flops_per_token
from workloads.lm.spec import LanguageModelSpec, LanguageModelWorkload

TINY_SHAKESPEARE = DataFile(
    name="tinyshakespeare/input.txt",
    url="https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
    sha256="86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    size=1_115_394,
)


@dataclass(frozen=True, kw_only=True)
class LmCharSpec(LanguageModelSpec):
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float
    beta2: float = 0.99
    train_fraction: float = 0.9


class LmChar(LanguageModelWorkload[LmCharSpec]):
    id = "lm-char"
    version = 1
    task = "character-level language modelling (Tiny Shakespeare)"
    data_files = (TINY_SHAKESPEARE,)
    job = "workloads.lm_char.job:build_job"
    evaluator = "workloads.lm_char.evaluator:LmCharEvaluator"
    seed_spread = 0.041
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

    def flops_per_token(self, spec: LmCharSpec) -> float:
        """PaLM's 6N + 12·L·H·Q·T training FLOPs per token (tied head counted once in N, no position embedding)."""
        return train_flops_per_token(self.model_config(spec))
