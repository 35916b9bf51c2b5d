"""modded-nanogpt's README → the record tables of its two tracks: per row the record's number,
claimed time, description, date, log and PR links, and contributors, as the README states them."""
from __future__ import annotations

import re

from suite.record.text import github_address

HEADER = re.compile(r"^\|\s*#\s*\|\s*Record time\s*\|", re.IGNORECASE)
_ROW = re.compile(r"^\|?\s*(\d+)\s*\|(.*)$")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_TIME = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(minutes?|hours?|seconds?|min|h|s)\b", re.IGNORECASE)
_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")
_UNIT_S = {"s": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "minute": 60.0, "minutes": 60.0,
           "h": 3600.0, "hour": 3600.0, "hours": 3600.0}


def claimed_seconds(text: str) -> float | None:
    """The README's record time in seconds ("1.23 minutes" → 73.8); ``None`` when it names none."""
    m = _TIME.search(text)
    if m is None:
        return None
    return round(float(m.group(1)) * _UNIT_S[m.group(2).lower()], 3)


def iso_date(text: str) -> str | None:
    """The README's MM/DD/YY date as YYYY-MM-DD; ``None`` for "-" or anything else."""
    m = _DATE.match(text.strip())
    if m is None:
        return None
    year = int(m.group(3))
    return f"{year + 2000 if year < 100 else year:04d}-{int(m.group(1)):02d}-{int(m.group(2)):02d}"


def _row(number: int, rest: str) -> dict:
    cells = [c.strip() for c in rest.split(" | ")]
    cells += [""] * (5 - len(cells))
    time, description, date, log_cell = cells[0], cells[1], cells[2], cells[3]
    contributors = " | ".join(cells[4:]).strip().strip("|").strip()
    links = {text.strip().lower(): url for text, url in _LINK.findall(log_cell)}
    pr = github_address(links.get("pr") or next((u for _, u in _LINK.findall(description) if "/pull/" in u), None))
    return {"record": number, "claimed": time.replace("|", "").strip(), "claimed_s": claimed_seconds(time),
            "description": _LINK.sub(lambda m: m.group(1), description).strip(),
            "description_links": [u for _, u in _LINK.findall(description)],
            "date": iso_date(date), "log_link": links.get("log"), "pr": pr,
            "contributors": _LINK.sub(lambda m: m.group(1), contributors).strip().rstrip(",").strip()}


def record_tables(text: str) -> list[list[dict]]:
    """The README's record tables in order (track 1's first), each a list of rows."""
    tables: list[list[dict]] = []
    current: list[dict] | None = None
    for line in text.splitlines():
        if HEADER.match(line):
            current = []
            tables.append(current)
            continue
        if current is None:
            continue
        if re.match(r"^\|\s*-", line):
            continue
        m = _ROW.match(line)
        if m is None:
            if line.strip():
                current = None
            continue
        current.append(_row(int(m.group(1)), m.group(2)))
    return tables
