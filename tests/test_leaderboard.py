"""Leaderboard entries take their per-workload figures from the document's summary."""
from __future__ import annotations

import json

import numpy as np
import pytest

import factories
from suite import leaderboard, results
from suite.meters import tta
from suite.summary import summarize


def _with_failed_fastest_seed(workload: str) -> dict:
    """A valid document of one workload whose fastest run failed but still carries its tta_s."""
    doc = factories.synthetic_document("synthetic-alpha", rng=np.random.default_rng(3), accelerator=0,
                                       workloads=(workload,), goodput=True)
    fastest = min(doc["runs"], key=lambda r: r["metrics"]["tta_s"])
    fastest.update(status="failed", error="process exited with code 1")
    doc["summary"] = summarize(doc["runs"])
    doc = json.loads(results.dumps(doc))
    assert leaderboard.check_document(doc) == []
    return doc


def test_a_failed_runs_tta_does_not_count_on_the_leaderboard():
    doc = _with_failed_fastest_seed("fashion-cnn")
    [entry] = leaderboard.rows("r.json", doc)
    score = doc["summary"]["fashion-cnn@full"]["tta"]
    assert (entry["score_s"], [entry["ci95_low_s"], entry["ci95_high_s"]], entry["tta_valid"]) == \
        (score["olympic_mean_s"], score["ci95_s"], score["valid"])
    assert score["converged"] == len(doc["runs"]) - 1
    counting_all = tta.score({r["seed"]: r["metrics"]["tta_s"] for r in doc["runs"]})
    assert entry["score_s"] != pytest.approx(counting_all["olympic_mean_s"])
    assert entry["seeds"] == len(doc["runs"])


def test_throughput_mfu_energy_and_goodput_are_medians_of_complete_runs():
    doc = _with_failed_fastest_seed("lm-char")
    [entry] = leaderboard.rows("r.json", doc)
    summary = doc["summary"]["lm-char@full"]
    assert (entry["samples_per_s"], entry["tokens_per_s"], entry["mfu"]) == \
        (summary["samples_per_s_median"], summary["tokens_per_s_median"], summary["mfu_median"])
    complete = [r for r in doc["runs"] if r["status"] == "complete"]
    assert entry["energy_per_sample_j"] == pytest.approx(
        np.median([r["metrics"]["energy_per_sample_j"] for r in complete]))
    assert entry["goodput"] == pytest.approx(np.median([r["goodput"]["goodput"] for r in complete]))


def test_entries_do_not_depend_on_a_stored_summary():
    doc = _with_failed_fastest_seed("dlrm-small")
    without = {k: v for k, v in doc.items() if k != "summary"}
    assert leaderboard.rows("r.json", without) == leaderboard.rows("r.json", doc)
