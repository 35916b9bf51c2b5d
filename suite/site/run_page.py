"""A run's page: what every run of one document shares, the distributed section, the charts, and the
run's event log as a plain-text file."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from suite.cost import classes, hours
from suite.cost.prices import Price, Table
from suite.figures import clock_cover, derive
from suite.figures import load as host_load
from suite.leaderboard.rows import own_code
from suite.record import results
from suite.record.privacy import shown_command
from suite.record.text import cut_words, printable
from suite.site import charts, labels
from suite.site.formatting import RESOLUTION_S, missing, seconds, usd
from suite.site.labels import copy_words
from suite.site.names import file_slug, run_slug, safe_name, system_slug
from suite.site.render import render
from suite.trust import signing
from suite.trust.labels import CODE_READ_TEXT, OWN_RERUN_TEXT
from suite.trust.labels import REPRODUCTION_TEXT as RESULT
from suite.trust.reviewers import FILE as REVIEWERS_FILE
from suite.trust.reviewers import Reviewers
from workloads import registry

PHASE_ORDER = derive.PHASES
TIME_COLOURS = {labels.words(k): colour for k, colour in {
    "productive": 3, "train": 3,  # training progress: green on both bars
    "init": 0, "data_load": 6, "compile_warmup": 1, "data_wait": 2, "eval": 4, "checkpoint_save": 7,
    "restart_recovery": 8, "lost_work": 9, "other": 5}.items()}
"""The palette colour of each part of a run's time (suite/site/static/style.css ``.p0``–``.p9``):
one per category on every bar of the run page, the caption its legend."""
RANK_ROWS = 256  # a run page lists at most this many ranks (rank 0 and the slowest); the raw JSON has all


def write_pages(out: Path, file: str, doc: dict, shared: dict, built_at: str) -> None:
    """The page of every run of ``doc`` under runs/, and its event log (if any) under raw/.

    ``shared`` is :func:`doc_context` of the document.
    """
    for run in doc["runs"]:
        slug = run_slug(file, run["run_id"])
        log = event_log_text(file, run)
        if log is not None:
            (out / "raw" / f"{slug}-events.txt").write_text(log, encoding="utf-8")
        render("run.html", out / "runs" / f"{slug}.html", root="../", built_at=built_at,
               **run_context(file, doc, run, shared))


def write_reproduced(out: Path, results_dir: Path, runs, built_at: str, copies: dict | None = None,
                     trusted: Reviewers | None = None, *, read, table: Table | None = None) -> None:
    """Rewrite the pages of the runs that other stored files speak of, and of the reproductions. The
    originals that stored reproductions name get "reproduced N times on <system>" (and "differs N
    times") linking the reproductions' runs: a reproduction names its original by the sha256 of its
    bytes, which is the original's name in the store, and only an original shown on the site (among
    ``runs``, the rows of the valid files) gets the line. Each reproduction's page then says at its
    top what it reproduced, linking that run, whose key signed it and what the original's page
    reads of it (:func:`reproduction_context`). The copies and disputed runs (``copies``:
    :func:`suite.leaderboard.rows.copies`) get "copy of a run signed by …, not ranked" (or "disputed:
    …"), linking the run kept. ``read(file)``: the file's one reading
    (:class:`suite.leaderboard.rows.Stored`), kept by the build."""
    import hashlib

    from suite.leaderboard import rows as leaderboard
    from suite.record.reading import read_bounded

    found = leaderboard.reproductions(runs)
    copies = copies or {}
    trusted = trusted or Reviewers()
    shown = set(runs["file"]) if not runs.empty else set()
    again = set(runs.loc[runs["reproduces"].notna(), "file"]) if not runs.empty else set()
    counted: dict[tuple[str, str], dict] = {}  # a reproduction's run → what its original's page reads of it
    pages: dict[str, tuple] = {}
    for file in sorted({f"{sha}.json" for sha, _ in found} | {file for file, _ in copies}):
        raw, problems = read_bounded(results_dir / file)
        if file not in shown or problems or raw is None:
            continue
        sha = file.removesuffix(".json")
        original = hashlib.sha256(raw).hexdigest() == sha
        stored = read(file)  # shown, so read and kept by the build
        doc = stored.figures
        lines = {}
        for run in doc["runs"]:
            mine = found.get((sha, run["run_id"]), []) if original else []
            lines[run["run_id"]] = reproduced_lines(mine, run, doc, trusted)
            for line in lines[run["run_id"]]:
                for link, r in zip(line["links"], line["reproductions"], strict=True):
                    counted[(r["file"], r["run_id"])] = {"href": run_slug(file, run["run_id"]) + ".html",
                                                         "word": line["word"], "css": line["css"], "n": link["n"]}
        pages[file] = (stored, lines)
    for file in sorted(again - set(pages)):
        pages[file] = (read(file), {})
    for file, (stored, lines) in pages.items():
        doc = stored.figures
        shared = doc_context(file, doc, list(stored.waived), signer=stored.signer, table=table)
        for run in doc["runs"]:
            mine = lines.get(run["run_id"], [])
            copy = copy_line(copies.get((file, run["run_id"])))
            banner = reproduction_context(doc, run, stored.signer, trusted, counted.get((file, run["run_id"])))
            if mine or copy or banner:
                render("run.html", out / "runs" / f"{run_slug(file, run['run_id'])}.html", root="../",
                       built_at=built_at, reproduced=mine, reproduced_own=own_code(doc) is not None, copy=copy,
                       **run_context(file, doc, run, shared, restamped=any(line["counted"] for line in mine),
                                     reproduction=banner))


def copy_line(verdict) -> dict | None:
    """What the page of a run another stored file holds too says (a :class:`suite.trust.ownership.Verdict`:
    a copy, or disputed), linking the run kept."""
    if verdict is None:
        return None
    kept = verdict.original
    return {**copy_words(verdict.status, kept.owner), "href": f"{run_slug(kept.file, kept.run_id)}.html"}


REASON_CHARS = 400  # of a reproduction's verdict shown under its line; its run page holds it whole, linked


def reproduced_lines(reproductions: list[dict], original_run: dict, original_doc: dict,
                     trusted: Reviewers | None = None) -> list[dict]:
    """"reproduced 2 times on <system>", "differs 1 time on <system>: throughput 3.66× the
    recorded (faster); curve bit-identical", "inconclusive 1 time on <system>" (a throughput whose
    interval could not tell) — for own code, "re-run 1 time on <system>" and what that proves
    (:data:`suite.trust.labels.OWN_RERUN_TEXT`) unless the reviewer attested reading its code, the
    commit then named —, each with links to the reproductions' run pages, numbered across the
    page, and each reproduction's reason as text (``links[].why``) with its reviewer's
    attestation of reading the code whatever its verdict (``links[].attested``). Only a reproduction
    signed by a ``trusted`` reviewer's key (:mod:`suite.trust.reviewers`) counts; the others are
    listed apart as unverified claims. A reproduction that does not count for the stored original
    (:func:`suite.leaderboard.rows.contradicted`: other figures recorded for it, started before it was
    created, its step times copied) counts as neither: it is listed apart, with why."""
    from suite.leaderboard import rows as leaderboard
    from suite.leaderboard import trust
    from suite.leaderboard.reproduction_words import UNDER_LOAD_NOTE, reads_faster

    trusted = trusted or Reviewers()
    original = leaderboard.original_figures(original_run, original_doc)
    groups: dict[tuple[int, str], list[dict]] = {}
    for r in reproductions:
        kind, why = trust.kind(r, original, trusted)
        if kind == trust.UNVERIFIED:
            why = f"{r['verdict']} — {_signed(r.get('signer'))}, not a trusted reviewer's key"
        groups.setdefault((kind, str(r["system"])), []).append({**r, "why": why or r["verdict"], "kind": kind})
    lines = []
    number, loaded_said = 0, False
    for (kind, system), found in sorted(groups.items()):
        n = len(found)
        times = f"{n} time{'s' if n != 1 else ''}"
        if kind < trust.UNVERIFIED:
            names = sorted({trusted.names[str(r["signer"])] for r in found})
            verdict = RESULT[("reproduced", "rerun", "differs", "inconclusive")[kind]]
            text = f"{verdict} {times} on {system} ({RESULT['reviewers']} {', '.join(names)}"
            if kind == trust.REPRODUCED and trust.is_own(original):
                text += "; " + "; ".join(sorted({f"{trusted.names[str(r['signer'])]} {CODE_READ_TEXT} "
                                                 f"{trust.short_commit(r['code_read'])}" for r in found}))
            text += f"): {OWN_RERUN_TEXT}" if kind == trust.RERUN else ")"
            if kind in (trust.DIFFERS, trust.INCONCLUSIVE):  # which way, and what differed
                how = trust.hows(found)
                text += f": {how}" if how else ""
                if kind == trust.DIFFERS and not loaded_said and host_load.run_under_load(original_run) \
                        and how and reads_faster(how):  # the load explains a faster re-run only
                    text += f"; {UNDER_LOAD_NOTE}"  # once, on the first line that differs
                    loaded_said = True
        elif kind == trust.UNVERIFIED:
            text = (f"{RESULT['unverified']}: {n} reproduction{'s' if n != 1 else ''} on {system} "
                    f"({'; '.join(sorted({_signed(r.get('signer')) for r in found}))}; not counted: no key of "
                    f"the site's {REVIEWERS_FILE})")
        else:
            text = (f"{RESULT['not-counted']}: {n} reproduction{'s' if n != 1 else ''} on {system} "
                    f"({'; '.join(sorted({str(r['why']) for r in found}))[:300]})")
        links = []
        for r in found:
            number += 1
            reason = printable(str(r["why"]))
            links.append({"href": f"{run_slug(r['file'], r['run_id'])}.html", "n": number, "title": reason[:300],
                          "why": cut_words(reason, REASON_CHARS), "cut": len(reason) > REASON_CHARS,
                          "attested": _attested(r, original, trusted)})
        lines.append({"text": text, "counted": kind < trust.UNVERIFIED,  # a trusted reviewer's re-run: its own stamps
                      "css": "status-complete" if kind == trust.REPRODUCED else "status-partial"
                      if kind in (trust.RERUN, trust.INCONCLUSIVE, trust.UNVERIFIED) else "status-failed",
                      "links": links, "reproductions": found, "word": _KIND_WORDS[kind]})
    return lines


_KIND_WORDS = (RESULT["reproduced"], RESULT["rerun"], RESULT["differs"], RESULT["inconclusive"], "an unverified claim",
               RESULT["not-counted"])
"""What the original's page reads of a reproduction of each kind (:mod:`suite.leaderboard.trust`), as
its own page repeats it."""


def reproduction_context(doc: dict, run: dict, signer: str | None, trusted: Reviewers | None = None,
                         counted: dict | None = None) -> dict | None:
    """What a reproduction's run page says at its top (None for a run that is none): that it is one,
    of which run of which stored file (``href``: the original run's page, where the site shows it),
    on whose machine and by whose key (a ``trusted`` reviewer's by name, else the key and that the
    site does not count it), its verdict whole as the reproduction recorded it, and what the
    original's page reads of it (``counted``: its word and number there, :func:`write_reproduced`;
    None where the original is not shown); and its provenance phrases: the second clock and the
    host's load are goodbench's, outside the sandbox on the reviewer's machine (docs/own-code.md)."""
    section = doc["settings"].get("reproduces")
    if not isinstance(section, dict):
        return None
    entries = found if isinstance(found := section.get("runs"), list) else []
    entry = next((e for e in entries if isinstance(e, dict) and e.get("run_id") == run["run_id"]), {})
    verdict = printable(str(entry.get("verdict") or "none recorded"))
    if not isinstance(signer, str):
        who, trust_css = "unsigned: an unverified claim, which no page counts", "status-partial"
    elif trusted is not None and trusted.trusts(signer):
        who, trust_css = (f"{trusted.names[signer]}, a trusted reviewer (signed by {signer}, a key of the site's "
                          f"{REVIEWERS_FILE})"), "status-complete"
    elif trusted is not None:
        who, trust_css = (f"signed by {signer}, not a trusted reviewer's key (none of the site's {REVIEWERS_FILE}): "
                          "an unverified claim, which no page counts"), "status-partial"
    else:
        who, trust_css = f"signed by {signer}", "status-partial"
    own = own_code(doc) is not None
    where = ("goodbench reproduce's process, outside the sandbox on the reviewer's machine" if own
             else "goodbench reproduce, on the reviewer's machine")
    return {
        # the original's name in the store: the sha256 of its bytes (``file`` is the name the reviewer gave)
        "file": printable(f"{section['sha256']}.json" if isinstance(section.get("sha256"), str)
                          else str(section.get("file")))[:80],
        "run": printable(str(entry.get("original_run_id") or "—"))[:64],
        "href": (counted or {}).get("href"), "n": (counted or {}).get("n"),
        "word": (counted or {}).get("word"), "css": (counted or {}).get("css", "status-partial"),
        "verdict": verdict, "who": who, "trust_css": trust_css, "own": own,
        "load": f"measured by {where}" + (", just before the sandbox started, over it (its own processes not "
                                         "counted as others) and just after it exited, the same for every run of "
                                         "one re-run" if own else "")
        + ": the reviewer's word, counted where a trusted reviewer's key signed the file",
        "evaluation": "run in the re-run's process: the submitter's code, in the sandbox on the reviewer's machine",
        "timing_why": ("the step and evaluation times come from clocks in the re-run's process, the submitter's code "
                       f"in the sandbox; {where}, stamped each step's and evaluation's edges on its own clock, and the "
                       "two agree within the stated tolerance: it knows when the edges came, not what the code did "
                       "between them"),
    }


def _attested(reproduction: dict, original: dict, trusted: Reviewers) -> str | None:
    """Whose attestation of reading the code a reproduction holds, whatever its verdict ("Audit team
    attested reading its code at commit 16b0df863cf5"), and whether it is of this run's commit; None
    without one."""
    from suite.leaderboard import trust

    commit = reproduction.get("code_read")
    if not isinstance(commit, str):
        return None
    signer = reproduction.get("signer")
    who = trusted.names[str(signer)] if trusted.trusts(signer) else f"its signer ({_signed(signer)}, not a trusted " \
        "reviewer's key)"
    text = f"{who} {CODE_READ_TEXT} {trust.short_commit(commit)}"
    if not trust.attested(reproduction, original):
        text += ", not the commit this run recorded: it attests nothing of this run's code"
    return text


def _signed(fingerprint) -> str:
    return f"signed by {fingerprint}" if isinstance(fingerprint, str) else "unsigned"


def event_log_text(file: str, run: dict) -> str | None:
    """The run's event log as plain text: a comment line, then one ``:::MLLOG`` line per event; None without one.

    Characters that could break a line or disguise text (the validator's control characters,
    :mod:`suite.record.text`) are written as ``\\uXXXX``.
    """
    lines = run.get("event_log")
    if not isinstance(lines, list) or not lines:
        return None
    head = printable(f"# event log of run {run['run_id']} in results file {file}: {len(lines)} events")
    return "\n".join([head, *(printable(str(line)) for line in lines)]) + "\n"


@cache
def _pinned(workload_id: str, scale: str) -> Markup:
    return escape(json.dumps(registry.get(workload_id).pinned(scale), indent=1, sort_keys=True))


def _spec_of(doc: dict, run: dict) -> tuple[Markup, Any, str | None]:
    """The run's spec as the page shows it (pinned, or an own implementation's declaration), its
    quality target, and the name of the own code (None: goodbench's reference)."""
    workload = registry.of_run(run, doc)
    name = own_code(doc)
    if name is None:
        return _pinned(run["workload"]["id"], run["scale"]), workload.spec(run["scale"]).target, None
    declared = workload.pinned(run["scale"])
    implementation = declared.get("implementation")
    if isinstance(implementation, dict) and isinstance(implementation.get("command"), list):
        # the command as the settings table shows it: no home, temporary or data folder
        declared = {**declared, "implementation": {**implementation,
                                                   "command": shown_command(implementation["command"])}}
    text = escape(json.dumps(declared, indent=1, sort_keys=True))
    return text, workload.spec(run["scale"]).target, name


def pinned_evaluation_lines(run: dict) -> list[str]:
    """What own code's pinned evaluation says of the run's model (docs/own-code.md): its quality
    before training, a refusal and why, the causality probe's largest difference; empty for
    other runs."""
    section = run.get("pinned_evaluation")
    if not isinstance(section, dict):
        return []
    lines = []
    start = section.get("start")
    if isinstance(start, dict) and start:
        shown = ", ".join(f"{printable(str(k))} {_figure(v)}" for k, v in list(start.items())[:6])
        lines.append(f"the untrained model, before the first step: {shown}")
    refused = section.get("refused")
    if isinstance(refused, dict):
        lines.append(f"refused at step {_figure(refused.get('step'))}: "
                     f"{printable(str(refused.get('reason')))[:300]}")
    probe = section.get("probe")
    if isinstance(probe, dict):
        lines.append(f"causality probe: log-probabilities moved by at most {_figure(probe.get('max_difference'))} "
                     f"nats when later tokens changed (tolerance {_figure(probe.get('tolerance'))}) over "
                     + (f"{n} evaluation{'' if n == 1 else 's'}" if isinstance(n := probe.get("evaluations"), int)
                        else f"{_figure(n)} evaluations"))
    return lines


def evaluation_time(doc: dict, run: dict) -> str | None:
    """The run page's label where no rule bounds how short the run's evaluations may be
    (:func:`suite.validate.physics_rules.eval_time_unbounded`: "evaluation time self-reported", and
    why), else None; a file the rules cannot read gives none."""
    from suite.validate import physics_rules

    try:
        return physics_rules.eval_time_unbounded(doc, run)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def figure_notes(doc: dict, run: dict) -> list[str]:
    """The run page's lines on what its figures rest on where no other record of the file checks
    them: energy not compared with sampled power, and (a file of rules before v10, whose samples/s
    counts the steps alone) a large share of batch waits beside them (the leaderboard's caveats,
    :mod:`suite.site.columns`)."""
    from suite.figures import derive
    from suite.site import columns
    from suite.validate import stream_rules

    try:
        why = stream_rules.energy_unchecked(run)
        share = None if derive.counts_batch_waits(doc.get("rules_version")) else derive.batch_wait_share(run)
    except (KeyError, TypeError, ValueError, AttributeError):  # a file the rules cannot read
        return []
    waits = columns.batch_wait_text(share)
    return [text for text in (waits, why and columns.energy_unchecked_text(why)) if text]


def _figure(value: Any) -> str:
    """A number of the pinned evaluation at four significant digits ("—" for anything else)."""
    return f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "\u2014"


def doc_context(file: str, doc: dict, waived: list[str] | None = None, *, signer: str | None | bool = False,
                table: Table | None = None) -> dict:
    """The parts of a run page that every run of one document shares (its signer among them);
    ``waived``: what rules introduced after the file was stored would refuse
    (:func:`suite.leaderboard.rows.check_file`); ``signer``: the file's verified signer, checked
    already on the file as stored (the figures shown are recomputed, which its signature does not
    cover), else checked here on ``doc``; ``table``: the price table its runs' costs use (None: none shown)."""
    reproduction = isinstance(doc["settings"].get("reproduces"), dict)
    billed = hours.billed_cores(doc)  # a CPU with its cores recorded: priced per core
    on_cpu = billed is not None
    price = None if table is None else table.price(classes.named("CPU")) if on_cpu else \
        table.price_of(doc["system"]["accelerator"]["name"])
    fp = signing.signer(doc) if signer is False else signer  # None: unsigned
    return {"doc": doc, "file": file, "raw_href": f"../raw/{file_slug(file)}.json", "waived": waived or [],
            "signer": fp,
            # a reproduction gives no leaderboard entry, so its system may have no page; a system
            # is its name and signer (suite/leaderboard/systems.py)
            "system_href": None if reproduction else f"../systems/{system_slug(doc['system']['name'], fp if isinstance(fp, str) else None)}.html",
            "interconnect": interconnect_text(doc["system"]),
            "settings": provenance_table(labels.flatten(doc["settings"], "settings")),
            "system": provenance_table(labels.flatten(doc["system"], "system")),
            "priced": table is not None, "price": price,
            "cores": billed[0] if billed else None, "cores_basis": billed[1] if billed else None}


def cost_context(run: dict, price: Price | None, cores: int | None = None, basis: str | None = None) -> dict | None:
    """A TTA run's device-hours (devices × its time to target) and their cost at its class's
    list price — on a CPU, its core-hours (``cores``, the vCPUs it is billed for, × the time) at
    the price per core-hour, ``basis`` saying what those cores are
    (:func:`suite.cost.hours.billed_cores`); None for a run without a time to target."""
    count = cores or results.world_size(run)
    acc_h = hours.to_target(count, run["metrics"].get("tta_s"))
    if acc_h is None:
        return None
    amount = hours.cost(acc_h, price.usd_per_hour if price else None)
    return {"hours": acc_h, "devices": count, "unit": "core" if cores else "device", "basis": basis if cores else None,
            "cost": None if amount is None else usd(amount),
            "rate": None if price is None else f"{usd(price.usd_per_hour)} per {price.cls.unit}-hour ({price.cls.name})",
            "words": None if price is None else price.words()}


def interconnect_text(system: dict) -> str | None:
    """``system.interconnect.summary`` (nvswitch/nvlink/pcie), or "unknown" with its status; None when
    absent or beside the point (a CPU run: no GPUs to link, where the pages said "interconnect unknown")."""
    link = system.get("interconnect")
    if not isinstance(link, dict) or _dict(system.get("accelerator")).get("type") == "cpu":
        return None
    if link.get("summary") is not None:
        return str(link["summary"])
    status = str(link.get("summary_status") or "")
    return status if status.startswith("unknown") else f"unknown ({status})" if status else "unknown"


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


DISTRIBUTED_KEYS = ("world_size", "nnodes", "local_world_size", "backend", "parallel", "global_batch",
                    "per_rank_batch", "micro_batch", "grad_accumulation_steps", "straggler_spread")
COMMUNICATION_KEYS = ("exposed_share", "step_s_with_sync", "step_s_without_sync", "method", "status")


def _row(key: str, value, text: str | None = None) -> tuple[str, str, str]:
    """(label, value text, key) of one field (:mod:`suite.site.labels`); ``text`` replaces the value's text."""
    label, shown = labels.show(key, value)
    return label, shown if text is None else text, key


RANKS_CHECKED = ("rank 0's step times are the run's, checked against its event log; every rank's step times "
                 "stamped by goodbench run-own's second clock too")
RANKS_SELF_REPORTED = ("rank 0's step times are the run's, checked against its event log; the other ranks' "
                       "step times, and the straggler spread they give, are self-reported (no second clock "
                       "stamped them)")


def distributed_context(run: dict, stamped: bool = False) -> dict | None:
    """What a run page shows of a distributed run: a summary table and per-rank rows; None otherwise.

    The exposed communication share shows its status where it is null. Beyond RANK_ROWS ranks,
    rank 0 and the slowest ranks (by mean steady-state step time) are listed, and the note says so.
    What checks the ranks' step times is said (``stamped``: the second clock stamped every rank):
    rank 0's are the run's own; without a second clock another rank's report is the file's word
    (trial 9 made rank 1's 88-ms steps 1 ms, and the table showed it unmarked).
    """
    section = run.get("distributed")
    if not isinstance(section, dict):
        return None
    comm = _dict(section.get("communication"))
    share = comm.get("exposed_share")
    rows = [_row(f"distributed.{k}", section.get(k)) for k in DISTRIBUTED_KEYS]
    if not isinstance(section.get("straggler_spread"), (int, float)):
        rows[-1] = _row("distributed.straggler_spread", None, "— (not measured)")
    if not comm:
        rows.append(_row("distributed.communication.exposed_share", None, "— (not recorded in this run)"))
    else:
        rows += [_row(f"distributed.communication.{k}", comm.get(k)) for k in COMMUNICATION_KEYS]
        if not isinstance(share, (int, float)):
            rows[-5] = _row("distributed.communication.exposed_share", None, f"— ({comm.get('status')})")
    ranks = [r for r in section.get("ranks") or [] if isinstance(r, dict)]
    shown, note = ranks, None
    if len(ranks) > RANK_ROWS:
        def mean(r):
            value = _dict(r.get("step_time_s")).get("mean")
            return value if isinstance(value, (int, float)) else -math.inf
        slowest = sorted(ranks[1:], key=mean, reverse=True)[:RANK_ROWS - 1]
        shown = sorted([ranks[0], *slowest], key=lambda r: r["rank"])  # an integer (schema)
        note = (f"{len(shown)} of {len(ranks)} ranks listed: rank 0 and the slowest by mean step time; "
                "the raw results JSON holds every rank.")
    return {"summary": kv_table(rows), "ranks": [_rank_row(r) for r in shown], "n_ranks": len(ranks),
            "note": note, "checked": RANKS_CHECKED if stamped else RANKS_SELF_REPORTED}


RANK_COLUMNS = [("rank", "num", "count"), ("node", "num", "count"), ("host", "text", "text"),
                ("device", "text", "text"), ("mean step time", "num", "s"), ("p50 step time", "num", "s"),
                ("max step time", "num", "s"), ("initialization", "num", "s"), ("evaluation", "num", "s"),
                ("energy to train", "num", "J")]


def _rank_row(rank: dict) -> list[dict]:
    """One rank's cells (text with its unit, and the number the sortable table sorts by)."""
    times, phases = _dict(rank.get("step_time_s")), _dict(rank.get("phases_s"))
    values = [rank.get("rank"), rank.get("node_rank"), rank.get("host"), rank.get("device"),
              times.get("mean"), times.get("p50"), times.get("max"), phases.get("init"), phases.get("eval"),
              rank.get("energy_to_train_j")]
    return [{"text": labels.value_text(v, unit), "v": repr(float(v)) if kind == "num" and isinstance(v, (int, float))
             and not isinstance(v, bool) and not missing(v) else ""}
            for v, (_, kind, unit) in zip(values, RANK_COLUMNS)]


def kv_table(rows: Sequence[tuple[str, str, str | None]]) -> Markup:
    """A two-column label/value table, every text escaped; a row's key (the third item) is its label's tooltip."""
    cells = "".join(f'<tr><th scope="row"{_title(key)}>{escape(label)}</th><td>{escape(text)}</td></tr>'
                    for label, text, key in rows)
    return Markup(f'<table class="kv"><tbody>{cells}</tbody></table>')


def _title(key: str | None) -> str:
    return f' title="{escape(key)}"' if key else ""


def goodput_fields(run: dict, goodput: dict) -> list[tuple[str, object]]:
    """The run's goodput fields but its badput (charted apart), with its steady-state step time's median
    (``metrics.throughput.step_time_s.p50``) beside the mean it gives (``goodput.steady_step_s``): a
    few slow steps move the mean, the median is what the second clock's rule reads."""
    items = labels.flatten({k: v for k, v in goodput.items() if k != "badput_s"}, "goodput")
    p50 = results.step_time_s(run, "p50") if results.throughput(run) else None
    at = next((i + 1 for i, (key, _) in enumerate(items) if key == "goodput.steady_step_s"), None)
    return items if at is None or p50 is None else [*items[:at], ("metrics.throughput.step_time_s.p50", p50), *items[at:]]


def field_table(items: list[tuple[str, object]]) -> Markup:
    """The fields ``items`` ((dotted key, value), :func:`suite.site.labels.flatten`) as a label/value table."""
    return kv_table([_row(key, value) for key, value in items])


def provenance_table(items: list[tuple[str, object]]) -> Markup:
    """A label/value table with a third column saying, for each field, the second record a rule
    checks it against, or that it is self-reported (:mod:`suite.validate.provenance`); each
    label's tooltip is the field's key."""
    from suite.validate.provenance import SELF_REPORTED, provenance

    rows = []
    for key, value in items:
        where = provenance(key)
        css = "self-reported" if where == SELF_REPORTED else "checked"
        label, text = labels.show(key, value)
        rows.append(f'<tr><th scope="row"{_title(key)}>{escape(label)}</th><td>{escape(text)}</td>'
                    f'<td class="{css}">{escape(where)}</td></tr>')
    head = '<thead><tr><th scope="col">field</th><th scope="col">value</th><th scope="col">second record</th></tr></thead>'
    return Markup(f'<table class="kv provenance">{head}<tbody>{"".join(rows)}</tbody></table>')


def curve_charts(curve: list[dict], target) -> list[Markup]:
    """The evaluation points by step: the losses on one chart, the quality metrics (accuracy,
    AUC, …) on another, each on its own scale; the target's line only on its metric's chart."""
    if len(curve) < 2:  # one point on an axis of its own value's range says nothing: the page writes it out
        return []
    names = [k for k in dict.fromkeys(k for p in curve for k in p) if k not in ("step", "time_s")]
    losses = [n for n in names if "loss" in n]
    groups = ((losses, "loss", "losses at each evaluation"),
              ([n for n in names if n not in losses], "quality", "quality metrics at each evaluation"))
    out = []
    for group, axis, title in groups:
        hline = (f"target: {labels.target_text(target)}", target.value) \
            if target is not None and target.metric in group else None
        chart = charts.line_chart({labels.words(k): [(p["step"], p.get(k)) for p in curve] for k in group},
                                  "step", labels.words(group[0]) if len(group) == 1 else axis, title, hline=hline)
        if chart is not None:
            out.append(chart)
    return out


def single_point_text(curve: list[dict]) -> str | None:
    """A curve of one evaluation (a run cut short), written out: "one evaluation, at step 40: …"."""
    if len(curve) != 1:
        return None
    point = curve[0]
    values = ", ".join(f"{labels.words(k)} {_figure(v)}" for k, v in point.items()
                       if k not in ("step", "time_s") and v is not None)
    return f"One evaluation, at step {point.get('step')}: {values or 'no metric recorded'} (a curve needs two)."


def step_histogram(step_times: list[float], steps: int) -> Markup | None:
    """The distribution of per-step times, in the unit that suits them (s, ms or µs)."""
    scale, unit = time_unit(max(step_times, default=0.0))
    return charts.histogram([t / scale for t in step_times], f"step time ({unit})",
                            f"distribution of per-step times ({steps:,} steps)", unit=unit)


def time_unit(largest: float) -> tuple[float, str]:
    """(seconds per unit, unit) for durations up to ``largest``: s from 1 s, ms from 1 ms, else µs."""
    return (1.0, "s") if largest >= 1 else (1e-3, "ms") if largest >= 1e-3 else (1e-6, "µs")


def _parts(values: dict) -> dict[str, float | None]:
    """Time parts by their words, those below the clock's resolution (:data:`RESOLUTION_S`) left out as 0."""
    return {labels.words(k): v for k, v in values.items()
            if not (isinstance(v, (int, float)) and abs(v) < RESOLUTION_S)}


def host_load_context(run: dict) -> dict:
    """The run's host record (:mod:`suite.meters.host_load`) in words: ``under`` (why it was
    measured under load, or None), ``text`` (the load at its start, on average over it where a
    watch recorded it, and at its end, or that it was not recorded; the page prefixes "host ") and ``loads`` (the load averages alone, shown beside
    ``under``). Self-reported where ``recorded``: nothing in the file can check it."""
    record = run.get("host_load")
    if not isinstance(record, dict):
        return {"under": None, "text": "load not recorded (the file is dated before goodbench recorded it)",
                "recorded": False}
    parts, loads = [], []
    for when in ("start", "end"):
        snap = found if isinstance(found := record.get(when), dict) else {}
        load, other = snap.get("load_1m"), snap.get("other_cores")
        part = f"at its {when}: load average {'—' if load is None else f'{load:g}'} on {snap.get('cores')} cores"
        part += ", other processes not measured" if other is None else f", other processes using {other:g} cores"
        parts.append(part)
        if isinstance(load, (int, float)):
            loads.append(f"{load:g} at its {when}")
    during = record.get("during")
    if isinstance(during, dict) and isinstance(during.get("other_cores"), (int, float)):
        parts.insert(1, _during(during, host_load.restarts_of(run)))
    gpu = record.get("gpu_other_processes_end")
    if gpu is not None:
        parts.append(f"{gpu} other compute process{'' if gpu == 1 else 'es'} on the GPU at its end")
    return {"under": host_load.run_under_load(run), "text": "load " + "; ".join(parts), "recorded": True,
            "loads": f"load average {', '.join(loads)}" if loads else ""}


def paused_text(run: dict) -> str | None:
    """The seconds the run says it was paused (``faults.paused_s``, the log's ``paused`` events, which
    the validator allows beside its loop share), as shown; None where it was never paused."""
    paused = _dict(run.get("faults")).get("paused_s")
    return f"{paused:.3g}" if isinstance(paused, (int, float)) and not isinstance(paused, bool) and paused > 0 else None


def _during(during: dict, restarts: int = 0) -> str:
    """What a run's ``host_load.during`` (:class:`suite.meters.host_load.Watch`) says, in words: the
    other processes' CPU on average over the run — where it was resumed (``restarts``), over the
    whole run where its supervisor watched it, over the attempts its ``attempts`` adds up (each
    earlier one up to the checkpoint the next went on from), or its last attempt only — and the
    busiest of them (:func:`suite.figures.load.watched_span`)."""
    cores = during.get("cores")
    of = f" of {cores}" if isinstance(cores, int) and not isinstance(cores, bool) else ""
    names = host_load.busy_names(during)
    seconds = during.get("seconds")
    watched = f", {seconds:g} s watched" if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else ""
    attempts, which = host_load.watched_span(during, restarts)
    resumed = f"resumed {restarts} time{'' if restarts == 1 else 's'}"
    if restarts <= 0:
        over = "over the run"
    elif during.get("watched") == "supervisor":
        over = f"over {which} ({resumed}; watched by goodbench run's supervisor, which killed and restarted it{watched})"
    elif attempts > 1:
        over = (f"over {which} ({resumed}; each earlier one watched up to the checkpoint the next "
                f"went on from{watched})")
    else:
        over = f"over its last attempt ({resumed}; the attempts before it were not watched{watched})"
    return (f"on average {over}, other processes used {during['other_cores']:g}{of} cores"
            + (f" (busiest: {names})" if names else ""))


def run_context(file: str, doc: dict, run: dict, shared: dict | None = None, restamped: bool = False,
                reproduction: dict | None = None) -> dict:
    """Everything the run page shows, computed at build time (charts as escaped inline SVG).

    ``shared`` is :func:`doc_context` of the document, passed in to compute it once per file;
    ``reproduction``: what a reproduction's page says of it (:func:`reproduction_context`; None: made
    here from the file alone, its signer not yet weighed against the site's reviewers).
    """
    wid, scale = run["workload"]["id"], run["scale"]
    pinned, target, own_name = _spec_of(doc, run)
    metrics = {k: v for k, v in run["metrics"].items() if k != "throughput"}
    metrics["mfu_status"] = derive.run_mfu_status(doc, run)  # goodbench's words, not the file's
    telemetry = t if isinstance(t := run.get("telemetry"), dict) else {}
    warnings = telemetry.get("warnings")  # the sampler's: a run-level key is no record goodbench writes
    trace = telemetry.get("power_trace")
    trace = [(t[0], t[1]) for t in trace if isinstance(t, list) and len(t) == 2] if isinstance(trace, list) else []
    goodput = g if isinstance(g := run.get("goodput"), dict) else {}
    badput = goodput.get("badput_s") if isinstance(goodput.get("badput_s"), dict) else None
    phases = run["phases_s"]
    events = e if isinstance(e := run.get("event_log"), list) else []
    shared = shared or doc_context(file, doc)
    if reproduction is None:
        reproduction = reproduction_context(doc, run, shared["signer"])
    again = reproduction is not None
    return {
        **shared,
        # own code by its name ("own smoke seed 1" said nothing of which code it was)
        "title": f"{'reproduction: ' if again else ''}{own_name if own_name else wid} {scale} seed {run['seed']}",
        "run": run, "reproduction": reproduction,
        "cost": cost_context(run, (shared or {}).get("price"), (shared or {}).get("cores"),
                             (shared or {}).get("cores_basis"))
        if (shared or {}).get("priced") else None,
        "started": labels.value_text(run.get("started_at"), "time"),
        "host_load": host_load_context(run),
        "paused": paused_text(run),
        # a GPU's step times are CUDA events, compared with no stamp: the other ranks' stay the file's word
        "distributed": distributed_context(run, clock_cover.stamped(doc, run["run_id"])
                                           and doc["system"]["accelerator"]["type"] != "cuda"),
        "rank_headers": [{"label": k, "kind": v} for k, v, _ in RANK_COLUMNS],
        "log_href": f"../raw/{run_slug(file, run['run_id'])}-events.txt" if events else None,
        "n_events": len(events),
        "workload_href": f"../workloads/{safe_name(wid)}.html" if wid in registry.WORKLOADS else None,
        "pinned": pinned, "own_code": own_name,
        "own_two_clocks": (two := clock_cover.stamped(doc, run["run_id"])),
        "own_short_steps": (short := (flaw := clock_cover.steps_flaw(doc, run) if "second_clock" in doc else None)
                            == clock_cover.SHORT),
        "own_steps_sum": (summed := flaw == clock_cover.SUM_OFF),
        "own_timing": labels.own_timing(two, short, doc["system"]["accelerator"]["type"] == "cuda", restamped, again,
                                        steps_sum=summed),
        "pinned_evaluation": pinned_evaluation_lines(run),
        "evaluation_time": evaluation_time(doc, run),
        "figure_notes": figure_notes(doc, run),
        "metrics": field_table(labels.flatten(metrics, "metrics")),
        "throughput": field_table(labels.flatten(tput, "metrics.throughput"))
        if (tput := results.throughput(run)) else None,
        "warnings": [str(w) for w in warnings] if isinstance(warnings, list) else [],
        "curve_charts": curve_charts(run["curve"], target),
        "single_point": single_point_text(run["curve"]),
        "step_chart": step_histogram(run["step_times_s"], run["steps"]),
        "power_chart": charts.line_chart({"power (W)": trace}, "seconds since start", "W", "power trace")
        if trace else None,
        "badput": charts.stacked_bar(_parts({"productive": goodput.get("productive_s"), **badput}),
                                     "goodput: productive time and badput by cause", seconds, TIME_COLOURS)
        if badput else None,
        "goodput": field_table(goodput_fields(run, goodput)) if goodput else None,
        "phases": charts.stacked_bar(_parts({k: phases.get(k) for k in
                                             list(PHASE_ORDER) + sorted(set(phases) - set(PHASE_ORDER))}),
                                     "phases of the run", seconds, TIME_COLOURS),
    }
