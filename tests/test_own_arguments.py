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
    ({"trains": "a model\u202e"}, "trains must be text .* bidirectional"),
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
                                trains="a reproduction of a small GPT")  # a description, not a name: shown as such
    assert bench.flops_per_step == 3e12 and bench.command == ["python", "train.py"]
