"""The leaderboard's tables: which columns each shows (by key; each column is defined once in
suite/site/columns.py; one empty on every row of a table is not shown, and said so under it),
pages of PAGE_ROWS rows of preformatted cells with the caveats their badges stand for, and each
table's CSV and JSON downloads (every row and every column, unformatted)."""
from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from suite.site.columns import cell, dash_notes, header

PAGE_ROWS = 100  # rows per table page; further rows go to numbered pages

# Shown under another column's value, so that a table fits a 1300 px window (each has its own
# column in the downloads): the score's 95% CI, the effective goodput, the suite version.
ENTRY_TABLE = ["rank", "system", "accelerator", "world_size", "score", "cost", "samples_per_s",
               "scaling_efficiency", "tokens_per_s", "mfu",
               "energy_to_target_kwh", "energy_per_sample_j", "energy_per_token_j", "goodput",
               "seeds", "date", "run"]
SYSTEM_TABLE = ["workload", "scale", "division", "accelerator", "time_to_target", "samples_per_s", "tokens_per_s",
                "mfu", "energy_to_target_kwh", "energy_per_sample_j", "goodput", "seeds", "date", "signer",
                "run"]


KEPT = frozenset({"rank", "system", "workload", "run"})
"""Columns every table shows: a row's place (a "—" there says "not ranked", as the table's title
does), what it is of, and its run. Any other column empty on every row of a table is not shown in
it (:func:`hidden_columns`)."""


def table_pages(frame: pd.DataFrame, columns: list[str], table_id: str, caption: str, base: Path,
                root: str, ranked: bool, page_href) -> list[dict]:
    """The table split into pages of PAGE_ROWS rows (cells preformatted), plus its CSV/JSON files
    (every column, whichever the pages show). A column empty on every row of the table is not
    shown, and the table says under itself which and why (``hidden``); each page lists the
    caveats its badges stand for in full (``notes``)."""
    records = frame.to_dict(orient="records")
    downloads(frame, base)
    every = [[cell(c, r, root, i + 1 if ranked else None) for c in columns] for i, r in enumerate(records)]
    hidden = hidden_columns(columns, every)
    hidden_lines = _hidden_lines([k for k in columns if k in hidden], columns, records, every)
    shown = [k for k, key in enumerate(columns) if key not in hidden]
    pages = []
    n_pages = max(1, math.ceil(len(records) / PAGE_ROWS))
    for page in range(n_pages):
        chunk = records[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]
        rows = [[row[k] for k in shown] for row in every[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]]
        keys = [columns[k] for k in shown]
        dashes = _dash_lines(keys, chunk, rows)
        pages.append({
            "id": table_id, "caption": caption, "rows": rows, "page": page + 1, "n_pages": n_pages,
            "n_rows": len(records), "headers": [header(c) for c in keys], "dashes": dashes,
            "hidden": hidden_lines, "notes": caveat_notes(rows),
            # each row stored under older rules that today's find problems in: greyed, and sorted after the others
            "older": [isinstance(r.get("stale_rules"), str) for r in chunk],
            "csv": f"{base.name}.csv", "json": f"{base.name}.json",
            "links": [{"n": k + 1, "href": page_href(k + 1)} for k in range(n_pages)] if n_pages > 1 else [],
        })
    return pages


def empty(c: dict) -> bool:
    """Whether a cell holds nothing: its text "—" (or none), with no line or caveat beside it."""
    return c["text"] in ("", "—") and not c.get("sub") and not c.get("lines") and not c.get("caveats")


def hidden_columns(columns: list[str], rows: list[list[dict]]) -> set[str]:
    """The columns (but :data:`KEPT`) whose cell is :func:`empty` on every one of ``rows``; none of a table without rows."""
    return {key for k, key in enumerate(columns)
            if rows and key not in KEPT and all(empty(row[k]) for row in rows)}


def caveat_notes(rows: list[list[dict]]) -> list[dict]:
    """The caveats of ``rows``' cells in full, each once, numbered in the order first met: each
    cell's caveat gets its note's number (``n``) for its badges to link to; every badge has one."""
    numbers: dict[str, int] = {}
    notes: list[dict] = []
    for row in rows:
        for c in row:
            for caveat in c.get("caveats", []):
                if caveat["text"] not in numbers:
                    numbers[caveat["text"]] = len(notes) + 1
                    notes.append({**caveat, "n": len(notes) + 1})
                caveat["n"] = numbers[caveat["text"]]
    return notes


def _dash_lines(columns: list[str], records: list[dict], rows: list[list[dict]]) -> list[dict]:
    """Why the table's "—" cells are dashes: each reason once, with the columns it holds for
    ("energy to target, energy per sample: not measured …")."""
    return _by_reason((reason, key) for k, key in enumerate(columns)
                      for reason in dash_notes(key, records, [row[k] for row in rows]))


def _hidden_lines(keys: list[str], columns: list[str], records: list[dict], rows: list[list[dict]]) -> list[dict]:
    """The columns ``keys`` not shown, each named once, with why their cells would all read "—"
    (its reasons over the rows, "; " between them; "no row has a value" where the column has
    none); columns of the same reasons share a line."""
    def why(key: str) -> str:
        k = columns.index(key)
        return "; ".join(dash_notes(key, records, [row[k] for row in rows])) or "no row has a value"

    return _by_reason((why(key), key) for key in keys)


def _by_reason(reasons: Iterable[tuple[str, str]]) -> list[dict]:
    """Lines of ``(reason, column key)`` pairs: each reason once, in the order first met, with the
    labels of the columns it holds for (", " between them)."""
    by_reason: dict[str, list[str]] = {}
    for reason, key in reasons:
        by_reason.setdefault(reason, []).append(header(key)["label"])
    return [{"label": ", ".join(labels), "why": reason} for reason, labels in by_reason.items()]


# What a spreadsheet may read as the start of a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """``value`` as a CSV cell that a spreadsheet shows and never runs: a string starting like a
    formula gets a leading ``'`` (the spreadsheets' mark for text); anything else, numbers
    (negative ones too) among them, is unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def downloads(frame: pd.DataFrame, base: Path) -> None:
    """``frame`` as ``base``.csv (string cells escaped by :func:`csv_cell`) and ``base``.json (the exact values)."""
    base.parent.mkdir(parents=True, exist_ok=True)
    safe = frame.copy()
    for column in safe.columns:
        cells = safe[column]
        if pd.api.types.is_numeric_dtype(cells) or pd.api.types.is_bool_dtype(cells):
            continue
        if any(isinstance(cell, str) and cell.startswith(FORMULA_START) for cell in cells):  # else unchanged
            safe[column] = cells.map(csv_cell)
    # RFC 4180's line end (CRLF): the writer then quotes any cell holding a line break, CR among them
    safe.to_csv(base.parent / f"{base.name}.csv", index=False, lineterminator="\r\n")  # a name may hold dots
    frame.to_json(base.parent / f"{base.name}.json", orient="records", indent=1, double_precision=15)  # exact
