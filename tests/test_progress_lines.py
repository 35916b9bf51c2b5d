"""What a run says while it trains (suite/run/progress.py): the line that says the target was met
and training stops there, said once, from the loop's own evaluation (suite/run/loop.py). A new
user's loop announced "at most 300 steps", stopped at step 150 after an evaluation and never said
why."""
from __future__ import annotations

import time
from types import SimpleNamespace

import torch

from suite.meters.energy import NotMeasured
from suite.record import mllog
from suite.run import loop
from suite.run.progress import NOTED_S, ProgressPrinter
from suite.run.state import LoopState
from workloads.base import Target


def test_the_first_evaluation_meeting_the_target_says_so_once():
    events: list[tuple[str, dict]] = []
    spec = SimpleNamespace(target=Target(metric="val_loss", direction="min", value=2.4))
    state = LoopState(init_start=time.time(), run_start=time.time())
    log, meter = mllog.EventLog(), NotMeasured("none here")
    for step, value in ((10, 3.1), (20, 2.39), (30, 2.2)):
        met = loop.evaluate(lambda v=value: {"val_loss": v}, spec, step, torch.device("cpu"), state, log, meter,
                            lambda event, **f: events.append((event, f)))
        assert met is (value <= 2.4)
    targets = [f for event, f in events if event == "target"]
    assert [(f["step"], f["target"]) for f in targets] == [(20, "val_loss <= 2.4")]  # once: the clock stops there
    assert targets[0]["time_s"] == state.tta_s


def test_the_printer_says_the_target_met_and_that_training_stops(capsys):
    printer = ProgressPrinter()
    printer("run_start", workload="plain", seed=1, max_steps=300)
    printer("target", step=150, target="val_loss <= 2.4", time_s=14.04)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "[plain seed 1] target val_loss <= 2.4 met at step 150, 14.0 s from the run's start: training stops here "
        "(time to target ends at the first evaluation that meets it)")


def test_the_printer_says_how_long_after_the_start_evaluation_the_first_step_came(capsys):
    """Own code held to a target: its clock starts as the start evaluation ends, so the seconds to
    the first step are time to train, said at the first step when they are more than the library's
    own; a run whose clock starts at its first step says nothing."""
    printer = ProgressPrinter()
    for said in (None, NOTED_S / 2):  # no gap, or the library's own milliseconds: nothing to say
        printer("run_start", workload="plain", seed=1, max_steps=300, after_start_eval_s=said)
        assert len(capsys.readouterr().err.splitlines()) == 1
    printer("run_start", workload="plain", seed=1, max_steps=300, after_start_eval_s=2.6)
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2 and said[1].startswith("[plain seed 1] the first step comes 2.600 s after the start "
                                                 "evaluation: time to train")
