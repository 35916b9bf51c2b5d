"""Hypothesis: generated and mutated documents always get a verdict, never an exception."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from suite import validate as v

VALID_BYTES = (Path(__file__).resolve().parent / "corpus" / "valid" / "lm-char-smoke.json").read_bytes()
VALID = json.loads(VALID_BYTES)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

odd_strings = st.one_of(st.text(max_size=50), st.just("x" * 3000), st.just("../../etc/passwd"),
                        st.just("\u202e\x00\ud800"), st.just("1e999"))
odd_numbers = st.one_of(st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                        st.just(2 ** 80), st.just(-1), st.just(0))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), odd_numbers, odd_strings),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=10), inner, max_size=5)),
    max_leaves=20)


def _paths(node, prefix=()):
    """Every (container path, key) in a document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield prefix + (key,)
        yield from _paths(value, prefix + (key,))


PATHS = list(_paths(VALID))


def _nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


mutations = st.sampled_from(["delete", "replace", "nest", "duplicate-run"])


@st.composite
def mutated_documents(draw):
    doc = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            key = path[-1]
            kind = draw(mutations)
            if kind == "delete":
                del parent[key]
            elif kind == "replace":
                parent[key] = draw(json_values)
            elif kind == "nest":
                parent[key] = _nested(draw(st.integers(1, 60)))
            else:
                doc["runs"].append(copy.deepcopy(doc["runs"][0]))
        except (KeyError, IndexError, TypeError, AttributeError):
            continue  # an earlier mutation removed this path (or made runs no list)
    return doc


def _assert_verdict(problems) -> None:
    assert isinstance(problems, list)
    assert all(isinstance(p, v.Problem) and p.code in v.CODES for p in problems)
    assert "internal-error" not in {p.code for p in problems}, problems
    for p in problems:
        p.line("f.json").encode("utf-8")  # printable


@pytest.mark.slow  # a few seconds: 200 examples
@FUZZ
@given(mutated_documents())
def test_mutated_documents_get_a_verdict(doc):
    _assert_verdict(v.check_document(doc))
    try:
        raw = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return
    parsed, problems = v.parse(raw)
    _assert_verdict(problems if problems else v.check_document(parsed))


@pytest.mark.slow
@FUZZ
@given(json_values)
def test_generated_values_get_a_verdict(doc):
    problems = v.check_document(doc)
    _assert_verdict(problems)
    assert problems  # nothing generated at random is a valid results file


@FUZZ
@given(st.binary(max_size=2000), st.integers(0, len(VALID_BYTES)), st.integers(0, 200))
def test_random_bytes_get_a_verdict(noise, at, cut):
    for raw in (noise, VALID_BYTES[:at] + noise + VALID_BYTES[at + cut:]):
        doc, problems = v.parse(raw)
        _assert_verdict(problems if problems else v.check_document(doc))


@pytest.mark.parametrize("ceiling", [[1], "x", {"fp32": [1]}, {"fp32": {"flops": "fast"}}, {"fp32": {"flops": -1.0}}])
def test_a_malformed_matmul_ceiling_is_a_schema_verdict(ceiling):
    """Found by the fuzz test above: settings.matmul_ceiling as a list reached the ceiling rules
    (internal-error); the schema names it."""
    doc = copy.deepcopy(VALID)
    doc["settings"]["matmul_ceiling"] = ceiling
    problems = v.check_document(doc)
    _assert_verdict(problems)
    assert any(p.field.startswith("settings.matmul_ceiling") for p in problems), problems


@pytest.mark.parametrize("key, bad", [
    ("peak_tflops_override", [1]), ("peak_tflops_override", "1"), ("peak_tflops_override", -3.0),
    ("peak_tflops_override", True), ("workloads", "lm-char"), ("workloads", [1]), ("seeds_per_workload", "5"),
    ("checkpoint_every", 0.5), ("inject_failures", [1.5]), ("failure_rate_per_hour", [2]),
    ("interrupted", "no"), ("aborted", {"why": 1}), ("command", "goodbench run"), ("command", [["run"]]),
])
def test_a_settings_value_of_the_wrong_type_is_a_schema_verdict(key, bad):
    """Found by the fuzz test above: settings.peak_tflops_override as a list reached the peak rule
    (internal-error: a list times a float). Every setting goodbench writes is typed by the schema."""
    doc = copy.deepcopy(VALID)
    doc["settings"][key] = bad
    problems = v.check_document(doc)
    _assert_verdict(problems)
    assert any(p.code == "schema" and p.field.startswith(f"settings.{key}") for p in problems), problems
