"""The leaderboard's tables: columns, preformatted cells, pages of PAGE_ROWS rows, and each table's
CSV and JSON downloads (every row, unformatted)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from suite.leaderboard.rows import NO_KNOWN_PEAK
from suite.leaderboard.trust import row_text as trust_text
from suite.site.formatting import missing, seconds
from suite.site.labels import COLUMNS, copy_words, value_text
from suite.site.names import run_slug, safe_name
from suite.trust.signing import short

PAGE_ROWS = 100  # rows per table page; further rows go to numbered pages

# Shown under another column's value, so that a table fits a 1300 px window (each has its own
# column in the downloads): the score's 95% CI, the effective goodput, the suite version.
ENTRY_TABLE = ["rank", "system", "accelerator", "world_size", "score", "samples_per_s",
               "scaling_efficiency", "tokens_per_s", "mfu",
               "energy_to_target_kwh", "energy_per_sample_j", "energy_per_token_j", "goodput",
               "seeds", "date", "run"]
SYSTEM_TABLE = ["workload", "scale", "division", "accelerator", "score", "samples_per_s", "tokens_per_s",
                "mfu", "energy_to_target_kwh", "energy_per_sample_j", "goodput", "seeds", "date", "signer",
                "run"]


def cell(key: str, row: dict, root: str, rank: int | None) -> dict:
    """Column ``key`` of an entry: its text, the number it sorts by (``v``), and a link where it has one."""
    value, text, href = None, None, None
    if key == "rank":
        value = rank
    elif key == "system":
        text, href = row["system"], f"{root}systems/{safe_name(row['system'])}.html"
    elif key == "accelerator":
        text = f"{row['accelerator']}\u00a0×\u00a0{row['count']}"  # "× 8" never on a line of its own
    elif key == "workload":
        text, href = row["workload"], f"{root}workloads/{safe_name(row['workload'])}.html"
    elif key == "score":
        if row["kind"] == "tta":
            value = row["score_s"]
            if row["tta_valid"] is False:
                text = "did not converge"
            elif not missing(value):
                text = seconds(value)
        else:
            value = row["samples_per_s"]
            text = None if missing(value) else value_text(value, "samples/s")
    elif key == "ci":
        value = row["ci95_low_s"]
        if not missing(value):
            text = f"{seconds(value)} – {seconds(row['ci95_high_s'])}"
    elif key == "date":
        text = row["created_at"][:10]
    elif key == "run":
        text, href = "run", f"{root}runs/{run_slug(row['file'], row['run_id'])}.html"
    elif key == "signer":
        text = short(row["signer"]) if isinstance(row.get("signer"), str) else "unsigned"
    elif COLUMNS[key][1] == "text":
        text = str(row[key])
    else:
        value = row[key]
    if missing(value):
        value = None
    if text is None:
        text = value_text(value, COLUMNS[key][2]) if not isinstance(value, str) else value
    return {"text": text, "v": "" if value is None else repr(float(value)), "href": href,
            "badge": incomplete_badge(row) if key == "score" else None, "sub": _sub(key, row)}


def _sub(key: str, row: dict) -> str | None:
    """The small line under a cell: "95% CI 1.2–2.1 s" under a TTA score, "effective 12.5%"
    under the goodput, "suite 0.1.0" under the date, "copy of a run signed by …" (or "disputed: …")
    under a copy's system or signer (:func:`copy_words`), "no known peak, not ranked" under the
    system of a device the peak table cannot bound, and under every system its trust level
    (:func:`suite.leaderboard.trust.row_text`: "reproduced by a trusted reviewer", "unsigned, not
    reproduced", …) and whether runs of it were measured under load; None elsewhere or where
    there is none."""
    if key == "score":
        low, high = row.get("ci95_low_s"), row.get("ci95_high_s")
        if row.get("kind") == "tta" and row.get("tta_valid") is not False and not missing(low) \
                and not missing(high):
            return f"95% CI {seconds(low)} – {seconds(high)}"
    elif key == "goodput" and not missing(row.get("effective_goodput")):
        return f"effective {value_text(row['effective_goodput'], 'share')}"
    elif key == "date" and row.get("suite_version") is not None:
        return f"suite {row['suite_version']}"
    elif key == "signer":  # a system page's rows: a copy's owner, else the trust level
        return _copy_text(row) if isinstance(row.get("copy_status"), str) else trust_text(row)
    elif key == "system":  # the system column wraps: what stands behind the row goes there
        lines = [_copy_text(row) if isinstance(row.get("copy_status"), str) else None,
                 f"{NO_KNOWN_PEAK}, not ranked" if row.get("known_peak") == False else None,  # noqa: E712 - numpy bool
                 trust_text(row),
                 UNDER_LOAD if isinstance(row.get("under_load"), str) else None,
                 LOAD_NOT_RECORDED if row.get("load_recorded") == False else None]  # noqa: E712 - numpy bool
        return "; ".join(line for line in lines if line) or None
    return None


UNDER_LOAD = "measured under load (self-reported host record; its run pages say what ran beside it)"
LOAD_NOT_RECORDED = "host load not recorded (written before goodbench recorded it)"


def _copy_text(row: dict) -> str:
    words = copy_words(row["copy_status"], row.get("copy_of") if isinstance(row.get("copy_of"), str) else None)
    return f"{words['lead']}{' ' + short(words['owner']) if words['owner'] else ''}{words['tail']}"


def incomplete_badge(row: dict) -> str | None:
    """"1 partial run", "2 failed runs", …: the entry's runs that did not complete (an
    interrupted run is partial) and so are not in its score; None when every run completed."""
    parts = []
    for key, word in (("partial_runs", "partial"), ("failed_runs", "failed")):
        n = row.get(key)
        n = 0 if missing(n) or not n else int(n)
        if n:
            parts.append(f"{n} {word} run{'' if n == 1 else 's'}")
    return ", ".join(parts) or None


def table_pages(frame: pd.DataFrame, columns: list[str], table_id: str, caption: str, base: Path,
                 root: str, ranked: bool, page_href) -> list[dict]:
    """The table split into pages of PAGE_ROWS rows (cells preformatted), plus its CSV/JSON files."""
    records = frame.to_dict(orient="records")
    downloads(frame, base)
    pages = []
    n_pages = max(1, math.ceil(len(records) / PAGE_ROWS))
    for page in range(n_pages):
        chunk = records[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]
        rows = [[cell(c, r, root, page * PAGE_ROWS + i + 1 if ranked else None) for c in columns]
                for i, r in enumerate(chunk)]
        pages.append({
            "id": table_id, "caption": caption, "rows": rows, "page": page + 1, "n_pages": n_pages,
            "n_rows": len(records), "headers": [{"label": COLUMNS[c][0], "kind": COLUMNS[c][1], "key": c} for c in columns],
            "csv": f"{base.name}.csv", "json": f"{base.name}.json",
            "links": [{"n": k + 1, "href": page_href(k + 1)} for k in range(n_pages)] if n_pages > 1 else [],
        })
    return pages


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
        if not (pd.api.types.is_numeric_dtype(safe[column]) or pd.api.types.is_bool_dtype(safe[column])):
            safe[column] = safe[column].map(csv_cell)
    # RFC 4180's line end (CRLF): the writer then quotes any cell holding a line break, CR among them
    safe.to_csv(base.parent / f"{base.name}.csv", index=False, lineterminator="\r\n")  # a name may hold dots
    frame.to_json(base.parent / f"{base.name}.json", orient="records", indent=1)
