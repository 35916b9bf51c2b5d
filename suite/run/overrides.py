"""The system overrides file (``--system-overrides``): what a submitter says of the machine that
goodbench cannot read itself, shaped like the results file's ``system``. Read without torch, so
that a command which only reads it (``goodbench reproduce``'s own process) imports none."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from suite.record.errors import GoodbenchError

MAX_BYTES = 1024 * 1024
"""The largest overrides file read: a machine's description is a few kilobytes."""


def load_overrides(path: str | None) -> dict[str, Any] | None:
    """The overrides file (a JSON object shaped like the description), or None."""
    if not path:
        return None
    from suite.record.reading import read_bounded

    raw, problems = read_bounded(Path(path).resolve(), MAX_BYTES)  # the user's: a link followed, to a regular file
    if raw is None:
        why = "an empty file" if problems[0].code == "not-json" else problems[0].reason
        raise GoodbenchError(f"cannot read system overrides {path}: {why}")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # a UnicodeDecodeError is a ValueError
        raise GoodbenchError(f"cannot read system overrides {path}: {exc}") from None
    if not isinstance(data, dict):
        raise GoodbenchError(f"system overrides {path} must be a JSON object")
    return data
