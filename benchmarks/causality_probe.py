"""The causality probe of lm-char's pinned evaluation for own code (workloads/evaluation.py): what
it costs, and how far honest causal models come from its tolerance.

For each honest model — the plain-loop example's GPT (``nn.MultiheadAttention`` with a boolean
mask) and lm-char's reference GPT (``scaled_dot_product_attention``, causal), each at fp32 and
under bf16 autocast — the pinned evaluation runs ``--repeats`` times (fresh random cuts each), and
the table gives the largest log-probability difference any probe saw at an earlier position
against the tolerance, the probe's seconds and the whole evaluation's, side by side with the same
evaluation unprobed (the same batches and loss, no probe; the two alternate, so that a load on the
machine falls on both), and checks that both give the same loss. A model that reads the next
token (``one_hot(roll(ids, -1))``) is the control: its difference must be far above it.

    python benchmarks/causality_probe.py [--device cpu] [--repeats 5] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "examples")]

from suite.run.runner import locate_data, seed_everything  # noqa: E402
from workloads import registry  # noqa: E402
from workloads.evaluation import ModelRefused, evaluator  # noqa: E402
from workloads.pinned import CAUSAL_TOLERANCE  # noqa: E402


def _reference_gpt(device: torch.device, data_dir: str | None):
    """lm-char's reference model, a few steps trained (past its initialization's uniform logits)."""
    workload = registry.get("lm-char")
    seed_everything(1)
    job = workload.build(workload.spec("smoke"), device=device, seed=1, precision="fp32",
                         files=locate_data(workload, data_dir))
    for _ in range(5):
        job.train_step()
    model = job.model.eval()

    return model.logits


def _plain_gpt(vocab: int, device: torch.device):
    import plain_loop

    torch.manual_seed(0)
    return plain_loop.CharGPT(vocab, 64).to(device).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    device = torch.device(args.device)
    pinned = evaluator("lm-char", "smoke", device, args.data_dir)
    vocab = len(pinned.data.vocab)
    models = {"plain-loop GPT": _plain_gpt(vocab, device), "reference GPT": _reference_gpt(device, args.data_dir)}
    print(f"tolerance {CAUSAL_TOLERANCE:g} nats; device {device}; torch threads {torch.get_num_threads()}")
    print(f"{'model':<16} {'precision':<9} {'largest difference':>19} {'probe s':>8} {'evaluation s':>13} "
          f"{'unprobed s':>11} {'ratio':>6} {'same loss':>9}")
    for name, model in models.items():
        for precision in ("fp32", "bf16"):
            autocast = (torch.autocast(device.type, dtype=torch.bfloat16) if precision == "bf16"
                        else contextlib.nullcontext())
            worst, probe_s, eval_s, bare_s, same = 0.0, 0.0, 0.0, 0.0, True
            for _ in range(args.repeats):
                start = time.perf_counter()
                with autocast:
                    bare = pinned.unprobed_loss(model)
                bare_s += time.perf_counter() - start
                start = time.perf_counter()
                with autocast:
                    found = pinned(model)[pinned.metric]
                eval_s += time.perf_counter() - start
                same = same and found == bare
                worst = max(worst, pinned.last_probe.max_difference)
                probe_s += pinned.last_probe.seconds
            print(f"{name:<16} {precision:<9} {worst:>19.3g} {probe_s / args.repeats:>8.3f} "
                  f"{eval_s / args.repeats:>13.3f} {bare_s / args.repeats:>11.3f} {eval_s / bare_s:>6.2f} {same!s:>9}")

    def reads_next(ids: torch.Tensor) -> torch.Tensor:
        return F.one_hot(torch.roll(ids, -1, dims=1), vocab).float() * 10

    try:
        pinned(reads_next)
        print("control: NOT refused")
    except ModelRefused:
        print(f"control (reads the next token): refused, difference {pinned.last_probe.max_difference:.3g}")


if __name__ == "__main__":
    main()
