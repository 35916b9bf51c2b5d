"""What `goodbench submit` and the pull-request check say of a stored file's entries that will not
be ranked (smoke scale, no known peak, …) or are ranked but flagged (measured under load), one line each."""
from __future__ import annotations

from pathlib import Path

from suite.leaderboard import rows as leaderboard
from workloads import own


def rank_lines(path: Path, doc: dict | None = None) -> list[str]:
    """One line per entry of the stored file at ``path`` that will not be ranked, saying why
    (:func:`suite.leaderboard.rows.unranked_reasons`); [] for a file the store cannot read.
    ``doc``: the file's document as ``goodbench submit`` has just stored it, read and held to
    every rule (:attr:`suite.store.files.Stored.doc`; so nothing waived): not read nor validated
    again, only its signer checked and its figures recomputed (None: the file at ``path`` is read)."""
    read = leaderboard.Stored.of(path.name, doc) if doc is not None else leaderboard.read_stored(path)[0]
    if read is None:
        return []
    lines = []
    for row in leaderboard.entry_rows(read):
        reasons = leaderboard.unranked_reasons(row)
        if reasons:
            verdict = "ranked" if reasons[0].startswith("ranked") else "not ranked"
            shown = "; ".join(r.removeprefix("ranked, ") for r in reasons)
            what = f"{row['implementation']} ({own_job(row)}, {row['scale']})" if row.get("implementation") \
                else f"{row['workload']} ({row['scale']})"
            lines.append(f"{verdict}: {what}: {shown}")
    return lines


def own_job(row: dict) -> str:
    """What an own-code entry is held to, in words: a workload's target, or none (a free job)."""
    if row["workload"] == own.FREE_JOB:
        return "own code, a free job with no quality target"
    return f"own code, held to {row['workload']}'s target"
