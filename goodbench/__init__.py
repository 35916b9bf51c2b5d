"""goodbench as a library: measure your own training loop (docs/own-code.md).

``goodbench.Benchmark`` wraps a PyTorch loop with goodbench's meters — the step clock and
steady-state window, MFU against the peak table and a measured matmul ceiling, NVML energy over
the window, goodput and its badput, an MLPerf-format event log — and writes one standard results
file of the ``own`` division, which ``goodbench validate``, ``submit`` and ``site`` take like any
other. Each seed is a :class:`Run` the loop calls (``bench.runs()``). ``goodbench.count_flops``
counts one step's model FLOPs with torch's FLOP counter. ``goodbench.ModelRefused`` is what the
pinned evaluation raises for a model that reads its answer or meets its target untrained;
``goodbench.LossNotFinite`` what a run raises when its loss is NaN or infinite (checked as its
loss is logged, every ``log_every`` steps), after its record is kept as failed.
``goodbench.one_line_errors(main)`` ends a script as goodbench's commands end: a refusal is one
line, not a traceback.

``import goodbench`` costs nothing and needs no torch: each name is imported when first used,
and one that needs torch where none is installed says in one line which extra brings it."""
from __future__ import annotations

import importlib

from suite import __version__

_HOMES = {"Benchmark": "suite.api.benchmark", "Run": "suite.api.run", "StepMarks": "suite.api.run",
          "ModelRefused": "workloads.evaluation", "LossNotFinite": "suite.run.loop", "count_flops": "suite.api.flops",
          "one_line_errors": "suite.api.script"}

__all__ = ["Benchmark", "LossNotFinite", "ModelRefused", "Run", "StepMarks", "__version__", "count_flops",
           "one_line_errors"]


def __getattr__(name: str):
    """The library's ``name``, imported on first use (and kept); torch missing is one line naming
    the ``train`` extra."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'goodbench' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(home), name)
    except ModuleNotFoundError as missing:
        if missing.name is None or missing.name.split(".")[0] != "torch":
            raise
        from suite.record.dependencies import install_hint

        raise ModuleNotFoundError(f"goodbench's library measures a PyTorch loop and needs torch, not installed "
                                  f"here: {install_hint('train')}", name=missing.name) from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
