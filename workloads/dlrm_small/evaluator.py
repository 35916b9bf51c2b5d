"""dlrm-small's pinned evaluation for own code held to its target (:mod:`workloads.evaluation`):
AUC and log loss over the teacher's pinned held-out clicks, with the teacher's own AUC."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from suite.record.errors import GoodbenchError
from workloads import registry
from workloads.dlrm_small.job import Teacher, auc
from workloads.evaluation import Probe


@dataclass
class ClickData:
    """dlrm-small's pinned data: its synthetic clicks come from a pinned teacher model, so the
    data is the teacher (:class:`workloads.dlrm_small.job.Teacher`): :meth:`batch` draws a
    training batch of the spec's size from the loop's generator, as the reference job does, and
    the held-out set is the teacher's pinned one (drawn from ``teacher_seed + 1``)."""

    teacher: Any
    num_dense: int
    table_rows: tuple[int, ...]
    batch_size: int
    eval_dense: torch.Tensor
    eval_sparse: torch.Tensor
    eval_label: Any  # numpy array of 0/1 clicks
    eval_batch_size: int
    teacher_auc: float

    def batch(self, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Fresh training samples (dense features, row indices per table, click labels) on the
        data's device; ``gen`` a generator on that device, seeded by the loop."""
        dense, sparse, label, _ = self.teacher.sample(self.batch_size, gen)
        return dense, sparse, label


class DlrmEvaluator:
    """dlrm-small's evaluation at one scale: AUC and log loss over the teacher's pinned held-out
    clicks from ``model(dense, sparse) → click logits``, with the teacher's own AUC (the ceiling)
    (:meth:`workloads.dlrm_small.job.DlrmJob.evaluate`)."""

    metric = "auc"
    last_probe: Probe | None = None  # no probe: the model is given the features alone, never the clicks

    def __init__(self, scale: str, device: torch.device, data_dir: str | None = None):
        spec = registry.get("dlrm-small").spec(scale)
        teacher = Teacher(spec)
        dense, sparse, label, prob = teacher.sample(spec.eval_samples,
                                                    torch.Generator(device="cpu").manual_seed(spec.teacher_seed + 1))
        self.device = device
        self.data = ClickData(teacher=teacher.to(device), num_dense=spec.num_dense, table_rows=spec.table_rows,
                              batch_size=spec.batch_size, eval_dense=dense.to(device), eval_sparse=sparse.to(device),
                              eval_label=label.numpy(), eval_batch_size=spec.eval_batch_size,
                              teacher_auc=auc(prob.numpy(), label.numpy()))

    @torch.no_grad()
    def __call__(self, logits_of: Callable[..., torch.Tensor]) -> dict[str, float]:
        """``{"auc": …, "log_loss": …, "teacher_auc": …}`` of the model whose ``logits_of(dense, sparse)``
        gives one click logit per sample."""
        d = self.data
        chunks = []
        for start in range(0, len(d.eval_dense), d.eval_batch_size):
            dense, sparse = d.eval_dense[start:start + d.eval_batch_size], d.eval_sparse[start:start + d.eval_batch_size]
            logits = logits_of(dense, sparse)
            if logits.shape != (len(dense),):
                raise GoodbenchError(f"the model's logits have shape {tuple(logits.shape)}; dlrm-small's evaluation "
                                     f"needs one logit per sample: ({len(dense)},)")
            chunks.append(logits.to(torch.float32, copy=True))
        logits = torch.cat(chunks)
        log_loss = F.binary_cross_entropy_with_logits(logits, torch.from_numpy(d.eval_label).to(self.device))
        return {self.metric: auc(logits.cpu().numpy(), d.eval_label), "log_loss": float(log_loss),
                "teacher_auc": d.teacher_auc}
