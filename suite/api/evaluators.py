"""goodbench's pinned evaluation for own implementations held to a workload's quality target
(docs/own-code.md): the workload's pinned data, split and held-out batches, and its metric
computed by goodbench's code from the model's outputs, so that "val_loss ≤ 1.55" means the same
for every implementation. It runs in the submitter's process: the file cannot prove it ran
(self-reported, like every figure of an own implementation's quality).

lm-char, fashion-cnn and dlrm-small have a pinned evaluator for own code (:data:`EVALUATORS`);
gpt2-124m and llama-1b have none yet.

The model never sees the answer it is graded on. lm-char's windows hold their own targets (the
inputs shifted by one), so its evaluation probes the model's causality every time
(:func:`causality_probe`): a model whose logits at a position change when only later tokens
change reads the future, and the evaluation is refused (:class:`ModelRefused`). fashion-cnn's
and dlrm-small's models are given the images, or the dense and sparse features, and never the
labels (tests/test_own_evaluators.py pins what the model is called with)."""
from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from suite.record.errors import GoodbenchError
from workloads import data as data_registry
from workloads import registry
from workloads.pinned import CAUSAL_TOLERANCE

Logits = Callable[[torch.Tensor], torch.Tensor]  # token ids (batch, context) -> logits (batch, context, vocab)

class ModelRefused(GoodbenchError):
    """The pinned evaluation refuses the model: it reads what it is graded on (``reason``)."""


@dataclass(frozen=True)
class Probe:
    """What a causality probe found: the largest change of an earlier position's log-probabilities
    when later tokens changed (``max_difference``, nats), against ``tolerance``, over ``positions``
    positions of ``windows`` windows, in ``seconds``."""

    max_difference: float
    tolerance: float
    windows: int
    positions: int
    seconds: float

    @property
    def passed(self) -> bool:
        return self.max_difference <= self.tolerance



def spliced(x: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(``x`` with each window's tail from a cut on replaced by the next window's tail, the cuts):
    held-out text either side, so the probe's windows read as text; each cut drawn in the
    middle half of the window by ``gen``."""
    batch, length = x.shape
    cuts = torch.randint(max(1, length // 4), max(2, 3 * length // 4), (batch,), generator=gen).to(x.device)
    later = torch.arange(length, device=x.device)[None, :] >= cuts[:, None]
    return torch.where(later, x.roll(1, dims=0), x), cuts


def causality_probe(logits_of: Logits, x: torch.Tensor, logits: torch.Tensor,
                    tolerance: float = CAUSAL_TOLERANCE, gen: torch.Generator | None = None) -> Probe:
    """Call the model on ``x`` with each window's tail replaced (:func:`spliced`) and compare its
    log-probabilities before each cut with those of ``logits`` (the model's on ``x``): a causal
    model's are the same. The cuts are drawn afresh each time (``gen``: a given generator)."""
    start = time.perf_counter()
    gen = gen or torch.Generator(device="cpu").manual_seed(secrets.randbits(63))
    other, cuts = spliced(x, gen)
    probed = logits_of(other)
    if probed.shape != logits.shape:
        raise GoodbenchError(f"the model's logits have shape {tuple(probed.shape)} for the probe's windows, "
                             f"{tuple(logits.shape)} for the evaluation's")
    before = torch.arange(x.shape[1], device=x.device)[None, :] < cuts[:, None]
    now, then = F.log_softmax(probed.float(), dim=-1), F.log_softmax(logits.float(), dim=-1)
    moved = torch.where(now == then, 0.0, (now - then).abs()).amax(dim=-1)  # -inf at both: unmoved
    found = moved[before]
    worst = float(found.max()) if found.numel() else 0.0
    return Probe(worst if worst == worst else float("inf"), tolerance, int(x.shape[0]), int(before.sum()),
                 time.perf_counter() - start)


@dataclass
class CharacterData:
    """lm-char's pinned data as its reference trains on it: the text's characters as ids over
    its sorted character set (``vocab``), the first 90% to train on (``train``), the rest held out."""

    train: torch.Tensor
    val: torch.Tensor
    vocab: list[str]
    context: int  # the pinned context the evaluation reads (the spec's block_size)
    batch_size: int  # the pinned batch of each held-out evaluation batch
    eval_batches: int


class LmCharEvaluator:
    """lm-char's evaluation at one scale: the mean cross-entropy of the next character over the
    spec's ``eval_batches`` pinned held-out windows (the same windows every time, as the reference
    job reads them: :meth:`workloads.lm.job.LanguageModelJob.evaluate`)."""

    metric = "val_loss"

    def __init__(self, scale: str, device: torch.device, data_dir: str | None = None):
        from workloads.lm_char.job import encode_characters
        from workloads.lm_char.spec import TINY_SHAKESPEARE

        spec = registry.get("lm-char").spec(scale)
        try:
            path = data_registry.locate(TINY_SHAKESPEARE, data_dir)
        except data_registry.DataNotFound as exc:
            raise GoodbenchError(f"lm-char's data: {exc}") from None
        ids, vocab = encode_characters(path.read_text(encoding="utf-8"))
        split = int(spec.train_fraction * len(ids))
        self.device = device
        self.last_probe: Probe | None = None  # the causality probe of the latest evaluation
        self.data = CharacterData(train=ids[:split].to(device=device, dtype=torch.long),
                                  val=ids[split:].to(device=device, dtype=torch.long), vocab=vocab,
                                  context=spec.block_size, batch_size=spec.batch_size,
                                  eval_batches=spec.eval_batches)

    @torch.no_grad()
    def __call__(self, logits_of: Logits) -> dict[str, float]:
        """``{"val_loss": …}`` of the model whose ``logits_of(ids)`` gives next-character logits;
        :class:`ModelRefused` when the causality probe of its first batch finds it reading later
        tokens (the probe's figures: :attr:`last_probe`)."""
        from workloads.lm.job import windows

        d = self.data
        gen = torch.Generator(device="cpu").manual_seed(0)
        losses = []
        self.last_probe = None
        for index in range(d.eval_batches):
            x, y = windows(d.val, d.batch_size, d.context, gen, self.device)
            logits = logits_of(x)
            if logits.shape[:2] != x.shape or logits.shape[-1] != len(d.vocab):
                raise GoodbenchError(f"the model's logits have shape {tuple(logits.shape)}; lm-char's evaluation "
                                     f"needs (batch, context, vocab) = ({x.shape[0]}, {x.shape[1]}, {len(d.vocab)})")
            if index == 0:
                self.last_probe = probe = causality_probe(logits_of, x, logits)
                if not probe.passed:
                    raise ModelRefused(
                        f"the model reads later tokens: its log-probabilities at earlier positions moved by up to "
                        f"{probe.max_difference:.3g} nats when only later tokens changed (a causal model's move by at "
                        f"most {probe.tolerance:g}); lm-char's windows hold their own targets, so it is not graded")
            losses.append(F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1)))
        return {self.metric: float(torch.stack(losses).mean())}


@dataclass
class ImageData:
    """fashion-cnn's pinned data as its reference reads it: the spec's first training and test
    images (uint8, 28 × 28) and labels, and ``normalize``, the reference's input normalization
    (the training images' mean and standard deviation), which the evaluation applies."""

    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    mean: float
    std: float
    eval_batch_size: int

    def normalize(self, images: torch.Tensor) -> torch.Tensor:
        """uint8 images (N, 28, 28) → normalized float (N, 1, 28, 28), as the reference feeds them."""
        return (images[:, None].float() / 255 - self.mean) / self.std


class FashionEvaluator:
    """fashion-cnn's evaluation at one scale: top-1 accuracy and mean cross-entropy over its
    pinned test images, normalized as the reference normalizes them, from ``model(images) →
    logits`` (:meth:`workloads.fashion_cnn.job.FashionCnnJob.evaluate`)."""

    metric = "test_accuracy"
    last_probe: Probe | None = None  # no probe: the model is given the images alone, never the labels

    def __init__(self, scale: str, device: torch.device, data_dir: str | None = None):
        from workloads.fashion_cnn.job import read_idx
        from workloads.fashion_cnn.spec import TEST_IMAGES, TEST_LABELS, TRAIN_IMAGES, TRAIN_LABELS

        workload = registry.get("fashion-cnn")
        spec = workload.spec(scale)
        try:
            arrays = {f.name: read_idx(data_registry.locate(f, data_dir)) for f in workload.data_files}
        except data_registry.DataNotFound as exc:
            raise GoodbenchError(f"fashion-cnn's data: {exc}") from None

        def tensor(name: str, n: int, labels: bool = False) -> torch.Tensor:
            values = torch.from_numpy(arrays[name][:n].copy())
            return (values.long() if labels else values).to(device)

        train_x = tensor(TRAIN_IMAGES.name, spec.train_images)
        pixels = train_x.float() / 255
        self.device = device
        self.data = ImageData(train_x=train_x, train_y=tensor(TRAIN_LABELS.name, spec.train_images, True),
                              test_x=tensor(TEST_IMAGES.name, spec.test_images),
                              test_y=tensor(TEST_LABELS.name, spec.test_images, True),
                              mean=float(pixels.mean()), std=float(pixels.std()),
                              eval_batch_size=spec.eval_batch_size)

    @torch.no_grad()
    def __call__(self, logits_of: Logits) -> dict[str, float]:
        """``{"test_accuracy": …, "test_loss": …}`` of the model whose ``logits_of(images)`` gives class logits."""
        d = self.data
        correct, loss_sum = 0.0, 0.0
        for start in range(0, len(d.test_x), d.eval_batch_size):
            x = d.normalize(d.test_x[start:start + d.eval_batch_size])
            y = d.test_y[start:start + d.eval_batch_size]
            logits = logits_of(x).float()
            if logits.shape != (len(y), 10):
                raise GoodbenchError(f"the model's logits have shape {tuple(logits.shape)}; fashion-cnn's evaluation "
                                     f"needs (batch, 10) = ({len(y)}, 10)")
            correct += float((logits.argmax(dim=1) == y).sum())
            loss_sum += float(F.cross_entropy(logits, y, reduction="sum"))
        return {self.metric: correct / len(d.test_x), "test_loss": loss_sum / len(d.test_x)}


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
        from workloads.dlrm_small.job import Teacher, auc

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
        from workloads.dlrm_small.job import auc

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


EVALUATORS: dict[str, type[LmCharEvaluator] | type[FashionEvaluator] | type[DlrmEvaluator]] = {
    "lm-char": LmCharEvaluator, "fashion-cnn": FashionEvaluator, "dlrm-small": DlrmEvaluator}


def evaluator(workload_id: str, scale: str, device: torch.device,
              data_dir: str | None = None) -> LmCharEvaluator | FashionEvaluator | DlrmEvaluator:
    """The pinned evaluator of ``workload_id`` at ``scale``; :class:`GoodbenchError` for a workload
    without one."""
    if workload_id not in EVALUATORS:
        raise GoodbenchError(f"no pinned evaluator for own code held to {workload_id!r} yet: one of "
                             f"{', '.join(EVALUATORS)} (or a free job: against=None)")
    return EVALUATORS[workload_id](scale, device, data_dir)
