"""Projection to cluster scale: the closed form against a Monte Carlo of the same failures."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from suite.cli import main
from suite.figures import projection

CORPUS_FILE = Path(__file__).parent / "corpus" / "valid" / "lm-char-smoke.json"  # one run
MEASURED = projection.Measured(step_s=0.35, checkpoint_s=25.0, restart_s=180.0,
                               steady_efficiency=0.93, restart_source="test")


def simulate_factor(interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float,
                    segments: int, seed: int) -> float:
    """Monte Carlo of the failure process the projection models: kept work over simulated wall
    time (an independent check of its closed form)."""
    rng = np.random.default_rng(seed)
    work = interval_s + checkpoint_s
    need = np.full(segments, work)
    total = 0.0
    while need.size:
        x = rng.exponential(mtbf_s, size=need.size)
        done = x >= need
        total += need[done].sum() + x[~done].sum()
        need = np.full(int((~done).sum()), restart_s + work)
    return segments * interval_s / total


@pytest.mark.parametrize("gpus", projection.GPU_COUNTS)
def test_closed_form_matches_monte_carlo_within_one_percent(gpus):
    point = projection.project(MEASURED, gpus, mtbf_hours=50_000.0)
    simulated = simulate_factor(point.interval_s, MEASURED.checkpoint_s,
                                MEASURED.restart_s, point.mtbf_s,
                                segments=100_000, seed=gpus)
    goodput_mc = simulated * MEASURED.steady_efficiency
    assert goodput_mc == pytest.approx(point.goodput, rel=0.01)


def test_fixed_interval_matches_monte_carlo_when_failures_are_frequent():
    point = projection.project(MEASURED, 100_000, mtbf_hours=20_000.0, interval_steps=2_000)
    simulated = simulate_factor(point.interval_s, MEASURED.checkpoint_s,
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


@pytest.mark.slow
def test_project_command_reads_a_measured_run(checkpointed_short_run, tmp_path, capsys):
    run = checkpointed_short_run
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


@pytest.mark.slow
def test_project_refuses_a_run_without_a_restart_measure(checkpointed_short_run):
    run = checkpointed_short_run
    with pytest.raises(projection.CannotProject, match="restart"):
        projection.measured_from_run(run)


@pytest.mark.parametrize("mtbf_hours, measured, interval_steps", [
    (1e-9, MEASURED, None),                                                     # failures every µs
    (50_000.0, projection.Measured(0.35, 25.0, 1e308, 0.93, "test"), None),      # endless restart
    (50_000.0, MEASURED, 1_000_000_000_000),                                    # endless interval
])
def test_extreme_inputs_give_goodput_near_zero_not_an_overflow(mtbf_hours, measured, interval_steps):
    """Where e^(R/M) or e^((τ+δ)/M) exceeds the largest float the segment time is infinite and
    the kept share is 0, computed from logs: no OverflowError, every field a finite float."""
    rows = projection.table(measured, mtbf_hours, (1, 100_000), interval_steps)
    assert rows[-1]["goodput"] == 0.0 and rows[-1]["failure_factor"] == 0.0
    json.dumps(rows, allow_nan=False)  # what `goodbench project` writes
    assert projection.expected_segment_s(1.0, 1.0, 1e308, 1e-3) == float("inf")


def test_failure_factor_is_the_closed_form_where_that_does_not_overflow():
    for tau, delta, restart, mtbf in [(95_000, 25, 180, 1.8e8), (70, 25, 180, 180),
                                      (700, 25, 180, 72), (1e-3, 1e-4, 0, 1e6)]:
        plain = tau / (mtbf * math.exp(restart / mtbf) * math.expm1((tau + delta) / mtbf))
        assert projection.failure_factor(tau, delta, restart, mtbf) == pytest.approx(plain, rel=1e-12)


def test_lost_work_per_failure_does_not_cancel_when_failures_are_rare():
    """M − a/(e^(a/M) − 1) → a/2 as M grows; computed directly both terms are ≈ M and their
    difference is noise (0 or negative at M = 3.6e303)."""
    a = 95_000.0
    for mtbf in (3.6e12, 3.6e100, 3.6e303):
        assert projection.lost_per_failure_s(a, mtbf) == pytest.approx(a / 2 - a * a / (12 * mtbf), rel=1e-12)
    point = projection.project(MEASURED, 1, 1e300)
    assert point.lost_per_failure_s == pytest.approx((point.interval_s + MEASURED.checkpoint_s) / 2)
    # both branches agree where they meet (x = a/M = 0.01), and the loss tends to M for a ≫ M
    below, above = projection.lost_per_failure_s(0.01 * (1 - 1e-12), 1.0), projection.lost_per_failure_s(0.01, 1.0)
    assert below == pytest.approx(above, rel=1e-9)
    assert projection.lost_per_failure_s(1e6, 1.0) == 1.0


def test_project_command_survives_the_edges_of_its_ranges(tmp_path, monkeypatch, capsys):
    """The largest GPU count, the shortest MTBF, the longest restart and checkpoint interval
    the command accepts: a table, a note that goodput is ≈ 0, and a JSON file, exit 0."""
    monkeypatch.setattr(projection, "measured_from_run", lambda run, restart=None: MEASURED)
    out = tmp_path / "p.json"
    assert main(["project", str(CORPUS_FILE), "--gpus", "1000000", "--mtbf-hours", "0.001",
                 "--restart-seconds", "1e7", "--checkpoint-every", "1000000000", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "goodput ≈ 0 from 1 GPU on" in printed
    assert json.loads(out.read_text())["points"][-1]["gpus"] == 1_000_000


@pytest.mark.parametrize("option, value, says", [
    ("--mtbf-hours", "1e-9", "from 0.001 to 1,000,000,000"),
    ("--mtbf-hours", "1e300", "from 0.001 to 1,000,000,000"),
    ("--restart-seconds", "1e308", "from 0 to 10,000,000"),
    ("--checkpoint-every", "1000000000000", "from 1 to 1,000,000,000"),
    ("--gpus", "1000000000", "from 1 to 1,000,000"),
    ("--gpus", "0", "from 1 to 1,000,000"),
    ("--run", "-1", "0 or more"),
])
def test_project_refuses_values_out_of_range_in_one_line(option, value, says, capsys):
    argv = ["project", str(CORPUS_FILE), "--mtbf-hours", "50000", option, value]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"goodbench project: error: argument {option}: {value!r} is out of range: {says}; "
                                "see goodbench project --help"]  # one line, the usage left to --help


def test_project_names_the_run_count_when_run_is_too_large(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["project", str(CORPUS_FILE), "--mtbf-hours", "50000", "--run", "7"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"goodbench project: error: {CORPUS_FILE} has 1 run; --run must be 0"]


def test_project_never_overwrites_a_file_nor_writes_into_a_store(tmp_path, monkeypatch, capsys):
    """``-o`` naming the results file it read replaced that file with the projection; a stored
    file's default output landed in the store, where only ``goodbench submit`` writes."""
    import shutil

    monkeypatch.setattr(projection, "measured_from_run", lambda run, restart=None: MEASURED)
    mine = tmp_path / "mine.json"
    shutil.copy(CORPUS_FILE, mine)
    before = mine.read_bytes()
    assert main(["project", str(mine), "--mtbf-hours", "1000", "-o", str(mine)]) == 1
    said = capsys.readouterr()
    assert "mine.json exists and is no projection; goodbench project never overwrites another file" in said.err
    assert mine.read_bytes() == before and "goodput" not in said.out  # refused before the table
    assert main(["project", str(mine), "--mtbf-hours", "1000"]) == 0
    assert main(["project", str(mine), "--mtbf-hours", "500"]) == 0  # another MTBF tried: its projection replaced
    assert "projection rewritten to" in capsys.readouterr().out
    assert json.loads((tmp_path / "mine.projection.json").read_text())["mtbf_hours"] == 500
    store = tmp_path / "store"
    store.mkdir()
    (store / "ledger.jsonl").write_text("")
    stored = store / "f.json"
    shutil.copy(CORPUS_FILE, stored)
    assert main(["project", str(stored), "--mtbf-hours", "1000", "-o", str(store / "p.json")]) == 1
    assert "p.json is in a results store (it holds ledger.jsonl)" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert main(["project", str(stored), "--mtbf-hours", "1000"]) == 0  # the default: here, not in the store
    assert (tmp_path / "f.projection.json").is_file() and not (store / "f.projection.json").exists()
    assert "projection written to f.projection.json" in capsys.readouterr().out
