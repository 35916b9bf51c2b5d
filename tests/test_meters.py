"""Throughput, MFU, TTA scoring, the matmul ceiling, system description and `check`."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from suite.figures import mfu, throughput, tta
from suite.meters import ceiling
from suite.run import check, system


def test_throughput_window_excludes_warmup_and_reports_percentiles():
    times = [5.0, 4.0] + [0.1] * 97 + [0.5]  # two slow compile steps, one slow outlier
    figures, status = throughput.summarize(times, warmup_steps=2, samples_per_step=8, tokens_per_step=64)
    assert status == "ok"
    assert figures["window"] == {"first_step": 3, "last_step": 100, "steps": 98,
                                 "seconds": pytest.approx(0.1 * 97 + 0.5), "segments": [[3, 100]]}
    assert figures["steps_per_s"] == pytest.approx(98 / (9.7 + 0.5))
    assert figures["samples_per_s"] == pytest.approx(8 * figures["steps_per_s"])
    assert figures["tokens_per_s"] == pytest.approx(64 * figures["steps_per_s"])
    stats = figures["step_time_s"]
    assert stats["p50"] == pytest.approx(0.1) and stats["max"] == 0.5
    assert stats["p99"] == pytest.approx(np.percentile([0.1] * 97 + [0.5], 99))


def test_every_worker_warms_up_again_after_a_resume():
    """Resumed from the checkpoints of steps 20 and then 10 (the step-20 worker's work was
    lost): the kept times of steps 11..13 come from the last worker, which was warming up."""
    mask = throughput.warmup_mask(30, 3, resumed_at=[20, 10])
    assert np.flatnonzero(mask).tolist() == [0, 1, 2, 10, 11, 12]  # steps 1-3 and 11-13
    times = [9.0] * 3 + [0.1] * 7 + [7.0] * 3 + [0.2] * 17
    figures, _ = throughput.summarize(times, warmup_steps=3, samples_per_step=1,
                                      tokens_per_step=None, resumed_at=[20, 10])
    assert figures["window"]["segments"] == [[4, 10], [14, 30]]
    assert figures["window"]["steps"] == 24 and figures["step_time_s"]["max"] == pytest.approx(0.2)
    assert throughput.summarize(times, warmup_steps=3, samples_per_step=1, tokens_per_step=None,
                                resumed_at=[28])[0]["window"]["segments"] == [[4, 28]]


def test_throughput_inside_warmup_is_not_measured():
    figures, status = throughput.summarize([1.0, 1.0], warmup_steps=5, samples_per_step=1, tokens_per_step=None)
    assert figures is None and status.startswith("not measured")


@pytest.mark.parametrize("name, expected", [
    ("NVIDIA H100 80GB HBM3", 989.4), ("NVIDIA H100 PCIe", 756), ("NVIDIA H100 NVL", 835),
    ("NVIDIA H200", 989.4), ("NVIDIA A100-SXM4-80GB", 312), ("NVIDIA A100-PCIE-40GB", 312),
    ("NVIDIA L40S", 362), ("NVIDIA L4", 121), ("NVIDIA A10", 125), ("NVIDIA GeForce RTX 4090", 165),
    ("NVIDIA B200", 2250),
])
def test_peak_table_matches_device_names(name, expected):
    peak, source = mfu.peak_flops(name, "bf16")
    assert peak == expected * 1e12 and "dense" in source


def test_peak_unknown_device_and_override():
    peak, why = mfu.peak_flops("cpu", "fp32")
    assert peak is None and "--peak-tflops" in why
    peak, why = mfu.peak_flops("cpu", "fp32", override_tflops=2.5)
    assert peak == 2.5e12 and "user-supplied" in why
    assert mfu.mfu(1e12, 100.0, 400e12) == pytest.approx(0.25)
    assert mfu.mfu(1e12, 100.0, None) is None


def test_tta_olympic_mean_drops_fastest_and_slowest():
    result = tta.score({1: 10.0, 2: 12.0, 3: 11.0, 4: 30.0, 5: 9.0})
    assert result["valid"] and result["olympic_mean_s"] == pytest.approx(11.0)
    low, high = result["ci95_s"]
    assert low < result["mean_s"] < high


def test_tta_one_non_converged_seed_is_the_dropped_slowest():
    result = tta.score({1: 10.0, 2: 12.0, 3: None, 4: 11.0, 5: 9.0})
    assert result["valid"] and result["converged"] == 4
    assert result["olympic_mean_s"] == pytest.approx((10 + 11 + 12) / 3)


def test_tta_two_non_converged_seeds_make_it_invalid():
    result = tta.score({1: 10.0, 2: None, 3: None, 4: 11.0, 5: 9.0})
    assert not result["valid"] and "2 seeds" in result["reason"]


def test_tta_one_of_two_seeds_missing_the_target_has_no_score():
    """Below three seeds none is dropped, so a miss, counted as the slowest, stays in the mean: no
    score (MLCommons' summarizer returns none). It scored the converged seed alone, so a seed that
    missed scored better (10 s) than two that converged (11 s)."""
    assert tta.score({1: 10.0, 2: 12.0})["olympic_mean_s"] == 11.0
    result = tta.score({1: 10.0, 2: None})
    assert result["olympic_mean_s"] is None and not result["valid"]
    assert "1 of 2 seeds did not reach the target" in result["reason"]
    assert tta.score({1: 10.0, 2: 12.0, 3: None})["olympic_mean_s"] == 12.0  # the miss dropped as the slowest
    assert tta.score({1: None})["valid"] and tta.score({1: None})["olympic_mean_s"] is None


def test_a_summary_written_before_keeps_its_one_of_two_score_and_no_other():
    """A file an earlier goodbench wrote with one of two seeds missing stored the other's time as a
    valid score: ``summary-mismatch`` does not refuse it for that (the leaderboard scores it anew),
    and a score that neither scorer gives is still refused."""
    from suite.validate import document_rules

    runs = [{"workload": {"id": "lm-char"}, "scale": "smoke", "seed": s, "status": "complete",
             "metrics": {"tta_s": t}} for s, t in ((1, 10.0), (2, None))]
    before = tta.score_before_2026_12_01({1: 10.0, 2: None})
    assert (before["valid"], before["olympic_mean_s"]) == (True, 10.0) and not tta.score({1: 10.0, 2: None})["valid"]
    assert document_rules._scored_before(before, "lm-char@smoke", {"runs": runs})
    assert not document_rules._scored_before({**before, "olympic_mean_s": 9.0}, "lm-char@smoke", {"runs": runs})
    assert tta.score_before_2026_12_01({1: 10.0, 2: 12.0, 3: None}) == tta.score({1: 10.0, 2: 12.0, 3: None})


def test_tta_single_seed_has_no_interval():
    result = tta.score({1: 7.5})
    assert result["olympic_mean_s"] == 7.5 and result["ci95_s"] is None


def test_tta_two_seeds_are_a_plain_mean_with_an_interval_clipped_at_zero():
    """Two seeds: nothing is dropped, so the score is the mean, named so; the t interval
    (12.7 standard errors wide) would reach −1102 s, and is clipped at 0."""
    result = tta.score({1: 10.0, 2: 200.0})
    assert result["olympic_mean_s"] == result["mean_s"] == 105.0
    assert tta.estimator(result) == "mean"
    low, high = result["ci95_s"]
    assert low == 0.0 and high == pytest.approx(105.0 + 12.7062 * 95.0, rel=1e-4)
    low, high = tta.score({1: 100.0, 2: 101.0})["ci95_s"]  # a tight interval is left as it is
    assert 0 < low < 100.5 < high


@pytest.mark.parametrize("times", [[10.0, 200.0], [100.0, 101.0], [10.0, 12.0, 11.0, 30.0, 9.0], [3.0] * 4 + [3.5]])
def test_the_tta_interval_is_scipy_stats_student_t_interval_clipped_at_zero(times):
    from scipy import stats

    values = np.asarray(times)
    low, high = stats.t.interval(0.95, len(times) - 1, loc=values.mean(), scale=stats.sem(values))
    assert tta.confidence_interval(times) == pytest.approx((max(0.0, low), high), rel=1e-12)


@pytest.mark.parametrize("times, name", [
    ({1: 10.0}, "mean"), ({1: 10.0, 2: 11.0}, "mean"),
    ({1: 10.0, 2: 11.0, 3: 12.0}, "olympic mean"),
    ({1: 10.0, 2: 11.0, 3: None}, "olympic mean"),  # the missed seed is the dropped slowest
])
def test_tta_estimator_names_what_the_score_computed(times, name):
    result = tta.score(times)
    assert tta.estimator(result) == name
    values = sorted(t for t in times.values() if t is not None)
    dropped = values if name == "mean" else values[1:] if None in times.values() else values[1:-1]
    assert result["olympic_mean_s"] == pytest.approx(np.mean(dropped))


def test_matmul_ceiling_measures_real_flops_on_cpu():
    result = ceiling.matmul_ceiling(torch.device("cpu"), "fp32", n=256, min_seconds=0.05, trials=3)
    assert len(result["trials_flops"]) == 3 and result["flops"] == max(result["trials_flops"])
    assert math.isfinite(result["flops"]) and result["flops"] > 1e8


def test_system_description_has_no_host_or_user_name():
    info = system.describe(torch.device("cpu"), overrides={"host": {"cloud": "my-lab"}})
    import getpass
    import socket
    text = repr(info)
    assert socket.gethostname() not in text and getpass.getuser() not in text.replace("/root", "")
    assert info["host"]["cloud"] == "my-lab" and info["overridden"] == ["host.cloud"]
    assert info["software"]["torch"] == torch.__version__
    assert sum(len(v) if isinstance(v, dict) else 1 for v in info.values()) >= 25


def test_check_of_a_cpu_run_skips_the_gpu_checks():
    checks = check.run_checks(torch.device("cpu"), cpu_run=True)
    gpu = next(c for c in checks if c.name == "gpu")
    assert gpu.verdict == "skip" and "--device cpu" in gpu.detail
    assert [c.name for c in checks if c.name.startswith("gpu") or c.name == "nvml"] == ["gpu"]
    host = [c for c in checks if c.name != "gpu"]
    assert check.fit(checks) == check.fit(host)  # only the host checks decide


def test_a_high_load_average_beside_a_quiet_machine_says_it_trails(monkeypatch):
    """A new user saw "warn host load 1.12" beside "ok other processes 0 of 2 cores": the average
    counts the last minute, their own run that had just ended included."""
    from suite.meters import host_load

    monkeypatch.setattr(check.os, "getloadavg", lambda: (5.0, 1.0, 0.5))
    monkeypatch.setattr(host_load, "snapshot", lambda **_: {"load_1m": 5.0, "cores": 2, "other_cores": 0.0, "busy": []})
    monkeypatch.setattr(check.os, "cpu_count", lambda: 2)
    checks = {c.name: c for c in check.run_checks(torch.device("cpu"), cpu_run=True)}
    assert checks["host load"].verdict == "warn"
    assert checks["host load"].detail.endswith("what other processes use now is the next line")
    assert checks["other processes"].verdict == "ok"
    monkeypatch.setattr(check.os, "getloadavg", lambda: (0.2, 0.1, 0.1))
    quiet = next(c for c in check.run_checks(torch.device("cpu"), cpu_run=True) if c.name == "host load")
    assert quiet.detail == "1-minute load average 0.20 on 2 cores"


def test_check_is_not_fit_while_other_processes_use_half_a_core_or_more():
    """Above load.UNDER_LOAD_CORES cores used by other processes, `check` fails and says what
    a result measured now becomes; below, ok; without /proc, a warning (not measured)."""
    from suite.figures import load

    busy = {"load_1m": 3.1, "cores": 2, "other_cores": load.UNDER_LOAD_CORES + 0.9,
            "busy": [{"name": "make", "cores": 1.4}]}
    verdict = check.busy_check(busy)
    assert verdict.verdict == "fail" and "other processes used 1.4 of 2 cores now (make)" in verdict.detail
    assert "left out of the site's comparisons if they use half a core or more at its start or its end, or on average " \
        "over it" in verdict.detail and "now is flagged" not in verdict.detail  # a test, not a certainty (L13)
    quiet = check.busy_check({**busy, "other_cores": load.UNDER_LOAD_CORES - 0.1, "busy": []})
    assert quiet.verdict == "ok" and quiet.detail == "0.4 of 2 cores used by other processes"
    assert check.busy_check({**busy, "other_cores": None}).verdict == "warn"


def test_check_on_cpu_fails_with_no_gpu():
    checks = check.run_checks(torch.device("cpu"))
    gpu = next(c for c in checks if c.name == "gpu")
    assert gpu.verdict == "fail" and "no GPU" in gpu.detail
    assert not check.fit(checks)
    assert {c.name for c in checks} >= {"disk", "cpu governor", "host load"}
