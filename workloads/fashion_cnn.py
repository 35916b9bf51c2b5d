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

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from workloads.base import Job, Spec, Target, Workload, autocast, compile_model, step_begin
from workloads.data import DataFile
from workloads.nn.resnet import ResNet, ResNetConfig, train_flops_per_image
from workloads.parallel import SINGLE, Parallel, accumulate, split, take, unwrap, wrap

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

# idx type codes (third byte of the magic number) and their big-endian numpy dtypes
_IDX_DTYPES = {0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
               0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path: Path) -> np.ndarray:
    """The array in an idx file (gzip-compressed when the name ends in ``.gz``)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{path}: not an idx file (magic {raw[:4].hex()})")
    dtype, ndim = _IDX_DTYPES[raw[2]], raw[3]
    shape = tuple(int(n) for n in np.frombuffer(raw, ">i4", count=ndim, offset=4))
    expected = 4 + 4 * ndim + int(np.prod(shape)) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(f"{path}: {len(raw)} bytes, idx header says {expected}")
    return np.frombuffer(raw, dtype, offset=4 + 4 * ndim).reshape(shape)


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


class FashionCnn(Workload):
    id = "fashion-cnn"
    version = 1
    task = "image classification (Fashion-MNIST), small residual CNN"
    data_files = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)
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

    def flops_per_step(self, spec: FashionCnnSpec) -> float:
        """3 × forward per image × batch; forward = Σ convs 2·Cin·Cout·9·H·W + classifier."""
        return train_flops_per_image(self.model_config(spec)) * spec.batch_size

    def build(self, spec: FashionCnnSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> Job:
        arrays = {f.name: read_idx(files[f.name]) for f in self.data_files}
        return FashionCnnJob(
            spec,
            train=(arrays[TRAIN_IMAGES.name][:spec.train_images],
                   arrays[TRAIN_LABELS.name][:spec.train_images]),
            test=(arrays[TEST_IMAGES.name][:spec.test_images],
                  arrays[TEST_LABELS.name][:spec.test_images]),
            device=device, seed=seed, precision=precision, parallel=parallel, compile=compile)


def lr_at(step: int, spec: FashionCnnSpec) -> float:
    """Linear warm-up to ``lr`` over ``lr_warmup_steps``, then linear decay to 0 at ``max_steps``."""
    if step < spec.lr_warmup_steps:
        return spec.lr * (step + 1) / spec.lr_warmup_steps
    return spec.lr * max(0.0, (spec.max_steps - step) / (spec.max_steps - spec.lr_warmup_steps))


def augment(images: torch.Tensor, pad: int, flip: bool, gen: torch.Generator) -> torch.Tensor:
    """Random crop of each zero-padded (B, 1, H, W) image back to H×W, then random h-flip."""
    b, _, h, w = images.shape
    device = images.device
    padded = F.pad(images, (pad, pad, pad, pad))
    dy = torch.randint(2 * pad + 1, (b, 1), generator=gen, device=device)
    dx = torch.randint(2 * pad + 1, (b, 1), generator=gen, device=device)
    rows = (dy + torch.arange(h, device=device))[:, :, None]
    cols = (dx + torch.arange(w, device=device))[:, None, :]
    out = padded[torch.arange(b, device=device)[:, None, None], 0, rows, cols][:, None]
    if flip:
        mirror = torch.rand(b, generator=gen, device=device) < 0.5
        out = torch.where(mirror[:, None, None, None], out.flip(-1), out)
    return out


class FashionCnnJob:
    """One seeded fashion-cnn run; images stay on the device as uint8 until a batch is drawn.

    With ``compile`` set, training and evaluation run the same compiled module; evaluation's
    own graphs (no grad, the eval batch size) compile in the first evaluation, in the eval phase.
    """

    def __init__(self, spec: FashionCnnSpec, *, train: tuple[np.ndarray, np.ndarray],
                 test: tuple[np.ndarray, np.ndarray], device: torch.device, seed: int,
                 precision: str, parallel: Parallel = SINGLE, compile: str = "off"):
        self.spec, self.device, self.precision, self.compile = spec, device, precision, compile
        self.parallel, self.micro = parallel, parallel.micro_batches(spec.batch_size)
        self.memory_format = torch.channels_last if device.type == "cuda" else torch.contiguous_format
        self.train_x = torch.from_numpy(train[0].copy()).to(device)
        self.train_y = torch.from_numpy(train[1].astype(np.int64)).to(device)
        self.test_x = torch.from_numpy(test[0].copy()).to(device)
        self.test_y = torch.from_numpy(test[1].astype(np.int64)).to(device)
        pixels = self.train_x.float() / 255
        self.mean, self.std = pixels.mean(), pixels.std()
        torch.manual_seed(seed)
        self.model = compile_model(wrap(ResNet(FashionCnn.model_config(spec)).to(
            device, memory_format=self.memory_format), parallel, device), compile)
        decay = [p for p in self.model.parameters() if p.dim() > 1]
        no_decay = [p for p in self.model.parameters() if p.dim() <= 1]
        self.optimizer = torch.optim.SGD(
            [{"params": decay, "weight_decay": spec.weight_decay},
             {"params": no_decay, "weight_decay": 0.0}],
            lr=spec.lr, momentum=spec.momentum, nesterov=True)
        self.gen = torch.Generator(device=device).manual_seed(seed)
        self.order = torch.empty(0, dtype=torch.long, device=device)
        self.pos = 0
        self.step = 0

    def _normalize(self, images: torch.Tensor) -> torch.Tensor:
        x = (images[:, None].float() / 255 - self.mean) / self.std
        return x.contiguous(memory_format=self.memory_format)

    def _next_indices(self) -> torch.Tensor:
        """The next batch of a fresh random permutation per epoch (the last partial batch dropped)."""
        b = self.spec.batch_size
        if self.pos + b > len(self.order):
            self.order = torch.randperm(len(self.train_x), generator=self.gen, device=self.device)
            self.pos = 0
        idx = self.order[self.pos:self.pos + b]
        self.pos += b
        return idx

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """This rank's rows of the next augmented global batch (images, labels), on the device."""
        idx = self._next_indices()
        x = augment(self._normalize(self.train_x[idx]), self.spec.pad, self.spec.flip, self.gen)
        return take((x.contiguous(memory_format=self.memory_format), self.train_y[idx]),
                    self.parallel)

    def train_step(self, batch: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        self.model.train()
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(self.step, self.spec)
        batch = batch if batch is not None else self.next_batch()
        step_begin(self.compile)

        def loss_of(x, y):
            with autocast(self.device, self.precision):
                logits = self.model(x)
            return F.cross_entropy(logits.float(), y, label_smoothing=self.spec.label_smoothing)

        loss = accumulate(self.model, split(batch, self.micro), loss_of)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return loss

    def state_dict(self) -> dict:
        """Model, optimizer, generator, epoch order and position, and step counter."""
        return {"model": unwrap(self.model).state_dict(), "optimizer": self.optimizer.state_dict(),
                "gen": self.gen.get_state(), "order": self.order, "pos": self.pos,
                "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        unwrap(self.model).load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.gen.set_state(state["gen"])
        self.order = state["order"].to(self.device)
        self.pos, self.step = state["pos"], state["step"]

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Top-1 accuracy and mean cross-entropy on the pinned test images (no augmentation)."""
        self.model.eval()
        correct = torch.zeros((), device=self.device)
        loss_sum = torch.zeros((), device=self.device)
        for start in range(0, len(self.test_x), self.spec.eval_batch_size):
            x = self._normalize(self.test_x[start:start + self.spec.eval_batch_size])
            y = self.test_y[start:start + self.spec.eval_batch_size]
            with autocast(self.device, self.precision):
                logits = self.model(x).float()
            correct += (logits.argmax(dim=1) == y).sum()
            loss_sum += F.cross_entropy(logits, y, reduction="sum")
        n = len(self.test_x)
        return {"test_accuracy": float(correct) / n, "test_loss": float(loss_sum) / n}
