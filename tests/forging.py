"""How a forger works, for the forgery tests (tests/test_forgery.py, tests/test_forgery_claims.py).

A forgery takes a real smoke result (tests/fixtures/reference-smoke.json: one CPU run of each of
the five workloads, with its event log, written under the current rules), changes one record or claim, and then recomputes every
figure derived from the records with the functions the runner writes them with and the validator
recomputes them with (:func:`repair`, through :mod:`suite.figures.recompute`). The honest files are that
reference result and the valid corpus.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

from suite import validate as v
from suite.figures import derive
from suite.figures.recompute import recompute_document
from suite.record import mllog

REPO = Path(__file__).resolve().parent.parent
CORPUS_VALID = sorted((REPO / "tests" / "corpus" / "valid").glob("*.json"))
TTA = ("lm-char", "fashion-cnn", "dlrm-small")
THROUGHPUT = ("gpt2-124m", "llama-1b")


REFERENCE = REPO / "tests" / "fixtures" / "reference-smoke.json"
"""A real CPU smoke result of the five workloads, each run with its event log, written under the
current rules (``goodbench run --device cpu --scale smoke --no-sign``). The tests read it here,
never from results/, so that what a user stores there changes no test; when the rules version
goes up, a new run replaces it (docs/rules.md)."""
STORED_CURRENT = [REFERENCE]
"""The real results written under the current rules that the tests start from."""
HONEST = STORED_CURRENT + CORPUS_VALID


def _smoke_file() -> Path:
    doc = json.loads(REFERENCE.read_text())
    logged = {r["workload"]["id"] for r in doc["runs"] if r.get("event_log")}
    if doc.get("rules_version") != v.RULES_VERSION or logged < set(TTA + THROUGHPUT):
        raise AssertionError(f"{REFERENCE} is not a smoke result of the five workloads with their event logs "
                             f"written under rules v{v.RULES_VERSION}: run the suite again to replace it")
    return REFERENCE


SMOKE = json.loads(_smoke_file().read_text())


def real(workload_id: str) -> dict:
    """The stored smoke result cut down to its one run of ``workload_id`` (summary recomputed)."""
    doc = copy.deepcopy(SMOKE)
    doc["runs"] = [r for r in doc["runs"] if r["workload"]["id"] == workload_id]
    doc["settings"]["workloads"] = [workload_id]
    doc["summary"] = derive.summary(doc["runs"])
    return json.loads(json.dumps(doc))


def repair(doc: dict) -> dict:
    """What a forger recomputes after editing one record: every figure the validator derives from
    its own inputs — steps, throughput and its window, the phases, MFU and the ceiling's share, time
    to target, final quality, energy per sample and token, mean power, goodput (from the event log
    as it now reads), injected kills and the summary — with :mod:`suite.figures.derive`, as the runner does.
    Returns the document as its file reads back."""
    return json.loads(json.dumps(recompute_document(doc), allow_nan=False))


def edit_log(run: dict, edit) -> None:
    """Apply ``edit(event) -> event`` to every line of the run's event log (a forger's log edit)."""
    run["event_log"] = [mllog.format_event(edit(e)) for e in mllog.parse(run["event_log"])]


def moved(event: mllog.Event, **changes) -> mllog.Event:
    """``event`` with some of its fields changed."""
    fields = {"time_ms": event.time_ms, "event_type": event.event_type, "key": event.key,
              "value": event.value, "metadata": event.metadata, "namespace": event.namespace}
    return mllog.Event(**{**fields, **changes})


def set_logged(run: dict, **values) -> None:
    """The log's header events keyed in ``values`` given those values (a forger who keeps the log
    and edits it to tell the same story as the file)."""
    edit_log(run, lambda e: moved(e, value=values[e.key]) if e.key in values else e)


def codes(doc: dict) -> set[str]:
    """The codes of every problem of ``doc``."""
    return {p.code for p in v.check_document(doc)}
