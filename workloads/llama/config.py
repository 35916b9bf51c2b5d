"""Llama configuration and its analytic FLOP model (PaLM's 6N + 12·L·H·Q·T); torch-free."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    n_kv_head: int
    dim: int
    ffn_dim: int
    rope_theta: float = 500_000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_head


def param_count(cfg: LlamaConfig) -> int:
    """N of PaLM's 6N: every parameter, the tied embedding/head counted once."""
    d, kv = cfg.dim, cfg.n_kv_head * cfg.head_dim
    per_block = 2 * d + 2 * d * d + 2 * d * kv + 3 * d * cfg.ffn_dim
    return cfg.vocab_size * d + cfg.n_layer * per_block + d


def train_flops_per_token(cfg: LlamaConfig) -> float:
    """PaLM (appendix B): 6·N + 12·L·H·Q·T training FLOPs per token, H·Q = query heads × head dim.

    Grouped-query attention shrinks the K/V projections (inside N) but not QKᵀ and AV, whose
    cost follows the query heads.
    """
    return 6 * param_count(cfg) + 12 * cfg.n_layer * cfg.n_head * cfg.head_dim * cfg.block_size
