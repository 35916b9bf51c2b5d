"""The results store: submitted files, content-addressed, never overwritten.

A file lands as ``<results-dir>/<sha256 of its bytes>.json``. Submission holds an exclusive
lock on ``<results-dir>/.lock``, writes through a temp file with fsync and a hard link (which
fails rather than overwrite), and refuses a file whose bytes or whose run ids are already in
the store. A refused submission leaves the store byte-identical.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
from pathlib import Path
from typing import Iterator

from suite.errors import GoodbenchError
from suite.results import write_atomic
from suite.validate import MAX_FILE_BYTES, Problem, check_document, parse


class Refused(GoodbenchError):
    """The submission was refused; ``problems`` says why."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(p.reason for p in problems))
        self.problems = problems


@contextlib.contextmanager
def locked(results_dir: Path) -> Iterator[None]:
    """Hold the store's exclusive lock."""
    results_dir.mkdir(parents=True, exist_ok=True)
    with open(results_dir / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def stored_files(results_dir: Path) -> list[Path]:
    """Every results file in the store, in name order."""
    return sorted(p for p in Path(results_dir).glob("*.json") if not p.name.startswith("."))


def _stored_run_ids(results_dir: Path) -> dict[str, str]:
    ids: dict[str, str] = {}
    for path in stored_files(results_dir):
        try:
            doc = json.loads(path.read_text())
            for run in doc.get("runs", []):
                ids[run["run_id"]] = path.name
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # a stored file we cannot read claims no run ids
    return ids


def submit(path: str | Path, results_dir: str | Path) -> Path:
    """Validate ``path`` and store it; returns where it landed or raises :class:`Refused`."""
    results_dir = Path(results_dir)
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise Refused([Problem("file-too-large", "", f"{size} bytes is over the {MAX_FILE_BYTES}-byte limit")])
        raw = path.read_bytes()
    except OSError as exc:
        raise Refused([Problem("unreadable", "", f"cannot read the file ({exc.strerror or exc})")]) from None
    doc, problems = parse(raw)
    problems = problems or check_document(doc)
    if problems:
        raise Refused(problems)
    digest = hashlib.sha256(raw).hexdigest()
    dest = results_dir / f"{digest}.json"
    with locked(results_dir):
        if dest.exists():
            raise Refused([Problem("duplicate", "", f"already submitted as {dest.name}")])
        known = _stored_run_ids(results_dir)
        for i, run in enumerate(doc["runs"]):
            if run["run_id"] in known:
                raise Refused([Problem("duplicate-run", f"runs[{i}].run_id",
                                       f"run {run['run_id']} is already stored in {known[run['run_id']]}")])
        try:
            write_atomic(dest, raw, overwrite=False)
        except FileExistsError:
            raise Refused([Problem("duplicate", "", f"already submitted as {dest.name}")]) from None
    return dest
