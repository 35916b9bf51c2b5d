"""The results document: build it, write it atomically, read it back."""
from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path

from suite import __version__

SCHEMA_VERSION = 1


def utc_now() -> str:
    """Current UTC time in ISO 8601 with a Z suffix, to the second."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_document(system: dict, settings: dict, runs: list[dict]) -> dict:
    """A complete results document (schema v1) for one run of the suite."""
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": {"name": "goodbench", "version": __version__},
        "created_at": utc_now(),
        "system": system,
        "settings": settings,
        "runs": runs,
    }


def dumps(doc: dict) -> str:
    """The document's JSON text (NaN/Inf refused: they are not JSON)."""
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def write_atomic(path: str | os.PathLike, data: bytes | str, *, overwrite: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temp file in the same directory, fsync, then rename.

    A reader sees the old file or the whole new one, never a torn one. With ``overwrite=False``
    the final step is a hard link, which fails with FileExistsError if ``path`` exists.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o644)  # mkstemp makes 0600; results are meant to be read
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
        _fsync_dir(path.parent)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write(path: str | os.PathLike, doc: dict) -> Path:
    """Write a results document atomically."""
    return write_atomic(path, dumps(doc))
