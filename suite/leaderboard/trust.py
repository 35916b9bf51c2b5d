"""How far a leaderboard entry can be trusted: reproduced by a trusted reviewer, signed, or unsigned.

A stored reproduction (``goodbench reproduce``) of one of the entry's runs counts only when a
reviewer of ``results/reviewers.toml`` signed it (:mod:`suite.trust.reviewers`) and nothing in the stored
original contradicts it (:func:`suite.leaderboard.rows.contradicted`: a re-run of another scale, or
one claiming a tolerance beyond the rules', counts for nothing). It marks only the run it
reproduced: the row says how many of its runs were reproduced ("reproduced by a trusted
reviewer: 1 of 5 runs"). Without one, what the file says
of its machine and settings is the submitter's word: the entry reads "not reproduced", and its run
page marks each field self-reported or checked (:mod:`suite.validate.provenance`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from suite.leaderboard import rows as leaderboard
from suite.trust.labels import LEVEL_TEXT
from suite.trust.reviewers import Reviewers
from suite.trust.signing import short

# The kinds of one reproduction, in the order the run page lists them.
REPRODUCED, DIFFERS, INCONCLUSIVE, UNVERIFIED, NOT_COUNTED = range(5)

# An entry's level, most trusted first (the column ``trust`` of the tables and their downloads).
LEVELS = ("reproduced", "differs", "signed", "unsigned")
TEXT = LEVEL_TEXT  # what each level reads (suite/trust/labels.py: no submitter's name may read so)


def kind(reproduction: dict, original: dict, trusted: Reviewers) -> tuple[int, str | None]:
    """(kind, why) of one reproduction of the run whose figures are ``original``
    (:func:`suite.leaderboard.rows.original_figures`): NOT_COUNTED with why when the original
    contradicts it, UNVERIFIED when no trusted reviewer signed it, else its verdict's kind."""
    why = leaderboard.contradicted(reproduction, original)
    if why:
        return NOT_COUNTED, why
    if not trusted.trusts(reproduction.get("signer")):
        return UNVERIFIED, None
    verdict = str(reproduction["verdict"])
    return (REPRODUCED if verdict == "reproduced" else INCONCLUSIVE if verdict.startswith("inconclusive")
            else DIFFERS), None


def level(kinds: list[int], signer) -> str:
    """An entry's level from the kinds of its runs' reproductions: "differs" when a counted one
    differs, "reproduced" when one reproduced it and none differs, else "signed" or "unsigned"."""
    if DIFFERS in kinds:
        return "differs"
    if REPRODUCED in kinds:
        return "reproduced"
    return "signed" if isinstance(signer, str) else "unsigned"


def with_trust(entries: pd.DataFrame, runs: pd.DataFrame, results_dir: Path | None, trusted: Reviewers
               ) -> pd.DataFrame:
    """``entries`` with the column ``trust`` (one of :data:`LEVELS`), ``reviewed_by`` (the
    trusted reviewers whose reproduction counted, or None) and ``reproduced_runs`` ("1 of 5 runs":
    how many of the entry's runs, at its scale, a counted reproduction reproduced; None for none). A reproduction names its original by
    the sha256 of its bytes, which is its name in the store; a file whose bytes do not give its
    name gets none (and none without a store: ``results_dir`` None)."""
    found = leaderboard.reproductions(runs) if not runs.empty and results_dir is not None else {}
    matches = {sha for sha in {sha for sha, _ in found}
               if results_dir is not None and _named_by_its_bytes(results_dir / f"{sha}.json", sha)}
    levels: list[str] = []
    reviewers: list[str | None] = []
    counts: list[str | None] = []
    for entry in entries.to_dict(orient="records"):
        sha = str(entry["file"]).removesuffix(".json")
        kinds: list[int] = []
        names: set[str] = set()
        mine = runs[(runs["file"] == entry["file"]) & (runs["workload"] == entry["workload"])
                    & (runs["scale"] == entry["scale"])] if not runs.empty else runs
        reproduced = 0
        if sha in matches:
            for run in mine.to_dict(orient="records"):
                run_kinds: list[int] = []
                for reproduction in found.get((sha, run["run_id"]), []):
                    k, _ = kind(reproduction, run, trusted)
                    run_kinds.append(k)
                    if k in (REPRODUCED, DIFFERS, INCONCLUSIVE):
                        names.add(trusted.names[str(reproduction["signer"])])
                kinds += run_kinds
                reproduced += REPRODUCED in run_kinds  # a run counts once, however often it was reproduced
        levels.append(level(kinds, entry["signer"]))
        reviewers.append(", ".join(sorted(names)) or None)
        counts.append(f"{reproduced} of {len(mine)} run{'s' if len(mine) != 1 else ''}" if reproduced else None)
    return entries.assign(trust=levels, reviewed_by=reviewers, reproduced_runs=counts)


def _named_by_its_bytes(path: Path, sha: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha
    except OSError:
        return False


def row_text(row: dict) -> str | None:
    """The line a table row shows under its system (a system page's, under its signer): its
    level, and who reproduced it."""
    level_ = row.get("trust")
    if not isinstance(level_, str) or level_ not in TEXT:
        return None
    names = row.get("reviewed_by")
    if level_ == "signed" and isinstance(row.get("signer"), str):  # whose key: the table shows it too
        return f"signed by {short(row['signer'])}, not reproduced"
    counted = row.get("reproduced_runs")
    scope = f": {counted}" if level_ == "reproduced" and isinstance(counted, str) else ""
    return TEXT[level_] + scope + (f" ({names})" if isinstance(names, str) and level_ in ("reproduced", "differs")
                                   else "")
