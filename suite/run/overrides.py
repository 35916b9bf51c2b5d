"""The system overrides file (``--system-overrides``): what a submitter says of the machine that
goodbench cannot read itself, shaped like the results file's ``system``. Read without torch, so
that a command which only reads it (``goodbench reproduce``'s own process) imports none."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from suite.record.errors import GoodbenchError


def load_overrides(path: str | None) -> dict[str, Any] | None:
    """The overrides file (a JSON object shaped like the description), or None."""
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise GoodbenchError(f"cannot read system overrides {path}: {exc}") from None
    if not isinstance(data, dict):
        raise GoodbenchError(f"system overrides {path} must be a JSON object")
    return data
