"""How goodbench starts a Python process of its own (the reproduction's relay, ``goodbench run``'s
workers and torchrun's launcher and ranks): ``python -P`` with ``PYTHONSAFEPATH=1``, so that
neither it nor its own children put their working folder first on the import path, and
goodbench's own folder first on ``PYTHONPATH``, so that goodbench is found there.

``goodbench reproduce`` runs from the reviewed checkout, and ``python -m`` in that folder would
import its ``selectors.py`` or ``suite/`` in goodbench's relay, outside the sandbox, with the
reviewer's key in reach (a review of trial 13's fix); goodbench's command drops that folder from
its own path (suite/import_path.py), and this keeps it off its children's. The user's own script
(``goodbench run-own``) is not started so: its own folder is its business.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

GOODBENCH_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding goodbench's ``suite`` package (site-packages, or a source checkout)."""


def command(*args: str) -> list[str]:
    """``python -P ARGS``: this interpreter, the working folder off the child's import path."""
    return [sys.executable, "-P", *args]


def environment(base: Mapping[str, str] | None = None, path: Iterable[str] = ()) -> dict[str, str]:
    """``base`` (this process's environment) with ``PYTHONSAFEPATH=1`` (the child's own Python
    children start as with ``-P``: torchrun's ranks) and ``PYTHONPATH``: goodbench's folder, then
    ``path`` and ``base``'s entries, less any naming the working folder (unless it is goodbench's
    own) and any given twice."""
    env = dict(os.environ if base is None else base)
    root = _real(str(GOODBENCH_ROOT))
    here = _real(os.curdir)
    kept: list[str] = []
    for entry in [str(GOODBENCH_ROOT), *path, *env.get("PYTHONPATH", "").split(os.pathsep)]:
        real = _real(entry) if entry else None
        if real is None or (real == here and here != root) or real in map(_real, kept):
            continue
        kept.append(entry)
    env["PYTHONPATH"] = os.pathsep.join(kept)
    env["PYTHONSAFEPATH"] = "1"
    return env


def _real(entry: str) -> str | None:
    """``entry``'s real path (None where it is no path: the working folder removed)."""
    try:
        return os.path.realpath(entry)
    except (OSError, ValueError):
        return None
