"""Every column of the leaderboard's tables, defined once: its key, header label, kind (how it
sorts and aligns), unit (how a number is written), how its cell reads an entry row
(:func:`suite.leaderboard.rows.rows`) and the small line under it. A table names its columns by
key (:data:`suite.site.tables.ENTRY_TABLE`); :func:`cell` gives any column's cell of any row."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from suite.figures.naming import own_name, workload_text
from suite.leaderboard.rows import NO_KNOWN_PEAK
from suite.leaderboard.systems import signer_of
from suite.leaderboard.trust import UNSIGNED_WHY, inconclusive_text
from suite.leaderboard.trust import row_text as trust_text
from suite.record.text import cut_words
from suite.site.formatting import missing, num, seconds, usd
from suite.site.labels import copy_words, own_timing, value_text
from suite.site.names import run_slug, safe_name, system_slug
from suite.trust.signing import short

UNDER_LOAD = "measured under load (self-reported host record; its run pages say what ran beside it)"
LOAD_NOT_RECORDED = "host load not recorded (dated before goodbench recorded it)"

# The tones of a caveat's badge (style.css, ``.badge-<tone>``), as the run page colours the same
# words: "good" green (reproduced), "warn" amber (self-reported, re-run alone, older rules), "bad"
# red (a copy, disputed, a reproduction that differs, measured under load), "plain" grey (what
# says nothing against the figures: signed or unsigned, not reproduced; a reproduction
# inconclusive; no known peak).
TONES = ("good", "warn", "bad", "plain")

# what a column's cell shows of a row: (the number it sorts by, its text, its link); None: the
# row's value under the column's key, written in its unit
Reader = Callable[[dict, str, int | None], tuple[Any, str | None, str | None]]


@dataclass(frozen=True)
class Column:
    """One column: ``key``, header ``label``, ``kind`` ("num" sorts by number, "text" by text),
    ``unit`` (:data:`suite.site.labels.UNITS`), ``read`` (its cell from a row, the site's root and
    the row's rank; None: the row's own value at ``key``), ``sub`` (the small line under it),
    ``caveats`` (its badges), ``title`` (the header's tooltip) and ``lines`` (what own code's row
    says under the value of its code: :func:`own_lines`)."""

    key: str
    label: str
    kind: str
    unit: str
    read: Reader | None = None
    sub: Callable[[dict], str | None] | None = None
    caveats: Callable[[dict], list[Caveat]] | None = None
    title: str | None = None  # what the header means, as its tooltip, where its label alone could mislead
    lines: Callable[[dict], list[dict]] | None = None  # lines under the value, before ``sub`` (:func:`own_lines`)


@dataclass(frozen=True)
class Caveat:
    """One thing a row's cell says stands behind its figures: ``text``, the whole sentence (the
    badge's tooltip, and the table's numbered note the badge links to), and ``badges``: its few
    words, each (words, tone of :data:`TONES`); never words that read better than the sentence.
    Every badge has its note, so the sentence says more than the badge: what it means, or whose."""

    text: str
    badges: tuple[tuple[str, str], ...]

    def shown(self) -> dict:
        """The caveat as a cell holds it: ``text`` and ``badges`` ({"words", "tone"})."""
        return {"text": self.text, "badges": [{"words": w, "tone": t} for w, t in self.badges]}


def _score(row: dict, root: str, rank: int | None):
    if row["kind"] != "tta":
        value = row["samples_per_s"]
        return value, None if missing(value) else value_text(value, "samples/s"), None
    value = row["score_s"]
    text = "no valid score" if row["tta_valid"] is False else None if missing(value) else seconds(value)
    return value, text, None


def _time_to_target(row: dict, root: str, rank: int | None):
    """A TTA entry's score, as :func:`_score`; "—" for a throughput entry (its samples/s is in its
    own column): for a table of several workloads, whose one score column would mix seconds with
    samples/s and sort them as one number."""
    return _score(row, root, rank) if row["kind"] == "tta" else (None, None, None)


def _score_sub(row: dict) -> str | None:
    low, high = row.get("ci95_low_s"), row.get("ci95_high_s")
    if row.get("kind") == "tta" and row.get("tta_valid") is not False and not missing(low) and not missing(high):
        return f"95% CI of the mean {seconds(low)} – {seconds(high)}"  # of the plain mean, not the olympic one
    return None


def _cost(row: dict, root: str, rank: int | None):
    """Cost to target: a TTA entry's device-hours × its class's list price; "no price" where the
    class has none, "—" for a throughput entry (it trains to no target: no time to target)."""
    value = row.get("cost_usd")
    if not missing(value):
        return value, usd(value), f"{root}prices.html"
    if missing(row.get("accelerator_hours")):
        return None, "—", None
    return None, "no price", f"{root}prices.html"


def _cost_sub(row: dict) -> str | None:
    acc_h = row.get("accelerator_hours")
    if acc_h is None or missing(acc_h):
        return None
    # the price's source and date are on the price page the cost links to
    priced = "; a list price, not what was paid" if isinstance(row.get("price_words"), str) else ""
    core_h = row.get("core_hours")
    if core_h is not None and not missing(core_h):  # a CPU is priced per core-hour: the cores it could use
        cores = row.get("billed_cores")
        billed = "" if cores is None or missing(cores) else f" ({int(cores)} core{'' if int(cores) == 1 else 's'} billed × the time, self-reported)"
        return f"{num(core_h)} core-hours{billed}{priced}"
    return f"{value_text(acc_h * 3600, 's')} device-time{priced}"


def _ci(row: dict, root: str, rank: int | None):
    low = row["ci95_low_s"]
    return low, None if missing(low) else f"{seconds(low)} – {seconds(row['ci95_high_s'])}", None


def _copy_text(row: dict) -> str:
    words = copy_words(row["copy_status"], row.get("copy_of") if isinstance(row.get("copy_of"), str) else None)
    return f"{words['lead']}{' ' + short(words['owner']) if words['owner'] else ''}{words['tail']}"


def _system_text(row: dict) -> str:
    """The system's name as the row shows it: with its signer where another system's name reads as
    its own (``system_shown``, :mod:`suite.leaderboard.systems`), else its name."""
    return row["system_shown"] if isinstance(row.get("system_shown"), str) else row["system"]


def _system_href(row: dict) -> str:
    """The page of the row's system: its name and signer's (:func:`suite.site.names.system_slug`)."""
    return system_slug(row["system"], signer_of(row.get("signer")))


PEAK_TEXT = f"{NO_KNOWN_PEAK}, not ranked"
PEAK_WHY = (f"{NO_KNOWN_PEAK}: goodbench's peak table has no dense peak at the run's precision, or no board "
            "power, for this device (a CPU has none, nor has a MIG slice), so the row has no MFU, none of its "
            "figures can be held to what the device can do, and it is not ranked (goodbench peaks lists the table)")
"""The note of a row's :data:`PEAK_TEXT` badge (the methodology page says it too)."""
WORLD_SIZE_TITLE = "processes that trained the run: its world size, one per GPU"
"""The tooltip of the column of a row's world size (its downloads' ``world_size``)."""
def accelerator_text(row: dict) -> str:
    """An entry's accelerator as its cell names it: a CPU says so, whatever its name reads as (a CPU
    run's accelerator is the host's CPU model, which no record can check)."""
    return f"{row['accelerator']} (CPU)" if row.get("accelerator_type") == "cpu" else str(row["accelerator"])


COST_TITLE = ("a time-to-target entry's device-hours × its accelerator class's on-demand list price; on a CPU, its "
              "core-hours (the cores the run could use, its CPU affinity as the file records it: self-reported, × its time) × the price per vCPU-hour; "
              "a list price, not what was paid")
"""The tooltip of the cost column: what is billed."""


def _system_caveats(row: dict) -> list[Caveat]:
    """What stands behind the row, under its system, each a badge: whose system stored first its
    name is or resembles, own code and how it was timed, a copy's owner, "no known peak, not
    ranked", its trust level, whether its runs were measured under load, and the older rules a
    file was stored under where today's refuse it."""
    found = [_name_caveat(row), _own_caveat(row), _copy_caveat(row), _seed_caveat(row),
             _peak_caveat(row), _trust_caveat(row), _inconclusive_caveat(row), *_load_caveats(row), _stale_caveat(row)]
    return [c for c in found if c is not None]


def _peak_caveat(row: dict) -> Caveat | None:
    """A device the peak table cannot bound: :data:`PEAK_TEXT`, explained (:data:`PEAK_WHY`)."""
    return Caveat(PEAK_WHY, ((PEAK_TEXT, "plain"),)) if row.get("known_peak") == False else None  # noqa: E712 - numpy bool


def _name_caveat(row: dict) -> Caveat | None:
    """Whose system stored first the row's system's name is or resembles (``system_note``)."""
    note = row.get("system_note")
    if not isinstance(note, str):
        return None
    return Caveat(note, (("name shared" if note.startswith("name shared") else "name resembles another's", "warn"),))


TRAINS_CHARS = 48  # of what own code declares it trains, under its name; the tooltip holds more
TRAINS_TITLE_CHARS = 400  # ... and the tooltip; the run page holds it whole


def own_lines(row: dict, named: bool = True) -> list[dict]:
    """What an own-code row says of its code under a cell's value, each line {"text", "title",
    "small"}: its name (``named``; :func:`suite.figures.naming.own_name`, as ``goodbench show``
    writes it), then, smaller, what it declares it trains, cut at :data:`TRAINS_CHARS` (its
    tooltip: at :data:`TRAINS_TITLE_CHARS`). The submitter's text, self-reported: the page
    escapes it. No line for goodbench's own workloads' rows."""
    name = row.get("implementation")
    if not isinstance(name, str):
        return []
    lines = [{"text": f"own code \u201c{own_name(name)}\u201d", "small": False,
              "title": f"the own code's name (self-reported): {cut_words(name, TRAINS_TITLE_CHARS)}"}] if named else []
    trains = row.get("trains")
    if isinstance(trains, str) and trains.strip():
        lines.append({"text": f"trains {cut_words(trains.strip(), TRAINS_CHARS)}", "small": True,
                      "title": f"what the own code declares it trains (self-reported): "
                               f"{cut_words(trains.strip(), TRAINS_TITLE_CHARS)}"})
    return lines


def _workload_text(row: dict) -> str:
    """The workload column's text: its id, or own code's "own: NAME" as ``goodbench show`` writes it
    (:func:`suite.figures.naming.workload_text`)."""
    name = row.get("implementation")
    return workload_text(row["workload"], name if isinstance(name, str) else None)


def _own_caveat(row: dict) -> Caveat | None:
    """Own code: :func:`_own_text`, its badges own code's (self-reported; a free job never ranked) and its
    timing's: on a GPU, two clocks compare the steps with the second clock's span only, so the badge
    says the steps are self-timed (:data:`suite.site.labels.GPU_STEPS`)."""
    text = _own_text(row)
    if text is None:
        return None
    own = ("own code, self-reported" if row.get("kind") == "tta" else "own code, never ranked", "warn")
    two_clocks = "two clocks, GPU steps self-timed" if row.get("gpu_steps") is True else "two clocks, self-reported"
    timing = (two_clocks if row.get("second_clock") is True
              else "steps too short, never ranked" if row.get("short_steps") is True
              else "steps' sum disagrees, never ranked" if row.get("steps_sum") is True else "one clock, never ranked")
    return Caveat(text, (own, (timing, "warn")))


def _copy_caveat(row: dict) -> Caveat | None:
    """A copy's or a disputed run's row: :func:`_copy_text`, red as on its run page."""
    if not isinstance(row.get("copy_status"), str):
        return None
    words = "disputed, not ranked" if row["copy_status"] == "disputed" else "copy, not ranked"
    return Caveat(_copy_text(row), ((words, "bad"),))


def _seed_caveat(row: dict) -> Caveat | None:
    """A run whose curve another key's stored run holds under another seed (``seed_conflict``,
    :func:`suite.leaderboard.rows.with_seed_conflicts`): shown on both, neither demoted."""
    text = row.get("seed_conflict")
    return Caveat(text, (("seed conflict", "warn"),)) if isinstance(text, str) else None


_TRUST_BADGE = {"reproduced": ("reproduced", "good"), "rerun": ("re-run, code not read", "warn"),
                "differs": ("reproduction differs", "bad"), "signed": ("signed, not reproduced", "plain"),
                "unsigned": ("unsigned, not reproduced", "plain")}


def _trust_caveat(row: dict) -> Caveat | None:
    """The row's trust level (:func:`suite.leaderboard.trust.row_text`): a reproduction
    or a re-run names how many runs it holds for ("reproduced: 1 of 5 runs"), and a re-run beside
    a reproduction has its own badge. A reproduction's badge opens with whether the file is signed
    ("signed; reproduction differs: …"), as a row with none reads "signed, not reproduced": a
    counted reproduction never hides the signature. A row whose only counted reproductions were
    inconclusive reads so in the one badge ("signed; reproduction inconclusive: 1 of 1 run"), never
    "not reproduced" beside it (:func:`_inconclusive_caveat` then gives none)."""
    text, level = trust_text(row), row.get("trust")
    if text is None or level not in _TRUST_BADGE:
        return None
    words, tone = _TRUST_BADGE[level]
    signed = isinstance(row.get("signer"), str)
    if level in ("signed", "unsigned"):
        unsure = inconclusive_text(row)
        if unsure is None:
            return Caveat(text, ((words, tone),))
        said = f"signed by {short(row['signer'])}" if signed else "unsigned"
        return Caveat(f"{said}; {unsure}", ((f"{level}; {_INCONCLUSIVE_BADGE}: {_inconclusive_runs(row)}", "plain"),))
    counted = row.get("reproduced_runs") if level == "reproduced" else row.get("rerun_runs") if level == "rerun" \
        else row.get("differs_badge") if level == "differs" else None  # a difference says which way: "3.66× faster"
    first = f"{words}: {counted}" if isinstance(counted, str) else words
    badges = [(f"{'signed' if signed else 'unsigned'}; {first}", tone)]
    if level != "rerun" and isinstance(row.get("rerun_runs"), str):  # some runs re-run alone, beside others
        badges.append((f"{_TRUST_BADGE['rerun'][0]}: {row['rerun_runs']}", "warn"))
    said = f"signed by {short(row['signer'])}" if signed else "unsigned"
    return Caveat(f"{said}; {text}", tuple(badges))


_INCONCLUSIVE_BADGE = "reproduction inconclusive"


def _inconclusive_runs(row: dict) -> str:
    """"1 of 1 run", and ", re-run under load" where the re-run that left it inconclusive was
    measured under load (the reviewer's machine, measured by goodbench outside the sandbox)."""
    loaded = ", re-run under load" if row.get("inconclusive_loaded") == True else ""  # noqa: E712 - numpy bool
    return f"{row['inconclusive_runs']}{loaded}"


def _inconclusive_caveat(row: dict) -> Caveat | None:
    """Runs whose only counted reproductions were inconclusive, beside another level's badge
    (reproduced, re-run, differs; a row signed or unsigned alone says it in its trust badge,
    :func:`_trust_caveat`): grey, as it says nothing against the figures
    (:func:`suite.leaderboard.trust.inconclusive_text`)."""
    text = inconclusive_text(row)
    if text is None or row.get("trust") in ("signed", "unsigned"):
        return None
    return Caveat(text, ((f"{_INCONCLUSIVE_BADGE}: {_inconclusive_runs(row)}", "plain"),))


def _load_caveats(row: dict) -> list[Caveat]:
    """Measured under load (red, as on the run page), or dated before the host's load was recorded."""
    found = [Caveat(UNDER_LOAD, (("under load", "bad"),))] if isinstance(row.get("under_load"), str) else []
    if row.get("load_recorded") == False:  # noqa: E712 - numpy bool
        found.append(Caveat(LOAD_NOT_RECORDED, (("load not recorded", "warn"),)))
    return found


def _stale_caveat(row: dict) -> Caveat | None:
    """A file valid only under the older rules it was stored with (``stale_rules``)."""
    if not isinstance(row.get("stale_rules"), str):
        return None
    version = row.get("rules_version")
    words = f"older rules (v{int(version)})" if version is not None and not missing(version) else "older rules"
    return Caveat(row["stale_rules"], ((words, "warn"),))


def _date_sub(row: dict) -> str | None:
    """Under the date: the suite version and the rules the file was stored under ("suite 0.1.0 ·
    rules v9"), so that a result of older rules reads as such beside today's."""
    version = row.get("rules_version")
    parts = [f"suite {row['suite_version']}" if row.get("suite_version") is not None else None,
             f"rules v{int(version)}" if version is not None and not missing(version) else None]
    return " · ".join(p for p in parts if p) or None


def _own_text(row: dict) -> str | None:
    """An own implementation's row: its code's name, and how its quality was measured."""
    name = row.get("implementation")
    if not isinstance(name, str):
        return None
    name = cut_words(name, TRAINS_TITLE_CHARS)  # the submitter's text: printable, bounded at a word
    timing = own_timing(row.get("second_clock") is True, row.get("short_steps") is True, row.get("gpu_steps") is True,
                        restamped=isinstance(row.get("reviewed_by"), str),  # a trusted reviewer's re-run stamped its own
                        steps_sum=row.get("steps_sum") is True)
    if row.get("kind") == "tta":
        return (f"own code \u201c{name}\u201d (own division; its quality by goodbench's pinned evaluator, run in "
                f"the submitter's process: self-reported; {timing})")
    return f"own code \u201c{name}\u201d, a free job (never ranked; {timing})"


def _signer_caveats(row: dict) -> list[Caveat]:
    """A system page's rows, under the signer: an own implementation's code, and a copy's owner,
    else the trust level (an unsigned row's cell already reads "unsigned": its badge says only
    "not reproduced", its note why, :data:`suite.leaderboard.trust.UNSIGNED_WHY`); then, as under
    the system on a workload page (the system page has no system column), "no known peak, not
    ranked" (a row's peak is its runs' precision's: a system's rows may differ), whether its runs
    were measured under load and the older rules a file was stored under where today's refuse it."""
    copy = _copy_caveat(row)
    trust = (Caveat(f"not reproduced: {UNSIGNED_WHY}", (("not reproduced", "plain"),))
             if row.get("trust") == "unsigned" and inconclusive_text(row) is None else _trust_caveat(row))
    found = [_own_caveat(row), copy if copy is not None else trust, _inconclusive_caveat(row), _peak_caveat(row),
             *_load_caveats(row), _stale_caveat(row)]
    return [c for c in found if c is not None]


def _goodput_sub(row: dict) -> str | None:
    return None if missing(row.get("effective_goodput")) else f"effective {value_text(row['effective_goodput'], 'share')}"


_COLUMNS = [
    Column("rank", "#", "num", "count", lambda row, root, rank: (rank, None, None)),
    Column("system", "system", "text", "text",  # a table without a workload column: own code named here
           lambda row, root, rank: (None, _system_text(row), f"{root}systems/{_system_href(row)}.html"),
           caveats=_system_caveats, lines=own_lines),
    Column("accelerator", "accelerator", "text", "text",  # "× 8" never on a line of its own
           lambda row, root, rank: (None, f"{accelerator_text(row)}\u00a0×\u00a0{row['count']}", None)),
    Column("workload", "workload", "text", "text",  # own code: "own: NAME", then what it trains
           lambda row, root, rank: (None, _workload_text(row), f"{root}workloads/{safe_name(row['workload'])}.html"),
           lines=lambda row: own_lines(row, named=False)),
    Column("scale", "scale", "text", "text"),
    Column("division", "division", "text", "text"),
    Column("score", "score", "num", "s", _score, _score_sub, caveats=lambda row: _incomplete_caveats(row)),
    # a table of several workloads (a system's): the score of the TTA ones only, one unit to sort by
    Column("time_to_target", "time to target", "num", "s", _time_to_target, _score_sub,
           caveats=lambda row: _incomplete_caveats(row)),
    Column("ci", "95% CI", "num", "s", _ci),
    Column("cost", "cost to target", "num", "count", _cost, _cost_sub, title=COST_TITLE),
    Column("samples_per_s", "samples/s", "num", "count", caveats=lambda row: _batch_wait_caveats(row)),
    Column("tokens_per_s", "tokens/s", "num", "count"),
    Column("mfu", "MFU", "num", "share"),
    Column("energy_to_target_kwh", "energy to target", "num", "kWh", None,
           lambda row: None if missing(row.get("energy_cost_usd")) else f"{usd(row['energy_cost_usd'])} of electricity",
           caveats=lambda row: _energy_caveats(row, "energy_to_target_kwh")),
    Column("energy_per_sample_j", "energy per sample", "num", "J",
           caveats=lambda row: _energy_caveats(row, "energy_per_sample_j")),
    Column("energy_per_token_j", "energy per token", "num", "J",
           caveats=lambda row: _energy_caveats(row, "energy_per_token_j")),
    Column("goodput", "goodput", "num", "share", None, _goodput_sub),
    Column("effective_goodput", "effective goodput", "num", "share"),
    # the world size: not a rank (the table's "#" is), so its header says what it counts
    Column("world_size", "processes", "num", "count", title=WORLD_SIZE_TITLE),
    Column("scaling_efficiency", "scaling efficiency", "num", "share"),
    Column("seeds", "seeds", "num", "count"),
    Column("date", "date", "text", "text", lambda row, root, rank: (None, row["created_at"][:10], None),
           lambda row: _date_sub(row)),
    Column("suite_version", "suite", "text", "text"),
    Column("run", "run", "text", "text",
           lambda row, root, rank: (None, "run", f"{root}runs/{run_slug(row['file'], row['run_id'])}.html")),
    Column("signer", "signed by", "text", "text",
           lambda row, root, rank: (None, short(row["signer"]) if isinstance(row.get("signer"), str) else "unsigned",
                                    None), caveats=_signer_caveats),
]
COLUMNS: dict[str, Column] = {c.key: c for c in _COLUMNS}


_ENERGY_NOT_MEASURED = ("not measured: no energy counter was read on the device (goodbench reads NVML on "
                        "NVIDIA GPUs and RAPL on a CPU where the machine exposes it; the run page says why)")
_NO_TIME = "a throughput result: it trains, but to no target, so it has no time to target"


def _energy_to_target_why(row: dict) -> str:
    return _NO_TIME if row.get("kind") != "tta" else _ENERGY_NOT_MEASURED


def _mfu_why(row: dict) -> str:
    if row.get("known_peak") is not True:
        return "no dense peak for the device in goodbench's peak table (a CPU has none), so no MFU"
    return "the run recorded no model FLOPs"


DASH_WHY: dict[str, Callable[[dict], str]] = {
    "cost": lambda row: _NO_TIME,
    "mfu": _mfu_why,
    "tokens_per_s": lambda row: "the workload has no tokens (not a language model)",
    "energy_to_target_kwh": _energy_to_target_why,
    "energy_per_sample_j": lambda row: _ENERGY_NOT_MEASURED,
    "energy_per_token_j": lambda row: ("the workload has no tokens" if missing(row.get("tokens_per_s"))
                                       else _ENERGY_NOT_MEASURED),
    "scaling_efficiency": lambda row: ("a result of 1 process has no scaling efficiency" if row.get("world_size") == 1
                                       else "needs a result of 1 process of the same system, workload and scale"),
    "ci": lambda row: "a throughput result, or a single seed: no interval of times to target",
    "time_to_target": lambda row: ("a throughput workload: it trains to no target (its score is its samples/s)"
                                   if row.get("kind") != "tta" else "no time to target recorded"),
}
"""Why a column's cell reads "—" for a row: the table says it under itself, so that no dash is left unexplained."""


def dash_notes(key: str, rows: list[dict], cells: list[dict]) -> list[str]:
    """The reasons (each once, in order) why column ``key``'s cells of ``rows`` read "—"."""
    why = DASH_WHY.get(key)
    reasons: list[str] = []
    for row, c in zip(rows, cells):
        if c["text"] == "—" and why is not None and (reason := why(row)) not in reasons:
            reasons.append(reason)
    return reasons


def header(key: str) -> dict:
    """The header cell of column ``key``."""
    column = COLUMNS[key]
    return {"label": column.label, "kind": column.kind, "key": key, "title": column.title}


def cell(key: str, row: dict, root: str, rank: int | None) -> dict:
    """Column ``key`` of an entry: its text, the number it sorts by (``v``), a link where it has
    one, own code's lines under it (:func:`own_lines`), the small line under it and its caveats
    (:meth:`Caveat.shown`: badges under the system, or under the signer on a system page, and
    under the score the runs not in it)."""
    column = COLUMNS[key]
    if column.read is not None:
        value, text, href = column.read(row, root, rank)
    elif column.kind == "text":
        value, text, href = None, str(row[key]), None
    else:
        value, text, href = row[key], None, None
    if missing(value):
        value = None
    if text is None:
        text = value_text(value, column.unit) if not isinstance(value, str) else value
    return {"text": text, "v": "" if value is None else repr(float(value)), "href": href,
            "sub": column.sub(row) if column.sub is not None else None,
            "lines": column.lines(row) if column.lines is not None else [],
            "caveats": [c.shown() for c in column.caveats(row)] if column.caveats is not None else []}


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


INCOMPLETE_WHY = ("interrupted (partial) or failed: such runs are shown on the run pages, never scored; the "
                  "score and every figure of the row are the completed runs'")
"""The note of an :func:`incomplete_badge` ("1 partial run: interrupted …")."""


BATCH_WAITS_SHOWN = 0.05
"""The share of a row's steady loop spent waiting for batches from which its samples/s says so, in
a file of rules before v10, whose rates count the steps alone
(:func:`suite.figures.derive.batch_wait_share`; from v10 the rates count the waits too).
Measured on the honest CPU files of tests/ and results/ (2026-12-02): lm-char, gpt2-124m,
llama-1b 0.1-0.8%, fashion-cnn 1.7-2.9%, dlrm-small 13-21% (its steps are about 2 ms; a batch is
drawn from its teacher model). Not yet measured on a GPU."""


def batch_wait_text(share) -> str | None:
    """What a samples/s figure rests on where its runs waited for batches for :data:`BATCH_WAITS_SHOWN`
    of their steady loop or more (a table's caveat, a run page's line), else None."""
    if share is None or missing(share) or share < BATCH_WAITS_SHOWN:
        return None
    return (f"batch waits {share:.0%} of the steady loop: samples/s of rules before v10 counts the steps' own "
            "time, not the waits between them, and where a step ends and its batch wait begins is the run's own "
            "clock (self-reported)")


def _batch_wait_caveats(row: dict) -> list[Caveat]:
    """Under samples/s (:func:`batch_wait_text`): the split between a step and its batch wait is the
    run's own clock, which no other record of the file tells (trial V)."""
    text = None if missing(row.get("samples_per_s")) else batch_wait_text(row.get("batch_wait_share"))
    if text is None:
        return []
    return [Caveat(text, ((f"batch waits {row['batch_wait_share']:.0%}, self-reported", "warn"),))]


ENERGY_UNCHECKED = "energy self-reported"
_ENERGY_KEYS = ("energy_to_target_kwh", "energy_per_sample_j", "energy_per_token_j")  # in the tables' order


def energy_unchecked_text(why: str) -> str:
    """An energy figure no other record of its file checked (a table's caveat, a run page's line)."""
    return f"{ENERGY_UNCHECKED}: not checked against the power sampled beside the energy counter, since {why}"


def _energy_caveats(row: dict, key: str) -> list[Caveat]:
    """Under a row's first energy figure (of :data:`_ENERGY_KEYS`) where no other record of its file
    checked its energy (the power sampled beside the energy counter, rule ``stream-energy``): amber,
    with why (:func:`suite.validate.stream_rules.energy_unchecked`)."""
    why = row.get("energy_unchecked")
    shown = [k for k in _ENERGY_KEYS if not missing(row.get(k))]
    if not shown or shown[0] != key or not isinstance(why, str):  # under the first energy figure shown only
        return []
    return [Caveat(energy_unchecked_text(why), ((ENERGY_UNCHECKED, "warn"),))]


def _incomplete_caveats(row: dict) -> list[Caveat]:
    """Under the score: the runs not in it (:func:`incomplete_badge`), amber, with why."""
    words = incomplete_badge(row)
    return [] if words is None else [Caveat(f"{words}: {INCOMPLETE_WHY}", ((words, "warn"),))]
