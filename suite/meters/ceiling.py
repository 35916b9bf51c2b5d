"""A short measured matmul ceiling: the FLOP/s a large dense matrix product reaches on this
device at the run's precision — the practical bound MFU is also reported against."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch

from suite.figures import ceiling_method
from suite.meters.clock import synchronize

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}


WARMUP = 3
"""The warm-up products :func:`matmul_ceiling` runs before its timed batches, unless told otherwise."""

CPU_FEW_THREADS = 8
"""The most CPU threads a 1024×1024 product measures the ceiling for; with more, 2048×2048."""


def matrix_size(device: torch.device) -> int:
    """The ceiling's matrix size n on ``device``: 8192 on a GPU; on the CPU 1024 for up to
    :data:`CPU_FEW_THREADS` threads (``torch.get_num_threads()``), 2048 beyond. Measured side by
    side on 2 server cores (docs/measurement.md): 1024 reached the rate 2048 does (fp32, 1 thread:
    100–105 GFLOP/s both; 2 threads: 193–205 against 199–202) in 0.55–0.63 s a measurement against
    1.15–1.46 s, and a run measures it twice; each of 8 threads still gets ~270 MFLOP a product.
    Beyond 8 threads it stays 2048, so that each thread's share of a product stays large (not
    measured here: no such machine)."""
    if device.type == "cuda":
        return 8192
    return 1024 if torch.get_num_threads() <= CPU_FEW_THREADS else 2048


def matmul_ceiling(device: torch.device, precision: str, *, n: int | None = None,
                   min_seconds: float = 0.5, trials: int = 5, warmup: int = WARMUP) -> dict:
    """Time ``n×n @ n×n`` products on random data in ``trials`` timed batches (n: :func:`matrix_size`).

    Each batch runs for at least ``min_seconds / trials``; the ceiling is the fastest batch
    (2·n³ FLOPs per product), since a ceiling is what the device can reach, and a slower batch
    measures interference. TF32 is enabled only for the "tf32" precision.
    """
    n = n or matrix_size(device)
    dtype = DTYPES.get(precision, torch.float32)
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
    b = torch.randn(n, n, device=device, dtype=dtype, generator=gen)
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    rates = []
    try:
        for _ in range(warmup):
            torch.mm(a, b)
        synchronize(device)
        for _ in range(trials):
            iterations, start = 0, time.perf_counter()
            while True:
                torch.mm(a, b)
                iterations += 1
                if iterations % 4 == 0 or device.type != "cuda":
                    synchronize(device)
                    elapsed = time.perf_counter() - start
                    if elapsed >= min_seconds / trials:
                        break
            rates.append(2 * n**3 * iterations / elapsed)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous_tf32
        del a, b
        if device.type == "cuda":  # give the blocks back: a supervised run's workers train
            torch.cuda.empty_cache()  # beside this process (unverified until run on a GPU)
    return {"flops": max(rates), "trials_flops": rates, "n": n, "precision": precision,
            "method": ceiling_method.first(n, precision, warmup, trials)}


def with_end(start: dict, end: dict) -> dict:
    """The ceiling measured before the runs (``start``) with the one measured again after them
    (``end``) kept as its ``at_end`` (``flops``, ``trials_flops``, ``method``). A ceiling is the
    fastest this machine was seen to multiply: on a shared machine, loaded while one was measured
    and quieter while the runs trained, one measurement alone came out below what the runs then
    reached (an own-code smoke run at 1.14× its bound). The runs' figures keep ``flops``, the
    ceiling they were measured against; the rules hold a run's FLOP rate to the faster of the two
    and the spread of that one's batches (rule ``above-ceiling``, suite/validate/physics_rules.py)."""
    return {**start, "at_end": {k: end[k] for k in ("flops", "trials_flops", "method") if k in end}}


MOST_SECONDS_AGAIN = 15.0
"""The longest :func:`measured_again` goes on measuring while the runs stood above the ceiling."""
MOST_MEASUREMENTS_AGAIN = ceiling_method.MOST_MEASUREMENTS_AGAIN
"""The most measurements :func:`measured_again` makes (each is 0.5 s of batches and its warm-up)."""


def stands_above(ceiling: dict, needed: float | None) -> bool:
    """Whether a run's model FLOP/s on one device (``needed``) stood above ``ceiling`` as measured:
    the file would be refused (rule ``above-ceiling``) unless the ceiling is measured again
    (:func:`measured_again`)."""
    flops = ceiling.get("flops")
    return needed is not None and isinstance(flops, (int, float)) and needed > flops


def again_when_stopped(ceiling: dict, needed: float | None, by_sigterm: bool) -> bool:
    """Whether stopped runs measure the ceiling again, once (not measured on): only after Ctrl-C,
    and only where a run stood above it (:func:`stands_above`). After SIGTERM (``by_sigterm``) the
    file comes first — ``docker stop`` kills 10 s later, torchrun 30 s — and a measurement takes seconds."""
    return not by_sigterm and stands_above(ceiling, needed)


def measured_again(start: dict, measure: Callable[[], dict], needed: float | None, *,
                   most_seconds: float = MOST_SECONDS_AGAIN, clock: Callable[[], float] = time.monotonic) -> dict:
    """``start`` with the ceiling measured again after the runs (:func:`with_end`). Where a run's
    model FLOP/s on one device (``needed``) stood above both measurements — the machine was loaded
    while they were made and quieter while the runs trained — it is measured again, for at most
    ``most_seconds`` and :data:`MOST_MEASUREMENTS_AGAIN` measurements, until one measurement
    reaches it; the fastest is kept, with its own batches,
    and its method says how many were made. A ceiling is the fastest this machine was seen to
    multiply, so the runs' own rates show a lower one measured interference, not the device."""
    best, made, began = measure(), 1, clock()
    while (needed is not None and max(start["flops"], best["flops"]) < needed and made < MOST_MEASUREMENTS_AGAIN
           and clock() - began < most_seconds):
        again = measure()
        made += 1
        best = again if again["flops"] > best["flops"] else best
    if made > 1:
        method = _method(best, start)
        best = {k: v for k, v in best.items() if k != "method"}  # no method text: one claims nothing
        if method is not None:
            best["method"] = ceiling_method.again(method, made)
    return with_end(start, best)


def _method(measured: dict, start: dict) -> str | None:
    """The method text of one measurement: its own, else written from its fields as
    :func:`matmul_ceiling` writes it (its matrix size and precision, those of ``start`` where it
    has none, its timed batches, :data:`WARMUP`); None where they do not say (no text is
    better than one the validator refuses, suite/validate/physics_rules.py)."""
    if isinstance(measured.get("method"), str):
        return measured["method"]
    n, precision = measured.get("n", start.get("n")), measured.get("precision", start.get("precision"))
    trials = measured.get("trials_flops")
    if isinstance(n, int) and isinstance(precision, str) and isinstance(trials, list) and trials:
        return ceiling_method.first(n, precision, WARMUP, len(trials))
    return None
