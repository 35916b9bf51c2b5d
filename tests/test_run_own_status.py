"""``goodbench run-own``'s exit status: the validator's refusal fails it; a JSON Schema this Python
cannot check (``schema-unchecked``: the GPU image has neither jsonschema nor fastjsonschema) is said
and does not, as for the rest of goodbench there (the GPU slot's rehearsal found it failing)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

import suite.validate
from suite.commands import run_own
from suite.record.problems import Problem
from suite.run import own_launch

UNCHECKED = Problem("schema-unchecked", "", "the JSON Schema could not be checked here")
REFUSED = Problem("second-clock", "second_clock", "the clocks disagree")


@pytest.fixture
def launched(monkeypatch, tmp_path):
    """run-own around a child that wrote ``own.json`` and whose edges agree; the validator's verdict set per test."""
    path = tmp_path / "own.json"
    reader = SimpleNamespace(written=(False, str(path)), runs=[], broken=None, journal=None)
    doc = {"second_clock": {"runs": [{"run_id": "r1", "agreement": {"agree": True}}]}}
    monkeypatch.setattr(own_launch, "launch", lambda script, args, extra_env=None, **_: (0, SimpleNamespace(pid=1), reader))
    monkeypatch.setattr(own_launch, "seal", lambda *a: doc)

    def run_with(problems):
        monkeypatch.setattr(suite.validate, "check_document", lambda d: problems)
        return run_own.run(SimpleNamespace(script="train.py", args=[], nproc_per_node=None, system_name=None,
                                           wait_quiet=None))
    return run_with


@pytest.mark.parametrize(("problems", "status", "said"), [
    ([], 0, "unsigned, valid\n"),
    ([UNCHECKED], 0, "unsigned, valid but for its JSON Schema, not checked here\n"),
    ([UNCHECKED, REFUSED], 1, "the clocks agree), unsigned\n"),
    ([REFUSED], 1, "the clocks agree), unsigned\n"),
])
def test_only_a_refusal_fails_run_own(launched, capsys, problems, status, said):
    assert launched(problems) == status
    out, err = capsys.readouterr()
    assert said in err
    assert all(f"[{p.code}]" in out for p in problems)  # each problem is printed, the unchecked schema too
