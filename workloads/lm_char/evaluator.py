"""lm-char's pinned evaluation for own code held to its target (:mod:`workloads.evaluation`):
the mean next-character cross-entropy over the spec's pinned held-out windows, the model's
causality probed in every batch (:mod:`workloads.causality`)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from suite.record.errors import GoodbenchError
from workloads import data as data_registry
from workloads import registry
from workloads.causality import probed
from workloads.evaluation import Logits, ModelRefused, Probe
from workloads.lm.job import windows
from workloads.lm_char.job import encode_characters
from workloads.lm_char.spec import TINY_SHAKESPEARE
from workloads.pinned import START_FLOORS

START_FLOOR = START_FLOORS["lm-char"][1]  # an untrained model below it was trained first (own code)


def unigram_entropy(ids: torch.Tensor, vocab: int) -> float:
    """The entropy (nats) of the characters' frequencies in ``ids``: the loss of the best model that
    knows nothing but them."""
    share = torch.bincount(ids.flatten().cpu(), minlength=vocab).double()
    share = share[share > 0] / share.sum()
    return float(-(share * share.log()).sum())


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

    def batches(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The pinned held-out (input, target) windows, the same at every evaluation."""
        d = self.data
        gen = torch.Generator(device="cpu").manual_seed(0)
        return [windows(d.val, d.batch_size, d.context, gen, self.device) for _ in range(d.eval_batches)]

    @staticmethod
    def batch_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The mean next-character cross-entropy of one batch's logits against its targets ``y``."""
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))

    @torch.no_grad()
    def unprobed_loss(self, logits_of: Logits) -> float:
        """The evaluation's ``val_loss`` without its probe: the same batches and loss, the model
        called once a batch, in order. What the probe costs is measured against it
        (``benchmarks/causality_probe.py``); goodbench records only :meth:`__call__`'s."""
        losses = [self.batch_loss(logits_of(x.contiguous()), y) for x, y in self.batches()]
        return float(torch.stack(losses).mean())

    @torch.no_grad()
    def __call__(self, logits_of: Logits) -> dict[str, float]:
        """``{"val_loss": …}`` of the model whose ``logits_of(ids)`` gives next-character logits;
        :class:`ModelRefused` when the causality probe, given its calls among the evaluation's
        (:func:`workloads.causality.probed`), finds it reading later tokens (the probe's figures:
        :attr:`last_probe`)."""
        d = self.data
        pairs = self.batches()
        losses: list[torch.Tensor | None] = [None] * len(pairs)
        self.last_probe = None

        def checked(x: torch.Tensor, logits: torch.Tensor) -> None:
            if logits.shape[:2] != x.shape or logits.shape[-1] != len(d.vocab):
                raise GoodbenchError(f"the model's logits have shape {tuple(logits.shape)}; lm-char's evaluation "
                                     f"needs (batch, context, vocab) = ({x.shape[0]}, {x.shape[1]}, {len(d.vocab)})")

        def graded(index: int, logits: torch.Tensor) -> None:
            losses[index] = self.batch_loss(logits, pairs[index][1])

        self.last_probe = probe = probed(logits_of, [x for x, _ in pairs], d.val, graded, checked)
        if not probe.passed:
            raise ModelRefused(
                f"the model reads later tokens: its log-probabilities at earlier positions moved by up to "
                f"{probe.max_difference:.3g} nats when only later tokens changed (a causal model's move by at "
                f"most {probe.tolerance:g}); lm-char's windows hold their own targets, so it is not graded")
        return {self.metric: float(torch.stack([loss for loss in losses if loss is not None]).mean())}
