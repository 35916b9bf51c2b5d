"""Projection to cluster scale: the closed form against a Monte Carlo of the same failures."""
from __future__ import annotations

import json

import numpy as np
import pytest

from short_lmchar import run_short
from suite import projection
from suite.cli import main

MEASURED = projection.Measured(step_s=0.35, checkpoint_s=25.0, restart_s=180.0,
                               steady_efficiency=0.93, restart_source="test")


@pytest.mark.parametrize("gpus", projection.GPU_COUNTS)
def test_closed_form_matches_monte_carlo_within_one_percent(gpus):
    point = projection.project(MEASURED, gpus, mtbf_hours=50_000.0)
    simulated = projection.simulate_factor(point.interval_s, MEASURED.checkpoint_s,
                                           MEASURED.restart_s, point.mtbf_s,
                                           segments=100_000, seed=gpus)
    goodput_mc = simulated * MEASURED.steady_efficiency
    assert goodput_mc == pytest.approx(point.goodput, rel=0.01)


def test_fixed_interval_matches_monte_carlo_when_failures_are_frequent():
    point = projection.project(MEASURED, 100_000, mtbf_hours=20_000.0, interval_steps=2_000)
    simulated = projection.simulate_factor(point.interval_s, MEASURED.checkpoint_s,
                                           MEASURED.restart_s, point.mtbf_s, 100_000, seed=1)
    assert point.mtbf_s == pytest.approx(720.0)
    assert simulated == pytest.approx(point.failure_factor, rel=0.01)


def test_daly_interval_is_near_the_best_interval_of_the_exact_model():
    mtbf = 3600.0 * 50_000 / 10_000
    grid = np.linspace(10, 5_000, 20_000)
    factors = [projection.failure_factor(t, 25.0, 180.0, mtbf) for t in grid]
    best = float(grid[int(np.argmax(factors))])
    daly = projection.optimal_interval(25.0, mtbf)
    assert daly == pytest.approx(best, rel=0.1)
    assert projection.failure_factor(daly, 25.0, 180.0, mtbf) == pytest.approx(max(factors), rel=1e-3)


def test_goodput_falls_as_gpus_grow():
    goodputs = [p["goodput"] for p in projection.table(MEASURED, 50_000.0)]
    assert goodputs == sorted(goodputs, reverse=True) and goodputs[0] < MEASURED.steady_efficiency


def test_project_command_reads_a_measured_run(data_dir, tmp_path, capsys):
    run = run_short(data_dir, tmp_path / "ckpt", checkpoint_every=10)
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"runs": [run]}))
    out = tmp_path / "projection.json"
    assert main(["project", str(results), "--gpus", "4096", "--mtbf-hours", "50000",
                 "--restart-seconds", "60", "-o", str(out)]) == 0
    written = json.loads(out.read_text())
    assert [p["gpus"] for p in written["points"]] == sorted({*projection.GPU_COUNTS, 4096})
    measured = projection.Measured(**written["measured"])
    assert measured.restart_s == 60 and measured.checkpoint_s > 0 and 0 < measured.steady_efficiency <= 1
    at_4096 = next(p for p in written["points"] if p["gpus"] == 4096)
    assert at_4096["goodput"] == pytest.approx(projection.project(measured, 4096, 50_000).goodput)
    assert "4096" in capsys.readouterr().out


def test_project_refuses_a_run_without_a_restart_measure(data_dir, tmp_path):
    run = run_short(data_dir, tmp_path / "ckpt", checkpoint_every=10)
    with pytest.raises(projection.CannotProject, match="restart"):
        projection.measured_from_run(run)
