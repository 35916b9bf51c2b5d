"""Which division an imported result is in, and where that was read.

MLCommons' result_summarizer reads the system description's ``division`` key. Some v0.7
descriptions (Alibaba, SIAT, Tencent) spell the key ``divison``: the summarizer finds no
division in them, though the submitter wrote one, and their logs' ``submission_division`` agrees
with it. The division is read, in this order, from:

1. the description's ``division`` (the document then names no source: this is the rule);
2. its ``divison``, the same field misspelt (source :data:`MISSPELT`);
3. the result logs' ``submission_division`` where every log read gives one and they agree
   (source :data:`LOGS`).

The text is kept as written ("Closed", "close"): the pages fold it (``mlperf_model.division``).
"""
from __future__ import annotations

from suite.mlperf.systems import clean

KEY, MISSPELT_KEY = "division", "divison"
MISSPELT = "system description, key spelt \u201cdivison\u201d"
LOGS = "result logs' submission_division"
DESCRIPTION = "system description"
LIMIT = 20


def decide(desc: dict, log_divisions: list[str | None]) -> tuple[str | None, str | None]:
    """(division text or None, its source or None where it is the description's ``division``)."""
    stated = clean(desc.get(KEY) or "", LIMIT)
    if stated:
        return stated, None
    misspelt = clean(desc.get(MISSPELT_KEY) or "", LIMIT)
    if misspelt:
        return misspelt, MISSPELT
    logged = {clean(d, LIMIT) for d in log_divisions}
    if log_divisions and len(logged) == 1 and None not in logged:
        return logged.pop(), LOGS
    return None, None


SHORT = {MISSPELT: "as \u201cdivison\u201d", LOGS: "from the logs"}  # the line under a division on a page


def folded(text: str | None) -> str | None:
    """A division as MLPerf has them ("Closed", "close" → "closed"; "Open" → "open"); other text
    folded to lower case; None for none."""
    text = (text or "").strip().lower()
    return {"close": "closed"}.get(text, text) or None


def held_to_description(run: dict, desc: dict) -> dict:
    """``run`` (one log's summary), not counted where the system description (``division``, or
    ``divison``) says closed and its log's ``submission_division`` another division: the run was
    checked as its log says (MLCommons' checker takes the log's division: an open run needs no
    closed target) and would be scored as closed (trial V: a log of the open division, stopped
    before the closed target, counted as closed and ranked). A log saying closed under a
    description saying open is counted, as open: it was checked against the stricter rules
    (v0.7 SIAT, v1.0 Intel dlrm, v3.0 and v3.1 Intel bert publish such logs)."""
    stated = clean(desc.get(KEY) or desc.get(MISSPELT_KEY) or "", LIMIT)
    described = folded(stated)
    logged = folded(run.get("division") if isinstance(run.get("division"), str) else None)
    if described != "closed" or logged is None or logged == "closed" or not (run.get("counted") or run.get("at_round")):
        return run
    kept = {k: v for k, v in run.items() if k not in ("score_minutes", "at_round")}
    return {**kept, "counted": False,
            "why": f"its log's submission_division is \u201c{clean(run['division'], LIMIT)}\u201d, the system "
                   f"description's \u201c{stated}\u201d: not counted by goodbench"}


def source_words(doc: dict) -> str:
    """Where a document's division was read, in words, for its page."""
    return doc.get("division_source") or DESCRIPTION
