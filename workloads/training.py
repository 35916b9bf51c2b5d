"""Torch helpers every job shares: the math settings and autocast of a precision, torch.compile of
the trained module and the CUDA-graph step marker."""
from __future__ import annotations

from typing import Any, cast

import torch
from torch import nn

from workloads.pinned import COMPILE_MODES, precision_flags


def compile_model(model: nn.Module, mode: str) -> nn.Module:
    """``model`` itself for "off", else ``torch.compile(model, mode=mode)``.

    Call it on the module as the job trains it, i.e. after DDP/FSDP wrapping: Dynamo splits
    the graph at DDP's gradient-bucket boundaries only when it sees the DDP wrapper (the
    DDPOptimizer note in torch/_dynamo/backends/distributed.py), so compiling the inner model
    first would lose the overlap of all-reduce and backward; FSDP2 modules are traced as they
    are (torch/_dynamo/guards.py guards their training state). Compilation happens lazily on
    the first call, i.e. in the first warm-up step. :func:`workloads.parallel.unwrap` strips the
    wrapper, so state dicts keep the uncompiled model's keys.
    """
    if mode not in COMPILE_MODES:
        raise ValueError(f"unknown compile mode {mode!r}: one of {', '.join(COMPILE_MODES)}")
    if mode == "off":
        return model
    # torch.compile of a module returns an OptimizedModule (an nn.Module); its stubs say Callable
    return cast(nn.Module, torch.compile(model, mode=mode))


def begin_step(model: nn.Module, optimizer: torch.optim.Optimizer, lr: float, mode: str) -> None:
    """What every job does before a step's forward pass: training mode, this step's learning
    rate on every parameter group, and the CUDA-graph step marker of compile ``mode``."""
    model.train()
    for group in optimizer.param_groups:
        group["lr"] = lr
    step_begin(mode)


def step_begin(mode: str) -> None:
    """Tell CUDA graph trees a new training step begins (compile modes that record graphs)."""
    if mode == "off":
        return
    from torch._inductor import list_mode_options  # the options each mode sets

    if list_mode_options(mode).get("triton.cudagraphs"):
        torch.compiler.cudagraph_mark_step_begin()


def set_precision(device: torch.device, precision: str) -> dict[str, Any]:
    """Set torch's TF32 flags (process-wide) for a run of ``precision`` on ``device`` and return
    what the run records: the autocast dtype and the flags as torch reads them back after
    setting; the flags are None on the CPU, where they do not apply and are left alone.

    The legacy flags (``allow_tf32``) are used, as the matmul ceiling does: torch ≥ 2.9 refuses
    to read them once its newer ``fp32_precision`` settings were set in the same process, and
    torch 2.6 has only these. (What cuBLAS and cuDNN then do is unverified until run on a GPU.)"""
    flags = precision_flags(precision)
    if device.type != "cuda":
        return {**flags, "matmul_tf32": None, "cudnn_tf32": None}
    torch.backends.cuda.matmul.allow_tf32 = flags["matmul_tf32"]
    torch.backends.cudnn.allow_tf32 = flags["cudnn_tf32"]
    return {**flags, "matmul_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "cudnn_tf32": bool(torch.backends.cudnn.allow_tf32)}


def autocast(device: torch.device, precision: str):
    """The autocast context for a precision: bf16/fp16 autocast, or a no-op for fp32."""
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
    if precision in dtypes:
        return torch.autocast(device_type=device.type, dtype=dtypes[precision])
    return torch.autocast(device_type=device.type, enabled=False)
