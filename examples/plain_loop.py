"""A plain PyTorch training loop, nanoGPT-style, measured by goodbench: a small character-level
GPT on Tiny Shakespeare, held to lm-char's smoke target (validation loss ≤ 2.4 on goodbench's
pinned evaluation). One command on the CPU:

    python examples/plain_loop.py --out own-plain.json

then ``goodbench validate own-plain.json`` and ``goodbench site``. Everything below except the
``bench`` lines is ordinary training code. The same script is data parallel under torchrun, each
rank training 32 windows a step (a step's global batch: 32 × the ranks), its steps stamped on a
second clock by::

    goodbench run-own --nproc-per-node 2 examples/plain_loop.py --out own-plain-ddp.json
"""
from __future__ import annotations

import argparse
import math

import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F

import goodbench


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
    def __init__(self, vocab: int, context: int, dim: int = 128, layers: int = 2, heads: int = 4):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(context, dim)
        self.blocks = nn.Sequential(*(Block(dim, heads) for _ in range(layers)))
        self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        return self.head(self.ln(self.blocks(x)))


def train(run: goodbench.Run, batch: int, context: int, save_every: int = 50) -> None:
    """An ordinary training loop, data parallel under torchrun (the Benchmark has joined its
    process group); the lines with ``run`` are goodbench's."""
    data = run.data  # lm-char's pinned text, split and vocabulary
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    model = CharGPT(len(data.vocab), context).to(run.device)
    trained = nn.parallel.DistributedDataParallel(model) if world > 1 else model  # gradients averaged over ranks
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.99), weight_decay=0.1)
    gen = torch.Generator().manual_seed(run.seed)  # the same on every rank: each takes its rows of a draw
    max_steps = run.bench.max_steps

    def get_batch() -> tuple[torch.Tensor, torch.Tensor]:
        starts = torch.randint(len(data.train) - context - 1, (batch * world,), generator=gen)[rank::world]
        window = data.train[starts[:, None] + torch.arange(context + 1)].to(run.device)
        return window[:, :-1], window[:, 1:]

    def loss_of(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(trained(x).reshape(-1, len(data.vocab)), y.reshape(-1))

    x, y = get_batch()
    run.count_flops(lambda: loss_of(x, y).backward())  # one forward and backward, counted (summed over ranks)
    keeps_checkpoints = run.bench.checkpoint_dir is not None
    saved = run.restore() if keeps_checkpoints else None  # a killed run's newest checkpoint
    if saved is not None:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        gen.set_state(saved["data"])
    run.evaluate_pinned(model)  # the untrained model, before the first step (once per run; recorded)
    for step in range(run.steps_done + 1, max_steps + 1):
        with run.data_wait():
            x, y = get_batch()
        with run.step() as s:
            lr = 2e-3 * min(1.0, step / 20) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / max_steps)))
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss = loss_of(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            s.loss = loss
        if run.due_for_evaluation() and run.evaluate_pinned(model):
            break  # lm-char's smoke target reached
        if keeps_checkpoints and step % save_every == 0:
            run.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "data": gen.get_state()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="own-plain.json")
    parser.add_argument("--steps", type=int, default=300, help="the step budget (default 300)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seeds", type=int, default=1, help="runs, one per pinned seed (default 1)")
    parser.add_argument("--data-dir", default=None, help="a folder holding the pinned dataset files")
    parser.add_argument("--checkpoint-dir", default=None,
                        help="save a checkpoint there every 50 steps; run the same command again to go on")
    args = parser.parse_args()
    batch, context = 32, 64  # each rank's: the Benchmark declares them × the job's ranks
    bench = goodbench.Benchmark(
        "plain-loop-char-gpt", trains="a 2-layer character GPT (nn.MultiheadAttention) on Tiny Shakespeare",
        against="lm-char", scale="smoke", samples_per_rank=batch, tokens_per_rank=batch * context,
        max_steps=args.steps, eval_every=50, log_every=10, device=args.device, seeds=args.seeds,
        code=[__file__], out=args.out, data_dir=args.data_dir, checkpoint_dir=args.checkpoint_dir)
    with bench:
        for run in bench.runs():  # one run per seed (here one), its RNGs seeded
            train(run, batch, context)
    if bench.path is not None:  # the process that wrote the file (rank 0 under torchrun)
        print(f"results written to {bench.path}")
        for line in bench.problems:
            print(f"validator: {line}")


if __name__ == "__main__":
    raise SystemExit(goodbench.one_line_errors(main))  # a missing dataset or a refusal: one line, no traceback
