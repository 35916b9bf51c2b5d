"""A PyTorch Lightning module measured by goodbench: the plain-loop example's character GPT as a
``LightningModule``, trained by ``lightning.Trainer`` with ``goodbench.lightning.Measure``, held to
lm-char's smoke target. One command on the CPU (from a clone: ``pip install -e ".[lightning]"``):

    python examples/lightning_char.py --out own-lightning.json

Under torchrun the Trainer is data parallel (DDP), each rank training 32 windows a step (a step's
global batch: 32 × the ranks): ``goodbench run-own --nproc-per-node 2 examples/lightning_char.py``.
"""
# ruff: noqa: E402  (the imports after ARGS: --help answers before torch and the framework load)
from __future__ import annotations

from framework_arguments import arguments

ARGS = arguments(__doc__, "own-lightning.json") if __name__ == "__main__" else None  # --help before torch loads

import math

import torch
import torch.distributed as dist

try:
    import lightning.pytorch as L
except ModuleNotFoundError:  # one line, as goodbench's own commands say it
    raise SystemExit('this example needs PyTorch Lightning: pip install -e ".[lightning]" (from a clone of '
                     "goodbench; pip install 'goodbench[lightning]' from an index)") from None
from plain_loop import CharGPT
from torch.nn import functional as F
from torch.utils.data import DataLoader, IterableDataset

import goodbench
import goodbench.lightning


class Windows(IterableDataset):
    """Endless random windows of the training text (one generator per run and rank: its seed,
    so that each rank of a DDP job trains windows of its own)."""

    def __init__(self, ids: torch.Tensor, context: int, seed: int):
        self.ids, self.context, self.seed = ids, context, seed

    def __iter__(self):
        gen = torch.Generator().manual_seed(self.seed)
        while True:
            start = int(torch.randint(len(self.ids) - self.context - 1, (1,), generator=gen))
            window = self.ids[start:start + self.context + 1]
            yield window[:-1], window[1:]


class CharModule(L.LightningModule):
    def __init__(self, vocab: int, context: int, max_steps: int):
        super().__init__()
        self.model, self.vocab, self.max_steps = CharGPT(vocab, context), vocab, max_steps

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x).reshape(-1, self.vocab), y.reshape(-1))
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=2e-3, betas=(0.9, 0.99), weight_decay=0.1)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 20) * (
            0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / self.max_steps))))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def main() -> None:
    args = ARGS if ARGS is not None else arguments(__doc__, "own-lightning.json")
    batch, context = 32, 64  # each rank's: the Benchmark declares them × the job's ranks
    bench = goodbench.Benchmark(
        "lightning-char-gpt", trains="a 2-layer character GPT as a LightningModule on Tiny Shakespeare",
        against="lm-char", scale="smoke", samples_per_rank=batch, tokens_per_rank=batch * context,
        max_steps=args.steps, eval_every=50, log_every=10, device=args.device, seeds=args.seeds,
        code=[__file__], out=args.out, data_dir=args.data_dir)
    with bench:  # under torchrun it joins the job's process group, which Lightning's DDP then uses
        rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
        for run in bench.runs():
            data = run.data
            module = CharModule(len(data.vocab), context, args.steps)
            loader = DataLoader(Windows(data.train, context, 1000 * rank + run.seed), batch_size=batch)
            trainer = L.Trainer(max_steps=args.steps, accelerator=args.device, devices=world,
                                strategy="ddp" if world > 1 else "auto", logger=False,
                                enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                                gradient_clip_val=1.0, callbacks=[goodbench.lightning.Measure(run)])
            trainer.fit(module, loader)
    if bench.path is not None:  # the process that wrote the file (rank 0 under torchrun)
        print(f"results written to {bench.path}")
        for line in bench.problems:
            print(f"validator: {line}")


if __name__ == "__main__":
    raise SystemExit(goodbench.one_line_errors(main))  # a missing dataset or a refusal: one line, no traceback
