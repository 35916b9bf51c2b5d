"""The training run every language-model workload shares: random windows of a token stream
held on the device, AdamW with warm-up and cosine decay, gradient clipping, autocast."""
from __future__ import annotations

import torch
from torch import nn

from workloads.lm.gpt import adamw
from workloads.lm.spec import LanguageModelSpec, lr_at
from workloads.parallel import SINGLE, Parallel, accumulate, split, take, unwrap, wrap
from workloads.training import autocast, begin_step, compile_model, set_precision


def windows(data: torch.Tensor, batch_size: int, length: int, gen: torch.Generator,
            device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of random ``length``-token windows of ``data`` and their next-token targets."""
    starts = torch.randint(len(data) - length - 1, (batch_size,), generator=gen)
    if device.type == "cuda":  # a pinned, asynchronous copy: the host does not wait for the GPU
        starts = starts.pin_memory().to(device, non_blocking=True)
    offsets = starts.to(device)[:, None] + torch.arange(length + 1, device=device)
    window = data[offsets]
    return window[:, :-1], window[:, 1:]


class LanguageModelJob:
    """One seeded language-model run; ``model(x, y)`` returns the mean cross-entropy.

    The run seed picks which windows each batch reads (the model was initialised by the
    caller under the same seed); evaluation reads the same pinned held-out windows every time.
    Under ``parallel`` each rank trains its rows of the same global batch (workloads.parallel).
    With ``compile`` set, the wrapped model is compiled (workloads.training.compile_model) and
    evaluation runs the same compiled module: its first evaluation compiles an inference graph,
    and that time is in the run's eval phase.
    """

    def __init__(self, spec: LanguageModelSpec, model: nn.Module, train_data: torch.Tensor,
                 val_data: torch.Tensor, *, device: torch.device, seed: int, precision: str,
                 parallel: Parallel = SINGLE, compile: str = "off"):
        self.spec, self.device, self.precision = spec, device, precision
        self.precision_flags = set_precision(device, precision)  # TF32 flags, before any graph
        self.train_data, self.val_data = train_data, val_data
        self.parallel, self.compile = parallel, compile
        self.micro = parallel.micro_batches(spec.batch_size)
        self.model = compile_model(wrap(model.to(device), parallel, device), compile)
        self.optimizer = adamw(self.model, spec.lr, (spec.beta1, spec.beta2), spec.weight_decay,
                               device)
        self.batch_gen = torch.Generator(device="cpu").manual_seed(seed)
        self.step = 0

    def next_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """This rank's rows (all of them in one process) of the next global batch (inputs, targets)."""
        return take(windows(self.train_data, self.spec.batch_size, self.spec.block_size,
                            self.batch_gen, self.device), self.parallel)

    def train_step(self, batch: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        batch = batch if batch is not None else self.next_batch()
        begin_step(self.model, self.optimizer, lr_at(self.step, self.spec), self.compile)

        def loss_of(x, y):
            with autocast(self.device, self.precision):
                return self.model(x, y)

        loss = accumulate(self.model, split(batch, self.micro), loss_of)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.spec.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1
        return loss

    @property
    def _sharded(self) -> bool:
        return self.parallel.distributed and self.parallel.mode == "fsdp"

    @property
    def rank0_state_keys(self) -> tuple[str, ...]:
        """Keys of :meth:`state_dict` that only rank 0 reads from a checkpoint: under FSDP the
        full model and optimizer states, which :meth:`load_state_dict` spreads to the ranks."""
        return ("model", "optimizer") if self._sharded else ()

    def state_dict(self) -> dict:
        """Model, optimizer, batch-generator state (the data position) and step counter.

        Under FSDP every rank must call it: the full (unsharded) model and optimizer states
        are gathered to rank 0, on the CPU, and the other ranks get empty ones.
        """
        if self._sharded:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict

            model, optim = get_state_dict(self.model, self.optimizer, options=StateDictOptions(
                full_state_dict=True, cpu_offload=True))
        else:
            model, optim = unwrap(self.model).state_dict(), self.optimizer.state_dict()
        return {"model": model, "optimizer": optim, "layout": "fsdp" if self._sharded else "plain",
                "batch_gen": self.batch_gen.get_state(), "step": self.step}

    def load_state_dict(self, state: dict) -> None:
        """Load a :meth:`state_dict` of the same layout. Under FSDP every rank calls it: rank 0
        holds the full states, the others empty ones, and each rank keeps its shards."""
        layout = "fsdp" if self._sharded else "plain"
        if state.get("layout", "plain") != layout:
            raise ValueError(f"a checkpoint of a {state.get('layout')} run cannot resume a "
                             f"{layout} run: resume with the same --parallel mode")
        if self._sharded:  # two calls: set_state_dict takes an empty model state for "optimizer only"
            from torch.distributed.checkpoint.state_dict import (
                StateDictOptions,
                set_model_state_dict,
                set_optimizer_state_dict,
            )

            options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
            set_model_state_dict(self.model, state["model"], options=options)
            set_optimizer_state_dict(self.model, self.optimizer, state["optimizer"], options=options)
        else:
            unwrap(self.model).load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
        self.batch_gen.set_state(state["batch_gen"])
        self.step = state["step"]

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """Mean loss over ``eval_batches`` pinned held-out windows (the same every eval)."""
        self.model.eval()
        gen = torch.Generator(device="cpu").manual_seed(0)
        losses = torch.zeros(self.spec.eval_batches, device=self.device)
        for i in range(self.spec.eval_batches):
            x, y = windows(self.val_data, self.spec.batch_size, self.spec.block_size, gen,
                           self.device)
            with autocast(self.device, self.precision):
                losses[i] = self.model(x, y)
        return {"val_loss": float(losses.mean())}
