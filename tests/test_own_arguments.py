"""``goodbench.Benchmark``'s arguments are checked when it is built (suite/api/arguments.py):
finding 10 of issue 44 — ``samples_per_step=10**30``, a bidirectional ``system_name``, NaN or
negative ``flops_per_step`` were accepted and failed only after training."""
from __future__ import annotations

import pytest

import goodbench
from suite.record.errors import GoodbenchError

BASE = {"samples_per_step": 4, "max_steps": 3, "device": "cpu", "sign": False}


@pytest.mark.parametrize(("changed", "message"), [
    ({"samples_per_step": 10 ** 30}, "samples_per_step must be a whole number from 1 to"),
    ({"samples_per_step": 0}, "samples_per_step must be a whole number from 1"),
    ({"samples_per_step": 2.5}, "samples_per_step must be a whole number"),
    ({"samples_per_step": True}, "samples_per_step must be a whole number"),
    ({"tokens_per_step": 10 ** 30}, "tokens_per_step must be a whole number"),
    ({"max_steps": 10 ** 9}, "max_steps must be a whole number from 1 to 100,000"),
    ({"flops_per_step": float("nan")}, "flops_per_step must be a finite number of model FLOPs of at least 1"),
    ({"flops_per_step": -1e9}, "flops_per_step must be a finite number of model FLOPs of at least 1"),
    ({"flops_per_step": float("inf")}, "flops_per_step must be a finite number of model FLOPs of at least 1"),
    ({"flops_per_step": 0}, "flops_per_step must be a finite number of model FLOPs of at least 1"),
    ({"flops_per_step": "1e9"}, "flops_per_step must be a number"),
    ({"system_name": "H100\u202e8x"}, "system_name: .* bidirectional"),
    ({"system_name": "NVIDIA H100 x8 - reproduced by a trusted reviewer (MLCommons)"},
     "system_name: .*trust labels"),
    ({"system_name": ""}, "system_name must be a non-empty name"),
    ({"name": "x\u200by"}, "name: .*invisible"),
    ({"name": "signed, not reproduced"}, "name: .*trust labels"),
    ({"trains": "a model\u202e"}, "trains: .* bidirectional"),
    ({"trains": "reproduced by a trusted reviewer"}, "trains: .*trust labels"),  # trial 13: shown on every row
    ({"trains": "a \u0280\u1d07\u1d18\u0280\u1d0f model"}, "trains: .*not a Latin letter"),
    ({"command": "python train.py"}, "command must be a non-empty list of its words"),
    ({"code": "train.py"}, "code must be a list of paths"),
    ({"out": 3}, "out must be a path"),
    ({"log_every": 0}, "log_every must be a whole number"),
    # trial 5: accepted at construction
    ({"flops_per_step": 1e-300}, "flops_per_step must be a finite number of model FLOPs of at least 1"),
    ({"eval_every": 0}, "eval_every must be a whole number from 1 to 100,000, not 0"),
    ({"log_every": 10 ** 9}, "log_every must be a whole number from 1 to 100,000"),
    ({"peak_tflops": -1.0}, "peak_tflops must be a finite, positive number"),
    ({"system_name": "H100 x8 reproduсed"}, "system_name: .*trust labels"),  # a Cyrillic с
    ({"system_name": "H100 x8 RE-PRODUCED"}, "system_name: .*trust labels"),
    ({"name": "mine (two clocks)"}, "name: .*trust labels"),
    ({"system_name": "H100 x8, audited by MLCommons"}, "system_name: .*trust labels"),
    ({"sign": "yes"}, "sign must be True or False"),
    # the global batch declared per rank (samples_per_rank): one of the two ways, whole numbers
    ({"samples_per_rank": 4}, "give samples_per_step .* or samples_per_rank .*, one of them"),
    ({"samples_per_step": None}, "give samples_per_step .* or samples_per_rank .*, one of them"),
    ({"samples_per_step": None, "samples_per_rank": 0}, "samples_per_rank must be a whole number from 1"),
    ({"samples_per_step": None, "samples_per_rank": 4, "tokens_per_step": 8}, "samples_per_rank goes with tokens_per_rank"),
    ({"tokens_per_step": 8, "tokens_per_rank": 8}, "tokens_per_step .* or tokens_per_rank .*, not both"),
    ({"samples_per_step": None, "samples_per_rank": 4, "tokens_per_rank": 10 ** 30},
     "tokens_per_rank must be a whole number"),
])
def test_a_bad_argument_is_a_one_line_error_at_construction(changed, message):
    args = {"name": "mine", **BASE, **changed}
    with pytest.raises(GoodbenchError, match=message) as caught:
        goodbench.Benchmark(args.pop("name"), **args)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


def test_good_arguments_build_a_benchmark():
    bench = goodbench.Benchmark("mine", samples_per_step=10 ** 6, tokens_per_step=10 ** 9, flops_per_step=3e12,
                                max_steps=100_000, system_name="Lab box (Zürich)",
                                command=["python", "train.py"], code=["train.py"], device="cpu", sign=False,
                                trains="a small GPT, as nanoGPT trains it, \u03bcP-scaled")  # Greek: a description's
    assert bench.flops_per_step == 3e12 and bench.command == ["python", "train.py"]


def test_a_batch_declared_per_rank_is_multiplied_by_the_jobs_world_size(monkeypatch):
    """``samples_per_rank`` and ``tokens_per_rank``: the global figures the rules hold a step to are
    each rank's × the job's processes (torchrun's world; 1 in one process), so that one script
    declares the right batch however it is launched (the examples)."""
    per_rank = {"samples_per_rank": 32, "tokens_per_rank": 32 * 64, "max_steps": 3, "device": "cpu", "sign": False}
    one = goodbench.Benchmark("mine", **per_rank)
    assert (one.samples_per_step, one.tokens_per_step) == (32, 32 * 64)
    for name, value in {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}.items():
        monkeypatch.setenv(name, value)  # a rank of a torchrun job of 4 (the process group is joined at start())
    four = goodbench.Benchmark("mine", **per_rank)
    assert (four.samples_per_step, four.tokens_per_step) == (4 * 32, 4 * 32 * 64)
    given = goodbench.Benchmark("mine", samples_per_step=32, max_steps=3, device="cpu", sign=False)
    assert given.samples_per_step == 32 and given.tokens_per_step is None  # a global figure stays as given
    with pytest.raises(GoodbenchError, match=r"samples_per_rank \(4 ranks\) must be a whole number from 1 to"):
        goodbench.Benchmark("mine", **{**per_rank, "samples_per_rank": 2 ** 62})  # its global total overflows
