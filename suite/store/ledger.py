"""The order the store's files were stored in: ``<results-dir>/ledger.jsonl`` (docs/rules.md,
"Submitting").

A stored file's name is the sha256 of its bytes, which says nothing of when it came; yet "the
first stored stays" (:mod:`suite.trust.ownership`) needs that order, and it must survive a copy or a
checkout of the folder (which reset the files' times). ``goodbench submit`` appends one line per
file it stores, ``{"file": NAME, "stored_at": UTC}``, under the store's lock and before the file
is linked into place, and never rewrites a line. A line that cannot be read (a write cut short)
is skipped; a name listed twice counts where it is last listed (a submission killed between its
line and its file, then made again: the file was stored the second time). Files the ledger does not list
(stored before it existed, or put there by hand) come first, in name order: their order is not
known.

**Commitments** (``goodbench submit --commit``): ``{"file": NAME, "committed_at": UTC, "key": …,
"signature": …}`` names a file by the sha256 of its bytes before the file is shown to anyone,
signed by the key that signed the file (:mod:`suite.trust.commitment`; lines of rules v7 have no
key). Published first, on its
own, it says nothing a copier can use; once the file is stored, it counts from its commitment's
line, so a copy someone made after seeing the file (re-signed, stored before it) comes after it.
A file counts from the earlier of its first commitment and its last stored line. Torch-free.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from suite.record.errors import GoodbenchError

NAME = "ledger.jsonl"
MAX_BYTES = 256 * 1024 * 1024  # about two million lines: a bound on what is read, not a limit on storing
_STORED_NAME = re.compile(r"[0-9a-f]{64}\.json")
_FLAGS = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


STORED, COMMITTED = "stored_at", "committed_at"  # the two kinds of line, by their stamp's key


STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def stamp_of(when: dt.datetime | None = None) -> str:
    """A ledger line's stamp: ``when`` (default now) in UTC, to the second."""
    return (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).strftime(STAMP_FORMAT)


def parse_stamp(text: object) -> dt.datetime | None:
    """A ledger stamp as :func:`stamp_of` writes it, as a UTC time; None for anything else."""
    try:
        return dt.datetime.strptime(text, STAMP_FORMAT).replace(tzinfo=dt.UTC) if isinstance(text, str) else None
    except ValueError:
        return None


def record(results_dir: Path, name: str, when: dt.datetime | None = None, kind: str = STORED,
           signed: Callable[[str, str], dict[str, str]] | None = None) -> int:
    """Append ``name`` to the ledger (the caller holds the store's lock), fsynced: a file stored,
    or with ``kind`` :data:`COMMITTED` a commitment to one, whose fields ``signed(name, stamp)``
    gives (:func:`suite.trust.commitment.sign`). :class:`GoodbenchError` (one line)
    when it cannot: a ledger that is not a regular file (a link is never followed, a folder never
    written into), or a disk that refuses the write. Returns the ledger's size before the line,
    for :func:`take_back`."""
    stamp = stamp_of(when)
    entry = {"file": name, kind: stamp, **(signed(name, stamp) if signed else {})}
    line = json.dumps(entry, separators=(", ", ": ")) + "\n"
    path = results_dir / NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _FLAGS, 0o644)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError("not a regular file")
            if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
                line = "\n" + line  # the last append was cut short: keep it on a line of its own
            try:
                os.write(fd, line.encode())
                os.fsync(fd)
            except OSError:  # a disk that took part of the line: none of it stays
                os.ftruncate(fd, info.st_size)
                raise
        finally:
            os.close(fd)
    except OSError as exc:
        raise GoodbenchError(f"cannot list {name} in the store's ledger {path}: {exc.strerror or exc}; "
                             "nothing was stored") from None
    return info.st_size


def take_back(results_dir: Path, size: int) -> None:
    """Remove the line :func:`record` just appended (the ledger cut back to ``size``, what it
    returned), the store's lock still held: the file it lists could not be stored. The one change
    to the ledger other than an append; best effort (a ledger that cannot be cut keeps the line,
    which names no file, and :func:`order` passes over names without a file)."""
    with contextlib.suppress(OSError):
        fd = os.open(results_dir / NAME, os.O_WRONLY | _FLAGS)
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        finally:
            os.close(fd)


def lines(results_dir: Path) -> list[tuple[str, str]]:
    """The ledger's readable lines in order, each as (file name, :data:`STORED` or
    :data:`COMMITTED`); [] without a ledger."""
    try:
        fd = os.open(results_dir / NAME, os.O_RDONLY | _FLAGS)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return []
        raw = fh.read(MAX_BYTES)
    return parse_lines(raw)


def parse_lines(raw: bytes) -> list[tuple[str, str]]:
    """:func:`lines` of a ledger's bytes: a line that is not one :func:`record` writes is skipped."""
    found = []
    for line in raw.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            name = entry.get("file") if isinstance(entry, dict) else None
            if isinstance(name, str) and _STORED_NAME.fullmatch(name):
                found.append((name, COMMITTED if COMMITTED in entry and STORED not in entry else STORED))
    return found


def order(results_dir: Path) -> list[str]:
    """The names the ledger lists, in the order they count: each from the earlier of its first
    commitment and its last stored line; [] without a ledger."""
    first_committed: dict[str, int] = {}
    last_stored: dict[str, int] = {}
    for i, (name, kind) in enumerate(lines(results_dir)):
        if kind == COMMITTED:
            first_committed.setdefault(name, i)
        else:
            last_stored[name] = i  # a name stored twice counts where last listed
    place = {name: min(first_committed.get(name, i), i) for name, i in last_stored.items()}
    place.update({name: i for name, i in first_committed.items() if name not in place})
    return sorted(place, key=place.__getitem__)


def entries(raw: bytes) -> list[dict]:
    """The ledger lines :func:`parse_lines` reads, as their parsed objects, in order."""
    found = []
    for line in raw.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict) and parse_lines(line + b"\n"):
                found.append(entry)
    return found


def committed(results_dir: Path) -> set[str]:
    """The names the ledger holds a commitment to."""
    return {name for name, kind in lines(results_dir) if kind == COMMITTED}


def in_store_order(results_dir: Path, files: list[Path]) -> list[Path]:
    """``files`` (of the store) in the order they were stored: those the ledger does not list
    first, in name order, then the listed ones in the ledger's order."""
    rank = {name: i for i, name in enumerate(order(results_dir))}
    return sorted(files, key=lambda p: (p.name in rank, rank.get(p.name, 0), p.name))
