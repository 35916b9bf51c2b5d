"""goodbench as a library: measure your own training loop (docs/own-code.md).

``goodbench.Benchmark`` wraps a PyTorch loop with goodbench's meters — the step clock and
steady-state window, MFU against the peak table and a measured matmul ceiling, NVML energy over
the window, goodput and its badput, an MLPerf-format event log — and writes one standard results
file of the ``own`` division, which ``goodbench validate``, ``submit`` and ``site`` take like any
other. Each seed is a :class:`Run` the loop calls (``bench.runs()``). ``goodbench.count_flops``
counts one step's model FLOPs with torch's FLOP counter. ``goodbench.ModelRefused`` is what the
pinned evaluation raises for a model that reads its answer or meets its target untrained."""
from __future__ import annotations

from suite import __version__

try:
    import torch  # noqa: F401  # the library measures a PyTorch loop
except ModuleNotFoundError as _missing:
    from suite.record.dependencies import install_hint

    raise ModuleNotFoundError(f"goodbench's library measures a PyTorch loop and needs torch, not installed "
                              f"here: {install_hint('train')}", name=_missing.name) from None

from suite.api.benchmark import Benchmark, Run, StepMarks
from suite.api.evaluators import ModelRefused
from suite.api.flops import count_flops

__all__ = ["Benchmark", "ModelRefused", "Run", "StepMarks", "__version__", "count_flops"]
