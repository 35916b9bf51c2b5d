"""A DLRM-style click model: embedding tables, bottom MLP, pairwise dot interaction, top MLP.

As in the DLRM paper (Naumov et al., 2019): dense features pass a bottom MLP to the embedding
width; each categorical feature picks one row of its table; the dot products of every pair of
these vectors, with the bottom MLP's output, feed a top MLP that gives the click logit. The
tables produce sparse gradients (``sparse=True``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


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


def mlp(widths: list[int], final_activation: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2 or final_activation:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def bottom_widths(cfg: DlrmConfig) -> list[int]:
    return [cfg.num_dense, *cfg.bottom_mlp, cfg.embed_dim]


def top_widths(cfg: DlrmConfig) -> list[int]:
    return [cfg.embed_dim + cfg.num_pairs, *cfg.top_mlp, 1]


class Dlrm(nn.Module):
    """``forward(dense (B, num_dense), sparse (B, tables))`` returns click logits (B,)."""

    def __init__(self, cfg: DlrmConfig):
        super().__init__()
        self.cfg = cfg
        self.tables = nn.ModuleList(nn.Embedding(rows, cfg.embed_dim, sparse=True)
                                    for rows in cfg.table_rows)
        for table in self.tables:
            bound = table.num_embeddings ** -0.5
            nn.init.uniform_(table.weight, -bound, bound)  # DLRM's reference init
        self.bottom = mlp(bottom_widths(cfg), final_activation=True)
        self.top = mlp(top_widths(cfg), final_activation=False)
        rows, cols = torch.tril_indices(cfg.num_vectors, cfg.num_vectors, offset=-1)
        self.register_buffer("pair_rows", rows, persistent=False)
        self.register_buffer("pair_cols", cols, persistent=False)

    def forward(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        x = self.bottom(dense)
        vectors = torch.stack([x] + [t(sparse[:, i]) for i, t in enumerate(self.tables)], dim=1)
        dots = torch.bmm(vectors, vectors.transpose(1, 2))[:, self.pair_rows, self.pair_cols]
        return self.top(torch.cat([x, dots], dim=1)).squeeze(1)

    def dense_parameters(self) -> list[nn.Parameter]:
        return [*self.bottom.parameters(), *self.top.parameters()]

    def sparse_parameters(self) -> list[nn.Parameter]:
        return [t.weight for t in self.tables]


def forward_flops(cfg: DlrmConfig) -> float:
    """Forward FLOPs per sample: the MLPs' matmuls (2·in·out each) and the interaction's
    batched Gram matrix (2·F²·d, F vectors of width d). Lookups, ReLU and bias adds: 0."""
    mlps = sum(2 * a * b for widths in (bottom_widths(cfg), top_widths(cfg))
               for a, b in zip(widths[:-1], widths[1:]))
    return mlps + 2 * cfg.num_vectors ** 2 * cfg.embed_dim


def train_flops_per_sample(cfg: DlrmConfig) -> float:
    """Training FLOPs per sample: 3 × forward."""
    return 3 * forward_flops(cfg)
