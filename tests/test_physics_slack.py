"""benchmarks/physics_slack.py: a bound's slack is the factor an edit may go before its rule refuses."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import benchmark_script
import pytest
from forging import repair
from test_eval_floor import _as_open
from test_forgery_physics import evals_cut, h100_doc

from suite.validate import check_document

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "reference-smoke.json"


@pytest.fixture(scope="module")
def slack():
    return benchmark_script.load("physics_slack")


@pytest.fixture(scope="module")
def reference():
    return json.loads(FIXTURE.read_text())


def _codes(doc) -> set[str]:
    return {p.code for p in check_document(doc)}


def test_an_honest_file_has_slack_over_one_on_every_bound_that_applies(slack, reference):
    rows = slack.file_slack(FIXTURE)
    assert [r["workload"] for r in rows] == [run["workload"]["id"] for run in reference["runs"]]
    for row in rows:
        assert "error" not in row
        assert row["ceiling"] > 1 and row["cores"] > 1 and row["eval"] > 1  # a CPU file: these apply
        assert row["peak"] is None and row["step"] is None  # GPU bounds do not


@pytest.mark.parametrize("beyond", [0.8, 1.5])
def test_ceiling_slack_is_where_above_ceiling_refuses(slack, reference, beyond):
    """Steps retimed by the ceiling slack × ``beyond``: refused past 1, accepted short of it."""
    doc = copy.deepcopy(reference)
    run = doc["runs"][0]
    factor = slack.run_slack(doc, run)["ceiling"] * beyond
    run["step_times_s"] = [t / factor for t in run["step_times_s"]]
    assert slack.run_slack(doc, run)["ceiling"] == pytest.approx(1 / beyond, rel=1e-6)
    assert ("above-ceiling" in _codes(doc)) == (beyond > 1)


@pytest.mark.parametrize("beyond", [0.8, 1.5])
def test_eval_slack_is_where_eval_too_fast_refuses_a_gpu_run(slack, beyond):
    """A synthetic H100 run of the open division (no measurement: the GPU path of the bounds), its
    evaluations cut by their slack × ``beyond``: refused past 1, accepted short of it."""
    honest = _as_open(h100_doc("lm-char"))
    before = slack.run_slack(honest, honest["runs"][0])
    assert before["eval"] > 1 and before["peak"] > 1 and before["step"] > 1 and before["power"] > 1
    assert before["cores"] is None  # a CPU's bound
    forged = _as_open(repair(evals_cut(h100_doc("lm-char"), before["eval"] * beyond)))
    assert slack.run_slack(forged, forged["runs"][0])["eval"] == pytest.approx(1 / beyond, rel=0.02)
    assert ("eval-too-fast" in _codes(forged)) == (beyond > 1)


def test_the_table_names_the_least_slack_of_each_bound(slack):
    rows = [{"file": "a.json", "workload": "lm-char", "seed": 1, "device": "x", "ceiling": 3.0, "eval": None},
            {"file": "b.json", "workload": "lm-char", "seed": 2, "device": "x", "ceiling": 2.5, "eval": 40.0}]
    last = slack.table(rows).splitlines()[-1].split()
    assert last[:3] == ["least", "slack", "2.5×"] and "40×" in last


def test_a_file_it_cannot_read_is_said_and_the_others_still_reported(slack, tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert slack.main([str(broken), str(FIXTURE), "--json", str(tmp_path / "rows.json")]) == 0
    out, err = capsys.readouterr()
    assert "broken.json: not read" in err and "least slack" in out
    assert len(json.loads((tmp_path / "rows.json").read_text())) == len(json.loads(FIXTURE.read_text())["runs"])
