"""A DLRM-style click model: embedding tables, bottom MLP, pairwise dot interaction, top MLP.

As in the DLRM paper (Naumov et al., 2019): dense features pass a bottom MLP to the embedding
width; each categorical feature picks one row of its table; the dot products of every pair of
these vectors, with the bottom MLP's output, feed a top MLP that gives the click logit. The
tables produce sparse gradients (``sparse=True``), or dense ones with ``sparse_gradients=False``
(NCCL has no sparse all-reduce).
"""
from __future__ import annotations

import torch
from torch import nn

from workloads.dlrm_small.config import DlrmConfig, bottom_widths, top_widths


def mlp(widths: list[int], final_activation: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2 or final_activation:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Dlrm(nn.Module):
    """``forward(dense (B, num_dense), sparse (B, tables))`` returns click logits (B,)."""

    pair_rows: torch.Tensor  # buffers (register_buffer), declared for type checkers
    pair_cols: torch.Tensor

    def __init__(self, cfg: DlrmConfig, sparse_gradients: bool = True):
        super().__init__()
        self.cfg = cfg
        tables = [nn.Embedding(rows, cfg.embed_dim, sparse=sparse_gradients) for rows in cfg.table_rows]
        for table in tables:
            bound = table.num_embeddings ** -0.5
            nn.init.uniform_(table.weight, -bound, bound)  # DLRM's reference init
        self.tables = nn.ModuleList(tables)
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
        return list(self.tables.parameters())  # each table's weight, its only parameter


