"""The command line's summary tables (suite/figures/report.py), from synthetic results."""
from __future__ import annotations

import re

import factories
import numpy as np

from suite.figures import goodput, projection, report
from suite.figures.summary import summarize


def _runs(**kw) -> list[dict]:
    return factories.synthetic_document("synthetic-report", rng=np.random.default_rng(1),
                                        workloads=("lm-char",), **kw)["runs"]


def test_goodput_rows_show_every_bucket():
    (row,) = report.goodput_rows(_runs(scale="smoke", goodput=True))
    assert set(goodput.BUCKETS) <= set(row) and row["goodput"].endswith("%") and float(row["goodput"][:-1]) > 0


def test_run_summary_has_one_row_per_run_and_goodput_only_where_measured():
    runs = _runs(scale="full")  # five seeds, no goodput section
    text = report.run_summary(runs)
    assert len(text.splitlines()) == 1 + len(runs) and "goodput and badput" not in text
    assert report.goodput_rows(runs) == []
    text = report.run_summary(_runs(scale="smoke", goodput=True))
    head, goodput_table = text.split(f"\n{report.GOODPUT_HEADING}\n")
    assert len(head.splitlines()) == 2 and len(goodput_table.splitlines()) == 2


def test_score_lines_only_for_workloads_scored_over_several_seeds():
    (line,) = report.score_lines(summarize(_runs(scale="full")))
    assert line.startswith("lm-char@full: time to target, olympic mean ") and " over 5 seeds, " in line
    assert report.score_lines(summarize(_runs(scale="smoke"))) == []


def test_projection_text_is_the_measurement_then_one_row_per_gpu_count():
    measured = projection.Measured(step_s=0.35, checkpoint_s=25.0, restart_s=180.0,
                                   steady_efficiency=0.93, restart_source="test")
    rows = projection.table(measured, 50_000.0, (8, 1024))
    lines = report.projection(measured, 50_000.0, rows).splitlines()
    assert lines[0] == ("step 0.35 s, checkpoint 25 s, restart 180 s (test), steady efficiency 0.9300; "
                        "per-GPU MTBF 50000 h")
    assert len(lines) == 4 and lines[2].split()[0] == "8" and lines[3].split()[0] == "1024"


def test_two_seed_score_line_says_mean_and_never_a_negative_time():
    from suite.figures import tta

    (line,) = report.score_lines({"lm-char@smoke": {"tta": tta.score({1: 10.0, 2: 200.0})}})
    assert line.startswith("lm-char@smoke: time to target, mean 105.00 s (95% CI of the mean 0.00–")
    assert "olympic" not in line and "-" not in line.split("(")[1]


def test_table_headers_stand_over_their_columns_two_spaces_apart():
    text = report.table([{"workload": "lm-char", "p50 step ms": 3.84, "MFU": 0.306, "of ceiling": None,
                          "energy": "574 J"},
                         {"workload": "fashion-cnn", "p50 step ms": 12.5, "MFU": None, "of ceiling": 0.2,
                          "energy": "n/m"}])
    head, *rows = text.splitlines()
    assert re.split(r" {2,}", head) == ["workload", "p50 step ms", "MFU", "of ceiling", "energy"]
    for name in ("p50 step ms", "MFU", "of ceiling"):  # numbers right-aligned under their header
        end = head.index(name) + len(name)
        assert all(row[end - 1] != " " and (len(row) == end or row[end] == " ") for row in rows)
    assert rows[0][head.index("energy"):] == "574 J" and rows[1][head.index("workload"):].startswith("fashion-cnn")
    assert rows[0].split()[3] == "—" and rows[1].split()[1:3] == ["12.50", "—"]


def test_projection_says_when_goodput_is_near_zero():
    measured = projection.Measured(step_s=0.35, checkpoint_s=25.0, restart_s=180.0,
                                   steady_efficiency=0.93, restart_source="test")
    text = report.projection(measured, 0.001, projection.table(measured, 0.001, (1, 1000)))
    assert text.splitlines()[-1].startswith("goodput ≈ 0 from 1 GPU on: the job fails every 3.6 s")
    text = report.projection(measured, 50_000.0, projection.table(measured, 50_000.0, (1, 1000)))
    assert "≈ 0" not in text


def test_repeated_runs_show_their_number_and_each_seeds_mean_and_spread():
    import copy

    from suite.record import results
    from suite.run.progress import ProgressPrinter

    one = factories.synthetic_document("synthetic-report", rng=np.random.default_rng(2), workloads=("gpt2-124m",),
                                       scale="smoke")["runs"][0]
    runs = []
    for k, factor in ((1, 1.0), (2, 1.1), (3, 0.9)):
        run = copy.deepcopy(one)
        run["repeat"] = k
        run["metrics"]["throughput"]["samples_per_s"] *= factor
        runs.append(run)
    rates = [results.samples_per_s(r) for r in runs]
    assert [row["repeat"] for row in report.run_rows(runs)] == [1, 2, 3]
    assert "repeat" not in report.run_rows([one])[0]
    (line,) = report.repeat_lines(runs)
    mean = sum(rates) / 3
    assert line.startswith(f"gpt2-124m@smoke seed {one['seed']}: samples/s over 3 repeats: mean {mean:.4g}, "
                           f"min {min(rates):.4g}, max {max(rates):.4g}, CV ")
    runs[1]["status"] = "failed"
    assert " over 2 repeats" in report.repeat_lines(runs)[0]
    said = []
    printer = ProgressPrinter()
    import suite.run.progress as progress_module
    progress_module.say, real_say = said.append, progress_module.say
    try:
        printer("run_start", workload="gpt2-124m", seed=1, max_steps=80, repeat=2, repeats=3)
        printer("eval", step=40, val_loss=3.0632, repeat=2, repeats=3)  # every event carries the repeat
        printer("run_start", workload="llama-1b", seed=1, max_steps=80, scale="smoke", parameters=1_234_567)
    finally:
        progress_module.say = real_say
    assert said == ["[gpt2-124m seed 1 repeat 2/3] training, at most 80 steps",
                    "[gpt2-124m seed 1 repeat 2/3] eval at step 40: val_loss 3.0632",  # not "repeat 2.0000"
                    # a workload named for its full size says what it trains at this scale (a new user read
                    # "llama-1b … 106.87 samples/s" on a 2-core CPU as a figure of a 1B model)
                    "[llama-1b seed 1] training, at most 80 steps: a 1.23 M-parameter model at smoke scale"]


def test_the_run_table_says_why_mfu_or_energy_is_missing():
    runs = _runs(scale="smoke")
    for run in runs:
        run["metrics"].update(mfu=None, mfu_status="not measured: no peak FLOP/s known for 'cpu'",
                              energy_to_train_j=None, energy_status="not measured: no RAPL counters")
    lines = report.run_summary(runs).splitlines()
    assert lines[1 + len(runs):] == ["MFU —: not measured: no peak FLOP/s known for 'cpu'",
                                     "energy n/m: not measured: no RAPL counters"]  # once, whatever the runs


def test_the_run_table_says_why_a_time_to_target_is_missing():
    """A smoke target never met read only "—" in the TTA column: the run's status says it now; a
    throughput workload's "—" (no target) needs no line."""
    runs = _runs(scale="smoke")
    for run in runs:
        run["metrics"].update(tta_s=None, tta_status="not reached: test_accuracy >= 0.99 not met within 300 steps")
    lines = report.run_summary(runs).splitlines()
    assert lines[1 + len(runs):] == ["TTA —: not reached: test_accuracy >= 0.99 not met within 300 steps"]
    for run in runs:
        run["metrics"].update(tta_status="throughput workload: no quality target")
    assert len(report.run_summary(runs).splitlines()) == 1 + len(runs)


def test_a_share_of_the_ceiling_keeps_three_significant_digits():
    """A new user read "21.2%, 18%, 0.369%" in one column: its zeros are kept now."""
    from suite.figures.report import percent

    assert [percent(x) for x in (0.212, 0.18, 0.077, 0.00369, 1.0, None)] == \
        ["21.2%", "18.0%", "7.70%", "0.369%", "100%", None]


def test_a_share_of_the_ceiling_above_100_percent_is_marked_and_said_why():
    """Walkthrough 4: "% of ceiling 201%" stood in the table unremarked; the ceiling it divides by
    was measured under load before the runs."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "fixtures" / "reference-smoke.json").read_text())
    doc["runs"][1]["metrics"]["share_of_ceiling"] = 2.013
    doc["settings"]["matmul_ceiling"]["fp32"]["at_end"] = {"flops": 98.35e9, "trials_flops": [98.35e9]}
    text = report.file_summary(doc)
    cells = [line.split() for line in text.splitlines()[1:3]]
    assert "201%*" in cells[1] and not any(c.endswith("%*") for c in cells[0])
    (line,) = [line for line in text.splitlines() if line.startswith("* % of ceiling above 100%")]
    first = doc["settings"]["matmul_ceiling"]["fp32"]["flops"] / 1e9
    assert f"fp32 {first:.3g} GFLOP/s before the runs, 98.3 after them" in line
    doc["runs"][1]["metrics"]["share_of_ceiling"] = 0.99
    assert "above 100%" not in report.file_summary(doc)
