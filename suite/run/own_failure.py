"""What ``goodbench run-own`` says when the script failed or its file got no second clock: the
script's failure first and plainly (its own error is printed above), then what was kept."""
from __future__ import annotations


def failed(status: int) -> str:
    """The script's failure in words, by its exit status (non-zero; negative: the signal that ended it)."""
    if status < 0:
        return f"the script was ended by signal {-status} (its output, if any, is above)"
    return f"the script failed (exit status {status}; its error is above)"


def unsealed(status: int, why: str, kept: str | None, stopped: str | None = None) -> str:
    """run-own's error where the script's file got no second clock: ``why`` it did not, ``kept``
    what was kept of it (None: no file). A failed script (``status`` non-zero) is said first; its
    missing file is then the failure's consequence, not news. ``stopped``: what stopped the launcher
    and the script ("interrupted", "stopped by SIGTERM"), said in the failure's place."""
    if stopped is not None:
        if kept is None:
            return f"{stopped}: the script named no results file before it ended, so nothing was kept"
        return f"{stopped}: {kept} (no second clock: {why})"
    if status == 0:
        return f"no second clock: {why}" + (f"; {kept}" if kept else "")
    if kept is None:
        return f"{failed(status)}; it named no results file, so nothing was kept"
    return f"{failed(status)}; {kept} (no second clock: {why})"
