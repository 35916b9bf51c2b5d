"""Validation of results files: every rule a registered function returning problems, never raising.

A problem names the field (dotted path) and the reason, with a stable code (``CODES``). A file
gets all of its problems listed. The order of the layers, one module each:

1. bytes (:mod:`suite.record.reading`): size limit before reading, UTF-8, JSON without duplicate keys or
   NaN/Infinity;
2. one generic walk of the whole document (:mod:`.walk`): nesting depth, array and object sizes,
   string lengths, control characters (:mod:`suite.record.text`), non-finite or out-of-range numbers;
3. the JSON Schema (draft 2020-12) and the schema version (:mod:`.schema`);
4. the rules of docs/rules.md, registered in :mod:`.registry` by the rule modules, which run in
   the order of :data:`RULE_MODULES` (each says what it holds): first the document rules (the
   whole file), then, for each run that passed the schema, its frame rules (its workload is this
   suite's, its step times are numbers; the first that finds a problem ends the run's checks),
   then its run rules, on the facts recomputed from the raw data in the file (:mod:`.facts`).

Layers 3 and 4 run only when layer 2 found nothing: the rules may then assume finite numbers
and bounded sizes. The work is bounded by the input's size: every layer stops once it has more
problems than are listed (:data:`MAX_PROBLEMS`), and no rule runs once the schema's listing is
full (the schema lists at most that many: which runs passed it is then not known). A rule that fails unexpectedly is reported as ``internal-error`` rather than
raising, so any input gets a verdict. ``RULES_VERSION`` is the version of these rules, recorded
in every new results file.
"""
from __future__ import annotations

import datetime as dt
import importlib
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from suite.record.limits import (
    MAX_ARRAY_ITEMS,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_INT,
    MAX_KEY_CHARS,
    MAX_OBJECT_KEYS,
    MAX_PROBLEMS,
    MAX_STRING_CHARS,
)
from suite.record.reading import load, parse, read_bounded
from suite.record.results import division
from suite.record.rules_version import RULES_VERSION
from suite.record.text import has_control_chars, printable
from suite.validate.facts import pinned_of, run_facts
from suite.validate.registry import (
    CODES,
    DOCUMENT,
    FRAME,
    RUN,
    SINCE,
    Problem,
    Rule,
    bounded,
    code,
    document_rule,
    guard,
    rules,
    run_rule,
)
from suite.validate.schema import schema_problems
from suite.validate.shared import V7, held_to
from suite.validate.tolerance import CLOCK_SLACK, POWER_MARGIN, REL_TOLERANCE
from suite.validate.walk import walk

RULE_MODULES = (
    "document_rules",      # the whole file: division, timestamps, seeds, run ids, summary
    "run_rules",           # each run: its frame (workload, step times), then every figure recomputed
    "stream_rules",        # each run's records against its event log
    "claim_rules",         # what each run is, against the event log's header; the suite run's span
    "copy_rules",          # one run recorded twice in this file (fingerprints, one curve under two seeds)
    "device_rules",        # the device's claims against its facts
    "physics_rules",       # what the device can do
    "quality_rules",       # the quality claimed, against the curve and the log
    "reproduction_rules",  # a reproduction against its own runs
    "signature_rules",     # the signature over the whole file
    "clock_rules",         # own code's second clock against its runs' own
    "time_rules",          # dates against the rules' own history
)
"""The rule modules of :mod:`suite.validate`, in the order their rules run (within a module, in the
order they are defined). Importing one registers its codes and rules; no rule module imports
another: what several read is in :mod:`.shared`."""
for _module in RULE_MODULES:
    importlib.import_module(f"{__name__}.{_module}")

__all__ = [
    "CLOCK_SLACK", "CODES", "DOCUMENT", "MAX_ARRAY_ITEMS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_INT",
    "MAX_KEY_CHARS", "MAX_OBJECT_KEYS", "MAX_PROBLEMS", "MAX_STRING_CHARS", "POWER_MARGIN",
    "REL_TOLERANCE", "RULE_MODULES", "RULES_VERSION", "FRAME", "RUN", "SINCE", "Problem", "Rule", "check_document", "check_run",
    "refusals",
    "check_stored", "code", "stored_under", "stored_words",
    "division", "document_rule", "has_control_chars", "load", "parse", "printable", "read_bounded",
    "rules", "run_rule", "validate_file", "validate_files", "walk",
]

# the store's codes (suite/store/files.py), raised on submission
code("duplicate", "the same bytes are already stored")
code("duplicate-run", "a run id already stored in another file")
code("duplicate-session", "a suite run (settings.session.id) already stored in another file", since=V7)


def refusals(problems: list[Problem]) -> list[Problem]:
    """The problems that refuse a file: all but ``schema-unchecked`` (no JSON Schema library at
    hand is no refusal: the rules still ran)."""
    return [p for p in problems if p.code != "schema-unchecked"]


def check_document(doc: Any, now: dt.datetime | None = None) -> list[Problem]:
    """Every problem of a parsed document (empty when it is valid)."""
    problems = guard(walk, doc)
    if problems:
        return bounded(problems)
    problems = guard(schema_problems, doc)
    unchecked = [p for p in problems if p.code == "schema-unchecked"]  # no library here: the rules still run
    problems = unchecked + refusals(problems)
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) or len(problems) > MAX_PROBLEMS or any(
            p.field and not p.field.startswith("runs[") or not p.field for p in problems if p not in unchecked):
        return bounded(problems)  # the frame is broken, or the listing full: no rule runs
    broken = {int(p.field[5:p.field.index("]")]) for p in problems if p.field.startswith("runs[")}
    runs = [(i, run) for i, run in enumerate(doc["runs"]) if i not in broken]
    now = now or dt.datetime.now(dt.UTC)
    for rule in rules(DOCUMENT):
        problems += guard(rule.check, doc, runs, now)
    for i, run in runs:
        if len(problems) > MAX_PROBLEMS:
            break  # the listing is full: the rest could only be counted
        problems += guard(check_run, run, f"runs[{i}]", doc)
    return bounded(problems)


def stored_under(doc: Any) -> int | None:
    """The rules version a parsed document is held to as stored: the one it says it was written
    under (none recorded: 1), or — where later — the one a goodbench writing at its ``created_at``
    names (:func:`suite.validate.shared.held_to`: a file dated 2026-11-29 naming v7 is held to v8,
    and shown so); None for a document that is not an object or records something other than a
    whole number."""
    return held_to(doc) if isinstance(doc, dict) else None


def stored_words(doc: Any) -> str | None:
    """The rules a parsed document is held to as stored (:func:`stored_under`), as a line names
    them: "stored under rules vN" for a file that states the version it is held to, "states rules
    v5 (held to v9)" for one its date holds to a later one, "states no rules version (held to vN)"
    for one that states none (held to v1, or to what its date names), so that a file is never said
    to be stored under rules it does not state; None where it is held to none."""
    version = stored_under(doc)
    if version is None:
        return None
    if "rules_version" not in doc:
        return f"states no rules version (held to v{version})"
    stated = doc["rules_version"]
    return f"stored under rules v{version}" if stated == version else f"states rules v{stated} (held to v{version})"


def check_stored(doc: Any, now: dt.datetime | None = None) -> tuple[list[Problem], list[Problem]]:
    """(problems, waived) of a document already in the store. A stored file keeps the status it
    was given under the rules it was written under: the problems of codes that later rules
    versions introduced (:data:`SINCE`) are ``waived`` (listed with the file), not refused.
    ``goodbench submit`` holds every new file to every rule, whatever version it names."""
    problems = check_document(doc, now)
    version = stored_under(doc)
    if version is None or version >= RULES_VERSION:
        return problems, []
    waived = [p for p in problems if SINCE.get(p.code, 1) > version]
    return [p for p in problems if SINCE.get(p.code, 1) <= version], waived


def check_run(run: dict, where: str, doc: dict) -> list[Problem]:
    """Rules for one run record (that passed the schema) of a document: its frame rules, in order,
    until one finds a problem; then, on its facts, every run rule."""
    for rule in rules(FRAME):
        problems = guard(rule.check, run, where, doc)
        if problems:
            return problems
    facts = run_facts(run, doc, pinned_of(run, doc))
    problems = []
    for rule in rules(RUN):
        problems += guard(rule.check, run, where, doc, facts)
    return problems


def validate_file(path: str | Path, now: dt.datetime | None = None) -> list[Problem]:
    """All problems of one results file (empty when it is valid)."""
    doc, problems = load(path)
    return problems if problems else check_document(doc, now)


def validate_files(paths: list[str | Path], workers: int | None = None) -> list[list[Problem]]:
    """Problems of each file, in order; many files are shared out over worker processes
    (``workers`` default: one per CPU once there are at least 100 files)."""
    paths = list(paths)
    if workers is None:
        workers = min(os.cpu_count() or 1, len(paths) // 50)
    if workers <= 1:
        return [validate_file(p) for p in paths]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(validate_file, paths, chunksize=max(1, len(paths) // (8 * workers))))
