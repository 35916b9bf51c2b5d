"""``goodbench show FILE [FILE ...]``: the summary ``goodbench run`` ends with, for any results file, a
reproduction's opening with what it reproduces and its verdicts (:func:`reproduction_lines`), and last
the validator's word on it (:func:`checked_line`). The file is read as the validator reads it
(bounded: size, nesting, numbers) and shown as it states its figures; a file
whose runs cannot be summarized is said so in one line. What it prints is bounded too: every string
the file supplies at :data:`MAX_CHARS` characters, its first :data:`MAX_RUNS` runs,
:data:`MAX_SCORES` time-to-target scores and :data:`MAX_BADPUT` kinds of badput a run, and a line
saying how many more it holds; a table's cell at :data:`suite.figures.report.CELL_CHARS`, the load
warning at :data:`MAX_WARNING` characters, each from the bounded copy of the file."""
from __future__ import annotations

import argparse
import sys
from typing import Any

# of any string the file supplies, as printed (escapes written out); longer ends in "…": above what
# goodbench writes in what show prints (a figure's status: 110), far below the validator's 2000
MAX_CHARS = 200
MAX_RUNS = 100    # runs in the table; the others are counted in a line
MAX_SCORES = 100  # time-to-target scores (workload × scale); as the runs
MAX_BADPUT = 20   # kinds of badput a run, each a column of the goodput table (goodbench writes 8)
MAX_WARNING = 600  # characters of the load warning: twice an honest one naming five processes twice

def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench show`` and its argument."""
    p = commands.add_parser("show", help="print a results file's summary table (as goodbench run ends)",
                            description="Print the summary goodbench run ends with for a results file: one row "
                                        "per run (samples/s, p50 step, MFU, energy), goodput and badput, "
                                        "time-to-target scores; a reproduction's first says what it "
                                        "reproduces, whose key signed it and each run's verdict. The file is "
                                        "read safely and shown as it states its figures; the last line is the "
                                        "validator's word on it (goodbench validate FILE lists every problem). "
                                        "Several files: each under a line naming it, in the order given.")
    p.add_argument("files", nargs="+", metavar="FILE", help="a results file (several: each in turn)")
    return p


def run(args) -> int:
    """Print each file's summary; 0, or a :class:`GoodbenchError` where the one file given cannot be
    read or summarized. Of several files, each is said under a ``# FILE`` line, one that cannot be
    is said so in one line on stderr and the others are still shown (1)."""
    from suite.commands.common import say
    from suite.record.errors import GoodbenchError
    from suite.record.text import printable

    if len(args.files) == 1:
        _show(args.files[0])
        return 0
    failed = 0
    for i, name in enumerate(args.files):
        print(("\n" if i else "") + f"# {printable(name)}", flush=True)
        try:
            _show(name)
        except GoodbenchError as exc:
            sys.stdout.flush()
            say(f"goodbench show: {exc}")
            failed += 1
    return 1 if failed else 0


def _show(name: str) -> None:
    """One file's summary (a reproduction's opening first, the load warning last)."""
    from suite.record import results
    from suite.record.errors import GoodbenchError

    try:
        doc = results.load(name)
    except results.Unreadable as exc:
        raise GoodbenchError(str(exc)) from None
    text, shown = _summarized(name, doc)
    for line in reproduction_lines(doc):
        print(line)
    print(text)
    loaded = load_warning(shown)
    if loaded:
        print(loaded)
    print(checked_line(name))


def checked_line(name: str) -> str:
    """The validator's word on the file shown, last: the table shows the figures the file states,
    which only the validator checks (a new user's find: an edited energy figure was shown plainly
    while ``validate`` refused the file)."""
    from suite.commands.validate import older_rules_note
    from suite.record.text import cut, printable
    from suite.validate import validate_file

    problems = validate_file(name)
    if not problems:
        return VALID
    older = older_rules_note(name, problems)
    if older is not None:
        return f"validator: {cut(older, MAX_CHARS)}"
    first = problems[0]  # its code and place only: a reason may quote the file, whose strings are hostile
    where = cut(printable(first.field), 80) if first.field else "the document"
    return (f"validator: NOT VALID ({len(problems)} problem{'s' if len(problems) > 1 else ''}, the first "
            f"[{first.code}] at {where}): the figures above are the file's own, unchecked (goodbench validate FILE "
            "says why)")


VALID = "validator: valid under today's rules"
"""What :func:`checked_line` says of a file the validator accepts."""


MAX_VERDICT = 2000  # characters of a reproduction's verdict: the validator's bound on a string, so it is shown whole


def reproduction_lines(doc: Any) -> list[str]:
    """What ``show`` says first of a reproduction (``settings.reproduces``: ``goodbench reproduce``
    wrote it): that it is one, of which stored file (by the sha256 of its bytes, its name in the
    store), whose key signed it and, for each of its first :data:`MAX_RUNS` runs, which run of the
    original it trained again and its verdict whole (at most :data:`MAX_VERDICT` characters); empty
    for any other file. Whether the site counts it is the site's reviewers' to say: only a key its
    ``results/reviewers.toml`` lists counts (docs/rules.md)."""
    from suite.record.text import cut
    from suite.trust import signing

    settings = doc.get("settings") if isinstance(doc, dict) else None
    section = settings.get("reproduces") if isinstance(settings, dict) else None
    if not isinstance(section, dict):
        return []
    sha = section.get("sha256")
    of = f"{sha}.json" if isinstance(sha, str) else section.get("file")
    try:
        fp = signing.signer(doc)
    except (KeyError, TypeError, ValueError, AttributeError):
        fp = None
    who = (f"signed by {fp} (the site counts it only where its results/reviewers.toml lists that key)"
           if isinstance(fp, str) else "unsigned, or its signature does not hold: the site counts it nowhere")
    lines = [f"a reproduction (goodbench reproduce) of the results file {cut(str(of), MAX_CHARS)}, {who}"]
    entries = found if isinstance(found := section.get("runs"), list) else []
    for entry in entries[:MAX_RUNS]:
        if isinstance(entry, dict):
            lines.append(f"  run {cut(str(entry.get('run_id')), 64)} reproduces run "
                         f"{cut(str(entry.get('original_run_id')), 64)}: "
                         f"{cut(str(entry.get('verdict') or 'no verdict recorded'), MAX_VERDICT)}")
    if len(entries) > MAX_RUNS:
        lines.append(f"  {len(entries) - MAX_RUNS} more reproduced runs not shown (the first {MAX_RUNS} are)")
    return lines


def load_warning(shown: Any) -> str | None:
    """The load warning ``goodbench run`` ends with (:func:`suite.figures.report.load_warning`) for
    ``shown``, the bounded copy of a document that :func:`summary` shows (:func:`bounded`), cut at
    :data:`MAX_WARNING` characters; None where no run was measured under load, or a host record
    cannot be read (validate's to say)."""
    from suite.figures import report
    from suite.record.text import cut
    from workloads import own

    try:
        loaded = report.load_warning(shown["runs"], own.implementation_name(shown))  # own code named as its rows name it
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError):
        return None
    return cut(loaded, MAX_WARNING) if loaded else None


def _printable(node: Any) -> Any:
    """``node`` with every string, keys too, safe to print on a terminal and bounded
    (:func:`suite.record.text.cut`: a control or invisible character written as its escape, at most
    :data:`MAX_CHARS` characters, then "…")."""
    from suite.record.text import cut

    if isinstance(node, str):
        return cut(node, MAX_CHARS)
    if isinstance(node, dict):
        return {_printable(k): _printable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_printable(v) for v in node]
    return node


def summary(name: str, doc: Any) -> str:
    """The summary of the document ``doc`` read from ``name`` (:func:`suite.figures.report.file_summary`),
    its text safe to print; :class:`GoodbenchError` in one line where its runs do not hold what the
    summary reads (a hostile or truncated file)."""
    return _summarized(name, doc)[0]


def _summarized(name: str, doc: Any) -> tuple[str, Any]:
    """:func:`summary`'s text, and the bounded copy of ``doc`` it was made from (:func:`bounded`)."""
    from suite.figures import report
    from suite.record.errors import GoodbenchError
    from suite.record.text import safe

    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) or not doc["runs"]:
        raise GoodbenchError(f"{name}: no runs to summarize (goodbench validate {name} says what it holds)")
    shown, left_out = bounded(doc)
    try:
        return "\n".join([report.file_summary(shown), *left_out]), shown
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise GoodbenchError(f"{name}: its runs do not hold what a summary reads ({type(exc).__name__}: "
                             f"{safe(exc)}); goodbench validate {name} says what is wrong") from None


def bounded(doc: Any) -> tuple[Any, list[str]]:
    """What show prints of ``doc``: :func:`_first` of it, every string cut (:func:`_printable`), and
    the lines saying what is left out."""
    first, left_out = _first(doc)
    return _printable(first), left_out


def _first(doc: dict) -> tuple[dict, list[str]]:
    """``doc`` with its first :data:`MAX_RUNS` runs, :data:`MAX_SCORES` scores and
    :data:`MAX_BADPUT` kinds of badput a run only, and a line for each of the three it holds more
    of, saying how many are not shown."""
    doc = dict(doc)
    left_out = []
    runs = doc["runs"]
    if len(runs) > MAX_RUNS:
        doc["runs"] = runs[:MAX_RUNS]
        left_out.append(f"{len(runs) - MAX_RUNS} more runs not shown (the first {MAX_RUNS} of {len(runs)} are)")
    scores = doc.get("summary")
    if isinstance(scores, dict) and len(scores) > MAX_SCORES:
        doc["summary"] = dict(list(scores.items())[:MAX_SCORES])
        left_out.append(f"{len(scores) - MAX_SCORES} more time-to-target scores not shown (the first {MAX_SCORES} "
                        f"of {len(scores)} are)")
    kinds = max((_badput_kinds(run) for run in doc["runs"]), default=0)
    if kinds > MAX_BADPUT:
        doc["runs"] = [_first_badput(run) for run in doc["runs"]]
        left_out.append(f"{kinds - MAX_BADPUT} more kinds of badput not shown (the first {MAX_BADPUT} of {kinds} "
                        f"are)")
    return doc, left_out


def _badput(run: Any) -> dict | None:
    """``run``'s goodput's ``badput_s`` where it is a mapping, else None."""
    goodput = run.get("goodput") if isinstance(run, dict) else None
    kinds = goodput.get("badput_s") if isinstance(goodput, dict) else None
    return kinds if isinstance(kinds, dict) else None


def _badput_kinds(run: Any) -> int:
    return len(_badput(run) or {})


def _first_badput(run: Any) -> Any:
    """``run`` with the first :data:`MAX_BADPUT` kinds of its ``badput_s`` only."""
    kinds = _badput(run)
    if kinds is None or len(kinds) <= MAX_BADPUT:
        return run
    return {**run, "goodput": {**run["goodput"], "badput_s": dict(list(kinds.items())[:MAX_BADPUT])}}
