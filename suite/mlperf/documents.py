"""Imported MLPerf Training results: documents of their own kind, stored apart from goodbench's.

One document per round × submitter × system × benchmark (kind :data:`KIND`, JSON Schema
``suite/mlperf/schema/mlperf-import-v3.json``), stored as ``<results-dir>/mlperf/<sha256>.json``
where the hash is of the document's identity (round, org folder, system folder, benchmark
folder) — never of a string that reaches a file name. goodbench's store, validator and
leaderboard read only the ``*.json`` files at the top of the results directory, so an imported
document is never taken for (or ranked against) a goodbench results file.

The encoding is compact and stable — no indentation, a line per top-level key and per run, the
runs as a table (``{"columns": [...], "rows": [[...], ...]}``: the schema's run fields in its
order, those no run has left out) — so that a round's documents stay small in the repository
(the runs' repeated field names were 23% of the documents' bytes) and importing the same
files again gives the same bytes ("unchanged"). :func:`decode` turns the table back into the
document the schema describes, a list of runs, which is all any reader sees. Importing again from the same source files with another importer
version rewrites the document ("updated"); a document from *other* source files (another tree
reusing the same folder names, or changed logs) is never replaced unless asked ("replaced"); by
default it is kept ("kept") and the import says so. Every string of a document is free of
control, bidi and zero-width characters (the importer writes them as ``\\uXXXX``), so none can
reach a page or a terminal.
"""
from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from suite.mlperf import files
from suite.record import reading
from suite.record.results import write_atomic
from suite.record.text import GITHUB, github_address, refused_string_at, safe
from suite.schema.checker import UNCHECKED, SchemaCheck

KIND = "mlperf-training-import"
SCHEMA_VERSION = 3
SCHEMA_FILE = "schema/mlperf-import-v3.json"
SUBFOLDER = "mlperf"
LABEL = ("Derived by goodbench from published MLPerf Training results; not an MLPerf result "
         "and not verified by MLCommons.")
MAX_BYTES = 8 * 2 ** 20
MAX_ERRORS = 100  # schema errors listed per document: the work is bounded by what is shown


class InvalidDocument(ValueError):
    """An imported document that does not match its schema."""


@cache
def schema() -> dict:
    return json.loads(resources.files("suite.mlperf").joinpath(SCHEMA_FILE).read_text("utf-8"))


CHECK = SchemaCheck(schema)


def problems(doc: Any) -> list[str]:
    """The problems of a document, one line each (empty: valid): its schema's, any string
    holding a control, bidi or zero-width character, and a ``source.repository`` that is not an
    address on GitHub (:func:`suite.record.text.github_address`), where MLCommons publishes its
    results and where the import's repository always is: the pages link to it."""
    errors = CHECK.errors(doc, MAX_ERRORS)
    if errors is None:
        return [UNCHECKED]
    found = [f"{'/'.join(map(str, e.path)) or '(document)'}: {e.message[:200]}" for e in errors]
    where = refused_string_at(doc) if not found else None
    if where is not None:
        found.append(f"{where}: a control, bidi or zero-width character in a string")
    if not found and github_address(repository := doc["source"]["repository"]) is None:
        found.append(f"source/repository: {safe(repository)} is not an address on GitHub ({GITHUB}…), where "
                     "MLCommons publishes results")
    return found


SCORE_TOLERANCE = 1e-9  # relative: the stored score against the one its runs give (float rounding only)
NOT_RUNS = ("absent", "duplicate")  # run statuses that stand for no run of the score (importer)


def olympic_average(scores: list[float], dropped: int, allowed: int) -> float | None:
    """result_summarizer's ``_compute_olympic_average`` (mlperf-logging 4.1.68), written out so
    that reading a stored document needs no mlperf-logging: the scores sorted, the ``allowed``
    fastest left out and as many of the slowest as a dropped run does not already stand for;
    None where none is left."""
    ordered = sorted(scores)
    kept = ordered[allowed:len(ordered) - (allowed - dropped)]
    return sum(kept) / len(kept) if kept else None


def _derived_minutes(doc: dict, at_round: bool) -> float | None:
    """The score of a document's own runs, as the importer computes it: the olympic average of
    the counted runs' times to train (minutes; v0.6's seconds are taken as result_summarizer takes
    them) times the stored RCP factor; None where it gives none."""
    from suite.mlperf.scoring import max_dropped

    runs = [r for r in doc["runs"] if r.get("status") not in NOT_RUNS]
    counted = [r for r in runs if r["counted"] or (at_round and r.get("at_round"))]
    times = [r.get("time_to_train_s") for r in counted]
    factor = doc["score"]["rcp_scaling_factor"]
    if factor is None or any(t is None for t in times):
        return None
    per_minute = 60 * (1000 if doc["source"]["ruleset"] == "0.6.0" else 1)
    average = olympic_average([t / per_minute for t in times], len(runs) - len(counted), max_dropped(doc["benchmark"]))
    return None if average is None else average * factor


def disagreement(doc: dict) -> str | None:
    """Why a valid document's stored figures disagree with its own runs and system (None: they
    agree): a ``source.verified`` must name the round's pinned commit, the score (and the round's
    checker's score) must be the olympic average × RCP of its runs, and the accelerators nodes ×
    accelerators per node where both are given. A document the
    import wrote always agrees; one edited by hand or in a pull request may not, and is not read."""
    from suite.mlperf.published import PINNED

    verified = doc["source"].get("verified")
    if verified is not None and verified["commit"] != PINNED.get(doc["source"]["round"]):
        return (f"source/verified: commit {verified['commit'][:12]} is not the commit of round "
                f"{doc['source']['round']} this goodbench checks against")
    system = doc["system"]
    nodes, per_node = system.get("nodes"), system.get("accelerators_per_node")
    if nodes is not None and per_node is not None and system.get("accelerators") != nodes * per_node:
        return (f"system/accelerators: {safe(system.get('accelerators'), 20)} is not nodes × accelerators per node "
                f"({nodes} × {per_node} = {nodes * per_node})")
    score = doc["score"]
    for where, stored, at_round in (("score/minutes", score["minutes"], False),
                                    ("score/at_round/minutes", (score.get("at_round") or {}).get("minutes"), True)):
        if stored is None:
            continue
        derived = _derived_minutes(doc, at_round)
        if derived is None or abs(derived - stored) > SCORE_TOLERANCE * max(abs(derived), abs(stored)):
            return (f"{where}: {stored:.6g} is not the olympic average × RCP factor of the document's own runs "
                    f"({'none' if derived is None else f'{derived:.6g}'})")
    return None


def identity(round_name: str, org_folder: str, system_folder: str, benchmark_folder: str) -> str:
    """The stored file's name (without ``.json``): sha256 of the document's identity."""
    key = "\0".join((KIND, round_name, org_folder, system_folder, benchmark_folder))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@cache
def _run_fields() -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    """(a run's fields in the schema's order, those a run may leave out although they take null,
    those every run has).
    A run without a field stores null in its cell; where null is also a value of the field
    (``energy_j``: no power log read), a run without it stores false, which no such field takes."""
    items = schema()["properties"]["runs"]["items"]
    required = set(items["required"])
    nullable = {name for name, spec in items["properties"].items()
                if "null" in (spec.get("type") if isinstance(spec.get("type"), list) else [spec.get("type")])}
    return tuple(items["properties"]), frozenset(nullable - required), frozenset(required)


def _run_table(runs: list[dict]) -> str:
    fields, marked, _ = _run_fields()
    columns = [f for f in fields if any(f in run for run in runs)]
    rows = ",\n".join(_dumps([run.get(c, False if c in marked else None) for c in columns]) for run in runs)
    return f'{{"columns":{_dumps(columns)},"rows":[\n{rows}\n]}}' if runs else '{"columns":[],"rows":[]}'


def encode(doc: dict) -> bytes:
    """The stored bytes: compact JSON, one line per top-level key and per run (the runs as a
    table, see the module docstring)."""
    lines = [f'"runs":{_run_table(value)}' if key == "runs" else f"{_dumps(key)}:{_dumps(value)}"
             for key, value in doc.items()]
    return ("{" + ",\n".join(lines) + "}\n").encode("utf-8")


def decode(stored: Any) -> Any:
    """The document a stored one holds: its runs' table as a list of runs (a list given as it is).
    ValueError for a table of another shape (unknown or repeated columns, rows of another
    length); anything else is left to :func:`problems`."""
    if not isinstance(stored, dict) or not isinstance(stored.get("runs"), dict):
        return stored
    table = stored["runs"]
    fields, marked, required = _run_fields()
    columns, rows = table.get("columns"), table.get("rows")
    if set(table) != {"columns", "rows"} or not isinstance(columns, list) or not isinstance(rows, list):
        raise ValueError("runs: a table is {\"columns\": [...], \"rows\": [...]}")
    if any(not isinstance(c, str) or c not in fields for c in columns) or len(set(columns)) != len(columns):
        raise ValueError("runs.columns: not the schema's run fields, each once")
    runs = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise ValueError(f"runs.rows/{i}: not a row of {len(columns)} cells")
        runs.append({c: v for c, v in zip(columns, row)
                     if c in required or v is not (False if c in marked else None)})
    return {**stored, "runs": runs}


def read(path: str | Path) -> dict:
    """The document stored at ``path`` (bounded, strict JSON, decoded; not validated)."""
    doc, found = reading.parse(files.read_bytes(Path(path), MAX_BYTES))
    if found:
        raise ValueError(f"{path}: {found[0].reason}")
    return decode(doc)


def sources(doc: dict) -> dict[str, str | None]:
    """What a document was imported from: its system description's and scaling.json's sha256 by
    path, and the digest of its result logs (``logs``)."""
    found: dict[str, str | None] = {f["path"]: f["sha256"] for f in doc["source"]["files"]}
    found["result logs"] = doc["source"]["logs"]["sha256"]
    return found


def path_of(doc: dict, results_dir: str | Path) -> Path:
    src = doc["source"]
    name = identity(src["round"], src["org_folder"], src["system_folder"], src["benchmark_folder"])
    return Path(results_dir) / SUBFOLDER / f"{name}.json"


def _stored(path: Path) -> tuple[bytes | None, dict | None]:
    """The bytes and the document stored at ``path`` (None where absent or unreadable)."""
    try:
        raw = files.read_bytes(path, MAX_BYTES)
    except files.Unreadable:
        return None, None
    doc, found = reading.parse(raw)
    try:
        doc = decode(doc)
    except ValueError:
        return raw, None
    return raw, doc if not found and isinstance(doc, dict) and not problems(doc) else None


def store(doc: dict, results_dir: str | Path, replace: bool = False) -> tuple[Path, str]:
    """Write ``doc`` under ``<results_dir>/mlperf/``; returns (path, "new" | "updated" |
    "unchanged" | "replaced" | "kept"). "kept": a document from other source files is stored
    there and ``replace`` is False, so nothing is written. Raises :class:`InvalidDocument` for
    a document that is not valid (:func:`problems`)."""
    found = problems(doc)
    if found:
        raise InvalidDocument(found[0])
    path = path_of(doc, results_dir)
    payload = encode(doc)
    if not path.exists() and not path.is_symlink():
        write_atomic(path, payload)
        return path, "new"
    raw, old = _stored(path)
    if raw == payload:
        return path, "unchanged"
    if old is not None and sources(old) == sources(doc):
        write_atomic(path, payload)
        return path, "updated"
    if not replace:
        return path, "kept"
    write_atomic(path, payload)
    return path, "replaced"


def differing_sources(doc: dict, results_dir: str | Path) -> list[str] | None:
    """What differs between the sources of the document stored at ``doc``'s place and
    ``doc``'s ("result logs", a description's path); None: the stored one cannot be read."""
    _, old = _stored(path_of(doc, results_dir))
    if old is None:
        return None
    before, after = sources(old), sources(doc)
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def load_all(results_dir: str | Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """Every valid imported document under ``<results_dir>/mlperf/`` (name order) and the files
    not read, with why (file name, one line)."""
    docs: list[dict] = []
    bad: list[tuple[str, str]] = []
    # the validator's hostile-safe reader: regular files only, bounded, strict JSON
    for path, doc in reading.load_folder(Path(results_dir) / SUBFOLDER, "*.json", MAX_BYTES, bad):
        if isinstance(doc, dict) and doc.get("kind") == KIND and doc.get("schema_version") != SCHEMA_VERSION:
            bad.append((path.name, f"schema_version {str(doc.get('schema_version'))[:20]}: written by another "
                                   f"goodbench (this one reads {SCHEMA_VERSION}); import the source again"))
            continue
        try:
            doc = decode(doc)
        except ValueError as exc:
            bad.append((path.name, str(exc)))
            continue
        found = problems(doc)
        if not found and (differs := disagreement(doc)) is not None:
            found = [differs]
        if found:
            bad.append((path.name, found[0]))
        else:
            docs.append(doc)
    return docs, bad
