"""What the results store names a file, and which folders are stores.

``goodbench submit`` stores a file as ``<sha256 of its bytes>.json`` and lists it in the store's
ledger (:mod:`suite.store.ledger`). In a folder holding a ledger, then, a ``*.json`` named otherwise
was not stored by submit unless the ledger lists it (``goodbench sign`` once wrote its default
output there, trial 13): the site lists it under "Files not shown" and submit reads no runs from it
(:func:`misnamed`). A folder
without a ledger is anyone's folder of results files, read whatever their names. Nothing but submit
writes a file into a store: ``goodbench sign`` refuses one (:func:`store_reason`). Torch-free.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from suite.record.text import safe
from suite.store import ledger
from suite.validate import parse, read_bounded

DEFAULT = "results"  # the store ``goodbench submit`` and ``goodbench site`` use by default (--results-dir)


def stored_name(raw: bytes) -> str:
    """The name the store gives a file of bytes ``raw``: ``<sha256>.json``."""
    return f"{hashlib.sha256(raw).hexdigest()}.json"


def misnamed(path: Path, raw: bytes) -> str | None:
    """Why ``path``, read as ``raw``, is not a stored file, in words after its name: in a store
    holding a ledger, its name is not the sha256 of its bytes and the ledger lists no file stored
    under it, or lists it but its bytes were changed since (beyond their line endings). None: it is
    named so, or listed and only its line endings differ (a checkout that rewrote them changed its
    bytes, not what submit stored: a review found every file of such a store hidden and copies of
    them stored unremarked), or its folder holds no ledger."""
    if path.name == stored_name(raw) or not (path.parent / ledger.NAME).exists():
        return None
    if (path.name, ledger.STORED) in ledger.lines(path.parent):  # read only for a name that differs: rare
        if path.name == stored_name(raw.replace(b"\r\n", b"\n")):
            return None
        # the name records the bytes submit stored: an edit in place (trial VI, F4) showed the
        # edited system name unmarked, the file still valid
        return (f"changed since goodbench submit stored it: its bytes' sha256 is {stored_name(raw)[:-5]}, not "
                "its name (a stored file is never edited; rewritten line endings alone would not count)")
    return ("not stored by goodbench submit: its name is not the sha256 of its bytes (move it out of the "
            "store, then goodbench submit it)")


def load_stored(path: Path) -> tuple[Any, str | None]:
    """A store's file read as the site and ``goodbench submit`` read it: bounded (size, nesting,
    numbers: :func:`suite.validate.read_bounded`), and refused where submit did not store it
    (:func:`misnamed`). (document, None), or (None, why, one line beginning with its name)."""
    doc, why, _ = load_parsed(path)
    return doc, why


def load_parsed(path: Path) -> tuple[Any, str | None, Any]:
    """:func:`load_stored`, with a third part: the document as parsed, also where the store
    refuses it for its name (None: unreadable, or not JSON), so that a reader of the refused
    files need not read them again (:mod:`suite.site.refused`)."""
    raw, problems = read_bounded(path)
    if problems or raw is None:
        return None, problems[0].line(path.name) if problems else f"{safe(path.name, 200)}: unreadable", None
    why = misnamed(path, raw)  # goodbench sign wrote one there (trial 13)
    doc, problems = parse(raw)
    parsed = None if problems else doc
    if why is not None:
        return None, f"{safe(path.name, 200)}: {why}", parsed
    return (None, problems[0].line(path.name), None) if problems else (doc, None, doc)


def store_reason(folder: Path) -> str | None:
    """Why ``folder`` is a results store, where only ``goodbench submit`` writes (it holds the
    ledger, or it is the default store of the working folder); None where it is not one."""
    if (folder / ledger.NAME).exists():
        return f"it holds {ledger.NAME}"
    try:
        default = folder.resolve() == Path(DEFAULT).resolve()
    except (OSError, RuntimeError):  # a link loop: not the default store
        return None
    return f"the default --results-dir of goodbench submit ({DEFAULT}/)" if default else None
