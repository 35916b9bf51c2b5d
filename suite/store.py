"""The results store: submitted files, content-addressed, never overwritten.

A file lands as ``<results-dir>/<sha256 of its bytes>.json`` (docs/rules.md, "Submitting"):
no string from the document ever reaches a file name. Submission validates the file, then
holds an exclusive ``flock`` on the results directory itself (no lock file is created), refuses
a file whose bytes or whose run ids are already stored, and writes through a temp file with
fsync and a hard link, which fails rather than overwrite. A refused submission leaves the
store byte-identical. A submission that lands also removes the temp files that killed writers
left in the store (those no live writer holds locked, :mod:`suite.tempfiles`); readers never
see them (:func:`stored_files` lists ``*.json`` names that do not start with a dot).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from suite.errors import GoodbenchError
from suite.results import write_atomic
from suite.tempfiles import remove_abandoned, temp_files
from suite.validate import Problem, check_document, parse, read_bounded

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Refused(GoodbenchError):
    """The submission was refused; ``problems`` says why."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(p.reason for p in problems))
        self.problems = problems


def safe_filename(text: str, limit: int = 64, key: str | None = None) -> str:
    """A file-name component from any string: [A-Za-z0-9._-] only, no leading dot, bounded.

    For code that names files after document strings (system names, workload ids); never
    empty, never ``.``/``..``, never a path. With ``key`` (the site passes the full string),
    "-" and 8 hex digits of its sha256 are appended, so distinct keys give distinct names.
    """
    clean = _UNSAFE.sub("-", str(text)).strip(".-")[:limit].strip(".-") or "unnamed"
    if key is None:
        return clean
    return f"{clean}-{hashlib.sha256(str(key).encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


@contextlib.contextmanager
def locked(results_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the (existing) results directory."""
    fd = os.open(results_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def stored_files(results_dir: str | Path) -> list[Path]:
    """Every results file in the store, in name order (temp files start with a dot)."""
    return sorted(p for p in Path(results_dir).glob("*.json") if not p.name.startswith("."))


def _stored_run_ids(results_dir: Path) -> dict[str, str]:
    ids: dict[str, str] = {}
    for path in stored_files(results_dir):
        try:
            doc = json.loads(path.read_bytes())
            for run in doc.get("runs", []):
                ids[run["run_id"]] = path.name
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # a stored file we cannot read claims no run ids
    return ids


def _duplicates(doc: dict, dest: Path, results_dir: Path) -> list[Problem]:
    if dest.exists():
        return [Problem("duplicate", "", f"already submitted as {dest.name}")]
    known = _stored_run_ids(results_dir)
    return [Problem("duplicate-run", f"runs[{i}].run_id", f"run {run['run_id']} is already stored in {known[run['run_id']]}")
            for i, run in enumerate(doc["runs"]) if run["run_id"] in known]


def submit(path: str | Path, results_dir: str | Path) -> Path:
    """Validate ``path`` and store it; returns where it landed or raises :class:`Refused`."""
    results_dir = Path(results_dir)
    raw, problems = read_bounded(path)
    if problems or raw is None:
        raise Refused(problems)
    doc, problems = parse(raw)
    problems = problems or check_document(doc)
    if problems:
        raise Refused(problems)
    dest = results_dir / f"{hashlib.sha256(raw).hexdigest()}.json"
    if dest.exists():  # refuse before touching anything, even the directory
        raise Refused([Problem("duplicate", "", f"already submitted as {dest.name}")])
    results_dir.mkdir(parents=True, exist_ok=True)
    with locked(results_dir):
        problems = _duplicates(doc, dest, results_dir)
        if problems:
            raise Refused(problems)
        remove_abandoned(temp_files(results_dir))  # a killed writer's, never a live one's
        try:
            write_atomic(dest, raw, overwrite=False)
        except FileExistsError:
            raise Refused([Problem("duplicate", "", f"already submitted as {dest.name}")]) from None
    return dest
