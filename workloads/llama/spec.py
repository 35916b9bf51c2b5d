"""llama-1b: a Llama-style decoder of about 1.24B parameters on pinned synthetic tokens.

The full variant has Llama 3.2 1B's shape (16 layers, 2048 dim, 32 query / 8 key-value heads,
SwiGLU width 8192, vocabulary 128,256, RoPE θ 500,000, tied embedding), context 2048, bf16
autocast, fused AdamW on CUDA. It differs from that reference in its data (pinned random Markov
tokens from :mod:`workloads.lm.synthetic`, no download, no tokenizer), its plain init and its short
schedule. A throughput workload (no quality target): it stresses large-model MFU and memory.
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.llama.config import LlamaConfig, train_flops_per_token
from workloads.lm.spec import LanguageModelWorkload, SyntheticLMSpec


@dataclass(frozen=True, kw_only=True)
class LlamaSpec(SyntheticLMSpec):
    n_layer: int
    n_head: int
    n_kv_head: int
    dim: int
    ffn_dim: int
    rope_theta: float
    norm_eps: float = 1e-5


class Llama1B(LanguageModelWorkload[LlamaSpec]):
    id = "llama-1b"
    version = 1
    supports_fsdp = True
    job = "workloads.llama.job:build_job"
    seed_spread = 0.035
    task = "Llama-style 1B decoder on pinned synthetic tokens (throughput)"
    variants = {
        "smoke": LlamaSpec(
            n_layer=2, n_head=4, n_kv_head=2, dim=128, ffn_dim=384, rope_theta=10_000.0,
            block_size=64, vocab_size=512,
            batch_size=16, lr=3e-3, min_lr=3e-4, lr_warmup_steps=10, lr_decay_steps=80,
            max_steps=80, eval_every=40, eval_batches=4, warmup_steps=10, log_every=10,
            data_seed=2025, branching=4, train_tokens=1 << 18, val_tokens=1 << 14,
            precision="fp32", target=None,
        ),
        "full": LlamaSpec(
            n_layer=16, n_head=32, n_kv_head=8, dim=2048, ffn_dim=8192, rope_theta=500_000.0,
            block_size=2048, vocab_size=128_256,
            batch_size=4, lr=3e-4, min_lr=3e-5, lr_warmup_steps=50, lr_decay_steps=300,
            max_steps=300, eval_every=150, eval_batches=10, warmup_steps=30, log_every=25,
            data_seed=2025, branching=4, train_tokens=1 << 25, val_tokens=1 << 20,
            precision="bf16", target=None,
        ),
    }

    @staticmethod
    def model_config(spec: LlamaSpec) -> LlamaConfig:
        return LlamaConfig(vocab_size=spec.vocab_size, block_size=spec.block_size,
                           n_layer=spec.n_layer, n_head=spec.n_head, n_kv_head=spec.n_kv_head,
                           dim=spec.dim, ffn_dim=spec.ffn_dim, rope_theta=spec.rope_theta,
                           norm_eps=spec.norm_eps)

    def flops_per_token(self, spec: LlamaSpec) -> float:
        """PaLM's 6N + 12·L·H·Q·T training FLOPs per token (N with the tied head once; H·Q the query width under GQA)."""
        return train_flops_per_token(self.model_config(spec))
