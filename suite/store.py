"""The results store: submitted files, content-addressed, never overwritten.

A file lands as ``<results-dir>/<sha256 of its bytes>.json`` (docs/rules.md, "Submitting"):
no string from the document ever reaches a file name. Submission validates the file, then
holds an exclusive ``flock`` on the results directory itself (no lock file is created), refuses
a file whose bytes are already stored, or one of whose runs is (the same run id or the same
step times, :mod:`suite.ownership`) — unless the new file is signed by the key that run's id
was minted for and the stored copy is not: the owner's file is stored, and the note says why
("Signed results" in docs/rules.md). It writes through a temp file with fsync and a hard link,
which fails rather than overwrite. A refused submission leaves the store byte-identical, and
nothing stored is ever changed. A submission that lands also removes the temp files that killed
writers left in the store (those no live writer holds locked, :mod:`suite.tempfiles`); readers
never see them (:func:`stored_files` lists ``*.json`` names that do not start with a dot).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from suite import ownership
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


@dataclass(frozen=True)
class Stored:
    """Where a submission landed, and ``notes``: why it was stored though one of its runs was
    already stored (its owner's signature)."""

    path: Path
    notes: tuple[str, ...] = ()


class _StoredRuns:
    """The runs already stored, by run id and by step times; each file's claims
    (:func:`suite.ownership.claims`, which checks its signature) only when asked."""

    def __init__(self, results_dir: Path):
        self.docs: dict[str, dict] = {}
        self.by_id: dict[str, list[tuple[str, int]]] = {}
        self.by_steps: dict[str, list[tuple[str, int]]] = {}
        self._claims: dict[str, list[ownership.Claim]] = {}
        for path in stored_files(results_dir):
            try:
                doc = json.loads(path.read_bytes())
                keys = [(run["run_id"], ownership.steps_key(run)) for run in doc.get("runs", [])]
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # a stored file we cannot read claims no runs
            if not all(isinstance(run_id, str) for run_id, _ in keys):
                continue
            self.docs[path.name] = doc
            for i, (run_id, steps) in enumerate(keys):
                self.by_id.setdefault(run_id, []).append((path.name, i))
                if steps is not None:
                    self.by_steps.setdefault(steps, []).append((path.name, i))

    def claim(self, file: str, index: int) -> ownership.Claim | None:
        if file not in self._claims:
            self._claims[file] = ownership.claims(file, self.docs[file])
        return next((c for c in self._claims[file] if c.index == index), None)


def _collisions(doc: dict, dest: Path, results_dir: Path) -> tuple[list[Problem], list[str]]:
    """What refuses the new document (its runs already stored), and the notes of the stored
    runs it is stored over as their owner."""
    if dest.exists():
        return [Problem("duplicate", "", f"already submitted as {dest.name}")], []
    stored = _StoredRuns(results_dir)
    problems: list[Problem] = []
    notes: list[str] = []
    for mine in ownership.claims(dest.name, doc):
        where = f"runs[{mine.index}]"
        for file, i in stored.by_id.get(mine.run_id, []):
            theirs = stored.claim(file, i)
            if mine.owner is not None and theirs is not None and theirs.owner is None \
                    and theirs.signer != mine.owner:
                notes.append(f"run {mine.run_id} is also in {file}, which is not signed by the key "
                             f"the run id was minted for ({mine.owner}): {file}'s run is now shown as a "
                             "copy, not ranked")
            else:
                problems.append(Problem("duplicate-run", f"{where}.run_id",
                                        f"run {mine.run_id} is already stored in {file}"))
        same_id = set(stored.by_id.get(mine.run_id, []))  # judged above
        for file, i in stored.by_steps.get(mine.steps, []) if mine.steps else []:
            if (file, i) not in same_id:  # a run of another id: its step times prove nobody's claim
                problems.append(Problem("duplicate-steps", f"{where}.step_times_s",
                                        f"the step times of run {stored.docs[file]['runs'][i]['run_id']} "
                                        f"already stored in {file}: one run is stored once"))
    return problems, notes


def submit(path: str | Path, results_dir: str | Path) -> Path:
    """Validate ``path`` and store it; returns where it landed or raises :class:`Refused`."""
    return submit_noted(path, results_dir).path


def submit_noted(path: str | Path, results_dir: str | Path) -> Stored:
    """:func:`submit`, with the notes of a file stored over copies of its runs (:class:`Stored`)."""
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
        problems, notes = _collisions(doc, dest, results_dir)
        if problems:
            raise Refused(problems)
        remove_abandoned(temp_files(results_dir))  # a killed writer's, never a live one's
        try:
            write_atomic(dest, raw, overwrite=False)
        except FileExistsError:
            raise Refused([Problem("duplicate", "", f"already submitted as {dest.name}")]) from None
    return Stored(dest, tuple(notes))
