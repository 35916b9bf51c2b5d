"""gpt2-124m: GPT-2 small on pinned synthetic tokens, a dense-matmul throughput workload.

The model follows GPT-2 small as trained by nanoGPT/llm.c (12 layers, 12 heads, 768 dim,
context 1024, vocabulary 50,304 = 50,257 padded to a multiple of 64, tied head, no biases), with
bf16 autocast and fused AdamW on CUDA. The tokens are not text: they come from a pinned random
Markov chain (:mod:`workloads.lm.synthetic`), so nothing is downloaded and the loss still falls.
No quality target: the figures of merit are tokens/s and MFU; the loss must stay finite.
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.lm.gpt_config import GPTConfig, train_flops_per_token
from workloads.lm.spec import LanguageModelWorkload, SyntheticLMSpec


@dataclass(frozen=True, kw_only=True)
class Gpt2Spec(SyntheticLMSpec):
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0


class Gpt2(LanguageModelWorkload[Gpt2Spec]):
    id = "gpt2-124m"
    version = 1
    supports_fsdp = True
    job = "workloads.gpt2.job:build_job"
    seed_spread = 0.0078
    task = "GPT-2 small language model on pinned synthetic tokens (throughput)"
    variants = {
        "smoke": Gpt2Spec(
            n_layer=2, n_head=4, n_embd=128, block_size=64, vocab_size=512,
            batch_size=16, lr=3e-3, min_lr=3e-4, lr_warmup_steps=10, lr_decay_steps=80,
            max_steps=80, eval_every=40, eval_batches=4, warmup_steps=10, log_every=10,
            data_seed=2024, branching=4, train_tokens=1 << 18, val_tokens=1 << 14,
            precision="fp32", target=None,
        ),
        "full": Gpt2Spec(
            n_layer=12, n_head=12, n_embd=768, block_size=1024, vocab_size=50_304,
            batch_size=16, lr=6e-4, min_lr=6e-5, lr_warmup_steps=100, lr_decay_steps=500,
            max_steps=500, eval_every=250, eval_batches=20, warmup_steps=50, log_every=50,
            data_seed=2024, branching=4, train_tokens=1 << 25, val_tokens=1 << 20,
            precision="bf16", target=None,
        ),
    }

    @staticmethod
    def model_config(spec: Gpt2Spec) -> GPTConfig:
        return GPTConfig(vocab_size=spec.vocab_size, block_size=spec.block_size,
                         n_layer=spec.n_layer, n_head=spec.n_head, n_embd=spec.n_embd,
                         dropout=spec.dropout)

    def flops_per_token(self, spec: Gpt2Spec) -> float:
        """PaLM's 6N + 12·L·H·Q·T training FLOPs per token (tied head counted once in N, no position embedding)."""
        return train_flops_per_token(self.model_config(spec))
