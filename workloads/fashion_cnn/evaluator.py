"""fashion-cnn's pinned evaluation for own code held to its target (:mod:`workloads.evaluation`):
top-1 accuracy and mean cross-entropy over the spec's pinned test images, normalized as the
reference normalizes them."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from suite.record.errors import GoodbenchError
from workloads import data as data_registry
from workloads import registry
from workloads.evaluation import Logits, Probe
from workloads.fashion_cnn.job import read_idx
from workloads.fashion_cnn.spec import TEST_IMAGES, TEST_LABELS, TRAIN_IMAGES, TRAIN_LABELS


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
