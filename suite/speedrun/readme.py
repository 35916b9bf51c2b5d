"""modded-nanogpt's README → the record tables of its two tracks: per row the record's number,
claimed time, description, date, log and PR links, and contributors, as the README states them,
each control, bidi or invisible character written as ``\\uXXXX`` (:func:`~suite.record.text.printable`:
a description holding U+202E read "(verified by goodbench)" reversed on the pages)."""
from __future__ import annotations

import re

from suite.record.text import github_address, printable

HEADER = re.compile(r"^\|[ \t]*#[ \t]*\|[ \t]*Record time[ \t]*\|", re.IGNORECASE)
_ROW = re.compile(r"^\|?[ \t]*(\d{1,9})[ \t]*\|(.*)$")
# linear on any cell: a link's text holds no bracket, its target no parenthesis or space, each bounded
_LINK = re.compile(r"\[([^\[\]\n]{0,500})\]\(([^()\s]{0,2000})\)")
# a number with or without thousands separators ("1,234.5"), never the tail of one ("234.5" of "1,234.5")
_TIME = re.compile(r"(?<![0-9.,])((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]{1,12})(?:\.[0-9]{1,12})?)[ \t]{0,8}"
                   r"(minutes?|hours?|seconds?|min|h|s)\b", re.IGNORECASE)
_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")
_UNIT_S = {"s": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0, "minute": 60.0, "minutes": 60.0,
           "h": 3600.0, "hour": 3600.0, "hours": 3600.0}
CELLS = 6  # the tables' header: #, Record time, Description, Date, Log, Contributors


def claimed_seconds(text: str) -> float | None:
    """The README's record time in seconds ("1.23 minutes" → 73.8); ``None`` when it names none."""
    m = _TIME.search(text)
    if m is None:
        return None
    return round(float(m.group(1).replace(",", "")) * _UNIT_S[m.group(2).lower()], 3)


def iso_date(text: str) -> str | None:
    """The README's MM/DD/YY date as YYYY-MM-DD; ``None`` for "-" or anything else."""
    m = _DATE.match(text.strip())
    if m is None:
        return None
    year = int(m.group(3))
    return f"{year + 2000 if year < 100 else year:04d}-{int(m.group(1)):02d}-{int(m.group(2)):02d}"


_PIPE = re.compile(r"\\\||\|")


def cells(line: str) -> list[str]:
    r"""A Markdown table line's cells, stripped, split as GitHub's table parser splits them: on
    every ``|`` but an escaped ``\|`` (read as ``|``), with or without spaces around it, even one
    inside a link's text or target (GitHub splits the row before it reads any link); the outer
    pipes of ``| a | b |`` open and close the row and hold no cell. One pass (linear)."""
    found, cell = [], []
    at = 0
    for m in _PIPE.finditer(line):
        if m.group() == "\\|":
            cell += [line[at:m.start()], "|"]
        else:
            cell.append(line[at:m.start()])
            found.append("".join(cell).strip())
            cell = []
        at = m.end()
    cell.append(line[at:])
    found.append("".join(cell).strip())
    if line.lstrip().startswith("|"):
        found = found[1:]
    if len(found) > 1 and line.rstrip().endswith("|") and not line.rstrip().endswith("\\|") and found[-1] == "":
        found = found[:-1]
    return found


def _row(number: int, rest: str) -> dict:
    """One table row from its cells after the number (time, description, date, log, contributors;
    cells beyond those are the contributors' too)."""
    parts = [printable(p) for p in cells("|" + rest)]  # a control, bidi or invisible character as \uXXXX
    parts += [""] * (5 - len(parts))
    time, description, date, log_cell = parts[0], parts[1], parts[2], parts[3]
    contributors = " | ".join(p for p in parts[4:] if p).strip()
    links = {text.strip().lower(): url for text, url in _LINK.findall(log_cell)}
    described = _LINK.findall(description)
    pr = github_address(links.get("pr") or next((u for _, u in described if "/pull/" in u), None))
    return {"record": number, "claimed": time.replace("|", "").strip(), "claimed_s": claimed_seconds(time),
            "description": _LINK.sub(lambda m: m.group(1), description).strip(),
            "description_links": [u for _, u in described],
            "date": iso_date(date), "log_link": links.get("log"), "pr": pr,
            "contributors": _LINK.sub(lambda m: m.group(1), contributors).strip().rstrip(",").strip()}


def record_tables(text: str, problems: list[str] | None = None) -> list[list[dict]]:
    """The README's record tables in order (track 1's first), each a list of rows; a row with
    fewer cells than the header is not read: one line in ``problems``."""
    tables: list[list[dict]] = []
    current: list[dict] | None = None
    header = CELLS
    for number, line in enumerate(text.splitlines(), 1):
        if HEADER.match(line):
            current = []
            tables.append(current)
            header = len(cells(line))
            continue
        if current is None:
            continue
        if re.match(r"^\|[ \t]*-", line):
            continue
        m = _ROW.match(line)
        if m is None:
            if line.strip():
                current = None
            continue
        found = len(cells(line))
        if found < header:
            if problems is not None:
                problems.append(f"README.md: line {number} (record {int(m.group(1))} of table {len(tables)}): "
                                f"{found} cells where the header has {header}: not read")
            continue
        current.append(_row(int(m.group(1)), m.group(2)))
    return tables
