"""Trial 15 #8: a ceiling with no timed batches passed, and its method was free text shown as fact
("torch.mm 8192x8192 bf16 on an H100, fastest of 10 such measurements" on a CPU file). The
figure must come from its batches, and the method's claims (matrix size, precision, how many
batches and measurements) are held to the record (:mod:`suite.figures.ceiling_method`)."""
from __future__ import annotations

import copy

import pytest
from forging import SMOKE

from suite import validate as v
from suite.figures import ceiling_method

FIELD = "settings.matmul_ceiling.fp32."
N = SMOKE["settings"]["matmul_ceiling"]["fp32"]["n"]  # the reference's matrix size (1024 on 2 CPU threads)


def _problems(doc: dict) -> list[tuple[str, str]]:
    return [(p.code, p.field) for p in v.check_document(doc)]


def _entry(doc: dict) -> dict:
    return doc["settings"]["matmul_ceiling"]["fp32"]


def test_the_trials_forged_second_ceiling_is_refused():
    doc = copy.deepcopy(SMOKE)
    assert _problems(doc) == []
    e = _entry(doc)
    e["at_end"] = {"flops": e["flops"] * 1.3, "method": "torch.mm 8192x8192 bf16 on an H100, fastest of 10 such "
                   "measurements"}
    assert sorted(set(_problems(doc))) == [("ceiling-implausible", FIELD + "at_end.trials_flops")]
    e["at_end"]["trials_flops"] = [e["flops"] * 1.3, e["flops"]]
    found = v.check_document(doc)
    assert [(p.code, p.field) for p in found] == [("ceiling-implausible", FIELD + "at_end.method")]
    assert found[0].reason.startswith("not a method goodbench writes")


@pytest.mark.parametrize("batches", [[], None])
def test_a_ceiling_without_timed_batches_is_refused(batches):
    doc = copy.deepcopy(SMOKE)
    if batches is None:
        del _entry(doc)["trials_flops"]
    else:
        _entry(doc)["trials_flops"] = batches
    found = v.check_document(doc)
    assert {(p.code, p.field) for p in found} == {("ceiling-implausible", FIELD + "trials_flops")}
    assert "no timed batch" in found[0].reason


@pytest.mark.parametrize("method, says", [
    (ceiling_method.first(N, "fp32", 3, 10), "the fastest of 10 timed batches, but 5 are recorded"),
    (ceiling_method.first(8192, "fp32", 3, 5), f"8192x8192 matrices, but n is {N}"),
    (ceiling_method.first(N, "bf16", 3, 5), "bf16, but the ceiling is for fp32"),
    (ceiling_method.again(ceiling_method.first(N, "fp32", 3, 5), 3), "made after the runs, but this one was "
                                                                       "made before them"),
    (ceiling_method.first(N, "fp32", 3, 5) + " on an H100", "not a method goodbench writes"),
])
def test_what_the_method_claims_is_held_to_the_record(method, says):
    doc = copy.deepcopy(SMOKE)
    _entry(doc).pop("at_end", None)  # the measurement before the runs only: its method is the subject
    _entry(doc)["method"] = method
    [found] = v.check_document(doc)
    assert (found.code, found.field) == ("ceiling-implausible", FIELD + "method") and says in found.reason


@pytest.mark.parametrize("made, refused", [(2, False), (10, False), (11, True), (1, True)])
def test_a_ceiling_measured_again_says_how_many_measurements_goodbench_makes(made, refused):
    doc = copy.deepcopy(SMOKE)
    e = _entry(doc)
    e["at_end"] = {"flops": e["flops"], "trials_flops": list(e["trials_flops"]),
                   "method": ceiling_method.again(e["method"], made)}
    assert _problems(doc) == ([("ceiling-implausible", FIELD + "at_end.method")] if refused else [])


def test_no_method_claims_nothing():
    doc = copy.deepcopy(SMOKE)
    _entry(doc)["method"] = None
    assert _problems(doc) == []


@pytest.mark.parametrize("fields", ["its own", "the first's", "none"])
def test_a_ceiling_measured_again_without_a_method_validates(fields):
    """A measurement with no method text, measured again: the method written is built from the
    measurement's fields (matrix size, precision: its own, else the first measurement's; its timed
    batches) as goodbench writes it, never a fallback text the validator refuses ("torch.mm; the
    fastest of …"); with no fields to build it from, none is written. Either way the document
    validates."""
    pytest.importorskip("torch")
    from suite.meters import ceiling as ceiling_meter

    doc = copy.deepcopy(SMOKE)
    e = _entry(doc)
    start = {**{k: v for k, v in e.items() if k not in ("at_end", "method")}, "flops": e["flops"] * 0.5}  # under load
    if fields == "none":
        del start["n"]
    extra = {"n": e["n"], "precision": "fp32"} if fields == "its own" else {}
    rates = iter([e["flops"] * 0.9, e["flops"] * 0.95, e["flops"]])

    def measure() -> dict:
        flops = next(rates)
        return {"flops": flops, "trials_flops": [flops] + [0.9 * flops] * 4, **extra}

    kept = ceiling_meter.measured_again(start, measure, needed=e["flops"])  # the third reaches it
    method = kept["at_end"].get("method")
    if fields == "none":
        assert "method" not in kept["at_end"]
    else:
        assert method == ceiling_method.again(ceiling_method.first(e["n"], "fp32", ceiling_meter.WARMUP, 5), 3)
        assert ceiling_method.claims(method) == {"n": e["n"], "precision": "fp32", "batches": 5, "made": 3}
    _entry(doc)["at_end"] = kept["at_end"]
    assert _problems(doc) == []
