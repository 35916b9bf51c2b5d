"""DLRM configuration, its layer widths and its analytic FLOP model; torch-free."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DlrmConfig:
    num_dense: int
    table_rows: tuple[int, ...]
    embed_dim: int
    bottom_mlp: tuple[int, ...]  # hidden widths; a last layer to embed_dim is added
    top_mlp: tuple[int, ...]  # hidden widths; a last layer to one logit is added

    @property
    def num_vectors(self) -> int:
        """Vectors in the interaction: the bottom MLP's output and one per table."""
        return 1 + len(self.table_rows)

    @property
    def num_pairs(self) -> int:
        return self.num_vectors * (self.num_vectors - 1) // 2


def bottom_widths(cfg: DlrmConfig) -> list[int]:
    return [cfg.num_dense, *cfg.bottom_mlp, cfg.embed_dim]


def top_widths(cfg: DlrmConfig) -> list[int]:
    return [cfg.embed_dim + cfg.num_pairs, *cfg.top_mlp, 1]


def forward_flops(cfg: DlrmConfig) -> float:
    """Forward FLOPs per sample: the MLPs' matmuls (2·in·out each) and the interaction's
    batched Gram matrix (2·F²·d, F vectors of width d). Lookups, ReLU and bias adds: 0."""
    mlps = sum(2 * a * b for widths in (bottom_widths(cfg), top_widths(cfg))
               for a, b in zip(widths[:-1], widths[1:]))
    return mlps + 2 * cfg.num_vectors ** 2 * cfg.embed_dim


def train_flops_per_sample(cfg: DlrmConfig) -> float:
    """Training FLOPs per sample: 3 × forward."""
    return 3 * forward_flops(cfg)
