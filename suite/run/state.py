"""A run's settings outside the workload spec (:class:`RunOptions`), the harness's side of a run
(:class:`LoopState`, saved in every checkpoint) and the energy window's pauses (evaluations and
checkpoint saves are left out of the steady-state window).
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import torch

from suite.meters import energy as energy_meter
from suite.meters.clock import synchronize
from suite.mlperf.fields import Submission
from workloads.parallel import SINGLE, Parallel


@dataclass(frozen=True)
class RunOptions:
    """Settings of a run that are not part of the workload spec."""

    device: torch.device
    data_dir: str | None = None
    peak_tflops: float | None = None
    checkpoint_every: int | None = None  # steps between checkpoints; None: no checkpoints
    checkpoint_dir: str | None = None    # root holding one directory per run (and its event log)
    inject_failures: tuple[int, ...] = ()  # steps at which the supervisor kills the worker
    failure_rate_per_hour: float | None = None  # or: kill at exponential times, this rate
    failure_seed: int = 0
    matmul_ceiling: dict | None = None  # precision -> measured matmul FLOP/s (suite.meters.ceiling)
    parallel: Parallel = SINGLE  # this process's place in a torchrun run (suite.run.distributed)
    compile: str = "off"  # torch.compile mode of the trained module (workloads.base.COMPILE_MODES)
    submission: Submission | None = None  # MLPerf's submission keys of the log (suite.mlperf.fields)
    run_key: bytes | None = None  # raw public signing key: run ids minted for it (suite.trust.signing)
    session: str | None = None  # the suite run's id (settings.session), logged by every run of it
    accelerator: tuple[str, int] | None = None  # the system's accelerator name and count, as described

    @property
    def supervised(self) -> bool:
        """True when failures are injected into one process: the run goes through
        :mod:`suite.run.supervisor` (under torchrun a rank kills itself instead)."""
        return not self.parallel.distributed and (
            bool(self.inject_failures) or bool(self.failure_rate_per_hour))



@dataclass
class LoopState:
    """The harness's side of a run, saved in every checkpoint so a resumed run continues it.

    Times are Unix seconds, so they stay meaningful across worker processes.
    """

    init_start: float
    run_start: float | None = None
    step: int = 0
    step_times: list[float] = field(default_factory=list)
    curve: list[dict] = field(default_factory=list)
    last_loss: float = math.nan
    tta_s: float | None = None
    phases: dict = field(default_factory=lambda: {"data_load": 0.0, "init": 0.0, "eval": 0.0})
    energy: dict = field(default_factory=lambda: {
        **dict.fromkeys(("run_start", "window_start", "target", "end")), "window_pauses": 0.0,
        "window_pause_count": 0})  # pauses inside the window: each adds two readings' error to its energy
    resumed_at: list[int] = field(default_factory=list)  # the step each later worker resumed from
    load_watched: dict = field(default_factory=dict)  # rank 0's host_load.Watch.counted() at the checkpoint

    def since_start(self, t: float) -> float:
        """Seconds from ``run_start`` to ``t`` (Unix seconds); only once the run has started."""
        if self.run_start is None:
            raise RuntimeError("the run has not started")
        return t - self.run_start


@contextlib.contextmanager
def window_pause(state: LoopState, meter: energy_meter.EnergyMeter, device: torch.device):
    """Count the energy used inside the block (an evaluation, a checkpoint save) as a pause of
    the steady-state window, once the window is open: the window's energy leaves it out. The
    device is synchronized first, so the last step's queued work stays in the window."""
    if state.energy["window_start"] is None:
        yield
        return
    synchronize(device)
    began = meter.read()
    yield
    ended = meter.read()
    if began is not None and ended is not None:
        state.energy["window_pauses"] += ended - began
        state.energy["window_pause_count"] = state.energy.get("window_pause_count", 0) + 1

