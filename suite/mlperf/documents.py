"""Imported MLPerf Training results: documents of their own kind, stored apart from goodbench's.

One document per round × submitter × system × benchmark (kind :data:`KIND`, JSON Schema
``suite/mlperf/schema/mlperf-import-v1.json``), stored as ``<results-dir>/mlperf/<sha256>.json``
where the hash is of the document's identity (round, submitter folder, system folder,
benchmark) — never of a string that reaches a file name. goodbench's store, validator and
leaderboard read only the ``*.json`` files at the top of the results directory, so an imported
document is never taken for (or ranked against) a goodbench results file.

Importing the same source again gives the same bytes ("unchanged"); a changed source (its
files' sha256 are in the document) replaces the document ("updated"). The documents are
derived data: the source tree is the record, and the document says where it came from.
"""
from __future__ import annotations

import hashlib
import json
import math
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from suite.results import write_atomic
from suite.validate import reading

KIND = "mlperf-training-import"
SCHEMA_VERSION = 1
SUBFOLDER = "mlperf"
LABEL = ("Derived by goodbench from published MLPerf Training results; not an MLPerf result "
         "and not verified by MLCommons.")
MAX_BYTES = 8 * 2 ** 20


class InvalidDocument(ValueError):
    """An imported document that does not match its schema."""


@cache
def schema() -> dict:
    text = resources.files("suite.mlperf").joinpath("schema/mlperf-import-v1.json").read_text("utf-8")
    return json.loads(text)


@cache
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(schema())


def problems(doc: Any) -> list[str]:
    """The schema problems of a document, one line each (empty: valid)."""
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(document)'}: {e.message[:200]}"
            for e in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def identity(round_name: str, org_folder: str, system_folder: str, benchmark: str) -> str:
    """The stored file's name (without ``.json``): sha256 of the document's identity."""
    key = "\0".join((KIND, round_name, org_folder, system_folder, benchmark))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _finite(value):
    """JSON cannot hold NaN or infinity: such a number becomes None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def encode(doc: dict) -> bytes:
    return (json.dumps(_finite(doc), indent=1, sort_keys=False, allow_nan=False,
                       ensure_ascii=False) + "\n").encode("utf-8")


def store(doc: dict, results_dir: str | Path) -> tuple[Path, str]:
    """Write ``doc`` under ``<results_dir>/mlperf/``; returns (path, "new" | "updated" |
    "unchanged"). Raises :class:`InvalidDocument` for a document its schema refuses."""
    found = problems(doc)
    if found:
        raise InvalidDocument(found[0])
    src = doc["source"]
    name = identity(src["round"], src["org_folder"], doc["system"]["folder"], doc["benchmark"])
    path = Path(results_dir) / SUBFOLDER / f"{name}.json"
    payload = encode(doc)
    if path.is_file():
        if path.read_bytes() == payload:
            return path, "unchanged"
        write_atomic(path, payload)
        return path, "updated"
    write_atomic(path, payload)
    return path, "new"


def load_all(results_dir: str | Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """Every valid imported document under ``<results_dir>/mlperf/`` (name order) and the files
    not read, with why (file name, one line)."""
    docs: list[dict] = []
    bad: list[tuple[str, str]] = []
    folder = Path(results_dir) / SUBFOLDER
    if not folder.is_dir():
        return docs, bad
    for path in sorted(p for p in folder.glob("*.json") if not p.name.startswith(".")):
        # the validator's hostile-safe reader: regular files only, bounded, strict JSON
        doc, unreadable = reading.load(path, MAX_BYTES)
        if unreadable:
            bad.append((path.name, f"{unreadable[0].reason} [{unreadable[0].code}]"))
            continue
        found = problems(doc)
        if found:
            bad.append((path.name, found[0]))
        else:
            docs.append(doc)
    return docs, bad
