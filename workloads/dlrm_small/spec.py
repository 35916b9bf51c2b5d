"""dlrm-small: a DLRM-style recommender on click data from a pinned teacher model.

The student follows the DLRM paper's architecture (Naumov et al., 2019; :mod:`workloads.dlrm_small.model`)
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

What the closed division pins for the tables is Adagrad's update, not how the gradient is
stored: under DDP on NCCL, which has no sparse all-reduce, the tables' gradients are dense
(``dlrm_job.sparse_gradients``). Adagrad moves an untouched row by zero either way, so the
trained model is the same (to float rounding); the dense step moves more bytes, which the
throughput of such a run includes.
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.base import Spec, Target, Workload
from workloads.dlrm_small.config import DlrmConfig, train_flops_per_sample


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


class DlrmSmall(Workload[DlrmSpec]):
    id = "dlrm-small"
    version = 1
    task = "click-through prediction, DLRM-style, synthetic teacher data (AUC)"
    job = "workloads.dlrm_small.job:build_job"
    evaluator = "workloads.dlrm_small.evaluator:DlrmEvaluator"
    seed_spread = 0.099
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

    def eval_samples(self, spec: DlrmSpec) -> int:
        """``eval_samples`` held-out samples of the teacher, each once."""
        return spec.eval_samples

    def flops_per_step(self, spec: DlrmSpec) -> float:
        """3 × forward per sample × batch; forward = Σ MLP layers 2·in·out + 2·F²·d (interaction).

        Embedding lookups and sparse updates move bytes, not FLOPs: this workload's MFU is low
        by design, and its figure of merit is samples/s and time to AUC.
        """
        return train_flops_per_sample(self.model_config(spec)) * spec.batch_size
