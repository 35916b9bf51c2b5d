"""The dlrm-small training run: the pinned teacher that labels synthetic clicks, the student's
Adagrad (sparse tables) and Adam (MLPs) steps, and AUC on the pinned eval set."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from suite.figures.ranks import average_ranks
from workloads.dlrm_small.model import Dlrm
from workloads.dlrm_small.spec import DlrmSmall, DlrmSpec
from workloads.parallel import SINGLE, Parallel, accumulate, split, take, unwrap, wrap
from workloads.training import autocast, compile_model, set_precision, step_begin


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

    def to(self, device: torch.device) -> Teacher:
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
    """ROC AUC by the rank-sum (Mann-Whitney) formula; tied scores get their average rank. NaN
    where one class is missing or a score is NaN (a diverged model)."""
    labels = labels.astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0 or np.isnan(scores).any():
        return float("nan")
    ranks = average_ranks(scores)
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def sparse_gradients(parallel: Parallel) -> bool:
    """Whether the embedding tables get sparse gradients: yes, except under NCCL (DDP on CUDA),
    which has no sparse all-reduce — DDP would fail in the first backward. Dense gradients
    change no update: Adagrad adds a zero square and moves a row by zero where the batch did not
    touch it, so a dense step equals the sparse one (tests/test_gpu_readiness.py compares them);
    it costs the tables' size in gradient memory, all-reduce and optimizer traffic per step."""
    return not (parallel.distributed and parallel.backend == "nccl")


class DlrmJob:
    """One seeded dlrm-small run: fresh teacher samples every step, a pinned eval set.

    With ``compile`` set, training and evaluation run the same compiled module (the optimizers
    stay eager); evaluation's own graphs compile in the first evaluation, in the eval phase.
    """

    def __init__(self, spec: DlrmSpec, *, device: torch.device, seed: int, precision: str,
                 parallel: Parallel = SINGLE, compile: str = "off"):
        self.spec, self.device, self.precision, self.compile = spec, device, precision, compile
        self.precision_flags = set_precision(device, precision)  # TF32 flags, before any graph
        self.parallel, self.micro = parallel, parallel.micro_batches(spec.batch_size)
        teacher = Teacher(spec)
        eval_gen = torch.Generator(device="cpu").manual_seed(spec.teacher_seed + 1)
        dense, sparse, label, prob = teacher.sample(spec.eval_samples, eval_gen)
        self.eval_set = (dense.to(device), sparse.to(device), label.numpy())
        self.teacher_auc = auc(prob.numpy(), label.numpy())
        self.teacher = teacher.to(device)
        torch.manual_seed(seed)
        raw = Dlrm(DlrmSmall.model_config(spec), sparse_gradients=sparse_gradients(parallel)).to(device)
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


def build_job(workload: DlrmSmall, spec: DlrmSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> DlrmJob:
    """dlrm-small's job (``DlrmSmall.job``): synthetic data, no files."""
    return DlrmJob(spec, device=device, seed=seed, precision=precision, parallel=parallel, compile=compile)
