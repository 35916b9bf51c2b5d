"""The MLPerf pages name each quality target's metric and direction as the training rules do
(suite/mlperf/targets.py), never as the log key ``eval_accuracy`` every benchmark writes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from suite.mlperf import targets

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("bench, rule, text", [
    ("llama2_70b_lora", "(v['value'] <= 0.925) and v['value'] > 0.0", "eval loss ≤ 0.925"),
    ("gpt3", "(v['value'] <= 2.69) and v['value'] > 2.6", "log perplexity ≤ 2.69"),
    ("llama31_405b", "(v['value'] <= 5.6) and v['value'] > 0.0", "log perplexity ≤ 5.6"),
    ("rnnt", "v['value'] <= 0.058 and v['value'] > 0.0", "word error rate ≤ 0.058"),
    ("resnet", "v['value'] >= 0.7590 and v['value'] < 1.0", "top-1 classification accuracy ≥ 0.7590"),
    ("dlrm_dcnv2", "v['value'] >= 0.80275 and v['value'] <= 1.0", "AUC ≥ 0.80275"),
    ("maskrcnn", "v['value']['BBOX'] >= 0.377 and v['value']['BBOX'] < 1.0 and v['value']['SEGM'] >= 0.339 "
                 "and v['value']['SEGM'] < 1.0", "box min AP ≥ 0.377 and mask min AP ≥ 0.339"),
    ("bert", "(v['value'] >= 0.712 if s['global_batch_size'] < 8192 else v['value'] >= 0.706) and v['value'] < 1.0",
     "Mask-LM accuracy ≥ 0.712 (≥ 0.706 at a global batch of 8192 or more)"),
    ("stable_diffusion", None, "FID ≤ 90 and CLIP score ≥ 0.15"),
    ("resnet", None, None),
    ("unknown_bench", "v['value'] >= 0.5", "≥ 0.5"),
])
def test_a_target_names_its_metric_and_direction(bench, rule, text):
    assert targets.target_text(rule, bench) == text


def test_every_benchmark_of_the_history_has_its_metric_and_a_loss_is_never_an_accuracy():
    stored = {(d["benchmark"], d.get("quality_target"))
              for d in (json.loads(p.read_bytes()) for p in (REPO / "results" / "mlperf").glob("*.json"))}
    assert {b for b, _ in stored} <= set(targets.METRICS)
    for benchmark, rule in stored:
        text = targets.target_text(rule, benchmark)
        assert rule is None or text.startswith(targets.metric(benchmark).split()[0])
        # lower is better for a loss, a perplexity and an error rate: their rules say ≤
        if rule and any(w in targets.metric(benchmark) for w in ("loss", "perplexity", "error")):
            assert "≤" in text and "≥" not in text
    assert all(source in (targets.RULES_NOW, targets.RULES_V07) for _, source in targets.METRICS.values())
