"""dlrm-small: a DLRM-style recommender on click data from a pinned teacher model.

The student follows the DLRM paper's architecture (Naumov et al., 2019; :mod:`workloads.nn.dlrm`)
with one row lookup per table. There is no public click log small and open enough to pin here,
so the data come from a fixed random *teacher* of the same family: each table row has a random
weight w and a random ``teacher_dim``-wide vector z, the dense features x a random weight v and
projection P (z₀ = Pᵀx), and the click logit is ``teacher_bias + teacher_linear · (v·x + Σ_t
w_t) / √(1 + tables) + teacher_scale · Σ_{i<j} ⟨z_i, z_j⟩ / √(pairs · teacher_dim)`` (both sums
of unit variance before scaling); labels are Bernoulli draws of its sigmoid. Row indices are skewed like real
categorical traffic: ``⌊rows · u^index_skew⌋`` for uniform u. Because labels are noisy, the best
possible AUC is the teacher's own (``teacher_auc``, measured on the eval set), and the target
sits below it. Embedding gradients are sparse (Adagrad); the MLPs use Adam (fused on CUDA).
Stresses memory-bound embedding lookups and sparse updates.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from scipy.stats import rankdata

from workloads.base import Job, Spec, Target, Workload, autocast, compile_model, step_begin
from workloads.nn.dlrm import Dlrm, DlrmConfig, train_flops_per_sample
from workloads.parallel import SINGLE, Parallel, accumulate, split, take, unwrap, wrap


@dataclass(frozen=True, kw_only=True)
class DlrmSpec(Spec):
    num_dense: int
    table_rows: tuple[int, ...]
    embed_dim: int
    bottom_mlp: tuple[int, ...]
    top_mlp: tuple[int, ...]
    lr_dense: float
    lr_sparse: float
    eval_samples: int
    eval_batch_size: int
    teacher_seed: int
    teacher_dim: int
    teacher_linear: float
    teacher_scale: float
    teacher_bias: float
    index_skew: float


class DlrmSmall(Workload):
    id = "dlrm-small"
    version = 1
    task = "click-through prediction, DLRM-style, synthetic teacher data (AUC)"
    variants = {
        "smoke": DlrmSpec(
            num_dense=13, table_rows=(2000, 1000, 1000, 500, 500, 200, 100, 50), embed_dim=16,
            bottom_mlp=(64,), top_mlp=(64, 32), lr_dense=2e-3, lr_sparse=0.05,
            batch_size=256, max_steps=400, eval_every=50, warmup_steps=10, log_every=10,
            eval_samples=1 << 15, eval_batch_size=1 << 14,
            teacher_seed=7, teacher_dim=8, teacher_linear=1.5, teacher_scale=1.0, teacher_bias=-1.0, index_skew=3.0,
            precision="fp32", target=Target("auc", "max", 0.72),
        ),
        "full": DlrmSpec(
            num_dense=13,
            table_rows=(2_000_000, 1_000_000, 1_000_000, 500_000, 500_000, 200_000, 50_000, 10_000),
            embed_dim=64, bottom_mlp=(256, 128), top_mlp=(512, 256), lr_dense=1e-3, lr_sparse=0.05,
            batch_size=8192, max_steps=10_000, eval_every=500, warmup_steps=20, log_every=100,
            eval_samples=1 << 20, eval_batch_size=1 << 16,
            teacher_seed=7, teacher_dim=8, teacher_linear=1.5, teacher_scale=1.0, teacher_bias=-1.0, index_skew=3.0,
            precision="bf16", target=Target("auc", "max", 0.76),
        ),
    }

    @staticmethod
    def model_config(spec: DlrmSpec) -> DlrmConfig:
        return DlrmConfig(num_dense=spec.num_dense, table_rows=spec.table_rows,
                          embed_dim=spec.embed_dim, bottom_mlp=spec.bottom_mlp,
                          top_mlp=spec.top_mlp)

    def flops_per_step(self, spec: DlrmSpec) -> float:
        """3 × forward per sample × batch; forward = Σ MLP layers 2·in·out + 2·F²·d (interaction).

        Embedding lookups and sparse updates move bytes, not FLOPs: this workload's MFU is low
        by design, and its figure of merit is samples/s and time to AUC.
        """
        return train_flops_per_sample(self.model_config(spec)) * spec.batch_size

    def build(self, spec: DlrmSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> Job:
        return DlrmJob(spec, device=device, seed=seed, precision=precision, parallel=parallel,
                       compile=compile)


class Teacher:
    """The pinned click model that labels the synthetic data (drawn on the CPU, then moved)."""

    def __init__(self, spec: DlrmSpec):
        self.spec = spec
        gen = torch.Generator(device="cpu").manual_seed(spec.teacher_seed)
        k = spec.teacher_dim
        self.projection = torch.randn(spec.num_dense, k, generator=gen) / spec.num_dense ** 0.5
        self.tables = [torch.randn(rows, k, generator=gen) for rows in spec.table_rows]
        self.dense_weight = torch.randn(spec.num_dense, generator=gen) / spec.num_dense ** 0.5
        self.row_weights = [torch.randn(rows, generator=gen) for rows in spec.table_rows]
        self.rows = torch.tensor(spec.table_rows)
        n = 1 + len(spec.table_rows)
        self.pair_rows, self.pair_cols = torch.tril_indices(n, n, offset=-1)
        self.norm = (len(self.pair_rows) * k) ** 0.5

    def to(self, device: torch.device) -> "Teacher":
        for name in ("projection", "dense_weight", "rows", "pair_rows", "pair_cols"):
            setattr(self, name, getattr(self, name).to(device))
        self.tables = [t.to(device) for t in self.tables]
        self.row_weights = [w.to(device) for w in self.row_weights]
        return self

    def logits(self, dense: torch.Tensor, sparse: torch.Tensor) -> torch.Tensor:
        z = torch.stack([dense @ self.projection]
                        + [t[sparse[:, i]] for i, t in enumerate(self.tables)], dim=1)
        pairs = torch.bmm(z, z.transpose(1, 2))[:, self.pair_rows, self.pair_cols].sum(dim=1)
        linear = dense @ self.dense_weight + sum(w[sparse[:, i]]
                                                 for i, w in enumerate(self.row_weights))
        return (self.spec.teacher_bias
                + self.spec.teacher_linear * linear / (1 + len(self.tables)) ** 0.5
                + self.spec.teacher_scale * pairs / self.norm)

    def sample(self, n: int, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        """``n`` samples (dense, sparse, click label, click probability) on the teacher's device."""
        device = self.projection.device
        dense = torch.randn(n, self.spec.num_dense, generator=gen, device=device)
        u = torch.rand(n, len(self.tables), generator=gen, device=device)
        sparse = (self.rows * u ** self.spec.index_skew).long().clamp_max(self.rows - 1)
        prob = torch.sigmoid(self.logits(dense, sparse))
        label = (torch.rand(n, generator=gen, device=device) < prob).float()
        return dense, sparse, label, prob


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC AUC by the rank-sum (Mann-Whitney) formula; tied scores get their average rank."""
    labels = labels.astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


class DlrmJob:
    """One seeded dlrm-small run: fresh teacher samples every step, a pinned eval set.

    With ``compile`` set, training and evaluation run the same compiled module (the optimizers
    stay eager); evaluation's own graphs compile in the first evaluation, in the eval phase.
    """

    def __init__(self, spec: DlrmSpec, *, device: torch.device, seed: int, precision: str,
                 parallel: Parallel = SINGLE, compile: str = "off"):
        self.spec, self.device, self.precision, self.compile = spec, device, precision, compile
        self.parallel, self.micro = parallel, parallel.micro_batches(spec.batch_size)
        teacher = Teacher(spec)
        eval_gen = torch.Generator(device="cpu").manual_seed(spec.teacher_seed + 1)
        dense, sparse, label, prob = teacher.sample(spec.eval_samples, eval_gen)
        self.eval_set = (dense.to(device), sparse.to(device), label.numpy())
        self.teacher_auc = auc(prob.numpy(), label.numpy())
        self.teacher = teacher.to(device)
        torch.manual_seed(seed)
        raw = Dlrm(DlrmSmall.model_config(spec)).to(device)
        self.model = compile_model(wrap(raw, parallel, device), compile)
        self.dense_opt = torch.optim.Adam(raw.dense_parameters(), lr=spec.lr_dense,
                                          fused=device.type == "cuda")
        self.sparse_opt = torch.optim.Adagrad(raw.sparse_parameters(), lr=spec.lr_sparse)
        self.gen = torch.Generator(device=device).manual_seed(seed)

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """This rank's rows of fresh global-batch teacher samples: (dense, row indices, labels)."""
        dense, sparse, label, _ = self.teacher.sample(self.spec.batch_size, self.gen)
        return take((dense, sparse, label), self.parallel)

    def train_step(self, batch: tuple[torch.Tensor, ...] | None = None) -> torch.Tensor:
        self.model.train()
        batch = batch if batch is not None else self.next_batch()
        step_begin(self.compile)

        def loss_of(dense, sparse, label):
            with autocast(self.device, self.precision):
                logits = self.model(dense, sparse)
            return F.binary_cross_entropy_with_logits(logits.float(), label)

        loss = accumulate(self.model, split(batch, self.micro), loss_of)
        self.dense_opt.step()
        # the optimizer builds its sparse update from indices it just coalesced: skip re-checking
        with torch.sparse.check_sparse_tensor_invariants(enable=False):
            self.sparse_opt.step()
        self.dense_opt.zero_grad(set_to_none=True)
        self.sparse_opt.zero_grad(set_to_none=True)
        return loss

    def state_dict(self) -> dict:
        """Model, both optimizers and the sample generator (the data position)."""
        return {"model": unwrap(self.model).state_dict(), "dense_opt": self.dense_opt.state_dict(),
                "sparse_opt": self.sparse_opt.state_dict(), "gen": self.gen.get_state()}

    def load_state_dict(self, state: dict) -> None:
        unwrap(self.model).load_state_dict(state["model"])
        self.dense_opt.load_state_dict(state["dense_opt"])
        self.sparse_opt.load_state_dict(state["sparse_opt"])
        self.gen.set_state(state["gen"])

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """AUC and log loss on the pinned eval set, with the teacher's AUC (the ceiling)."""
        self.model.eval()
        dense, sparse, label = self.eval_set
        chunks = []
        for start in range(0, len(dense), self.spec.eval_batch_size):
            end = start + self.spec.eval_batch_size
            with autocast(self.device, self.precision):
                # a copy: under CUDA graphs the next call overwrites this call's output
                chunks.append(self.model(dense[start:end], sparse[start:end]).to(
                    torch.float32, copy=True))
        logits = torch.cat(chunks)
        log_loss = F.binary_cross_entropy_with_logits(
            logits, torch.from_numpy(label).to(self.device))
        return {"auc": auc(logits.cpu().numpy(), label), "log_loss": float(log_loss),
                "teacher_auc": self.teacher_auc}
