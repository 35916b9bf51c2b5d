"""Own code held to a target: the run's clock starts as its start evaluation ends, so training done
between that evaluation and the first step is time to train; and an untrained model below the
workload's start floor (trained before its start evaluation) is refused (docs/own-code.md,
"What the pinned evaluation refuses")."""
from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from forging import codes, edit_log, moved, repair

import goodbench
from suite.record import mllog
from suite.record.errors import GoodbenchError
from suite.validate import check_document
from suite.validate.quality_rules import START_GAP_S
from workloads import registry
from workloads.pinned import START_FLOORS

REPO = Path(__file__).resolve().parent.parent
SLEEP_S = 2 * START_GAP_S  # the "initialization" done after the start evaluation: more than the rule's allowance
STEP_S = 0.02


def _bench(tmp_path: Path, name: str, data_dir, steps: int = 4) -> goodbench.Benchmark:
    return goodbench.Benchmark(name, samples_per_step=32, tokens_per_step=32 * 64, flops_per_step=1e6,
                               max_steps=steps, warmup_steps=1, eval_every=2, against="lm-char", scale="smoke",
                               device="cpu", out=tmp_path / f"{name}.json", sign=False, data_dir=str(data_dir))


def _bigram(ids: torch.Tensor, vocab: int):
    """The trial's "initialization": each next character's log-probability from the one before it,
    counted over ``ids`` (the training split)."""
    counts = torch.ones(vocab, vocab)
    counts.index_put_((ids[:-1], ids[1:]), torch.ones(len(ids) - 1), accumulate=True)
    table = (counts / counts.sum(-1, keepdim=True)).log()
    return lambda x: table[x]


class _Switched:
    """Uniform until ``table`` is set (the trial's n-gram model, a bigram here)."""

    def __init__(self, vocab: int):
        self.vocab, self.table = vocab, None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(*x.shape, self.vocab) if self.table is None else self.table(x)


def _events(run: dict) -> list[mllog.Event]:
    return [e for e in (mllog.parse_line(line) for line in run["event_log"]) if e is not None]


@pytest.mark.slow
def test_training_after_the_start_evaluation_is_time_to_train(tmp_path, data_dir):
    """Trial 17: a table built from the training split after the start evaluation, the timed steps
    doing nothing, met the target with a time to train of 0.24 s (the build in init badput). Its build
    now falls inside time to train (in the "other" badput), the clock starting as the start evaluation
    ends; and a file whose run_start was moved to after the build is refused [start-gap]."""
    said: list[dict] = []
    bench = _bench(tmp_path, "late-init", data_dir)
    bench.progress = lambda event, **f: said.append(f) if event == "run_start" else None
    with bench:
        for run in bench.runs():
            model = _Switched(len(run.data.vocab))
            run.evaluate_pinned(model)
            built = time.time()
            model.table = _bigram(run.data.train, len(run.data.vocab))
            time.sleep(SLEEP_S)  # the build, made longer than the rule's allowance
            built = time.time() - built
            for _ in range(4):
                with run.step():
                    time.sleep(STEP_S)
                if run.due_for_evaluation():
                    run.evaluate_pinned(model)
    assert bench.problems == []
    # its line says it, rounded to the millisecond (two sides rounded to 0.01 s split 1.015 and 1.01501 once)
    assert [f["after_start_eval_s"] >= built - 0.001 for f in said] == [True], (said, built)
    doc = json.loads(bench.path.read_text())
    [run] = doc["runs"]
    steps = sum(run["step_times_s"])
    assert run["time_to_train_s"] >= built + steps
    assert run["curve"][0]["time_s"] >= built
    assert run["phases_s"]["other"] >= built and run["phases_s"]["init"] < run["wall_s"] - built
    events = _events(run)
    start = next(e for e in events if e.key == mllog.START_EVAL)
    clock = next(e for e in events if e.key == "run_start")
    assert 0 <= clock.t - start.t < SLEEP_S  # run_start follows the start evaluation at once
    # the old origin, at the end of the build: run_start (and init_stop) moved later by the build's time
    for i, line in enumerate(run["event_log"]):
        prefix, _, body = line.partition(" ")
        event = json.loads(body) if body.startswith("{") else {}
        if event.get("key") in ("run_start", "init_stop"):
            event["time_ms"] += built * 1000
            run["event_log"][i] = f"{prefix} {json.dumps(event)}"
    assert "start-gap" in codes(repair(doc))


@pytest.mark.slow
def test_a_model_trained_before_its_start_evaluation_is_refused_below_the_floor(tmp_path, data_dir):
    """A bigram table of the training split (val_loss 2.50, above the smoke target of 2.4) given as the
    "untrained" model: below lm-char's start floor, so refused before the clock starts; a file that
    drops the refusal is refused [start-floor]."""
    metric, floor = START_FLOORS["lm-char"]
    bench = _bench(tmp_path, "pretrained", data_dir)
    with pytest.raises(goodbench.ModelRefused, match="start floor"), bench:
        for run in bench.runs():
            run.evaluate_pinned(_bigram(run.data.train, len(run.data.vocab)))
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    pinned = doc["runs"][0]["pinned_evaluation"]
    target = registry.get("lm-char").spec("smoke").target
    assert not target.met(pinned["start"][metric]) and pinned["start"][metric] < floor  # the floor refused it
    assert pinned["refused"]["step"] == 0
    for run in doc["runs"]:
        run["pinned_evaluation"]["refused"] = None
        run["event_log"] = [line for line in run["event_log"] if mllog.EVAL_REFUSED not in line]
    assert "start-floor" in codes(repair(doc))


def _ordered(tmp_path: Path, data_dir, out: str, **kw) -> goodbench.Benchmark:
    """One Benchmark's sessions (one code, so one workload spec), each writing ``out``.json."""
    return goodbench.Benchmark("ordered", samples_per_step=32, flops_per_step=1e6, max_steps=4, warmup_steps=1,
                               eval_every=2, against="lm-char", scale="smoke", device="cpu",
                               out=tmp_path / f"{out}.json", sign=False, data_dir=str(data_dir), **kw)


@pytest.mark.slow
def test_restore_comes_before_the_start_evaluation_in_a_runs_first_process_and_a_later_one(tmp_path, data_dir):
    """restore() after evaluate_pinned is refused in a run's first process (the clock has started)
    and alike in a process going on from its checkpoint, where the evaluation is the first
    process's: the wrong order fails on a script's first run, not only on its restarts."""
    ckpt = tmp_path / "ckpt"
    with pytest.raises(GoodbenchError, match="before run.evaluate_pinned"), \
            _ordered(tmp_path, data_dir, "first-wrong", checkpoint_dir=tmp_path / "other") as bench:
        for run in bench.runs():
            run.evaluate_pinned(_Switched(len(run.data.vocab)))
            run.restore()
    with pytest.raises(KeyboardInterrupt), _ordered(tmp_path, data_dir, "first", checkpoint_dir=ckpt) as bench:
        for run in bench.runs():
            assert run.restore() is None
            run.evaluate_pinned(_Switched(len(run.data.vocab)))
            for _ in (1, 2):
                with run.step():
                    time.sleep(STEP_S)
            run.evaluate_pinned(_Switched(len(run.data.vocab)))
            run.save({"step": run.steps_done})
            raise KeyboardInterrupt  # killed after its step-2 checkpoint
    with pytest.raises(GoodbenchError, match="before run.evaluate_pinned"), \
            _ordered(tmp_path, data_dir, "later-wrong", checkpoint_dir=ckpt) as bench:
        for run in bench.runs():
            assert run.prior  # a process going on from the first one's checkpoint
            run.evaluate_pinned(_Switched(len(run.data.vocab)))
            run.restore()
    with _ordered(tmp_path, data_dir, "later", checkpoint_dir=ckpt) as bench:  # the right order goes on
        for run in bench.runs():
            assert run.restore() == {"step": 2}
            run.evaluate_pinned(_Switched(len(run.data.vocab)))
            for _ in (3, 4):
                with run.step():
                    time.sleep(STEP_S)
            run.evaluate_pinned(_Switched(len(run.data.vocab)))
    assert bench.problems == []


def _counted(vocab: int):
    """A forward and backward pass to count FLOPs of: one linear layer's."""
    layer = torch.nn.Linear(vocab, vocab)
    return lambda: layer(torch.zeros(2, vocab)).sum().backward()


@pytest.mark.slow
def test_flops_are_counted_before_the_start_evaluation_that_starts_the_clock(tmp_path, data_dir):
    """A FLOP count after the start evaluation would run on the clock: refused, as restore() is (the
    first run cannot log its header without them; a later run counts them again to agree)."""
    bench = goodbench.Benchmark("late-count", samples_per_step=32, max_steps=2, warmup_steps=1, eval_every=2, seeds=2,
                                against="lm-char", scale="smoke", device="cpu", out=tmp_path / "late.json",
                                sign=False, data_dir=str(data_dir))
    trained = []
    with pytest.raises(GoodbenchError, match="before run.evaluate_pinned"), bench:
        for run in bench.runs():
            vocab = len(run.data.vocab)
            forward_backward = _counted(vocab)
            if run.seed == 1:  # the first run, in order
                run.count_flops(forward_backward)
            run.evaluate_pinned(_Switched(vocab))
            if run.seed == 2:
                run.count_flops(forward_backward)
            for _ in (1, 2):
                with run.step():
                    time.sleep(STEP_S)
            run.evaluate_pinned(_Switched(vocab))
            trained.append(run.seed)
    assert trained == [1]  # the second run's count after its start evaluation was refused


def test_the_start_floor_is_under_the_held_out_texts_unigram_entropy_and_honest_starts(data_dir):
    """lm-char's floor sits under what knowing the characters' frequencies alone gives, and under an
    untrained model's loss (near ln(vocab))."""
    from workloads.evaluation import evaluator
    from workloads.lm_char.evaluator import START_FLOOR, unigram_entropy

    pinned = evaluator("lm-char", "smoke", torch.device("cpu"), str(data_dir))
    vocab = len(pinned.data.vocab)
    assert START_FLOORS["lm-char"] == (pinned.metric, START_FLOOR)
    assert START_FLOOR < unigram_entropy(pinned.data.val, vocab) < math.log(vocab)
    assert pinned(_Switched(vocab))["val_loss"] == pytest.approx(math.log(vocab), rel=1e-4)


def test_the_start_floor_is_under_the_full_scales_held_out_unigram_entropy(data_dir):
    """The floor holds at every scale: at full scale too, knowing the held-out characters'
    frequencies alone (of the split, and of the very targets its pinned windows score) stays above it."""
    from workloads.evaluation import evaluator
    from workloads.lm_char.evaluator import START_FLOOR, unigram_entropy

    pinned = evaluator("lm-char", "full", torch.device("cpu"), str(data_dir))
    vocab = len(pinned.data.vocab)
    scored = torch.cat([y.flatten() for _, y in pinned.batches()])
    assert len(scored) == pinned.data.eval_batches * pinned.data.batch_size * pinned.data.context
    assert START_FLOOR < unigram_entropy(pinned.data.val, vocab) < math.log(vocab)
    assert START_FLOOR < unigram_entropy(scored, vocab) < math.log(vocab)


@pytest.mark.slow  # the plain loop under goodbench run-own: ~25 s on 2 loaded cores
def test_the_second_clock_stamps_the_start_gap_and_the_rule_reads_it(tmp_path, data_dir):
    """Under run-own the launcher stamps the start evaluation's end and run_start on its monotonic
    clock: the rule reads the gap there, and a log whose run_start was moved later than that clock
    saw, or a clock whose run_start was moved, is refused [start-gap]."""
    out = tmp_path / "plain.json"
    done = subprocess.run([sys.executable, "-m", "suite", "run-own", str(REPO / "examples" / "plain_loop.py"),
                           "--out", str(out), "--steps", "2", "--device", "cpu", "--data-dir", str(data_dir)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr  # a refusal's line (which figure disagreed) is on stdout
    doc = json.loads(out.read_text())
    assert check_document(doc) == []
    [entry] = doc["second_clock"]["runs"]
    assert 0 <= entry["run_start_s"] - entry["start_eval_s"] < START_GAP_S
    later = 2 * START_GAP_S  # seconds: beyond the allowance
    log_moved = copy.deepcopy(doc)
    edit_log(log_moved["runs"][0], lambda e: moved(e, time_ms=e.time_ms + later * 1000)
             if e.key in ("run_start", "init_stop") else e)
    assert "start-gap" in codes(repair(log_moved))
    clock_moved = copy.deepcopy(doc)
    clock_moved["second_clock"]["runs"][0]["start_eval_s"] -= later
    assert "start-gap" in codes(clock_moved)
