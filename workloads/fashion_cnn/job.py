"""The fashion-cnn training run: idx files read into device-resident uint8 images, pinned
augmentation on the device, SGD with Nesterov momentum, label smoothing and a linear schedule."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from workloads.fashion_cnn.model import ResNet
from workloads.fashion_cnn.spec import TEST_IMAGES, TEST_LABELS, TRAIN_IMAGES, TRAIN_LABELS, FashionCnn, FashionCnnSpec
from workloads.parallel import SINGLE, Parallel, accumulate, split, take, unwrap, wrap
from workloads.training import autocast, begin_step, compile_model, set_precision

# idx type codes (third byte of the magic number) and their big-endian numpy dtypes
_IDX_DTYPES: dict[int, np.dtype[Any]] = {0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"),
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
        self.precision_flags = set_precision(device, precision)  # TF32 flags, before any graph
        self.parallel, self.micro = parallel, parallel.micro_batches(spec.batch_size)
        self.memory_format = torch.channels_last if device.type == "cuda" else torch.contiguous_format
        self.train_x = torch.from_numpy(train[0].copy()).to(device)
        self.train_y = torch.from_numpy(train[1].astype(np.int64)).to(device)
        self.test_x = torch.from_numpy(test[0].copy()).to(device)
        self.test_y = torch.from_numpy(test[1].astype(np.int64)).to(device)
        pixels = self.train_x.float() / 255
        self.mean, self.std = pixels.mean(), pixels.std()
        torch.manual_seed(seed)
        model = ResNet(FashionCnn.model_config(spec))
        # Module.to takes memory_format (torch.nn.Module.to's docstring); its stubs do not say so
        model = model.to(device, memory_format=self.memory_format)  # type: ignore[call-overload]
        self.model = compile_model(wrap(model, parallel, device), compile)
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
        batch = batch if batch is not None else self.next_batch()
        begin_step(self.model, self.optimizer, lr_at(self.step, self.spec), self.compile)

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


def build_job(workload: FashionCnn, spec: FashionCnnSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> FashionCnnJob:
    """fashion-cnn's job (``FashionCnn.job``): the idx files read, the spec's first images kept."""
    arrays = {f.name: read_idx(files[f.name]) for f in workload.data_files}
    return FashionCnnJob(
        spec,
        train=(arrays[TRAIN_IMAGES.name][:spec.train_images], arrays[TRAIN_LABELS.name][:spec.train_images]),
        test=(arrays[TEST_IMAGES.name][:spec.test_images], arrays[TEST_LABELS.name][:spec.test_images]),
        device=device, seed=seed, precision=precision, parallel=parallel, compile=compile)
