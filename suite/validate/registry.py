"""The problem codes and the rules, each registered where it is defined: the source of truth for
what the validator can say (:data:`CODES`) and what it runs (:func:`rules`).

A code is registered once with its one-line meaning (:func:`code`); a rule is a function
registered with :func:`document_rule`, :func:`frame_rule` or :func:`run_rule`, naming the codes it
may raise (all registered before it) and described by the first sentence of its docstring
(:func:`describe`: whole, though it runs over several lines, its markup dropped). Rules of one
scope run in the order they are registered: the order of :data:`suite.validate.RULE_MODULES`, then
of the rules in each module. Every code is listed in docs/rules.md (tests/test_rules_doc.py).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from suite.record.limits import MAX_PROBLEMS
from suite.record.problems import CODES, SINCE, Problem, code  # noqa: F401 - the registry's codes
from suite.record.text import safe

DOCUMENT = "document"  # check(doc, runs, now): the whole file; runs: the (index, run) that passed the schema
FRAME = "frame"        # check(run, where, doc): one run that passed the schema, before its facts are read
RUN = "run"            # check(run, where, doc, facts): one run that passed the schema and its frame rules


@dataclass(frozen=True)
class Rule:
    """A registered rule: its ``check``, its ``scope`` (:data:`DOCUMENT`, :data:`FRAME` or
    :data:`RUN`), the codes it may raise and a one-line description."""

    check: Callable[..., list[Problem]]
    scope: str
    codes: tuple[str, ...]
    description: str

    @property
    def name(self) -> str:
        return self.check.__name__


_rules: dict[str, list[Rule]] = {DOCUMENT: [], FRAME: [], RUN: []}

Check = TypeVar("Check", bound=Callable[..., Any])


def describe(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph on one line, its reST markup
    (``:func:`name```, double backticks) dropped: what the methodology page shows of a rule."""
    paragraph = []
    for line in (doc or "").strip().splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    text = re.sub(r":[a-z]+:`([^`]*)`", r"\1", " ".join(paragraph)).replace("``", "")
    end = re.search(r"\.\s", text)
    return text[:end.start() + 1] if end else text


def rule(scope: str, *codes: str) -> Callable[[Check], Check]:
    """Register the decorated function as a rule of ``scope`` that may raise ``codes``."""
    unknown = [c for c in codes if c not in CODES]
    if scope not in _rules or not codes or unknown:
        raise ValueError(f"a rule needs a scope of {sorted(_rules)} and registered codes (unknown: {unknown})")

    def register(check: Check) -> Check:
        description = describe(check.__doc__)
        if not description:
            raise ValueError(f"rule {check.__name__} has no docstring to describe it")
        _rules[scope].append(Rule(check, scope, tuple(codes), description))
        return check

    return register


def document_rule(*codes: str) -> Callable[[Check], Check]:
    """Register a rule over the whole document: ``check(doc, runs, now) -> list[Problem]``."""
    return rule(DOCUMENT, *codes)


def frame_rule(*codes: str) -> Callable[[Check], Check]:
    """Register a rule over one run's frame, which the run's facts and every run rule assume (its
    workload is this suite's, its step times are numbers): ``check(run, where, doc) ->
    list[Problem]``. The first frame rule that finds a problem ends the run's checks."""
    return rule(FRAME, *codes)


def run_rule(*codes: str) -> Callable[[Check], Check]:
    """Register a rule over one run: ``check(run, where, doc, facts) -> list[Problem]``."""
    return rule(RUN, *codes)


def rules(scope: str) -> tuple[Rule, ...]:
    """The rules of ``scope``, in the order they run."""
    return tuple(_rules[scope])


# ---------------------------------------------------------------- the report's own codes
code("internal-error", "a rule failed on this input (a bug in the validator: please report it)")
code("too-many-problems", "more problems than are listed")


def guard(check: Callable[..., list[Problem]], *args) -> list[Problem]:
    """Run one check; an unexpected failure becomes a problem, never a traceback."""
    try:
        return list(check(*args))
    except Exception as exc:  # any failure: the validator must give a verdict for any input
        return [Problem("internal-error", "", safe(f"{check.__name__} failed: {type(exc).__name__}: {exc}", 200))]


def bounded(problems: list[Problem]) -> list[Problem]:
    """At most :data:`MAX_PROBLEMS` problems, then one line saying there are more. Each layer
    stops looking once it has found more than that many, so the rest are not counted."""
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [Problem("too-many-problems", "", f"more than {MAX_PROBLEMS} problems: "
                                                                       "the rest are not listed")]
