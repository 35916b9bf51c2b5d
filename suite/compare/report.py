"""``goodbench compare``'s output: an aligned text table (colour only on a terminal), markdown for
a pull-request comment, or JSON for tools. Formatting only: every number comes from
:mod:`suite.compare.engine`."""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from suite.compare import engine as compare
from suite.compare import stats as compare_stats
from suite.compare.engine import BY_ID, FASTER, NOT_COMPARABLE, NOT_MEASURED, SLOWER, Column, Pair, Row
from suite.figures.report import percent
from suite.record.text import safe

GAP = "  "
COLOURS = {SLOWER: "\033[31m", FASTER: "\033[32m", NOT_COMPARABLE: "\033[33m"}
RESET = "\033[0m"
METHODS = ("95% intervals of NEW/BASE. samples/s, tokens/s, MFU and step time p50/p99: with two files "
           "or more per side, the spread between the files; with one file of several runs, the spread "
           "between its runs; with one run, the noise inside it (batch means of the steady-state step "
           "times; p50/p99: moving-block bootstrap); TTA: over seeds; energy per sample and goodput: "
           "over runs. A verdict needs the whole interval on one side of 1 (docs/compare.md).")
ADVICE = ("For a verdict, give two files or more per side, made alternately (BASE, NEW, BASE, NEW, …; "
          "each may be goodbench run --repeat N): goodbench compare BASE1 BASE2 --vs NEW1 NEW2")
CAVEATS = {  # what a verdict of each narrow spread is marked with, and why
    compare.ONE_RUN: ("one run", "one run per side cannot tell a real change from machine noise: its "
                      "intervals cover the noise inside each run, not what changes from one run to the "
                      "next, so its verdicts, marked (one run), are for a quick look. " + ADVICE),
    compare.ACROSS_RUNS: ("one file", "one file per side cannot tell a real change from machine noise "
                          "either: its runs share one process and one stretch of time, and identical "
                          "files differ by more than their runs do (docs/compare.md), so its verdicts, "
                          "marked (one file), are for a quick look. " + ADVICE),
}


# ---------------------------------------------------------------- numbers as text
def value_text(value: float | None, unit: str = "") -> str:
    """A figure with 4 significant digits (whole numbers, thousands separated, from 1,000 on),
    "—" when missing."""
    if value is None or not math.isfinite(value):
        return "—"
    text = f"{value:,.0f}" if abs(value) >= 1e3 else f"{value:.4g}"
    return f"{text} {unit}" if unit else text


def figure_text(figure: str, value: float | None) -> str:
    """A figure's value as the table shows it: goodput as a percentage ("92.3%", as goodbench show
    and the site print it; the JSON keeps the fraction), any other with its unit (:func:`value_text`)."""
    if figure == "goodput" and value is not None and math.isfinite(value):
        return percent(value) or "—"
    return value_text(value, BY_ID[figure].unit)


def _factor(x: float) -> str:
    """A ratio: 3 decimals from 0.1 to 10 (1.004, 0.987), else 3 significant digits."""
    return f"{x:.3f}" if 0.1 <= x < 10 else f"{x:.3g}"


def ratio_text(ratio: float | None) -> str:
    return "—" if ratio is None else f"{_factor(ratio)}×"


def interval_text(row: Row, sep: str = ", ") -> str:
    return "—" if row.low is None or row.high is None else f"[{_factor(row.low)}{sep}{_factor(row.high)}]"


def gate_text(gate: compare.Gate) -> str:
    figures = ", ".join(f"{BY_ID[f].label} > {100 * p:g}%" for f, p in gate.thresholds.items())
    return f"regression gate (worse by {figures})"


class Notes:
    """Numbered footnotes, one number per distinct text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, text: str | None) -> str:
        if not text:
            return ""
        if text not in self.texts:
            self.texts.append(text)
        return f" [{self.texts.index(text) + 1}]"


# ---------------------------------------------------------------- the rows shown
def keys(columns: Sequence[Column]) -> list[str]:
    """Every workload × scale compared in any column, in the order they first appear."""
    return list(dict.fromkeys(p.key for col in columns for p in col.pairs))


def _pair(col: Column, key: str) -> Pair | None:
    return next((p for p in col.pairs if p.key == key), None)


def shown_figures(columns: Sequence[Column], key: str) -> tuple[list[str], list[str]]:
    """(figures with a value on some side of some column, figures measured nowhere)."""
    shown: list[str] = []
    unmeasured: list[str] = []
    for figure in compare.FIGURES:
        rows = [r for col in columns if (p := _pair(col, key)) and p.comparable
                for r in p.rows if r.figure == figure.id]
        if not rows:
            continue
        (shown if any(r.base is not None or r.new is not None for r in rows) else unmeasured).append(figure.id)
    return shown, unmeasured


def _cells(row: Row | None, notes: Notes, pair: Pair | None) -> list[str]:
    """value, ratio, interval, verdict of one NEW column."""
    if pair is None:
        return ["—", "—", "—", "not in NEW"]
    if not pair.comparable:
        return ["—", "—", "—", NOT_COMPARABLE + notes.mark(pair.reason)]
    if row is None:
        return ["—", "—", "—", ""]
    verdict = row.verdict + notes.mark(row.reason if row.verdict not in (FASTER, SLOWER, compare.SAME) else None)
    narrow = row.spread in CAVEATS and row.verdict in (FASTER, SLOWER, compare.SAME)  # every verdict it judged
    labels = [w for w, on in ((CAVEATS[row.spread][0] if narrow else "", narrow),
                              ("regression", row.regression)) if on]
    if labels:
        verdict += f" ({', '.join(labels)})"
    return [figure_text(row.figure, row.new), ratio_text(row.ratio), interval_text(row), verdict]


def _grid(columns: Sequence[Column], notes: Notes) -> tuple[list[list[str]], list[str]]:
    """The table's cells (first row: header) and the lines about figures measured nowhere."""
    heads = ["NEW"] if len(columns) == 1 else [f"NEW {i}" for i in range(1, len(columns) + 1)]
    grid = [["workload", "figure", "BASE"] + [c for h in heads for c in (h, "ratio", "95% CI", "verdict")]]
    unmeasured_lines = []
    for key in keys(columns):
        pairs = [_pair(col, key) for col in columns]
        shown, unmeasured = shown_figures(columns, key)
        if not shown:  # not comparable in every column
            grid.append([key, "—", "—"] + [c for p in pairs for c in _cells(None, notes, p)])
            continue
        for i, fid in enumerate(shown):
            rows = [next((r for r in p.rows if r.figure == fid), None) if p else None for p in pairs]
            base = next((r.base for r in rows if r is not None), None)
            grid.append([key if i == 0 else "", BY_ID[fid].label, figure_text(fid, base)]
                        + [c for p, r in zip(pairs, rows) for c in _cells(r, notes, p)])
        if unmeasured:
            unmeasured_lines.append(f"{key}: not measured in either file: "
                                    + ", ".join(BY_ID[f].label for f in unmeasured))
    return grid, unmeasured_lines


def narrow_keys(columns: Sequence[Column], spread: str) -> list[str]:
    """The workload × scale pairs whose step-time figures were judged at ``spread`` (one of
    :data:`CAVEATS`; a pair judged within one run is not listed again as one file)."""
    def level(pair: Pair) -> str | None:
        found = {r.spread for r in pair.rows}
        return next((s for s in (compare.ONE_RUN, compare.ACROSS_RUNS) if s in found), None)

    return list(dict.fromkeys(p.key for col in columns for p in col.pairs if level(p) == spread))


def caveat_lines(columns: Sequence[Column]) -> list[str]:
    """The warnings of one run or one file per side, naming the pairs they concern; none when
    every pair was judged across files."""
    return [f"{', '.join(keys)}: {text}" for spread, (_, text) in CAVEATS.items()
            if (keys := narrow_keys(columns, spread))]


STEP_VERDICT_FIGURES = ("samples_per_s", "step_time_p50", "step_time_p99")  # tokens/s and MFU move with samples/s
VERDICTS = (FASTER, SLOWER, compare.SAME)
DISAGREE = ("samples/s (and tokens/s, MFU) counts the window's steps over their summed time, a mean that a few "
            "long steps (a stall, another process on the core) weigh heavily and whose interval they widen; the "
            "p50 is the median step, which they do not move (the p99 is those long steps). The typical step can "
            "change while the throughput does not, or the reverse; the throughput is what a run delivers and what "
            "the gate judges")
ONE_RUN_DISAGREE = (". With one run a side, each interval covers only that run's own noise, and a stretch of load "
                    "in one run is enough to part them")


def disagreement_lines(columns: Sequence[Column]) -> list[str]:
    """A note for each pair whose throughput and step-time verdicts point different ways ("no
    significant change" in samples/s beside "faster" in the p50, or "faster" beside "slower"):
    what each figure measures, so that the table does not read as a contradiction. None where
    the verdicts agree."""
    heads = ["NEW"] if len(columns) == 1 else [f"NEW {i}" for i in range(1, len(columns) + 1)]
    out = []
    for head, col in zip(heads, columns):
        for pair in col.pairs:
            judged = [r for fid in STEP_VERDICT_FIGURES for r in pair.rows if r.figure == fid and r.verdict in VERDICTS]
            if len({r.verdict for r in judged}) < 2:
                continue
            where = pair.key if len(columns) == 1 else f"{pair.key} in {head}"
            said = " beside ".join(f"{r.label} {r.verdict}" for r in judged)
            one_run = any(r.spread == compare.ONE_RUN for r in judged)
            out.append(f"{where}: {said} is no contradiction: {DISAGREE}{ONE_RUN_DISAGREE if one_run else ''}.")
    return out


def load_lines(base_doc: Any, columns: Sequence[Column]) -> list[str]:
    """One line when a file of either side was measured under load (its header line says how):
    the verdicts do not weigh it, so the line says what they may then mean."""
    heads = ["NEW"] if len(columns) == 1 else [f"NEW {i}" for i in range(1, len(columns) + 1)]
    loaded = [head for head, doc in [("BASE", base_doc), *zip(heads, (c.doc for c in columns))]
              if compare.describe(doc).get("under_load")]
    if not loaded:
        return []
    return [f"{', '.join(loaded)}: MEASURED UNDER LOAD (other processes shared the machine): a verdict here may "
            "say more of that load than of the systems or the change; the leaderboard leaves such a result out "
            "of its comparisons. Measure again on a quiet machine (goodbench check says when it is)"]


OWN_CLOCKS = {1: "own code, ONE CLOCK (self-timed): its times are its own process's word",
              2: "own code, two clocks (goodbench run-own stamped its edges)"}
CLOCK_GAPS = {"unstamped": "own code, ONE CLOCK (self-timed): no second clock stamped all its steps and evaluations, "
                           "so its times are its own process's word",
              "short steps": "own code, ONE CLOCK (self-timed): goodbench run-own's clock stamped it, but on a CPU "
                             "that clock holds steps of 5 ms or more and its median step is shorter, so its step "
                             "times are its own process's word",
              "steps' sum disagrees": "own code, ONE CLOCK (self-timed): goodbench run-own's clock stamped it, but "
                                      "on a CPU its steady steps' sum and that clock's disagree beyond 5% + 75 ms, "
                                      "so its step times are its own process's word"}
"""What a side's identity says of own code timed by one clock, by why (:func:`suite.compare.engine.own_clock_gaps`);
:data:`OWN_CLOCKS` where why is not known."""


def _clocks(d: dict) -> str | None:
    """What a side's identity says of its clocks (None: not own code)."""
    gaps = d.get("clock_gaps") or []
    if d.get("clocks") == 1 and gaps:
        return "; ".join([CLOCK_GAPS[gaps[0]], *(CLOCK_GAPS[g].split(": ", 1)[1] for g in gaps[1:])])
    return OWN_CLOCKS.get(d.get("clocks") or 0)


def _legend(base_name: str, base_doc: Any, columns: Sequence[Column]) -> list[tuple[str, str, str]]:
    heads = ["NEW"] if len(columns) == 1 else [f"NEW {i}" for i in range(1, len(columns) + 1)]
    out = [("BASE", base_name, _identity(base_doc))]
    out += [(h, col.file, _identity(col.doc)) for h, col in zip(heads, columns)]
    return out


def _identity(doc: Any) -> str:
    d = compare.describe(doc)
    accelerator = None if _spelled_alike(d["system"], d["accelerator"]) else d["accelerator"]
    parts = [d["system"], accelerator, f"torch {d['torch']}" if d["torch"] else None,
             f"compile {d['compile']}" if d["compile"] != "off" else None, d["created_at"],
             f"MEASURED UNDER LOAD: {d['under_load']}" if d.get("under_load") else None,
             "host load not recorded (dated before goodbench recorded it)"
             if d.get("load_unrecorded") and not d.get("under_load") else None,
             _clocks(d)]
    return " · ".join(str(p) for p in parts if p)


def _spelled_alike(system: Any, accelerator: Any) -> bool:
    """Whether a system's name is its accelerator's count and name as goodbench names a system by
    default ("AMD EPYC x1" and "AMD EPYC × 1"): then the legend names it once."""
    def words(text: Any) -> str:
        return "".join(str(text).replace("×", "x").split()).casefold()

    return system is not None and accelerator is not None and words(system) == words(accelerator)


def _others(columns: Sequence[Column]) -> list[str]:
    heads = ["NEW"] if len(columns) == 1 else [f"NEW {i}" for i in range(1, len(columns) + 1)]
    out = []
    for head, col in zip(heads, columns):
        if col.only_base:
            out.append(f"only in BASE (not in {head}): {', '.join(col.only_base)}")
        if col.only_new:
            out.append(f"only in {head}: {', '.join(col.only_new)}")
    return out


def own_code_lines(columns: Sequence[Column]) -> list[str]:
    """For each pair of own code whose sides differ in code, command, name or what it trains:
    a line naming the pair, then one line for each difference (what was compared is two versions
    of the code, held to one declaration: docs/compare.md)."""
    heads = ["NEW"] if len(columns) == 1 else [f"NEW {i}" for i in range(1, len(columns) + 1)]
    out = []
    for head, col in zip(heads, columns):
        for pair in col.pairs:
            if pair.own_code and pair.own_code["differs"]:
                where = pair.key if len(columns) == 1 else f"{pair.key} in {head}"
                held = "held to the same declaration" if pair.comparable else "not comparable"
                out.append(f"{where}: two versions of own code ({held}):")
                out += [f"  {line}" for line in pair.own_code["differs"]]
    return out


UNDECIDED_ADVICE = ("its interval reaches both sides of 1, too wide to tell such a change from noise: give more "
                    "runs a side, made alternately (goodbench run --repeat N; goodbench compare BASE1 BASE2 --vs "
                    "NEW1 NEW2)")


def undecided_text(gate: compare.Gate, undecided, heads: dict[str, str]) -> str:
    """The gated figures the interval could not decide (:meth:`suite.compare.engine.Gate.undecided`),
    each with its ratio, interval and threshold, then what to do; whether they fail the gate
    (``--fail-on-undecided``) or pass it."""
    items = [f"{key} {row.label} {ratio_text(row.ratio)} {interval_text(row)} in {heads[file]} could be worse "
             f"by more than {100 * gate.thresholds[row.figure]:g}%" for file, key, row in undecided]
    what = ("--fail-on-undecided fails the gate on it" if gate.fail_on_undecided
            else "the rule passes it (docs/compare.md); --fail-on-undecided fails the gate on it")
    return "; ".join(items) + f"; {UNDECIDED_ADVICE}; {what}"


def _gate_lines(gate: compare.Gate | None, regressions, unchecked, columns: Sequence[Column],
                undecided: Sequence | None) -> list[str]:
    if gate is None or not gate.thresholds:
        return []
    heads = {col.file: ("NEW" if len(columns) == 1 else f"NEW {i}") for i, col in enumerate(columns, 1)}
    lines = []
    undecided = gate.undecided(columns) if undecided is None else undecided
    outcome = "FAILED" if gate.failed(regressions, undecided, unchecked) else "passed"
    if regressions:
        lines.append(f"{gate_text(gate)}: {outcome}")
        lines += [f"  {key} {row.label}: {ratio_text(row.ratio)} {interval_text(row)} in {heads[file]}"
                  for file, key, row in regressions]
        if undecided:
            lines.append(f"  undecided: {undecided_text(gate, undecided, heads)}")
    elif undecided:
        lines.append(f"{gate_text(gate)}: {outcome}, undecided: {undecided_text(gate, undecided, heads)}")
    else:
        lines.append(f"{gate_text(gate)}: {outcome}")
    narrow = gate.narrow(columns)
    if narrow:
        lines.append("  judged without the spread between files (blind to machine noise between them): "
                     + "; ".join(f"{key} {row.label} ({row.spread})" for _, key, row in narrow))
    lost: dict[tuple[str, str], list] = {}
    missed = []  # a seed lost: both scores valid, NEW's seeds missed the target more often
    for file, key, row in unchecked:
        if gate.lost(row) and row is not None and row.verdict == compare.MISSED_MORE:
            missed.append((file, key, row))
        elif gate.lost(row):
            lost.setdefault((file, key), []).append(row)
    if lost:
        lines.append("  measured in BASE, lost in NEW (this fails the gate): " + "; ".join(
            f"{key} {', '.join(r.label for r in rows)} ({_lost_why(rows[0])}, {heads[file]})"
            for (file, key), rows in lost.items()))
    if missed:
        lines.append(f"  {compare.MISSED_MORE} (this fails the gate): " + "; ".join(
            f"{key} {row.label} ({_lost_why(row)}, {heads[file]})" for file, key, row in missed))
    rest = [(file, key, row) for file, key, row in unchecked if not gate.lost(row)]
    if rest:
        fails = " (--fail-on-undecided: the gate cannot tell them, so they fail it)" if gate.fail_on_undecided else ""
        lines.append(f"  not checked{fails}: " + "; ".join(
            f"{key} {row.label} ({row.verdict}, {heads[file]})" if row else
            f"{key} ({NOT_COMPARABLE}, {heads[file]})" for file, key, row in rest))
    return lines


def _lost_why(row: Row) -> str:
    """Why a figure BASE measured is lost in NEW, as the gate's line says it (the row's reason
    without the file name a missing row's reason repeats; for :data:`~suite.compare.engine.MISSED_MORE`
    the seeds each side missed, without what the scores alone say, which the table's note has)."""
    reason = row.reason or row.verdict
    if row.verdict == compare.MISSED_MORE:
        return reason.split(compare.SCORES_ALONE)[0]
    return "no run of it" if reason.startswith("only in BASE: ") else reason


# ---------------------------------------------------------------- formats
def text(base_name: str, base_doc: Any, columns: Sequence[Column], gate: compare.Gate | None = None,
         regressions=(), unchecked=(), colour: bool = False, undecided: Sequence | None = None) -> str:
    """The comparison as an aligned text table (verdicts coloured when ``colour``; ``undecided``:
    :meth:`~suite.compare.engine.Gate.undecided` where the caller has it)."""
    notes = Notes()
    grid, unmeasured = _grid(columns, notes)
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    numeric = {2} | {3 + 4 * k + j for k in range(len(columns)) for j in (0, 1)}
    lines = [GAP.join(f"{name:<6} {file}  {who}".rstrip() for name, file, who in [item])
             for item in _legend(base_name, base_doc, columns)]
    lines.append("")
    for n, row in enumerate(grid):
        cells = []
        for i, cell in enumerate(row):
            padded = cell.rjust(widths[i]) if i in numeric and n else cell.ljust(widths[i])
            verdict_col = i >= 3 and (i - 3) % 4 == 3
            word = next((w for w in COLOURS if cell.startswith(w)), None)
            if colour and n and verdict_col and word:  # the word coloured, not its padding
                padded = COLOURS[word] + cell + RESET + " " * (widths[i] - len(cell))
            cells.append(padded)
        lines.append(GAP.join(cells).rstrip())
    lines += [""] + unmeasured if unmeasured else []
    others = _others(columns)
    lines += ([""] if others and not unmeasured else []) + others
    own_lines = own_code_lines(columns)
    lines += [""] + own_lines if own_lines else []
    if notes.texts:
        lines.append("")
        lines += [f"[{i}] {t}" for i, t in enumerate(notes.texts, 1)]
    lines += ["", *[line for c in [*disagreement_lines(columns), *load_lines(base_doc, columns),
                                   *caveat_lines(columns)] for line in (c, "")], METHODS]
    gate_lines = _gate_lines(gate, regressions, unchecked, columns, undecided)
    if gate_lines:
        lines += [""] + gate_lines
    return "\n".join(lines)


_MARKDOWN = re.compile(r"[\\`*\[\]<>|~!&$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
"""What a text in a Markdown comment must not be read as: emphasis, code, a link or an image, an
HTML tag or entity, a table cell's end, math (CommonMark's backslash escapes each; an ``_`` inside
a word, "gpt2_124m", starts no emphasis)."""
_LINKED = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])|#(?=\d)|(?<=[A-Za-z]):(?=//)|(?i:(?<![A-Za-z0-9])www)(?=\.)")
"""What GitHub links in a comment's text after Markdown (escapes do not stop it): a mention
("@team"), an issue reference ("#12", "owner/repo#3"), a bare address ("https://…", "www.…").
Each is broken by an invisible word joiner after its ``@``, ``#``, ``:`` or ``www``."""
WORD_JOINER = "\u2060"


def _md(text_: str) -> str:
    """``text_`` as literal text in GitHub's Markdown: a results file's system name or software
    text is the submitter's, and a pull-request comment would render its tags, links, images,
    mentions and references."""
    escaped = _MARKDOWN.sub(lambda m: "\\" + m.group(0), text_)
    return _LINKED.sub(lambda m: m.group(0) + WORD_JOINER, escaped)


def _in_code(text_: str) -> str:
    """``text_`` inside a Markdown code span, which no backtick or line break of it can close."""
    return safe(text_, 300).replace("`", "'")


def markdown(base_name: str, base_doc: Any, columns: Sequence[Column], gate: compare.Gate | None = None,
             regressions=(), unchecked=(), undecided: Sequence | None = None) -> str:
    """The comparison as markdown for a pull-request comment: one table, notes below (``undecided``:
    as :func:`text`'s)."""
    notes = Notes()
    grid, unmeasured = _grid(columns, notes)
    lines = ["### goodbench compare", ""]
    lines += [f"- **{name}** `{_in_code(file)}` — {_md(who)}" for name, file, who in _legend(base_name, base_doc, columns)]
    lines.append("")
    header = grid[0][:3]
    for k in range(len(columns)):
        header += [grid[0][3 + 4 * k], "ratio (95% CI)", "verdict"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join([":--", ":--", "--:"] + [":--" if i % 3 == 2 else "--:" if i % 3 == 0
                                                          else ":--" for i in range(3 * len(columns))]) + "|")
    for row in grid[1:]:
        cells = [_md(c) for c in row[:3]]
        for k in range(len(columns)):
            value, ratio, ci, verdict = row[3 + 4 * k: 7 + 4 * k]
            both = ratio if ci == "—" else f"{ratio} {ci.replace('[', '(').replace(']', ')')}"
            word = next((w for w in (SLOWER, FASTER) if verdict.startswith(w)), None)
            shown = f"**{word}**{_md(verdict[len(word):])}" if word else _md(verdict)
            cells += [_md(value), _md(both), shown]
        lines.append("| " + " | ".join(cells) + " |")
    extra = unmeasured + _others(columns) + own_code_lines(columns)
    if extra:
        lines.append("")
        lines += [f"{'  ' if t.startswith(' ') else ''}- {_md(t.strip())}" for t in extra]  # indented: nested
    if notes.texts:
        lines.append("")
        lines += [f"[{i}] {_md(t)}  " for i, t in enumerate(notes.texts, 1)]
    lines += [line for c in disagreement_lines(columns) for line in ("", _md(c))]
    lines += [line for c in [*load_lines(base_doc, columns), *caveat_lines(columns)]
              for line in ("", f"**{_md(c)}**")]
    lines += ["", f"<sub>{METHODS}</sub>"]
    gate_lines = _gate_lines(gate, regressions, unchecked, columns, undecided)
    if gate_lines:
        first, *rest = gate_lines
        lines += ["", f"**{_md(first)}**"] + [f"- {_md(t.strip())}" for t in rest]
    return "\n".join(lines)


def as_json(base_name: str, base_doc: Any, columns: Sequence[Column], gate: compare.Gate | None = None,
            regressions=(), unchecked=(), undecided: Sequence | None = None) -> str:
    """The comparison as JSON: every pair and figure with both values, ratio, interval, verdict,
    reason and method; the gate's thresholds, regressions, what it could not check
    (``not_checked``) and the figures BASE measured that NEW lost (``lost_in_new``: no run of
    the workload × scale, none complete, the target not reached, or missed by a larger share of
    NEW's seeds; ``undecided``: as :func:`text`'s)."""
    out: dict[str, Any] = {
        "level": compare_stats.LEVEL,
        "base": {"file": base_name, **compare.describe(base_doc)},
        "new": [col.to_json() for col in columns],
        "methods": METHODS,
        "caveats": [{"spread": spread, "pairs": keys, "text": text} for spread, (_, text) in CAVEATS.items()
                    if (keys := narrow_keys(columns, spread))],
        "notes": disagreement_lines(columns),
    }
    if gate is not None and gate.thresholds:
        undecided = gate.undecided(columns) if undecided is None else undecided
        out["gate"] = {
            "thresholds_pct": {f: 100 * p for f, p in gate.thresholds.items()},
            "failed": gate.failed(regressions, undecided, unchecked),
            "fail_on_undecided": gate.fail_on_undecided,
            "regressions": [{"new": file, "key": key, "figure": row.figure, "ratio": row.ratio,
                             "ci95": [row.low, row.high]} for file, key, row in regressions],
            "undecided": [{"new": file, "key": key, "figure": row.figure, "ratio": row.ratio,
                           "ci95": [row.low, row.high]} for file, key, row in undecided],
            "judged_without_files": [{"new": file, "key": key, "figure": row.figure, "spread": row.spread}
                                     for file, key, row in gate.narrow(columns)],
            "not_checked": [{"new": file, "key": key, "figure": row.figure if row else None,
                             "why": (row.reason or row.verdict) if row else _incomparable_why(columns, file, key)}
                            for file, key, row in unchecked if not gate.lost(row)],
            "lost_in_new": [{"new": file, "key": key, "figure": row.figure, "verdict": row.verdict,
                             "why": row.reason} for file, key, row in unchecked if gate.lost(row)],
        }
    return json.dumps(out, indent=1, allow_nan=False, default=str)


def _incomparable_why(columns: Sequence[Column], file: str, key: str) -> str:
    """A pair not comparable as a whole, as the JSON's ``not_checked`` says why: its reason."""
    pair = next((p for col in columns if col.file == file for p in col.pairs if p.key == key), None)
    return f"{NOT_COMPARABLE}: {pair.reason}" if pair is not None and pair.reason else NOT_COMPARABLE


FORMATS = {"text", "markdown", "json"}
__all__ = ["FORMATS", "NOT_MEASURED", "as_json", "markdown", "text"]
