"""The results file's size projected while a suite runs: a file over the readers' limit
(:data:`suite.record.limits.MAX_FILE_BYTES`) is refused by ``validate`` and ``submit``, and a run
of many seeds or repeats should say so after its first runs, not after its last."""
from __future__ import annotations

from typing import Any

from suite.record import results
from suite.record.limits import MAX_FILE_BYTES

HEAD_BYTES = 16 * 1024  # the system, settings and session sections: a few kB in every stored file


def projected_bytes(runs: list[dict[str, Any]], planned: int) -> int:
    """The file's bytes once all ``planned`` runs are in, at the mean size of ``runs`` so far."""
    if not runs:
        return HEAD_BYTES
    so_far = len(results.dumps({"runs": runs}).encode())  # indented as the file is
    return HEAD_BYTES + so_far * planned // len(runs)


def warning(runs: list[dict[str, Any]], planned: int, limit: int = MAX_FILE_BYTES) -> str | None:
    """One line when the projected file is over ``limit``, else None."""
    size = projected_bytes(runs, planned)
    if size <= limit:
        return None
    return (f"at the size of its first {len(runs)} run(s), this results file will be about {size / 2**20:.1f} MiB "
            f"after its {planned} runs: over the {limit / 2**20:g} MiB every reader accepts, so validate and "
            "submit will refuse it (fewer --seeds or --repeat keep it under; Ctrl-C keeps the runs so far)")
