"""Layer 1, the bytes: a size limit before reading, UTF-8, and JSON without duplicate keys,
NaN/Infinity literals or runaway nesting. Safe on any input, hostile included."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from suite.record.limits import MAX_DEPTH, MAX_FILE_BYTES
from suite.record.problems import Problem, code
from suite.record.text import safe

code("file-too-large", "the file is over the size limit (checked before reading)")
code("unreadable", "the file cannot be read, is not a regular file, or is a symbolic link")
code("not-utf8", "the bytes are not UTF-8")
code("not-json", "the text is not JSON")
code("duplicate-key", "a key appears twice in one object")
code("non-finite", "NaN, Infinity or a number that overflows")
code("number-too-large", "an integer beyond 2^63")
code("too-deep", "nesting deeper than the limit")


class _Reject(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def too_large(size: int, max_bytes: int = MAX_FILE_BYTES) -> list[Problem]:
    """``file-too-large`` where a file of ``size`` bytes is over ``max_bytes`` (the rule the readers
    apply before reading, and the writers to what they wrote); else nothing."""
    return [Problem("file-too-large", "", f"{size} bytes is over the {max_bytes}-byte limit")] if size > max_bytes else []


def read_bounded(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes | None, list[Problem]]:
    """The bytes of a regular file no larger than ``max_bytes``; never reads more than that.

    A symbolic link is refused, not followed (``O_NOFOLLOW``): only the file itself is read, and
    what is checked (a regular file, its size) is the descriptor that is read."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return None, [Problem("unreadable", "", "a symbolic link: give the file itself")]
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None, [Problem("unreadable", "", "not a regular file")]
            if too_large(info.st_size, max_bytes):
                return None, too_large(info.st_size, max_bytes)
            raw = fh.read(max_bytes + 1)
            if not raw:
                return None, [Problem("not-json", "", _empty(fh.fileno()))]
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno == errno.ELOOP:  # became a link after the check
            return None, [Problem("unreadable", "", "a symbolic link: give the file itself")]
        return None, [Problem("unreadable", "", safe(f"cannot read the file ({getattr(exc, 'strerror', None) or exc})", 200))]
    if len(raw) > max_bytes:  # grew between stat and read
        return None, [Problem("file-too-large", "", f"over the {max_bytes}-byte limit")]
    return raw, []


def _empty(fd: int) -> str:
    """Why a file is empty, in words: a results file's name is reserved by an empty placeholder
    while its run lasts (``flock``-ed: :class:`suite.record.results.Reservation`), which stays
    empty when the run is killed before it writes."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # let go when the file is closed
    except BlockingIOError:
        return ("empty: a goodbench run still going holds this name (its reserved placeholder) and writes its "
                "results here when it ends")
    except OSError:
        pass
    return ("empty (0 bytes), no results in it: where a goodbench run was given this name (-o), it stopped before "
            "writing them (killed?) and left its reserved placeholder empty; a run given this -o again takes it over")


def load(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> tuple[Any, list[Problem]]:
    """Read and parse a results file defensively; returns (document or None, problems)."""
    raw, problems = read_bounded(path, max_bytes)
    return (None, problems) if problems or raw is None else parse(raw)


def load_folder(folder: Path, pattern: str, max_bytes: int,
                bad: list[tuple[str, str]]) -> Iterator[tuple[Path, Any]]:
    """(path, parsed JSON) of each file of ``folder`` matching ``pattern`` (name order, hidden
    files left out; none where the folder is absent), read as :func:`load` reads; a file that
    cannot be read is appended to ``bad`` as (its name, why in one line) instead."""
    if not folder.is_dir():
        return
    for path in sorted(p for p in folder.glob(pattern) if not p.name.startswith(".")):
        doc, unreadable = load(path, max_bytes)
        if unreadable:
            bad.append((path.name, f"{unreadable[0].reason} [{unreadable[0].code}]"))
        else:
            yield path, doc


def parse(raw: bytes) -> tuple[Any, list[Problem]]:
    """Parse JSON bytes, refusing duplicate keys, NaN/Infinity, huge numbers and deep nesting."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem("not-utf8", "", f"not UTF-8 text (byte {exc.start})")]
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants), []
    except _Reject as exc:
        return None, [exc.problem]
    except RecursionError:
        return None, [Problem("too-deep", "", f"nesting deeper than {MAX_DEPTH} levels")]
    except json.JSONDecodeError as exc:
        return None, [Problem("not-json", "", safe(f"not valid JSON: {exc.msg} at line {exc.lineno} "
                                                    f"column {exc.colno}", 200))]
    except ValueError:  # an integer literal over Python's digit limit
        return None, [Problem("number-too-large", "", "an integer literal is too long")]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Reject(Problem("duplicate-key", safe(key), "key appears more than once in one object"))
            seen.add(key)
    return result


def _no_constants(name: str) -> None:
    raise _Reject(Problem("non-finite", "", f"{name} is not a JSON number"))
