"""Trial 15 #9: a run of microsecond steps wrote quantiles computed before its step times were
rounded to 0.1 µs as stored, so its own validator could refuse it (``throughput-mismatch``).

Its event log is flushed every 10 steps: the loop-share bound of ``stream-step-times`` allows 2 ms a
block, and with a single block of 400 microsecond steps one preemption of a loaded machine (9 ms
seen in CI) was more than the whole run's steps took."""
from __future__ import annotations

import json

import goodbench
from suite.run import record


def test_the_figures_are_derived_from_the_step_times_as_stored(tmp_path, monkeypatch):
    seen: list[list[float]] = []
    metrics = record._metrics

    def spy(workload, scale, options, precision, step_times, *args, **kwargs):
        seen.append(list(step_times))
        return metrics(workload, scale, options, precision, step_times, *args, **kwargs)
    monkeypatch.setattr(record, "_metrics", spy)
    bench = goodbench.Benchmark("tiny-steps", trains="nothing: empty steps of a few microseconds",
                                samples_per_step=1, flops_per_step=10.0, max_steps=400, eval_every=400, log_every=10, device="cpu", seeds=2,
                                code=[__file__], out=tmp_path / "tiny.json", sign=False)
    with bench:
        for run in bench.runs():
            for k in range(400):
                with run.step() as step:
                    step.loss = 1.0 + run.seed + k / 1000
            run.evaluate(lambda seed=run.seed: {"val_mse": 0.1 + seed})
    runs = json.loads(bench.path.read_text())["runs"]
    assert seen == [r["step_times_s"] for r in runs] and all(t == round(t, 7) for t in seen[0])
    assert min(seen[0]) < 1e-4  # microsecond steps, where the rounding is felt
    assert bench.problems == []
