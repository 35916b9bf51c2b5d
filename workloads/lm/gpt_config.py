"""GPT configuration and its analytic FLOP model (PaLM's 6N + 12·L·H·Q·T); torch-free."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0
    bias: bool = False


def param_count(cfg: GPTConfig) -> int:
    """N for a config, computed analytically (matches ``non_embedding_params`` of the built model)."""
    d, L, v = cfg.n_embd, cfg.n_layer, cfg.vocab_size
    bias = cfg.bias
    per_block = (
        2 * d * (2 if bias else 1)                    # two LayerNorms
        + 3 * d * d + (3 * d if bias else 0)          # qkv
        + d * d + (d if bias else 0)                  # attention projection
        + 4 * d * d + (4 * d if bias else 0)          # fc
        + 4 * d * d + (d if bias else 0)              # mlp projection
    )
    return v * d + L * per_block + d * (2 if bias else 1)


def train_flops_per_token(cfg: GPTConfig) -> float:
    """PaLM (appendix B): 6·N + 12·L·H·Q·T training FLOPs per token, with H·Q = n_embd."""
    return 6 * param_count(cfg) + 12 * cfg.n_layer * cfg.n_embd * cfg.block_size
