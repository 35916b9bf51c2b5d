"""Results files → rows: one per run, one leaderboard entry per (file, workload, scale), with pandas.

An entry's seeds, TTA score and medians are the document's summary (suite/figures/summary.py). Every row
names its file's ``signer`` (the fingerprint of a signature that verifies, else None: unsigned)
and, across the stored files, ``copy_status``: "copy" or "disputed" when a run of the row is
another stored run's (:func:`copies`), with ``copy_of``, the signer of the run kept; such a row is
shown as such and never ranked. ``seed_conflict`` names the other stored run, in another key's
file, that holds a run's curve under another seed (:func:`with_seed_conflicts`): one label is wrong.

Fields that later parts of the results format add (division, goodput, effective goodput) are
read where they exist and left ``None`` otherwise; nothing is filled in.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from suite import validate
from suite.cost import hours
from suite.figures import clock_cover, derive
from suite.figures import load as host_load
from suite.figures import mfu as mfu_meter
from suite.figures.derive import J_PER_KWH
from suite.figures.recompute import recompute_document
from suite.figures.reproducibility import MAX_THROUGHPUT_TOLERANCE
from suite.figures.summary import complete_runs, groups, median, summarize
from suite.leaderboard import reproduction_words
from suite.leaderboard.systems import IDENTITY
from suite.record import results
from suite.store import naming
from suite.trust import ownership, signing
from suite.validate.schema import NOT_RESULTS
from suite.validate.shared import as_number
from suite.validate.stream_rules import energy_unchecked
from suite.validate.tolerance import close
from workloads import own

ENTRY_COLUMNS = ["file", "system", "accelerator", "count", "workload", "kind", "scale", "division",
                 "world_size", "scaling_efficiency", "seeds", "partial_runs", "failed_runs", "score_s",
                 "ci95_low_s", "ci95_high_s", "tta_valid", "samples_per_s",
                 "tokens_per_s", "mfu", "mfu_basis", "energy_per_sample_j", "energy_per_token_j",
                 "energy_to_target_kwh", "energy_unchecked", "batch_wait_share", "goodput", "effective_goodput",
                 "created_at",
                 "suite_version", "run_id", "signer", "copy_of", "copy_status", "seed_conflict", "known_peak", "under_load",
                 "load_recorded", "implementation", "trains", "second_clock", "short_steps", "steps_sum", "clock_gaps", "gpu_steps", "accelerator_hours", "core_hours", "billed_cores", "accelerator_s_per_million_samples",
                 "accelerator_s_per_million_tokens", "stale_rules", "rules_version", "accelerator_type"]
RUN_COLUMNS = ["file", "run_id", "system", "accelerator", "count", "workload", "kind", "scale",
               "division", "seed", "status", "samples_per_s", "tokens_per_s", "mfu", "mfu_basis", "tta_s",
               "energy_per_sample_j", "energy_unchecked", "batch_wait_share", "goodput", "effective_goodput",
               "created_at", "suite_version", "reproduces", "reproduces_run_id", "reproduction_verdict",
               "reproduces_original_samples_per_s", "reproduces_original_tta_s", "reproduces_tolerance",
               "median_samples_per_s", "reproduces_original_median_samples_per_s", "code_commit",
               "reproduces_code_read", "reproduction_how", "reproduction_badge", "signer", "copy_of", "copy_status",
               "seed_conflict",
               "started_at", "steps_sha256", "under_load", "load_recorded"]


def check_file(path: Path) -> tuple[dict | None, str | None, list[str]]:
    """(document, None, waived) for a valid stored file, (None, first problem as one line, [])
    for an invalid one, or for one in a store that goodbench submit did not store
    (:func:`suite.store.naming.misnamed`: its name is not the sha256 of its bytes).

    A file written under older rules than the current ones (its ``rules_version``; a file
    without one: v1) keeps the status it had: ``waived`` lists, one line each, what rules
    introduced since would refuse (:func:`suite.validate.check_stored`). The line of a file
    refused even by its own rules starts with both versions, "states no rules version (held to
    vN)" for one that records none (:func:`suite.validate.stored_words`)."""
    doc, unread = naming.load_stored(path)
    if unread is not None:
        return None, unread, []
    line, waived, _ = check_loaded(doc, path.name)
    return (None, line, []) if line is not None else (doc, None, waived)


def check_loaded(doc, name: str) -> tuple[str | None, list[str], int]:
    """A parsed document checked under the rules it was stored with (:func:`check_file`): (its
    first problem as one line naming ``name``, or None; the waived lines; how many problems)."""
    problems, waived = validate.check_stored(doc)
    stored, words = validate.stored_under(doc), validate.stored_words(doc)
    if not problems:
        return None, [f"{words}, not held to v{validate.SINCE[p.code]}'s [{p.code}]: {p.line(name)}"
                      for p in waived], 0
    line = problems[0].line(name)
    if NOT_RESULTS in line:  # no results file at all: it says so itself
        return line, [], len(problems)
    if problems[0].code == "schema-version":  # no results file of this suite: stored under no rules
        return f"not a results file of this suite: {line}", [], len(problems)
    if stored is not None and stored < validate.RULES_VERSION:
        line = f"{words}, refused by rules v{validate.RULES_VERSION}: {line}"
    return line, [], len(problems)


@dataclass(frozen=True)
class Stored:
    """One stored results file as every step of the leaderboard reads it, validated and
    recomputed once (:func:`read_stored`): ``doc`` as stored (what its signature covers),
    ``figures`` the document with every figure recomputed from its raw records (what the tables
    and the run pages show), its verified ``signer`` (None: unsigned) and ``waived``, what rules
    introduced since it was stored would refuse."""

    name: str
    doc: dict
    figures: dict
    signer: str | None
    waived: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, doc: dict, waived: Iterable[str] = ()) -> Stored:
        """A valid document's reading: its signer checked and its figures recomputed, once."""
        return cls(name, doc, recompute_document(doc), signing.signer(doc), tuple(waived))


def read_stored(path: Path) -> tuple[Stored | None, str | None]:
    """(the file's :class:`Stored` reading, None) for a valid stored file, (None, its first problem
    as one line) for an invalid one: the one per-file step of the site and of :func:`table`."""
    stored, problem, _ = read_stored_parsed(path)
    return stored, problem


def read_stored_parsed(path: Path) -> tuple[Stored | None, str | None, object]:
    """:func:`read_stored`, with the document as parsed as a third part, also for a file refused
    (by validation, or for its name); None where it could not be read or is not JSON."""
    doc, unread, parsed = naming.load_parsed(path)
    if unread is not None:
        return None, unread, parsed
    line, waived, _ = check_loaded(doc, path.name)
    if line is not None:
        return None, line, doc
    return Stored.of(path.name, doc, waived), None, doc


_number = as_number  # a finite number, or None


def run_metric(run: dict, key: str) -> float | None:
    """A number from ``metrics`` or from a ``goodput`` section of the run; None when absent."""
    value = _number(run["metrics"].get(key))
    if value is None and isinstance(run.get("goodput"), dict):
        value = _number(run["goodput"].get(key))
    return value


def reproduction(doc: dict) -> dict | None:
    """A reproduction's ``settings.reproduces`` section (``goodbench reproduce``), else None."""
    section = doc["settings"].get("reproduces")
    return section if isinstance(section, dict) else None


def reproductions(runs: pd.DataFrame) -> dict[tuple[str, str], list[dict]]:
    """The reproductions among the run rows, by (sha256 of the original file, original run id):
    each with its file, run id, system, verdict, start, step-time digest, what it found in a few
    words (``how`` and ``badge``: :mod:`suite.leaderboard.reproduction_words`), why its re-run was
    measured under load (``under_load``, None: it was not, or did not record it) and, for own code,
    the commit its reviewer attested reading (``code_read``, None: no attestation)."""
    found: dict[tuple[str, str], list[dict]] = {}
    if runs.empty:
        return found
    for row in runs[runs["reproduces"].notna()].to_dict(orient="records"):
        found.setdefault((row["reproduces"], row["reproduces_run_id"]), []).append(
            {"file": row["file"], "run_id": row["run_id"], "system": row["system"],
             "signer": row["signer"], "verdict": row["reproduction_verdict"], "started_at": row["started_at"],
             "steps_sha256": row["steps_sha256"], "scale": row["scale"],
             "tolerance": _number(row.get("reproduces_tolerance")),
             "code_read": row["reproduces_code_read"] if isinstance(row.get("reproduces_code_read"), str) else None,
             "how": row["reproduction_how"] if isinstance(row.get("reproduction_how"), str) else None,
             "badge": row["reproduction_badge"] if isinstance(row.get("reproduction_badge"), str) else None,
             "under_load": row["under_load"] if isinstance(row.get("under_load"), str) else None,
             "original": {"samples_per_s": _number(row["reproduces_original_samples_per_s"]),
                          "tta_s": _number(row["reproduces_original_tta_s"]),
                          "median_samples_per_s": _number(row.get("reproduces_original_median_samples_per_s"))}})
    return found


def _recorded_median(entry: dict | None) -> float | None:
    """The original's samples/s at its median step time as a reproduction's entry records it
    (``measuring.median``), or None: not measured on, or written before it was kept."""
    median = ((entry or {}).get("measuring") or {}).get("median")
    return median["original_samples_per_s"] if median else None


def original_figures(run: dict, doc: dict) -> dict:
    """What :func:`contradicted` holds a reproduction to: the stored original run's samples/s, time
    to target and step-time digest, and its file's ``created_at``; and what says whose code a
    re-run ran: its division and, for own code, its recorded commit (the keys of a run row)."""
    return {"samples_per_s": results.samples_per_s(run), "tta_s": run["metrics"]["tta_s"],
            "median_samples_per_s": results.median_samples_per_s(run),
            "created_at": doc.get("created_at"), "steps_sha256": results.step_times_digest(run),
            "scale": run["scale"], "division": validate.division(doc), "code_commit": code_commit(doc)}


def code_commit(doc: dict) -> str | None:
    """The git commit an own-code document recorded for its code (None: goodbench's own code, or none recorded)."""
    if validate.division(doc) != own.DIVISION:
        return None
    section = doc["settings"].get("implementation")
    code = section.get("code") if isinstance(section, dict) else None
    commit = code.get("git_commit") if isinstance(code, dict) else None
    return commit if isinstance(commit, str) else None


def code_read(section: dict | None) -> str | None:
    """The commit a reproduction's reviewer attested reading (``settings.reproduces.code_read``), or None."""
    attested = (section or {}).get("code_read")
    commit = attested.get("commit") if isinstance(attested, dict) else None
    return commit if isinstance(commit, str) else None


def contradicted(reproduction: dict, original: dict) -> str | None:
    """Why a reproduction does not count for the stored original run (an independent file), or
    None when it does: it must record the original's figures (its verdict compares its run with
    those), start after the original was created, carry raw records of its own — the same
    step-time sequence is the original run itself, copied —, be of the original's scale (a smoke
    re-run says nothing of a full-scale run) and claim no throughput tolerance beyond the rules'. ``original``: the original run's
    :func:`original_figures`, or its run row (:func:`run_rows`)."""
    stored = {key: None if _nan(original.get(key)) else original.get(key) for key in ("samples_per_s", "tta_s")}
    for key, label in (("samples_per_s", "samples/s"), ("tta_s", "time to target")):
        if not close(reproduction["original"][key], stored[key]):
            return (f"records the original's {label} as {reproduction['original'][key]}, "
                    f"but the stored original holds {stored[key]}")
    median = reproduction["original"].get("median_samples_per_s")  # None: none recorded (written before)
    held = None if _nan(original.get("median_samples_per_s")) else original.get("median_samples_per_s")
    if median is not None and not close(median, held):
        return f"records the original's samples/s at its median step as {median}, but the stored original holds {held}"
    if str(reproduction.get("started_at") or "") <= str(original.get("created_at") or ""):
        return (f"started at {reproduction.get('started_at')}, not after the original was created "
                f"({original.get('created_at')})")
    if reproduction.get("steps_sha256") is not None and reproduction.get("steps_sha256") == original.get("steps_sha256"):
        return "its step times are the original run's, copied: not a run of its own"
    if reproduction.get("scale") != original.get("scale"):
        return (f"a {reproduction.get('scale')} re-run of a {original.get('scale')} run: a reproduction counts only "
                "at its original's scale")
    tolerance = reproduction.get("tolerance")
    if tolerance is not None and tolerance > MAX_THROUGHPUT_TOLERANCE:
        return (f"claims a throughput tolerance of ±{tolerance:.4g}, wider than the rules' "
                f"±{MAX_THROUGHPUT_TOLERANCE:g}")
    return None


def _nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


USER_PEAK = "user-supplied peak (not ranked)"


def mfu_basis(runs: list[dict]) -> str | None:
    """What the runs' MFU is measured against: the peak table, or a user's ``--peak-tflops``
    (:data:`USER_PEAK`: shown, never ranked); None without MFU."""
    statuses = [str(r["metrics"].get("mfu_status", "")) for r in runs if r["metrics"].get("mfu") is not None]
    if not statuses:
        return None
    return USER_PEAK if any("user-supplied" in s for s in statuses) else "peak table"


NO_KNOWN_PEAK = "no known peak"
"""The label of a result whose device the peak table cannot bound (:func:`known_peak`): shown, never ranked."""


def known_peak(doc: dict, runs: list[dict]) -> bool:
    """Whether the peak table bounds every one of ``runs`` on the document's device: a dense peak
    at the run's precision and a board power (:func:`suite.figures.mfu.known_peak`; never a MIG
    slice, a CPU or a name the table does not hold). Without it no figure of the run can be
    held to what the device can do, so the result is shown, labelled :data:`NO_KNOWN_PEAK`,
    and never ranked."""
    name = str(doc["system"]["accelerator"]["name"])
    return bool(runs) and all(mfu_meter.known_peak(name, r["precision"], results.mig_enabled(r)) is not None
                              for r in runs)


def run_rows(name: str, doc: dict, signer: str | None = None, *, verified: bool = False,
             figures: dict | None = None) -> list[dict]:
    """One row per run of one document (a reproduction's rows name the run they reproduce), its
    figures recomputed from the run's raw records (:mod:`suite.figures.recompute`), never the file's own.
    ``signer`` with ``verified=True``: the document's :func:`suite.trust.signing.signer`, already checked;
    ``figures``: the document recomputed already (:class:`Stored`)."""
    fp = signer if verified else signing.signer(doc)  # over the file as signed, before recomputing
    doc = figures if figures is not None else recompute_document(doc)
    section = reproduction(doc) or {}
    compared = {r["run_id"]: r for r in section.get("runs", [])}
    out = []
    for run in doc["runs"]:
        repro = compared.get(run["run_id"])
        loaded = host_load.run_under_load(run)
        out.append({
            "file": name, "run_id": run["run_id"], "system": doc["system"]["name"],
            "accelerator": doc["system"]["accelerator"]["name"],
            "count": doc["system"]["accelerator"]["count"],
            "workload": run["workload"]["id"], "kind": run["workload"]["kind"], "scale": run["scale"],
            "division": validate.division(doc), "seed": run["seed"], "status": run["status"],
            "samples_per_s": results.samples_per_s(run), "tokens_per_s": results.tokens_per_s(run),
            "mfu": run["metrics"]["mfu"], "mfu_basis": mfu_basis([run]), "tta_s": run["metrics"]["tta_s"],
            "energy_per_sample_j": run["metrics"]["energy_per_sample_j"],
            "energy_unchecked": energy_unchecked(run),  # why no other record checks it (self-reported)
            # of the steady loop, where samples/s counts the steps only (a file of rules before v10)
            "batch_wait_share": None if derive.counts_batch_waits(doc.get("rules_version"))
            else derive.batch_wait_share(run),
            "goodput": run_metric(run, "goodput"),
            "effective_goodput": run_metric(run, "effective_goodput"),
            "created_at": doc["created_at"], "suite_version": doc["suite"]["version"],
            "reproduces": section["sha256"] if repro else None,
            "reproduces_run_id": repro["original_run_id"] if repro else None,
            "reproduction_verdict": repro["verdict"] if repro else None,
            "reproduces_original_samples_per_s": repro["throughput"]["original_samples_per_s"] if repro else None,
            "reproduces_original_tta_s": repro["tta"]["original_s"] if repro else None,
            "reproduces_tolerance": section["throughput_tolerance"] if repro else None,
            "median_samples_per_s": results.median_samples_per_s(run),
            "reproduces_original_median_samples_per_s": _recorded_median(repro),
            "code_commit": code_commit(doc), "reproduces_code_read": code_read(section) if repro else None,
            "reproduction_how": reproduction_words.compared_words(repro, run["status"], loaded) if repro else None,
            "reproduction_badge": reproduction_words.badge_words(repro, run["status"], loaded) if repro else None,
            "signer": fp, "copy_of": None, "copy_status": None, "seed_conflict": None,
            "started_at": run["started_at"], "steps_sha256": results.step_times_digest(run),
            "under_load": loaded,
            "load_recorded": isinstance(run.get("host_load"), dict),
        })
    return out


def rows(name: str, doc: dict, signer: str | None = None, *, verified: bool = False,
         figures: dict | None = None) -> list[dict]:
    """One entry per (workload, scale) of one document, which has one division (``signer`` as
    for :func:`run_rows`), its figures recomputed from the runs' raw records
    (:mod:`suite.figures.recompute`), never the file's own.

    The seeds, TTA score, and throughput and MFU medians are those of :func:`suite.figures.summary.summarize`
    (recomputed from the runs, so files without a ``summary`` section read the same); energy,
    energy to target and goodput are medians over the complete runs, by the same rule: a failed
    or partial run's figures never count.

    A reproduction (``goodbench reproduce``) gives no entry: it is evidence about the file it
    reproduces, shown on that file's run pages, and its runs are the ones it chose of that
    file (its seeds need not be the first N), so it is never ranked.

    A run without a ``run_id`` (the schema requires one; ``compare`` prices a one-file side read
    without it checked) reads as None: the entry's run id, the second clock's lookup."""
    if reproduction(doc) is not None:
        return []
    fp = signer if verified else signing.signer(doc)  # over the file as signed, before recomputing
    doc = figures if figures is not None else recompute_document(doc)  # the raw records' figures, never the file's
    div, grouped = validate.division(doc), groups(doc["runs"])
    out = []
    for key, summary in summarize(doc["runs"]).items():
        runs = grouped[key]
        complete = complete_runs(runs)
        score = summary["tta"]
        ci = score["ci95_s"] if score and score["ci95_s"] else (None, None)
        to_target = median([run_metric(r, "energy_to_target_j") for r in complete])
        out.append({
            "file": name, "system": doc["system"]["name"],
            "accelerator": doc["system"]["accelerator"]["name"],
            "count": doc["system"]["accelerator"]["count"],
            "accelerator_type": doc["system"]["accelerator"]["type"],
            "workload": summary["workload"], "kind": summary["kind"], "scale": summary["scale"],
            "division": div,
            "world_size": results.world_size(runs[0]),
            "scaling_efficiency": None,  # set across documents by with_scaling_efficiency
            "seeds": len(summary["seeds"]),
            # runs that did not complete (interrupted: partial; or failed): shown, never scored
            "partial_runs": sum(r["status"] == "partial" for r in runs),
            "failed_runs": sum(r["status"] == "failed" for r in runs),
            "score_s": score["olympic_mean_s"] if score else None,
            "ci95_low_s": ci[0], "ci95_high_s": ci[1],
            "tta_valid": score["valid"] if score else None,
            "samples_per_s": summary["samples_per_s_median"],
            "tokens_per_s": summary["tokens_per_s_median"],
            "mfu": summary["mfu_median"] if mfu_basis(complete) != USER_PEAK else None,
            "mfu_basis": mfu_basis(complete),
            "energy_per_sample_j": median([run_metric(r, "energy_per_sample_j") for r in complete]),
            "energy_per_token_j": median([run_metric(r, "energy_per_token_j") for r in complete]),
            "energy_to_target_kwh": None if to_target is None else to_target / J_PER_KWH,
            # why a run's energy was not checked against the power sampled beside it (self-reported)
            "energy_unchecked": next((why for r in complete if (why := energy_unchecked(r)) is not None), None),
            # the largest share of a complete run's steady loop spent waiting for batches, where samples/s
            # counts the steps only (a file of rules before v10: the split between them is the run's clock)
            "batch_wait_share": None if derive.counts_batch_waits(doc.get("rules_version")) else max(
                (share for r in complete if (share := derive.batch_wait_share(r)) is not None), default=None),
            "goodput": median([run_metric(r, "goodput") for r in complete]),
            "effective_goodput": median([run_metric(r, "effective_goodput") for r in complete]),
            "created_at": doc["created_at"], "suite_version": doc["suite"]["version"],
            "run_id": (complete or runs)[0].get("run_id"),
            "signer": fp, "copy_of": None, "copy_status": None, "seed_conflict": None, "known_peak": known_peak(doc, runs),
            "under_load": host_load.runs_under_load(runs, own_code(doc)),
            "load_recorded": all(isinstance(r.get("host_load"), dict) for r in runs),
            "implementation": own_code(doc),
            "trains": own.implementation_trains(doc),  # what own code declares it trains (self-reported)
            # own code: every run stamped by goodbench run-own's clock too (None: goodbench's own runs)
            "second_clock": all(clock_cover.stamped(doc, r.get("run_id")) for r in runs) if own_code(doc) else None,
            # own code stamped by run-own, but on a CPU with steps shorter than that clock holds
            "short_steps": own_code(doc) and "second_clock" in doc and any(
                clock_cover.steps_flaw(doc, r) == clock_cover.SHORT for r in runs),
            # or with steps long enough whose steady steps' sum that clock does not hold
            "steps_sum": bool(own_code(doc)) and "second_clock" in doc and any(
                clock_cover.steps_flaw(doc, r) == clock_cover.SUM_OFF for r in runs),
            # own code with a run whose edges no second clock stamped whole (none at all: plain python)
            "clock_gaps": bool(own_code(doc)) and not all(clock_cover.edges_whole(doc, r.get("run_id")) for r in runs),
            # own code on a GPU: its step times are CUDA events, which the second clock does not compare
            "gpu_steps": bool(own_code(doc)) and doc["system"]["accelerator"]["type"] == "cuda",
            # devices × time to target; devices × 10⁶ ÷ rate (suite/cost/hours.py)
            "accelerator_hours": hours.to_target(results.world_size(runs[0]), score["olympic_mean_s"])
            if score else None,
            "core_hours": hours.core_hours(doc, score["olympic_mean_s"]) if score else None,  # on a CPU
            "billed_cores": (hours.billed_cores(doc) or (None,))[0],  # the vCPUs a CPU's core-hours count
            "accelerator_s_per_million_samples": hours.seconds_per_million(
                results.world_size(runs[0]), summary["samples_per_s_median"]),
            "accelerator_s_per_million_tokens": hours.seconds_per_million(
                results.world_size(runs[0]), summary["tokens_per_s_median"]),
        })
    return out


def own_code(doc: dict) -> str | None:
    """The name of the own implementation a document of the own division measured (None: goodbench's)."""
    return own.implementation_name(doc)


def entry_rows(stored: Stored) -> list[dict]:
    """:func:`rows` of a file read once (its signer and recomputed figures reused), each with
    ``stale_rules``: why today's rules would refuse the file it keeps from older rules, or None;
    ``rules_version``: the rules it was stored under (none recorded: 1)."""
    stale, version = stale_rules(stored), validate.stored_under(stored.doc)
    return [{**row, "stale_rules": stale, "rules_version": version}
            for row in rows(stored.name, stored.doc, stored.signer, verified=True, figures=stored.figures)]


def stale_rules(stored: Stored) -> str | None:
    """"stored under rules vN; today's rules (vM) find K problems, first: …" for a file valid only
    under the rules it was stored with (its ``waived`` problems; "states no rules version (held to
    vN); …" for one that records none), else None."""
    if not stored.waived:
        return None
    import re

    n, code = len(stored.waived), re.search(r"\[([a-z0-9-]+)\]", stored.waived[0])
    return (f"{validate.stored_words(stored.doc)}; today's rules (v{validate.RULES_VERSION}) "
            f"find {n} problem{'' if n == 1 else 's'} in it" + (f" (first: {code.group(1)})" if code else ""))


def stored_run_rows(stored: Stored) -> list[dict]:
    """:func:`run_rows` of a file read once (its signer and recomputed figures reused)."""
    return run_rows(stored.name, stored.doc, stored.signer, verified=True, figures=stored.figures)


def copies(claims: Iterable[ownership.Claim]) -> dict[tuple[str, str], ownership.Verdict]:
    """Which runs among the stored files are not the record kept of their run: (file, run id) →
    its :class:`suite.trust.ownership.Verdict` (a copy, or disputed, and the run kept).

    ``claims``: every run of the files in the order the files were stored
    (:func:`suite.trust.ownership.claims`, :mod:`suite.store.ledger`). Each record that is one run
    with one stored before it — the same run id, step times, step-time fingerprint, curve under
    another seed, or suite run — is judged on that evidence alone: a copy, disputed when another
    key signed it, or kept (:func:`suite.trust.ownership.resolve`)."""
    claims = list(claims)
    run_ids = {(c.file, c.index): c.run_id for c in claims}
    return {(file, run_ids[(file, index)]): verdict for (file, index), verdict in ownership.resolve(claims).items()}


def with_copies(entries: pd.DataFrame, runs: pd.DataFrame,
                found: dict[tuple[str, str], ownership.Verdict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``copy_status`` ("copy" or "disputed") and ``copy_of`` (the fingerprint of the kept run's
    owner; None when it is unsigned) filled in on a run's row, and on the entry (file, workload,
    scale) holding it (a copy before a disputed run)."""
    if runs.empty or not found:
        return entries, runs
    runs = runs.copy()
    keys = list(zip(runs["file"], runs["run_id"]))
    runs["copy_status"] = pd.Series([found[k].status if k in found else None for k in keys],
                                    index=runs.index, dtype=object)
    runs["copy_of"] = pd.Series([found[k].original.owner if k in found else None for k in keys],
                                index=runs.index, dtype=object)
    by_entry: dict[tuple, tuple[str, str | None]] = {}
    for f, w, sc, status, owner in zip(runs["file"], runs["workload"], runs["scale"], runs["copy_status"],
                                       runs["copy_of"]):
        held = by_entry.get((f, w, sc))
        if status is not None and (held is None or held[0] != ownership.COPY):  # a copy says more
            by_entry[(f, w, sc)] = (status, owner)
    entries = entries.copy()
    marks = [by_entry.get(k) for k in zip(entries["file"], entries["workload"], entries["scale"])]
    entries["copy_status"] = pd.Series([m[0] if m else None for m in marks], index=entries.index, dtype=object)
    entries["copy_of"] = pd.Series([m[1] if m else None for m in marks], index=entries.index, dtype=object)
    return entries, runs


def with_seed_conflicts(entries: pd.DataFrame, runs: pd.DataFrame,
                        claims: list[ownership.Claim]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``seed_conflict`` on each run's row (and the entry holding it) whose curve another key's
    stored run holds under another seed (:func:`suite.trust.ownership.seed_conflicts`): "same curve
    as <file>'s seed N (another key)", both rows, neither demoted; computed from the stored files."""
    said: dict[tuple[str, str], list[str]] = {}
    for i, j in ownership.seed_conflicts(claims):
        for mine, other in ((claims[i], claims[j]), (claims[j], claims[i])):
            said.setdefault((mine.file, mine.run_id), []).append(
                f"same curve as {other.file}'s seed {other.seed} (another key)")
    if not said or runs.empty:
        return entries, runs
    tail = ": one seed label is wrong; a reproduction tells which"
    runs = runs.copy()
    texts = [said.get(k) for k in zip(runs["file"], runs["run_id"])]
    runs["seed_conflict"] = pd.Series(["; ".join(t) + tail if t else None for t in texts], index=runs.index, dtype=object)
    by_entry: dict[tuple, list[str]] = {}
    for f, w, sc, t in zip(runs["file"], runs["workload"], runs["scale"], texts):
        by_entry.setdefault((f, w, sc), []).extend(t or [])
    entries = entries.copy()
    marks = [by_entry.get(k) for k in zip(entries["file"], entries["workload"], entries["scale"])]
    entries["seed_conflict"] = pd.Series(["; ".join(m) + tail if m else None for m in marks], index=entries.index,
                                         dtype=object)
    return entries, runs


SUPERLINEAR_LIMIT = 1.10
"""The most scaling efficiency the leaderboard shows. N processes of the pinned global batch
each run 1/N of it, with the same work per sample and a collective added: more than N times the
1-process rate (cache effects of the smaller per-device batch aside, a few percent) says the
1-process baseline ran slower than the device allows, and any submitter can store a slow
1-rank run of their own. Above the limit the efficiency is left empty."""


def with_scaling_efficiency(frame: pd.DataFrame) -> pd.DataFrame:
    """Fill ``scaling_efficiency`` = samples/s(N) / (N × samples/s(1)) for entries of N > 1
    processes, against the best 1-process entry of the same system, workload, scale and division
    that the same submitter stands behind: one of the same file, or of a file signed by the same
    key (None where there is none).

    A system name is a submitter's text, not an identity: anyone can store a 1-rank entry under
    another's system name, and a slow one would have made that system's scaling look as good as
    they like (a 1-rank entry of another submitter gave an efficiency of 451.7). An unsigned
    entry is therefore compared only with its own file's 1-rank entry, and a copy
    (:func:`copies`) is no baseline. One's own slow 1-rank run cannot lift it beyond
    :data:`SUPERLINEAR_LIMIT` either: above it, the efficiency is left empty."""
    if frame.empty:
        return frame
    keys = ["system", "workload", "scale", "division"]
    baselines: dict[tuple, list[tuple[str, str | None, float]]] = {}
    single = frame[(frame["world_size"] == 1) & frame["copy_of"].isna()]
    for row in single[keys + ["file", "signer", "samples_per_s"]].itertuples(index=False):
        if _number(row.samples_per_s):
            baselines.setdefault(tuple(row[:4]), []).append((row.file, row.signer, row.samples_per_s))
    efficiency = []
    for row in frame[keys + ["world_size", "samples_per_s", "file", "signer"]].itertuples(index=False):
        n, rate = row.world_size, row.samples_per_s
        own = [b for file, signer, b in baselines.get(tuple(row[:4]), [])
               if file == row.file or (row.signer is not None and signer == row.signer)]
        ok = n > 1 and bool(own) and _number(rate)
        value = rate / (n * max(own)) if ok else None
        efficiency.append(value if value is not None and value <= SUPERLINEAR_LIMIT else None)
    frame = frame.copy()
    frame["scaling_efficiency"] = pd.Series(efficiency, index=frame.index, dtype=object)
    return frame


def free_jobs(frame: pd.DataFrame) -> pd.Series:
    """Which entries are own code's free jobs: held to no goodbench target, never ranked or compared."""
    return (frame["division"] == own.DIVISION) & (frame["workload"] == own.FREE_JOB)


def one_clock(frame: pd.DataFrame) -> pd.Series:
    """Which entries are own code timed by one clock: some run of it not stamped by ``goodbench
    run-own``'s second clock on every rank (``second_clock`` not True: the code was run with plain ``python``
    or ``torchrun``), so
    its times are its own process's word, which code that replaces its clocks rewrites (issue 44,
    finding 6: 11,359 samples/s against 335 honest). Shown, never ranked."""
    return (frame["division"] == own.DIVISION) & (frame["second_clock"] != True)  # noqa: E712


def rankable(frame: pd.DataFrame) -> pd.Series:
    """Which entries may be ranked: full scale, neither a copy nor disputed (:func:`copies`), on a
    device the peak table bounds (:func:`known_peak`), for TTA a valid score, not an own
    implementation's free job (held to no goodbench target: measured and shown, never ranked) and
    not own code timed by one clock (:func:`one_clock`)."""
    bounded = (frame["known_peak"] == True) & ((frame["kind"] != "tta") | (frame["tta_valid"] == True))  # noqa: E712
    return (frame["scale"] == "full") & frame["copy_status"].isna() & bounded & ~free_jobs(frame) & ~one_clock(frame)


ONE_CLOCK_REASON = ("own code timed by one clock (self-timed): no second clock stamped all its steps and evaluations "
                    "(run it with goodbench run-own, in every process after a kill), or on a CPU its steps are "
                    "shorter than the 5 ms that clock holds, so its times are its own process's word")
"""Why own code without a second clock is not ranked (:func:`one_clock`; docs/rules.md, "A second clock"),
where which of the two is not known (a group of entries): :data:`UNSTAMPED_REASON` and
:data:`SHORT_STEPS_REASON` say each."""
UNSTAMPED_REASON = ("own code timed by one clock (self-timed): no second clock stamped all its steps and evaluations "
                    "(run it with goodbench run-own, in every process after a kill), so its times are its own "
                    "process's word")
"""Why own code is not ranked when a run's edges were not stamped whole by a second clock (``clock_gaps``)."""
SHORT_STEPS_REASON = ("own code timed by one clock (self-timed): goodbench run-own's second clock stamped it, but on a "
                      "CPU that clock holds steps of 5 ms or more and its median step is shorter, so its step times "
                      "are its own process's word")
"""Why own code is not ranked when the second clock stamped it on a CPU but its steps are too short for
that clock to hold (``short_steps``: :func:`suite.figures.clock_cover.steps_held`)."""
STEPS_SUM_REASON = ("own code timed by one clock (self-timed): goodbench run-own's second clock stamped it, but on a "
                    "CPU its steady steps' sum and that clock's disagree beyond 5% + 75 ms, so its step times are its "
                    "own process's word")
"""Why own code is not ranked when the second clock stamped it on a CPU, its steps long enough, but
their sum disagrees with the clock's (``steps_sum``: :data:`suite.figures.clock_cover.SUM_OFF`)."""
ONE_CLOCK_REASONS = (ONE_CLOCK_REASON, UNSTAMPED_REASON, SHORT_STEPS_REASON, STEPS_SUM_REASON)
"""Every reason own code timed by one clock is given (:func:`one_clock_reasons`)."""


def one_clock_reasons(row: dict) -> list[str]:
    """Why one own-code entry timed by one clock is not ranked: each of :data:`UNSTAMPED_REASON` and
    :data:`SHORT_STEPS_REASON` and :data:`STEPS_SUM_REASON` that applies, or :data:`ONE_CLOCK_REASON` where the row says neither."""
    found = [reason for column, reason in (("clock_gaps", UNSTAMPED_REASON), ("short_steps", SHORT_STEPS_REASON),
                                           ("steps_sum", STEPS_SUM_REASON))
             if row.get(column) == True]  # noqa: E712 - numpy bool
    return found or [ONE_CLOCK_REASON]

RANKING_GROUPS = {
    "ranked": None,
    "copy": "a copy: another stored file holds its runs too, and that one is kept (its owner's signed file, else "
            "the first stored; disputed: signed by another key, stored later)",
    "smoke": "smoke scale: a quick check, not a benchmark",
    "free-job": "own code's free job: held to no goodbench target",
    "one-clock": ONE_CLOCK_REASON,
    "no-known-peak": "no known peak: a device the peak table cannot bound (goodbench peaks)",
    "not-ranked": "too many seeds missed the target",
}
"""The group each entry is shown in (the column ``ranking``), with why it is not ranked (the column
``ranking_reason``; None for a ranked entry), in the order a workload's page lists them."""


def ranking(frame: pd.DataFrame) -> pd.Series:
    """Each entry's group of :data:`RANKING_GROUPS`: a copy (or disputed) first, then a smoke
    result, own code's free job, own code timed by one clock (:func:`one_clock`), a ranked entry
    (:func:`rankable`), a full-scale one on a device without a known peak, and what is left at full
    scale (a TTA score that is not valid)."""
    if frame.empty:
        return pd.Series(dtype=object, index=frame.index)
    group = pd.Series("not-ranked", index=frame.index, dtype=object)
    group[(frame["known_peak"] != True)] = "no-known-peak"  # noqa: E712
    group[rankable(frame)] = "ranked"
    group[one_clock(frame)] = "one-clock"
    group[free_jobs(frame)] = "free-job"
    group[frame["scale"] == "smoke"] = "smoke"
    group[frame["copy_status"].notna()] = "copy"
    return group


def with_ranking(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the columns ``ranking`` and ``ranking_reason`` (:data:`RANKING_GROUPS`)."""
    group = ranking(frame)
    return frame.assign(ranking=group, ranking_reason=group.map(RANKING_GROUPS))


def unranked_reasons(row: dict) -> list[str]:
    """Why one entry (a row of :data:`ENTRY_COLUMNS`) will not be ranked, in words: each condition
    of :func:`rankable` it fails, and the flags the pages show beside it (under load, partial or
    failed runs, stale rules). Empty: it is ranked (unless a copy, known only against the store)."""
    reasons = []
    if row.get("scale") != "full":
        reasons.append(f"{row.get('scale')} scale: only full-scale results are ranked")
    if row.get("known_peak") is not True:
        reasons.append("no known peak for its device (goodbench peaks): its MFU cannot be bounded")
    if row.get("kind") == "tta" and row.get("tta_valid") is not True:
        reasons.append("no valid time-to-target score: too few seeds reached the target")
    if row.get("division") == own.DIVISION and row.get("workload") == own.FREE_JOB:
        reasons.append("own code's free job: held to no goodbench target")
    if row.get("division") == own.DIVISION and row.get("second_clock") != True:  # noqa: E712 - numpy bool
        reasons += one_clock_reasons(row)
    flags = [f"{int(n)} partial run{'s' if n != 1 else ''} (interrupted)"
             for n in [row.get("partial_runs")] if isinstance(n, (int, float)) and n > 0]
    flags += ["measured under load"] if isinstance(row.get("under_load"), str) else []
    flags += [row["stale_rules"]] if isinstance(row.get("stale_rules"), str) else []
    return reasons + [f"also flagged: {f}" for f in flags] if reasons else [f"ranked, flagged: {f}" for f in flags]


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in leaderboard order: TTA ascending (valid first), else throughput descending."""
    if frame.empty:
        return frame
    tta_rows = frame[frame["kind"] == "tta"].sort_values(["tta_valid", "score_s"], ascending=[False, True],
                                                         na_position="last", kind="stable")
    tput_rows = frame[frame["kind"] != "tta"].sort_values("samples_per_s", ascending=False,
                                                          na_position="last", kind="stable")
    return pd.concat([tta_rows, tput_rows])


def pareto_front(frame: pd.DataFrame, x: str = "energy_per_sample_j", y: str = "samples_per_s") -> pd.DataFrame:
    """Entries no other entry beats on both less ``x`` and more ``y``, in increasing ``x``."""
    points = frame.dropna(subset=[x, y]).sort_values([x, y], ascending=[True, False], kind="stable")
    best = points[y].cummax().shift(fill_value=-np.inf)
    return points[points[y] > best]


def best_per_system(frame: pd.DataFrame) -> pd.DataFrame:
    """Each system's best entry per (workload, scale, division): lowest valid TTA score, else
    highest throughput. A system is its name and signer (:data:`suite.leaderboard.systems.IDENTITY`:
    another key's file under the same name is another system's, and a name's unsigned files are
    one system apart). Divisions are never mixed (an own implementation's quality is
    self-reported), and own code's free jobs, each its own job, are left out."""
    frame = frame[~free_jobs(frame)] if not frame.empty else frame
    if frame.empty:
        return frame
    order = ranked(frame)  # drop_duplicates holds two missing signers (unsigned files) equal
    return order.drop_duplicates(subset=[*IDENTITY, "workload", "scale", "division"], keep="first")
