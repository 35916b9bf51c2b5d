"""lm-char's start floor for own code (workloads/lm_char/evaluator.py ``START_FLOOR``): how far an
honest untrained model's pinned evaluation comes from the uniform loss ln(vocab), against the
held-out text's unigram entropy (what a model fitted to nothing but the characters' frequencies
would score, itself training on data).

For each honest start — lm-char's reference GPT (smoke), the plain-loop example's
GPT, a GPT whose head is initialized ten times wider than PyTorch's default (std 0.2), and a plain
embedding table at PyTorch's default init (N(0, 1) logits) — over ``--seeds`` seeds, the table gives
the untrained val_loss; the floor must sit below every one of them and above what a unigram fit reaches.

    python benchmarks/start_floor.py [--seeds 5] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch
from torch import nn

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "examples")]

from suite.run.runner import locate_data, seed_everything  # noqa: E402
from workloads import registry  # noqa: E402
from workloads.evaluation import evaluator  # noqa: E402
from workloads.lm_char.evaluator import START_FLOOR, unigram_entropy  # noqa: E402


def _reference(scale: str, seed: int, data_dir: str | None):
    workload = registry.get("lm-char")
    seed_everything(seed)
    job = workload.build(workload.spec(scale), device=torch.device("cpu"), seed=seed, precision="fp32",
                         files=locate_data(workload, data_dir))
    model = job.model.eval()

    return model.logits


def _plain(vocab: int, seed: int, head_std: float | None = None):
    import plain_loop

    torch.manual_seed(seed)
    model = plain_loop.CharGPT(vocab, 64).eval()
    if head_std is not None:
        nn.init.normal_(model.head.weight, std=head_std)
    return model


def _table(vocab: int, seed: int):
    torch.manual_seed(seed)
    return nn.Embedding(vocab, vocab).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    pinned = evaluator("lm-char", "smoke", torch.device("cpu"), args.data_dir)
    vocab = len(pinned.data.vocab)
    starts = {
        "reference GPT (smoke)": lambda s: _reference("smoke", s, args.data_dir),
        "plain-loop GPT": lambda s: _plain(vocab, s),
        "plain-loop GPT, head std 0.2": lambda s: _plain(vocab, s, 0.2),
        "embedding table (N(0,1) logits)": lambda s: _table(vocab, s),
    }
    print(f"uniform ln({vocab}) = {math.log(vocab):.4f}; held-out unigram entropy "
          f"{unigram_entropy(pinned.data.val, vocab):.4f}; floor {START_FLOOR}")
    print("| start | seeds | lowest val_loss | highest |\n|---|---|---|---|")
    lowest = math.inf
    for name, make in starts.items():
        losses = [pinned(make(seed))["val_loss"] for seed in range(1, args.seeds + 1)]
        lowest = min(lowest, *losses)
        print(f"| {name} | {args.seeds} | {min(losses):.4f} | {max(losses):.4f} |", flush=True)
    print(f"lowest honest start {lowest:.4f}: {'above' if lowest > START_FLOOR else 'NOT above'} the floor")


if __name__ == "__main__":
    main()
