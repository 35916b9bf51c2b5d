"""Own code does not grade itself (issue 44, finding 3): the pinned evaluation of own code
(workloads/evaluation.py, suite/api/benchmark.py) refuses a model that reads the tokens it is
graded on, and a model at its target before any training; the untrained model's evaluation is
always recorded; and the validator refuses a target claimed by a refused run
(suite/validate/quality_rules.py)."""
from __future__ import annotations

import copy
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from forging import codes, repair

import goodbench
from suite import validate as v
from suite.record import mllog
from suite.record.errors import GoodbenchError
from workloads.causality import probed, twin_calls
from workloads.evaluation import evaluator
from workloads.pinned import CAUSAL_TOLERANCE

REPO = Path(__file__).resolve().parent.parent
CPU = torch.device("cpu")
STEP_S = 0.02  # a step's work: the loop's own time between steps stays a small share of the blocks (stream-step-times)


def _char_gpt(vocab: int):
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import plain_loop
    finally:
        sys.path.remove(str(REPO / "examples"))
    torch.manual_seed(0)
    return plain_loop.CharGPT(vocab, 64).eval()


def _reads_next(vocab: int):
    """The finding's "model": the next token's one-hot, read from the window it is given."""
    return lambda ids: F.one_hot(torch.roll(ids, -1, dims=1), vocab).float() * 10


class _TurnsToReadingAhead:
    """An honest model until ``cheats`` is set, then the one that reads the next token."""

    def __init__(self, vocab: int):
        self.honest, self.cheat, self.cheats = _char_gpt(vocab), _reads_next(vocab), False

    def __call__(self, ids: torch.Tensor) -> torch.Tensor:
        return self.cheat(ids) if self.cheats else self.honest(ids)


def _trigram(data):
    """A causal "model" that memorized the held-out text: each position's next character from
    the two before it, counted over the held-out split (no training step needed)."""
    vocab = len(data.vocab)
    val = data.val
    counts = torch.ones(vocab, vocab, vocab)
    counts.index_put_((val[:-2], val[1:-1], val[2:]), torch.ones(len(val) - 2), accumulate=True)
    table = (counts / counts.sum(-1, keepdim=True)).log()

    def logits_of(ids: torch.Tensor) -> torch.Tensor:
        before = torch.cat([ids[:, :1], ids[:, :-1]], dim=1)
        return table[before, ids]

    return logits_of


def _bench(tmp_path: Path, name: str, data_dir, steps: int = 4, **kw) -> goodbench.Benchmark:
    return goodbench.Benchmark(name, samples_per_step=32, tokens_per_step=32 * 64, flops_per_step=1e6,
                               max_steps=steps, warmup_steps=1, eval_every=2, against="lm-char", scale="smoke",
                               device="cpu", out=tmp_path / f"{name}.json", sign=False, data_dir=str(data_dir), **kw)


def test_the_probe_catches_the_model_that_reads_the_next_token_and_passes_a_causal_one(data_dir):
    pinned = evaluator("lm-char", "smoke", CPU, str(data_dir))
    vocab = len(pinned.data.vocab)
    with pytest.raises(goodbench.ModelRefused, match="reads later tokens"):
        pinned(_reads_next(vocab))
    assert pinned.last_probe is not None and pinned.last_probe.max_difference >= 5
    honest = pinned(_char_gpt(vocab))
    assert honest["val_loss"] > 3 and pinned.last_probe.passed
    assert pinned.last_probe.max_difference <= CAUSAL_TOLERANCE and pinned.last_probe.positions > 0


def _batches(count: int = 4, size: int = 8, length: int = 32, seed: int = 3) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randint(0, 20, (size, length), generator=gen) for _ in range(count)]


def _probe(model, batches: list[torch.Tensor], seed: int = 1):
    """The probe of ``model`` over ``batches`` (text: random tokens), and the logits each batch was graded on."""
    graded: dict[int, torch.Tensor] = {}
    text = torch.randint(0, 20, (4096,), generator=torch.Generator().manual_seed(9))
    probe = probed(model, batches, text, graded.__setitem__, lambda x, logits: None,
                   gen=torch.Generator().manual_seed(seed))
    return probe, graded


@pytest.mark.parametrize("batches, size", [(8, 32), (20, 32), (1, 16), (9, 4), (17, 64)])
def test_each_twin_sits_at_its_windows_row(batches, size):
    """Twin call k holds windows k·size … (k+1)·size − 1 each at its own window's row, every row
    once, so a kernel whose rounding depends on a row's place (bf16 on a GPU) treats a window and
    its twin alike; no window is drawn twice, and the batches share the windows evenly."""
    from workloads.causality import _chosen

    calls = twin_calls(batches)
    chosen = _chosen(batches, size, calls, torch.Generator().manual_seed(batches))
    assert chosen[:, 1].tolist() == [j % size for j in range(calls * size)]
    assert len(set(map(tuple, chosen.tolist()))) == len(chosen)
    per = torch.bincount(chosen[:, 0], minlength=batches)
    assert int(per.max() - per.min()) <= 1


def test_the_probe_compares_only_positions_before_each_cut():
    """A model that reads only the token two places ahead still moves a position before the cut;
    a causal one moves none, and log-probabilities of -inf at both count as unmoved."""
    def causal(ids: torch.Tensor) -> torch.Tensor:
        out = F.one_hot(ids, 20).float().cumsum(dim=1)
        out[..., 0] = float("-inf")
        return out

    probe, graded = _probe(causal, _batches())
    assert probe.max_difference == 0.0 and probe.positions > 0 and sorted(graded) == [0, 1, 2, 3]

    def two_ahead(ids: torch.Tensor) -> torch.Tensor:
        return F.one_hot(torch.roll(ids, -2, dims=1), 20).float() * 10

    assert not _probe(two_ahead, _batches())[0].passed


def test_the_model_cannot_tell_the_probes_calls_from_the_evaluations(data_dir):
    """Trial 16, finding D: only the first batch was probed, so a model honest on it (and on the
    probe, which kept that batch's first quarter) read the next token everywhere else. Now every
    call of an evaluation — its batches and the probe's — has the same shape, dtype, layout and a
    storage of its own, in an order drawn afresh each time, and each batch has windows probed."""
    pinned = evaluator("lm-char", "smoke", CPU, str(data_dir))
    vocab, d = len(pinned.data.vocab), pinned.data
    seen: list[torch.Tensor] = []

    def spy(ids: torch.Tensor) -> torch.Tensor:
        seen.append(ids)
        return torch.zeros(*ids.shape, vocab)

    orders = []
    for _ in range(4):
        seen.clear()
        pinned(spy)
        assert len(seen) == d.eval_batches + twin_calls(d.eval_batches)
        assert {(x.shape, x.dtype, x.stride(), x.storage_offset(), x._base is None) for x in seen} == {
            ((d.batch_size, d.context), torch.long, (d.context, 1), 0, True)}
        orders.append(tuple(i for i, x in enumerate(seen) if not _pinned_batch(pinned, x)))
    assert len(set(orders)) > 1  # the probe's call is not always at the same place
    assert pinned.last_probe.windows == twin_calls(d.eval_batches) * d.batch_size


def _pinned_batch(pinned, x: torch.Tensor) -> bool:
    gen = torch.Generator().manual_seed(0)
    d = pinned.data
    from workloads.lm.job import windows
    return any(torch.equal(x, windows(d.val, d.batch_size, d.context, gen, CPU)[0]) for _ in range(d.eval_batches))


def _cheats_but_on(vocab: int, honest_on) -> Callable[[torch.Tensor], torch.Tensor]:
    """A model that reads the next token, but for the calls or positions ``honest_on(ids)`` marks."""
    def logits_of(ids: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(*ids.shape, vocab)
        cheat = F.one_hot(torch.roll(ids, -1, dims=1), vocab).float() * 30
        return torch.where(honest_on(ids)[..., None], out, cheat)
    return logits_of


def test_the_trials_probe_dodging_models_are_refused_and_an_honest_one_graded_as_before(data_dir):
    """The trial's models — honest on the first two calls (the first batch and its probe), honest on
    the first batch and on any window sharing its first quarter, honest only in a window's middle
    half (where the cuts were), reading ahead in one batch of the eight — are refused; a causal model's loss
    is the unprobed evaluation's, to the bit."""
    pinned = evaluator("lm-char", "smoke", CPU, str(data_dir))
    vocab, d = len(pinned.data.vocab), pinned.data
    calls = [0]

    def first_two(ids: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        return torch.full(ids.shape, calls[0] <= 2)

    gen = torch.Generator().manual_seed(0)
    from workloads.lm.job import windows
    first = windows(d.val, d.batch_size, d.context, gen, CPU)[0]
    quarter = d.context // 4

    def first_batch(ids: torch.Tensor) -> torch.Tensor:
        return torch.full(ids.shape, bool(torch.equal(ids[:, :quarter], first[:, :quarter])))

    def middle_half(ids: torch.Tensor) -> torch.Tensor:
        at = torch.arange(ids.shape[1])
        return ((at >= quarter - 1) & (at < 3 * quarter - 1))[None, :].expand(ids.shape)

    sixth = [windows(d.val, d.batch_size, d.context, gen, CPU)[0] for _ in range(5)][-1]

    def one_batch_in_eight(ids: torch.Tensor) -> torch.Tensor:
        return torch.full(ids.shape, not torch.equal(ids, sixth))

    for name, honest_on in [("first two calls", first_two), ("first batch", first_batch),
                            ("middle half", middle_half), ("one batch in eight", one_batch_in_eight)]:
        for _ in range(3):
            calls[0] = 0
            with pytest.raises(goodbench.ModelRefused, match="reads later tokens"):
                pinned(_cheats_but_on(vocab, honest_on))
            assert pinned.last_probe.max_difference >= 5, name
    model = _char_gpt(vocab)
    found = pinned(model)
    gen = torch.Generator().manual_seed(0)
    unprobed = []
    with torch.no_grad():
        for _ in range(d.eval_batches):
            x, y = windows(d.val, d.batch_size, d.context, gen, CPU)
            unprobed.append(F.cross_entropy(model(x).float().reshape(-1, vocab), y.reshape(-1)))
    assert found["val_loss"] == float(torch.stack(unprobed).mean()) and pinned.last_probe.passed
    assert pinned.unprobed_loss(model) == found["val_loss"]  # what benchmarks/causality_probe.py times


def test_a_cheating_model_is_refused_before_training_and_its_file_says_why(tmp_path, data_dir):
    """The finding: steps that only sleep, the evaluation given a model that reads the next token.
    The untrained model's evaluation refuses it; the run ends failed, the file is written and
    valid, and a forger's claim of the target from it is refused."""
    bench = _bench(tmp_path, "reads-next", data_dir)
    with pytest.raises(goodbench.ModelRefused, match="reads later tokens"), bench:
        for run in bench.runs():
            run.evaluate_pinned(_reads_next(len(run.data.vocab)))
            for _ in range(4):
                with run.step():
                    time.sleep(STEP_S)
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    [run] = doc["runs"]
    assert run["status"] == "failed" and "ModelRefused" in run["error"] and run["metrics"]["tta_s"] is None
    pinned = run["pinned_evaluation"]
    assert pinned["start"] is None and pinned["refused"]["step"] == 0 and "reads later tokens" in pinned["refused"]["reason"]
    assert pinned["probe"]["max_difference"] > pinned["probe"]["tolerance"] == CAUSAL_TOLERANCE
    assert [e.key for e in mllog.parse(run["event_log"])].count(mllog.EVAL_REFUSED) == 1
    forged = copy.deepcopy(doc)  # a claim of the target by the refused run, everything else repaired
    forged["runs"][0].update(status="complete", error=None)
    assert "eval-refused" in codes(repair(forged))
    hidden = copy.deepcopy(doc)  # the refusal dropped from the record alone: the log still holds it
    hidden["runs"][0]["pinned_evaluation"]["refused"] = None
    assert "eval-refused" in codes(repair(hidden))


def test_a_model_that_starts_reading_ahead_after_training_began_is_refused_at_that_evaluation(tmp_path, data_dir):
    bench = _bench(tmp_path, "later", data_dir)
    with pytest.raises(goodbench.ModelRefused), bench:
        for run in bench.runs():
            model = _TurnsToReadingAhead(len(run.data.vocab))
            run.evaluate_pinned(model)
            for step in range(1, 5):
                with run.step():
                    time.sleep(STEP_S)
                    model.cheats = step >= 2
                if run.due_for_evaluation():
                    run.evaluate_pinned(model)
    assert bench.problems == []
    [run] = json.loads(bench.path.read_text())["runs"]
    assert run["pinned_evaluation"]["refused"]["step"] == 2 and run["pinned_evaluation"]["start"]["val_loss"] > 3
    assert run["metrics"]["tta_s"] is None and run["curve"] == []


def test_a_model_at_its_target_before_any_training_is_refused(tmp_path, data_dir):
    """A causal "model" that memorized the held-out text (a trigram table of it) passes the probe
    and meets lm-char's smoke target untrained: refused, and a forger's file that drops the
    refusal is refused too."""
    bench = _bench(tmp_path, "memorized", data_dir)
    with pytest.raises(goodbench.ModelRefused, match="before any training"), bench:
        for run in bench.runs():
            run.evaluate_pinned(_trigram(run.data))
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    pinned = doc["runs"][0]["pinned_evaluation"]
    assert pinned["start"]["val_loss"] < 2.4 and pinned["refused"]["step"] == 0
    assert pinned["probe"]["max_difference"] <= CAUSAL_TOLERANCE  # causal: the probe passes it
    for run in doc["runs"]:
        run["pinned_evaluation"]["refused"] = None
        run["event_log"] = [line for line in run["event_log"] if mllog.EVAL_REFUSED not in line]
    assert "target-at-start" in codes(repair(doc))


@pytest.mark.slow
def test_the_untrained_model_is_evaluated_before_the_first_step_and_recorded(tmp_path, data_dir):
    bench = _bench(tmp_path, "forgot", data_dir)
    with pytest.raises(GoodbenchError, match="evaluated before it trains"), bench:
        for run in bench.runs():
            with run.step():
                pass
    assert bench.problems == []  # a run that ended before its first step: nothing to hold it to
    assert json.loads(bench.path.read_text())["runs"][0]["pinned_evaluation"]["start"] is None
    bench = _bench(tmp_path, "honest", data_dir)
    with bench:
        for run in bench.runs():
            model = _char_gpt(len(run.data.vocab))
            assert run.evaluate_pinned(model) is False and run.evaluated_untrained
            with pytest.raises(GoodbenchError, match="once per run"):
                run.evaluate_pinned(model)
            for _ in range(4):
                with run.step():
                    time.sleep(STEP_S)
                if run.due_for_evaluation():
                    run.evaluate_pinned(model)
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    [run] = doc["runs"]
    pinned = run["pinned_evaluation"]
    assert pinned["refused"] is None and pinned["start"]["val_loss"] > 3
    assert pinned["probe"]["evaluations"] == 3 and pinned["probe"]["max_difference"] <= CAUSAL_TOLERANCE
    events = [e.key for e in mllog.parse(run["event_log"])]
    assert events.index(mllog.START_EVAL) < events.index("run_start")
    dropped = copy.deepcopy(doc)  # a file without the untrained model's evaluation
    for r in dropped["runs"]:
        r["event_log"] = [line for line in r["event_log"] if mllog.START_EVAL not in line]
    assert "start-eval" in codes(repair(dropped))
    edited = copy.deepcopy(doc)
    edited["runs"][0]["pinned_evaluation"]["start"]["val_loss"] = 9.0
    assert "start-eval" in codes(repair(edited))
    loosened = copy.deepcopy(doc)
    loosened["runs"][0]["pinned_evaluation"]["probe"]["tolerance"] = 100.0
    assert "eval-refused" in codes(repair(loosened))
    assert v.SINCE["start-eval"] == v.SINCE["eval-refused"] == v.SINCE["target-at-start"] == 8


@pytest.mark.slow
def test_a_run_going_on_from_a_checkpoint_keeps_its_first_processs_evaluation_of_the_untrained_model(tmp_path,
                                                                                                    data_dir):
    """A run interrupted after its step-2 checkpoint and gone on by a second process: the second
    process's call before its first step evaluates nothing (the run's first process did, its log
    holds it) and the file carries that evaluation."""
    def loop(run, stop_at=None):
        model = _char_gpt(len(run.data.vocab))
        saved = run.restore()
        if saved is not None:
            model.load_state_dict(saved["model"])
        assert run.evaluate_pinned(model) is False
        for step in range(run.steps_done + 1, 5):
            with run.step():
                time.sleep(STEP_S)
            if run.due_for_evaluation():
                run.evaluate_pinned(model)
            if step == 2:
                run.save({"model": model.state_dict()})
            if step == stop_at:
                raise KeyboardInterrupt

    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
    first = _bench(tmp_path / "first", "resumed", data_dir, checkpoint_dir=tmp_path / "ckpt")
    with pytest.raises(KeyboardInterrupt), first:
        for run in first.runs():
            loop(run, stop_at=3)
    started = json.loads(first.path.read_text())["runs"][0]["pinned_evaluation"]["start"]
    second = _bench(tmp_path / "second", "resumed", data_dir, checkpoint_dir=tmp_path / "ckpt")
    with second:
        for run in second.runs():
            loop(run)
    assert second.problems == []
    [run] = json.loads(second.path.read_text())["runs"]
    assert run["status"] == "complete" and run["pinned_evaluation"]["start"] == started
    assert [e.key for e in mllog.parse(run["event_log"])].count(mllog.START_EVAL) == 1


def test_a_run_page_says_what_the_pinned_evaluation_found():
    from suite.site.run_page import pinned_evaluation_lines

    lines = pinned_evaluation_lines({"pinned_evaluation": {
        "start": {"val_loss": 4.36663}, "refused": {"step": 2, "reason": "the model reads later tokens\u202e"},
        "probe": {"kind": "causality", "max_difference": 10.0, "tolerance": 1e-3, "evaluations": 2, "seconds": 0.1}}})
    assert lines == ["the untrained model, before the first step: val_loss 4.367",
                     "refused at step 2: the model reads later tokens\\u202e",
                     "causality probe: log-probabilities moved by at most 10 nats when later tokens changed "
                     "(tolerance 0.001) over 2 evaluations"]
    assert pinned_evaluation_lines({"curve": []}) == []
