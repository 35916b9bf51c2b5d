"""A short measured matmul ceiling: the FLOP/s a large dense matrix product reaches on this
device at the run's precision — the practical bound MFU is also reported against."""
from __future__ import annotations

import time

import torch

from suite.meters.clock import synchronize

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}


def matmul_ceiling(device: torch.device, precision: str, *, n: int | None = None,
                   min_seconds: float = 0.5, warmup: int = 3) -> dict:
    """Time ``n×n @ n×n`` products on random data for at least ``min_seconds``.

    Returns the achieved FLOP/s (2·n³ per product) with how it was measured. On the CPU a
    smaller ``n`` keeps it short; TF32 is enabled only for the "tf32" precision.
    """
    n = n or (8192 if device.type == "cuda" else 1024)
    dtype = DTYPES.get(precision, torch.float32)
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
    b = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        for _ in range(warmup):
            torch.mm(a, b)
        synchronize(device)
        iterations, start = 0, time.perf_counter()
        while True:
            for _ in range(4):
                torch.mm(a, b)
            iterations += 4
            synchronize(device)
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
    return {"flops": 2 * n**3 * iterations / elapsed, "n": n, "precision": precision,
            "iterations": iterations, "seconds": elapsed,
            "method": f"torch.mm {n}x{n} {precision}, random data, {warmup} warm-up products"}
