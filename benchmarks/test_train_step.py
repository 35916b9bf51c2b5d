"""pytest-benchmark of one training step of every workload (device synchronized per round).

Run:  python -m pytest benchmarks/test_train_step.py --benchmark-only [--scale full] [--data-dir DIR]
      [--compile-mode off|default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs]
Save: add --benchmark-save=NAME (or --benchmark-autosave); compare with --benchmark-compare.
With a compile mode the job trains the compiled module; compilation (and CUDA-graph recording)
happens in the untimed warm-up rounds, which cover at least the spec's warm-up steps. The mode
is in each benchmark's ``extra_info["compile"]``.
"""
from __future__ import annotations

import pytest

from suite.figures import mfu as mfu_meter
from suite.meters.clock import synchronize
from suite.run.runner import locate_data, precision_for, seed_everything
from suite.run.system import device_name
from workloads import registry
from workloads.data import DataNotFound

STEPS_PER_ROUND = 5


@pytest.mark.parametrize("workload_id", list(registry.WORKLOADS))
def test_train_step(benchmark, workload_id, device, scale, compile_mode, data_dir):
    workload = registry.get(workload_id)
    spec = workload.spec(scale)
    try:
        files = locate_data(workload, data_dir)
    except DataNotFound as exc:
        pytest.skip(str(exc))
    precision = precision_for(workload, scale, device)
    seed_everything(1)
    job = workload.build(spec, device=device, seed=1, precision=precision, files=files,
                         compile=compile_mode)

    def steps():
        for _ in range(STEPS_PER_ROUND):
            job.train_step()
        synchronize(device)

    warmup = max(1, -(-spec.warmup_steps // STEPS_PER_ROUND))
    benchmark.pedantic(steps, rounds=10 if device.type == "cpu" else 30, warmup_rounds=warmup)
    if benchmark.stats is None:  # --benchmark-disable: the steps ran once, untimed
        return
    step_s = benchmark.stats.stats.median / STEPS_PER_ROUND
    name = device_name(device)
    peak, peak_source = mfu_meter.peak_flops(name, precision)
    tokens = workload.tokens_per_step(spec)
    benchmark.extra_info.update({
        "workload": workload_id, "scale": scale, "device": name, "precision": precision,
        "compile": compile_mode, "warmup_rounds": warmup,
        "steps_per_round": STEPS_PER_ROUND,
        "samples_per_s": workload.samples_per_step(spec) / step_s,
        "tokens_per_s": tokens / step_s if tokens else None,
        "mfu": mfu_meter.mfu(workload.flops_per_step(spec), 1 / step_s, peak),
        "mfu_status": peak_source,
    })

