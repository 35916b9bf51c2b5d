"""fashion-cnn: a small residual CNN on Fashion-MNIST, data on the device, pinned augmentation.

Follows the usual small-ResNet recipe for 28×28 images (three stages of conv + residual block,
SGD with Nesterov momentum, label smoothing, linear warm-up and decay), not one specific
published model. The 60,000 training and 10,000 test images of Zalando's original idx files sit
on the device as bytes; each batch is normalised and augmented there (random crop from a
zero-padded image and horizontal flip, drawn from a generator seeded by the run seed), so no
host input pipeline runs during training. channels_last on CUDA. Stresses small kernels and
the input path. Quality target: test accuracy.
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.base import Spec, Target, Workload
from workloads.data import DataFile
from workloads.fashion_cnn.config import ResNetConfig, train_flops_per_image

_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"


def _file(name: str, sha256: str, size: int) -> DataFile:
    return DataFile(name=f"fashion-mnist/{name}", url=_URL + name, sha256=sha256, size=size)


TRAIN_IMAGES = _file("train-images-idx3-ubyte.gz",
                     "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84", 26_421_880)
TRAIN_LABELS = _file("train-labels-idx1-ubyte.gz",
                     "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845", 29_515)
TEST_IMAGES = _file("t10k-images-idx3-ubyte.gz",
                    "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073", 4_422_102)
TEST_LABELS = _file("t10k-labels-idx1-ubyte.gz",
                    "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5", 5_148)

@dataclass(frozen=True, kw_only=True)
class FashionCnnSpec(Spec):
    widths: tuple[int, ...]
    train_images: int  # the first N training images (60,000: all)
    test_images: int  # the first N test images (10,000: all)
    eval_batch_size: int
    lr: float
    momentum: float = 0.9
    weight_decay: float = 5e-4
    label_smoothing: float = 0.1
    lr_warmup_steps: int
    pad: int = 2  # random-crop padding, pixels
    flip: bool = True


class FashionCnn(Workload[FashionCnnSpec]):
    id = "fashion-cnn"
    version = 1
    task = "image classification (Fashion-MNIST), small residual CNN"
    data_files = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)
    job = "workloads.fashion_cnn.job:build_job"
    evaluator = "workloads.fashion_cnn.evaluator:FashionEvaluator"
    seed_spread = 0.32  # its other-instruction-set drift, which was larger than between seeds
    variants = {
        "smoke": FashionCnnSpec(
            widths=(8, 16, 32), train_images=12_000, test_images=2_000, eval_batch_size=1000,
            batch_size=64, lr=0.1, lr_warmup_steps=15,
            max_steps=300, eval_every=50, warmup_steps=5, log_every=10,
            precision="fp32", target=Target("test_accuracy", "max", 0.75),
        ),
        "full": FashionCnnSpec(
            widths=(32, 64, 128), train_images=60_000, test_images=10_000, eval_batch_size=2000,
            batch_size=256, lr=0.1, lr_warmup_steps=200,
            max_steps=4_680, eval_every=234, warmup_steps=20, log_every=50,
            precision="bf16", target=Target("test_accuracy", "max", 0.93),
        ),
    }

    @staticmethod
    def model_config(spec: FashionCnnSpec) -> ResNetConfig:
        return ResNetConfig(widths=spec.widths)

    def eval_samples(self, spec: FashionCnnSpec) -> int:
        """The first ``test_images`` test images, each once."""
        return spec.test_images

    def flops_per_step(self, spec: FashionCnnSpec) -> float:
        """3 × forward per image × batch; forward = Σ convs 2·Cin·Cout·9·H·W + classifier."""
        return train_flops_per_image(self.model_config(spec)) * spec.batch_size
