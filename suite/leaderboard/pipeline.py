"""Stored files → the leaderboard, one pipeline for every reader: the site and its downloads,
``goodbench compare`` and the tests.

Each file is read once (:func:`read_file`: validated under the rules it was stored with, its
signer checked, every figure recomputed from its raw records: :class:`suite.leaderboard.rows.Stored`)
and turned into its rows (:func:`file_rows`, the per-file step the site spreads over processes);
:func:`board` then takes every file's rows in the order they were stored and marks copies and
disputed runs, fills in scaling efficiency, gives each entry its trust level
(:mod:`suite.leaderboard.trust`) and its ranking group with the reason (``ranking``,
``ranking_reason``: :data:`suite.leaderboard.rows.RANKING_GROUPS`). :func:`read` is the whole
of it for a results folder.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from suite.leaderboard import rows, systems, trust
from suite.record.errors import GoodbenchError
from suite.store.files import stored_files
from suite.store.ledger import in_store_order
from suite.trust import ownership, reviewers
from suite.trust.reviewers import Reviewers
from suite.validate import load
from suite.validate.schema import NOT_RESULTS


def read_file(path: str | Path) -> rows.Stored:
    """One results file read as the leaderboard reads a stored one (bounded, then checked under
    the rules it was stored with: :func:`rows.check_loaded`; its figures recomputed:
    :meth:`rows.Stored.of`), or :class:`GoodbenchError` naming its first problem (and how many
    more there are)."""
    doc, unreadable = load(path)
    if unreadable:
        raise GoodbenchError(unreadable[0].line(str(path)))
    line, waived, problems = rows.check_loaded(doc, str(path))
    if line is not None:
        more = f" (and {problems - 1} more problem{'s' if problems > 2 else ''}: goodbench validate {path})" \
            if problems > 1 else ""
        said = "" if NOT_RESULTS in line or line.startswith("not a results file") else "not a valid results file: "
        raise GoodbenchError(f"{said}{line}{more}")
    return rows.Stored.of(Path(path).name, doc, waived)


@dataclass(frozen=True)
class FileRows:
    """What one stored file gives the leaderboard: its entries, its runs and its runs' claims of
    ownership (:func:`suite.trust.ownership.claims`)."""

    entries: list[dict]
    runs: list[dict]
    claims: list[ownership.Claim]


def file_rows(stored: rows.Stored) -> FileRows:
    """The per-file step: a file read once (:func:`read_file`, :func:`rows.read_stored`) → its rows."""
    return FileRows(rows.entry_rows(stored), rows.stored_run_rows(stored),
                    ownership.claims(stored.name, stored.doc, stored.signer, verified=True))


@dataclass(frozen=True)
class Board:
    """The leaderboard: ``entries`` (:data:`rows.ENTRY_COLUMNS` with ``trust``, ``reviewed_by``,
    ``reproduced_runs``, ``rerun_runs``, ``code_read``, ``system_shown``, ``system_note``
    (:mod:`suite.leaderboard.systems`), ``ranking`` and ``ranking_reason``), ``runs`` (:data:`rows.RUN_COLUMNS`),
    in the order the files were stored; ``copies`` (:func:`rows.copies`) and the files left out
    with why (``invalid``: name, first problem)."""

    entries: pd.DataFrame
    runs: pd.DataFrame
    copies: dict
    invalid: list[tuple[str, str]] = field(default_factory=list)


def board(parts: Iterable[FileRows], results_dir: Path | None = None, trusted: Reviewers | None = None,
          invalid: Iterable[tuple[str, str]] = ()) -> Board:
    """Every file's rows (in the order stored) → the :class:`Board`. A reproduction counts when
    ``trusted`` signed it and its original is in ``results_dir`` under its sha256 (None: none
    counts)."""
    parts = list(parts)
    claims = [c for part in parts for c in part.claims]
    found = rows.copies(claims)
    entries, runs = rows.with_copies(
        pd.DataFrame([e for part in parts for e in part.entries], columns=rows.ENTRY_COLUMNS),
        pd.DataFrame([r for part in parts for r in part.runs], columns=rows.RUN_COLUMNS), found)
    entries, runs = rows.with_seed_conflicts(entries, runs, claims)  # one curve, two seeds, two keys
    entries = rows.with_scaling_efficiency(entries)
    entries = trust.with_trust(entries, runs, results_dir, trusted or Reviewers())  # reproduced, signed or unsigned
    entries = systems.with_systems(entries)  # a system is its name and signer: each shown so, apart
    return Board(rows.with_ranking(entries), runs, found, list(invalid))


def read(results_dir: str | Path) -> Board:
    """A results folder's stored files, each read once in the order stored, as the :class:`Board`
    (its reviewers from ``results/reviewers.toml``; a problem with that file is listed among the
    invalid ones)."""
    folder = Path(results_dir)
    parts, invalid = [], []
    for path in in_store_order(folder, stored_files(folder)):
        stored, problem = rows.read_stored(path)
        if stored is None:
            invalid.append((path.name, str(problem)))
        else:
            parts.append(file_rows(stored))
    trusted = reviewers.load(folder)
    if trusted.problem:
        invalid.append((reviewers.FILE, trusted.problem))
    return board(parts, folder, trusted, invalid)


def table(documents: list[tuple[str, dict]]) -> pd.DataFrame:
    """The entries of valid documents given by (name, document), in that order, through the
    same :func:`board` (no reproduction counts: no store holds their originals)."""
    return board(file_rows(rows.Stored.of(name, doc)) for name, doc in documents).entries
