"""The examples under torchrun: ``goodbench run-own --nproc-per-node 2 examples/X.py`` on two gloo
ranks on the CPU, at the smallest scale they take (20 steps), writes one file that validates, whose
declared step is the global batch the job trained — each rank's 32 windows of 64 characters × the
2 ranks (``samples_per_rank``, suite/api/benchmark.py) — with both ranks stamped on the second clock,
every rank measuring the same steps, and lm-char's pinned evaluator (each example is held to it) at
every evaluation, the untrained model's first."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_own_rank_clock_dist import _run_own, both_ranks_stamped

from suite import validate as v

pytestmark = [pytest.mark.slow, pytest.mark.dist]  # rank processes under torchrun
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PER_RANK, CONTEXT, WORLD, STEPS = 32, 64, 2, 20  # each example's batch on a rank and its windows' length
NEEDS = {"plain_loop.py": None, "hf_trainer_char.py": "transformers", "lightning_char.py": "lightning.pytorch"}


@pytest.mark.parametrize("example", list(NEEDS))
def test_each_example_under_run_own_on_two_ranks_declares_the_global_batch(example, tmp_path, data_dir, monkeypatch):
    if NEEDS[example] is not None:
        pytest.importorskip(NEEDS[example])
    monkeypatch.setenv("GOODBENCH_DATA_DIR", str(data_dir))  # lm-char's text, for the data and the pinned evaluator
    done = _run_own(tmp_path, "--out", "own.json", "--steps", str(STEPS), "--device", "cpu",
                    script=EXAMPLES / example)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("results written to own.json") == 1 and "validator:" not in done.stdout  # rank 0 alone
    assert "second clock added (1 run on 2 ranks, the clocks agree)" in done.stderr
    doc = json.loads((tmp_path / "own.json").read_text())
    assert v.check_document(doc) == []  # the validator's word on the file run-own sealed
    run = both_ranks_stamped(doc)
    assert run["status"] == "complete" and run["steps"] == STEPS
    ranks_steps = [r["step_time_s"]["steps"] for r in run["distributed"]["ranks"]]
    assert ranks_steps[0] > 0 and ranks_steps == [ranks_steps[0]] * WORLD  # every rank measured the same steps
    # held to lm-char: the pinned evaluator's val_loss at every evaluation, on every rank, the untrained model first
    assert run["curve"] and all("val_loss" in p for p in run["curve"])
    assert run["pinned_evaluation"]["start"]["val_loss"] > 2.4 and run["pinned_evaluation"]["refused"] is None
    spec = doc["settings"]["implementation"]["spec"]
    assert spec["samples_per_step"] == run["metrics"]["samples_per_step"] == WORLD * PER_RANK
    assert spec["tokens_per_step"] == run["metrics"]["tokens_per_step"] == WORLD * PER_RANK * CONTEXT
    split = run["distributed"]
    assert (split["world_size"], split["per_rank_batch"], split["global_batch"]) == (WORLD, PER_RANK, WORLD * PER_RANK)
    assert doc["settings"]["implementation"]["command"][:3] == ["torchrun", "--nproc-per-node=2",
                                                                f"examples/{example}"]
