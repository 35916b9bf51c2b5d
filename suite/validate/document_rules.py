"""Rules over the whole document (docs/rules.md): division, timestamps, seeds, run ids, step-time
sequences, seed counts and the per-workload summary. Each is registered with the codes it may raise and runs on
a document that passed the walk and the schema, with the runs that passed the schema."""
from __future__ import annotations

import datetime as dt
from typing import Any

from suite.figures import derive, tta
from suite.figures import summary as summary_figures
from suite.record.results import division
from suite.record.text import normal_name, safe
from suite.trust import ownership
from suite.trust.labels import label_refusal
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V7, V8, V9, came_into_force, newer_record, parse_timestamp
from suite.validate.tolerance import CLOCK_SLACK, same
from workloads import own
from workloads.pinned import SEEDS

code("division", "open_changes missing for an open result, or present for a closed or own one; an own "
                 "implementation's result without settings.implementation, or another with it")
code("timestamp", "a timestamp that is not a date and time")
code("future-timestamp", "a timestamp in the future")
code("time-order", "times not positive or not in order")
code("duplicate-seed", "a seed used twice for one workload and scale")
code("duplicate-run-id", "a run id used twice in one file")
code("duplicate-steps", "one run's step times recorded twice: in one file, or already stored in another")
code("seed-count", "fewer seeds than the scale requires")
code("seed-set", "closed-division seeds other than the first N of the pinned list")
code("summary-mismatch", "the per-workload summary differs from what the runs give")
code("name-form", "a system name not in its shown form: not NFC, or a space at an end or doubled", since=V7)
code("name-trust", "a name the site's rows show (the system's, its accelerator's, own code's) holding a word of the "
                   "site's trust labels (reproduced, trusted, signed, disputed, …) or a letter that is not Latin; "
                   "such a word in a ceiling's method, a figure's status or a rank's host",
     since=V8)
code("load-not-recorded", "a run of a file naming rules v8 or later, or dated since v8, without its host-load record "
                          "(every goodbench writing them records it; without it a run measured under load would not "
                          "say so)", since=V9)

LOAD_RECORDED_SINCE = V8
"""The first rules version whose every file records each run's host load (``host_load``, recorded
since 2026-11-27, before v8 came into force): an older file's runs may lack it."""

SHOWN_NAMES = (("system", "name"), ("system", "accelerator", "name"), ("settings", "implementation", "name"),
               ("settings", "implementation", "trains"))
"""The submitter's free text the leaderboard's rows show beside the site's own labels (the
accelerator's name is matched with the peak table, and extra words pass that match; what own code
declares it trains stands under its name on every row: "trains reproduced by a trusted reviewer, two
clocks agree" was shown there, trial 13)."""

Runs = list[tuple[int, dict]]


@document_rule("division")
def _check_division(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """An open result declares its changes; a closed one changes nothing; an own implementation's
    result describes its code (settings.implementation), and only it does."""
    described = doc["settings"].get("implementation") is not None
    if (division(doc) == own.DIVISION) != described:
        return [Problem("division", "settings.implementation",
                        "an own-division result describes its code in settings.implementation" if not described
                        else "settings.implementation belongs to an own-division result (division 'own')")]
    changes = doc["settings"].get("open_changes", [])
    if division(doc) == "open" and not changes:
        return [Problem("division", "settings.open_changes", "an open-division result must declare each change")]
    if division(doc) == "closed" and changes:
        return [Problem("division", "settings.open_changes",
                        "a closed-division result changes nothing; declare the division open")]
    if division(doc) == own.DIVISION and changes:
        return [Problem("division", "settings.open_changes",
                        "an own implementation declares its step in settings.implementation, not in open_changes")]
    return []


@document_rule("timestamp", "future-timestamp", "time-order")
def _check_timestamps(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Timestamps are dates, not in the future; every run starts and ends by the file's creation."""
    problems = []
    created = parse_timestamp(doc["created_at"])
    if created is None:
        return [Problem("timestamp", "created_at", "not a valid date and time")]
    if created > now + CLOCK_SLACK:
        ahead = (created - now).total_seconds()
        problems.append(Problem("future-timestamp", "created_at",
                                f"{doc['created_at']} is in the future ({ahead:.0f} s after this machine's clock; "
                                f"at most {CLOCK_SLACK.total_seconds():.0f} s): a file is written before it is "
                                "submitted (check the clocks, or submit later)"))
    for i, run in enumerate(doc["runs"]):  # every run with a start stamp, also one the schema refused
        if not isinstance(run, dict) or not isinstance(run.get("started_at"), str):
            continue
        started = parse_timestamp(run["started_at"])
        field = f"runs[{i}].started_at"
        if started is None:
            problems.append(Problem("timestamp", field, "not a valid date and time"))
        elif started > created:
            problems.append(Problem("time-order", field, "the run started after the file was created"))
        elif isinstance(run.get("wall_s"), (int, float)) and \
                started + dt.timedelta(seconds=min(run["wall_s"], 1e9) - 2) > created:
            # both stamps are truncated to the second: 2 s of slack
            problems.append(Problem("time-order", f"runs[{i}].wall_s",
                                    "the run ends after the file was created"))
    return problems


@document_rule("duplicate-seed")
def _check_seeds(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A seed appears once per workload and scale (a throughput workload's once per repeat number)."""
    seen: dict[tuple, int] = {}
    problems = []
    for i, run in runs:
        # goodbench run --repeat N: a throughput workload's seed N times, numbered; a TTA score is over distinct seeds
        repeat = run.get("repeat", 1) if run["workload"]["kind"] == "throughput" else 1
        key = (run["workload"]["id"], run["scale"], run["seed"], repeat)
        if key in seen:
            again = f" (repeat {repeat})" if "repeat" in run and run["workload"]["kind"] == "throughput" else ""
            problems.append(Problem("duplicate-seed", f"runs[{i}].seed",
                                    f"seed {run['seed']}{again} of {key[0]} already used by runs[{seen[key]}]"))
        seen.setdefault(key, i)
    return problems


@document_rule("duplicate-run-id")
def _check_run_ids(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Every run has its own run id."""
    seen: dict[str, int] = {}
    problems = []
    for i, run in runs:
        if run["run_id"] in seen:
            problems.append(Problem("duplicate-run-id", f"runs[{i}].run_id",
                                    f"already the id of runs[{seen[run['run_id']]}]"))
        seen.setdefault(run["run_id"], i)
    return problems


@document_rule("duplicate-steps")
def _check_step_sequences(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """No two runs have the same step times (suite.trust.ownership.steps_key): one run is recorded once."""
    seen: dict[str, int] = {}
    problems = []
    for i, run in runs:
        key = ownership.steps_key(run)
        if key is None:
            continue
        if key in seen:
            problems.append(Problem("duplicate-steps", f"runs[{i}].step_times_s",
                                    f"the step times of runs[{seen[key]}]: one run recorded twice"))
        seen.setdefault(key, i)
    return problems


@document_rule("seed-count", "seed-set")
def _check_seed_counts(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Full-scale TTA: at least 5 distinct seeds per workload; closed: seeds 1..N of the pinned list."""
    if "reproduces" in doc["settings"]:  # a reproduction's runs are the ones it names of another file
        return []
    by_workload: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for i, run in runs:
        by_workload.setdefault((run["workload"]["id"], run["scale"]), []).append((i, run))
    problems = []
    for (wid, scale), group in by_workload.items():
        seeds = sorted({run["seed"] for _, run in group})
        first = group[0][0]
        required = derive.required_seeds(scale, group[0][1]["workload"]["kind"])
        if len(seeds) < required:
            problems.append(Problem("seed-count", f"runs[{first}].seed",
                                    f"{wid} at {safe(scale)} scale has {len(seeds)} distinct seeds; "
                                    f"time to target needs {required}"))
        if division(doc) == "closed" and seeds != list(SEEDS[:len(seeds)]):
            problems.append(Problem("seed-set", f"runs[{first}].seed",
                                    f"{wid} seeds {safe(seeds)} are not the first {len(seeds)} of the "
                                    f"pinned list {list(SEEDS)}"))
    return problems


@document_rule("summary-mismatch")
def _check_summary(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """The per-workload summary, when present, is what the runs give (TTA score included)."""
    if "summary" not in doc or len(runs) != len(doc["runs"]):
        return []  # no summary, or runs already refused
    expected = derive.summary(doc["runs"])
    reported: dict[str, Any] = doc["summary"]
    if set(reported) != set(expected):
        return [Problem("summary-mismatch", "summary",
                        f"covers {sorted(map(safe, reported))}, the runs give {sorted(expected)}")]
    problems = []
    for key, want in expected.items():
        got = reported[key]
        for name, value in want.items():
            if not same(got.get(name), value) and not (name == "tta" and _scored_before(got.get(name), key, doc)):
                problems.append(Problem("summary-mismatch", f"summary.{key}.{name}",
                                        "differs from what the runs give"))
    return problems


def _scored_before(got: Any, key: str, doc: dict) -> bool:
    """Whether a summary's TTA score is what goodbench's scorer gave before 2026-12-01
    (:func:`suite.figures.tta.score_before_2026_12_01`: one of two seeds missing scored the other's
    time): an honest file written then is not refused for it; its entry is scored anew."""
    group = summary_figures.groups(doc["runs"]).get(key, [])
    return bool(group) and same(got, tta.score_before_2026_12_01(summary_figures.tta_by_seed(group)))


@document_rule("name-form")
def _check_name_form(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """The system's name is written as the leaderboard shows it (NFC, single spaces, none at the ends)."""
    name = doc["system"]["name"]
    if not isinstance(name, str) or name == normal_name(name):
        return []
    return [Problem("name-form", "system.name", f"{safe(name)} is shown as {safe(normal_name(name))}: two systems "
                                                "would look the same; write it so")]


@document_rule("name-trust")
def _check_name_trust(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """No name the site shows reads as one of its trust labels (words of suite/trust/labels.py)."""
    problems = []
    for path in SHOWN_NAMES:
        name: Any = doc
        for key in path:
            name = name.get(key) if isinstance(name, dict) else None
        why = label_refusal(name, description=path[-1] == "trains") if isinstance(name, str) else None
        if why is not None:
            problems.append(Problem("name-trust", ".".join(path), why))
    ceilings = (doc.get("settings") or {}).get("matmul_ceiling")
    for precision, entry in (ceilings or {}).items() if isinstance(ceilings, dict) else ():
        for field, method in ((f"{precision}.method", (entry or {}).get("method")),
                              (f"{precision}.at_end.method", ((entry or {}).get("at_end") or {}).get("method"))):
            why = label_refusal(method) if isinstance(method, str) else None
            if why is not None:  # shown as the ceiling's method on the run page (trial 7)
                problems.append(Problem("name-trust", f"settings.matmul_ceiling.{field}",
                                        f"{why}; no method goodbench writes holds one"))
    for field, text in _shown_run_text(runs) + _pooled_load_names(doc):
        why = label_refusal(text)  # trial 11: "ʀᴇᴘʀᴏᴅᴜᴄᴇᴅ" in small capitals, not only the labels' words
        if why is not None:
            problems.append(Problem("name-trust", field, f"{why}; no such text goodbench writes holds one"))
    return problems



def _shown_run_text(runs: Runs) -> list[tuple[str, str]]:
    """The text of each run that its run page shows as goodbench's own, not marked self-reported:
    its figures' statuses (``metrics.mfu_status``, …), its telemetry warnings, the names of the
    processes that loaded the host, its communication probe's status and method, and its ranks'
    hosts and telemetry statuses in the rank table (trial 8 wrote "two clocks,
    reproduced by a trusted reviewer" into a status and a host, trial 9 into the probe's)."""
    found = []
    for i, run in runs:
        for key, text in (run.get("metrics") or {}).items():
            if key.endswith("_status") and isinstance(text, str):
                found.append((f"runs[{i}].metrics.{key}", text))
        warnings = (run.get("telemetry") or {}).get("warnings")  # trial 10: shown under "Telemetry warnings"
        for j, text in enumerate(warnings if isinstance(warnings, list) else []):
            if isinstance(text, str):
                found.append((f"runs[{i}].telemetry.warnings[{j}]", text))
        for when, snapshot in (run.get("host_load") or {}).items() if isinstance(run.get("host_load"), dict) else ():
            for j, busy in enumerate((snapshot or {}).get("busy") or [] if isinstance(snapshot, dict) else []):
                if isinstance(busy, dict) and isinstance(busy.get("name"), str):  # trial 10: "(reproduced)"
                    found.append((f"runs[{i}].host_load.{when}.busy[{j}].name", busy["name"]))
        comm = (run.get("distributed") or {}).get("communication")
        for key in ("status", "method"):  # trial 9
            text = comm.get(key) if isinstance(comm, dict) else None
            if isinstance(text, str):
                found.append((f"runs[{i}].distributed.communication.{key}", text))
        for j, rank in enumerate((run.get("distributed") or {}).get("ranks") or []):
            for key in ("host", "telemetry_status"):
                text = rank.get(key) if isinstance(rank, dict) else None
                if isinstance(text, str):
                    found.append((f"runs[{i}].distributed.ranks[{j}].{key}", text))
    return found


def _pooled_load_names(doc: dict) -> list[tuple[str, str]]:
    """The names of the processes that loaded a reproduction's pooled re-runs
    (``settings.reproduces.runs[].measuring.host_loads[].{start,during,end}.busy[].name``), which
    its run page shows beside the verdict as a run's own load is."""
    reproduces = (doc.get("settings") or {}).get("reproduces")
    entries = reproduces.get("runs") if isinstance(reproduces, dict) else None
    found = []
    for k, entry in enumerate(entries if isinstance(entries, list) else []):
        m = entry.get("measuring") if isinstance(entry, dict) else None
        loads = m.get("host_loads") if isinstance(m, dict) else None
        for j, load in enumerate(loads if isinstance(loads, list) else []):
            for when, snap in load.items() if isinstance(load, dict) else ():
                for b, busy in enumerate((snap.get("busy") or []) if isinstance(snap, dict) else []):
                    if isinstance(busy, dict) and isinstance(busy.get("name"), str):
                        found.append((f"settings.reproduces.runs[{k}].measuring.host_loads[{j}].{when}.busy[{b}].name",
                                      busy["name"]))
    return found


@document_rule("load-not-recorded")
def _check_load_recorded(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """Each run of a file naming rules v8 or later, or dated on or after v8 came into force, records
    the host's load at its start and end, as every goodbench writing them does: without it, a run
    measured under load would not say so. The date counts whatever version the file names (an
    edited ``rules_version`` once took the rule away); a file older than v8 stays as it was.

    The record itself stays self-reported (deleted, a loaded run once read "host load not recorded
    (dated before goodbench recorded it)" instead)."""
    version = doc.get("rules_version", 1)
    created = parse_timestamp(doc["created_at"]) if isinstance(doc.get("created_at"), str) else None
    since = came_into_force(LOAD_RECORDED_SINCE)
    named = isinstance(version, int) and version >= LOAD_RECORDED_SINCE
    newer = newer_record(doc)
    if not named and newer is None and (created is None or since is None or created < since):
        return []
    why = (f"names v{version}" if named else f"holds {newer}, which only goodbench writing v{LOAD_RECORDED_SINCE} or "
           "later writes" if newer else f"is dated {doc['created_at']}, after v{LOAD_RECORDED_SINCE} came into force")
    return [Problem("load-not-recorded", f"runs[{i}].host_load",
                    f"no record of the host's load at the run's start and end, which every file of rules "
                    f"v{LOAD_RECORDED_SINCE} or later holds (this one {why})")
            for i, run in runs if not _snapshots(run.get("host_load"))]


def _snapshots(load: Any) -> bool:
    return isinstance(load, dict) and isinstance(load.get("start"), dict) and isinstance(load.get("end"), dict)
