"""The rule registry is the source of truth: every code it holds is documented in docs/rules.md,
every code the validator or the store can raise is registered, and each rule raises only the
codes it is registered with."""
from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import pytest

from suite import validate as v
from suite.validate import registry

REPO = Path(__file__).resolve().parent.parent
RULES_DOC = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
# every code docs/rules.md gives, in brackets: [`spec-hash`] or [`mfu-mismatch`, `mfu-above-one`]
DOCUMENTED = {c for group in re.findall(r"\[(`[a-z0-9-]+`(?:,\s+`[a-z0-9-]+`)*)\]", RULES_DOC)
              for c in re.findall(r"`([a-z0-9-]+)`", group)}
SOURCES = sorted((REPO / "suite" / "validate").glob("*.py")) + [REPO / "suite" / "store" / "files.py",
                                                              REPO / "suite" / "record" / "reading.py"]


def _raised_codes(node: ast.AST) -> set[str]:
    """The literal codes of every ``Problem("code", ...)`` under ``node``, and of every
    ``against("code", ...)`` (claim_rules: a problem of that code per value the log contradicts)."""
    return {call.args[0].value for call in ast.walk(node)
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) in ("Problem", "against")
            and call.args and isinstance(call.args[0], ast.Constant)}


@pytest.mark.parametrize("code", sorted(v.CODES))
def test_every_registered_code_is_documented_in_the_rules(code):
    assert code in DOCUMENTED, f"[{code}] ({v.CODES[code]}) is missing from docs/rules.md"


def test_every_documented_code_is_registered():
    assert set(v.CODES) >= DOCUMENTED, sorted(DOCUMENTED - set(v.CODES))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_every_code_raised_in_the_source_is_registered(source):
    raised = _raised_codes(ast.parse(source.read_text(encoding="utf-8")))
    assert raised <= set(v.CODES), sorted(raised - set(v.CODES))


@pytest.mark.parametrize("rule", [*v.rules(v.DOCUMENT), *v.rules(v.FRAME), *v.rules(v.RUN)], ids=lambda r: r.name)
def test_each_rule_raises_only_its_registered_codes_and_describes_itself(rule):
    raised = _raised_codes(ast.parse(inspect.getsource(rule.check).lstrip()))
    assert raised and raised <= set(rule.codes), (sorted(raised), rule.codes)
    assert rule.description and "\n" not in rule.description
    # a whole sentence, though the docstring's first one runs over several lines, and no reST markup
    assert rule.description.endswith((".", ")")) and "`" not in rule.description, rule.description


def test_codes_are_stable_and_rules_name_only_registered_codes():
    assert v.code("schema", v.CODES["schema"]) == "schema"  # the same meaning again: accepted
    with pytest.raises(ValueError):
        v.code("schema", "another meaning")
    with pytest.raises(ValueError):
        v.run_rule("no-such-code")
    with pytest.raises(TypeError):
        v.CODES["new-code"] = "x"  # a read-only view of the registry
    assert "no-such-code" not in v.CODES


def test_rules_version_is_a_positive_integer_shared_with_the_results_writer():
    from suite.record import results, rules_version

    assert type(v.RULES_VERSION) is int and v.RULES_VERSION >= 1
    assert v.RULES_VERSION == rules_version.RULES_VERSION
    assert results.new_document({}, {}, [])["rules_version"] == v.RULES_VERSION


def test_control_characters_have_one_definition():
    from suite.record import text

    assert v.has_control_chars("a\u202eb") and v.has_control_chars("\x00") and not v.has_control_chars("ok é")
    assert v.printable("a\nb\u200bc") == "a\\u000ab\\u200bc"
    assert v.printable("plain – text") == "plain – text"
    doc = {"system": "bad\u2066name"}
    assert [p.code for p in v.walk(doc)] == ["control-char"]
    assert all(text.has_control_chars(chr(c)) for c in range(0x20))
    assert registry.CODES is v.CODES


def test_a_missing_value_reads_nothing_in_a_problem_never_none():
    from suite.record.text import safe

    assert safe(None) == "nothing" and safe("None") == "None" and safe(0) == "0"


def _validate_modules_imported(path: Path) -> set[str]:
    """The modules of suite.validate that ``path`` imports (``from suite.validate.x import …``,
    ``from suite.validate import x``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "suite.validate":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("suite.validate."):
            found.add(node.module.split(".")[2])
    return found


def test_rules_run_in_the_order_of_rule_modules_and_no_rule_module_imports_another():
    rule_files = {p.stem: p for p in (REPO / "suite" / "validate").glob("*_rules.py")}
    assert sorted(v.RULE_MODULES) == sorted(rule_files)  # every rule module is in the list, once
    for name, path in rule_files.items():
        assert not _validate_modules_imported(path) & set(rule_files), f"{name} imports a rule module"
    for other in SOURCES:  # and no other module imports one (its rules would register out of order)
        if other.stem not in rule_files:
            assert not _validate_modules_imported(other) & set(rule_files), f"{other.name} imports a rule module"
    for scope in (v.DOCUMENT, v.FRAME, v.RUN):
        order = [v.RULE_MODULES.index(rule.check.__module__.rsplit(".", 1)[-1]) for rule in v.rules(scope)]
        assert order == sorted(order), scope


def test_a_frame_rule_that_finds_a_problem_ends_the_runs_checks():
    doc = json.loads((REPO / "tests" / "corpus" / "valid" / "lm-char-smoke.json").read_text(encoding="utf-8"))
    run = doc["runs"][0]
    assert v.check_run(run, "runs[0]", doc) == []
    run["metrics"]["tta_s"] /= 2  # a run rule would find this (tta-mismatch) ...
    run["workload"]["version"] += 1  # ... but the frame is broken first
    assert [p.code for p in v.check_run(run, "runs[0]", doc)] == ["workload-version"]
    run["workload"]["version"] -= 1
    run["step_times_s"][1] = -0.5
    assert [p.code for p in v.check_run(run, "runs[0]", doc)] == ["time-order"]
    run["step_times_s"][1] = 0.5
    assert "tta-mismatch" in [p.code for p in v.check_run(run, "runs[0]", doc)]
