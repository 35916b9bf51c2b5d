"""The suite's pinned rules that are not part of any one workload: scales, seeds, the closed
division's precisions and the compile modes a run may record. Torch-free: the validator reads them."""
from __future__ import annotations

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
