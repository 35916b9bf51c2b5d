"""The suite's pinned rules that are not part of any one workload: scales, seeds, the closed
division's precisions and the compile modes a run may record. Torch-free: the validator reads them."""
from __future__ import annotations

from typing import Any

SCALES = ("smoke", "full")

# Seeds are drawn from this pinned list, in order; a run of N seeds uses the first N.
SEEDS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)

# A full-scale time-to-accuracy result needs this many distinct seeds (MLPerf-style scoring).
FULL_TTA_SEEDS = 5

# Precisions the closed division accepts.
CLOSED_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")

# torch.compile settings a run may use: a harness setting, not part of any spec ("off": eager).
COMPILE_MODES = ("off", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# The modes that record CUDA graphs (torch._inductor.list_mode_options sets triton.cudagraphs):
# refused with gradient accumulation (--micro-batch) until that has run on a GPU, as a graph
# replayed for the next micro-batch may overwrite the outputs of the previous one.
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")

# The lowest value of its metric (a loss: lower is better) the pinned evaluation of own code's untrained
# model may give, per workload held to: below it the model was trained before its start evaluation, off
# the run's clock. lm-char: under the held-out text's unigram entropy (3.34 nats; a bias fitted to the
# characters' frequencies reaches 3.35, itself training on data), far under honest starts near the
# uniform ln(65) = 4.17 (benchmarks/start_floor.py).
START_FLOORS = {"lm-char": ("val_loss", 3.3)}

FP16_REFUSED = (
    "fp16 is not trained here: fp16 training needs loss scaling (torch.amp.GradScaler), which "
    "goodbench's jobs do not do, and without it small gradients underflow to zero, so the run "
    "would not be the fp16 training it names; bf16 has the same peak on every GPU of the table")


def precision_flags(precision: str) -> dict[str, Any]:
    """The math a run of ``precision`` trains with on CUDA (what ``workloads.training.set_precision``
    sets, and the validator checks a run's ``precision_flags`` against): the autocast dtype, and whether
    float32 matmuls (cuBLAS) and convolutions (cuDNN) may use TF32 tensor cores.

    ``fp32``: no TF32 anywhere — torch lets cuDNN convolutions use TF32 by default, which would
    run an fp32 run's convolutions on tensor cores while its MFU is taken against the FP32 peak.
    ``tf32``: both. ``bf16``: bf16 autocast; the float32 operations autocast leaves stay IEEE
    float32. ``fp16`` is refused (ValueError, :data:`FP16_REFUSED`)."""
    if precision == "fp16":
        raise ValueError(FP16_REFUSED)
    if precision not in ("fp32", "tf32", "bf16"):
        raise ValueError(f"unknown precision {precision!r}: one of fp32, tf32, bf16")
    tf32 = precision == "tf32"
    return {"autocast": "bfloat16" if precision == "bf16" else None,
            "matmul_tf32": tf32, "cudnn_tf32": tf32}


CAUSAL_TOLERANCE = 1e-3
"""The most a language model's log-probability at a position may move (nats) when only later
tokens change, in the causality probe of own code's pinned evaluation (workloads/evaluation.py):
float nondeterminism moves a causal model's earlier positions far less (measured:
docs/own-code.md), and a leak below it lowers the loss by at most as much per position."""
