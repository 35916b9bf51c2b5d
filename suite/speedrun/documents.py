"""The stored speedrun documents (results/speedrun/track_N.json) read back for the site, through
the validator's hostile-safe reader: regular files only, bounded, strict JSON; then every field
checked (its type, finite numbers, bounded sizes, the track matching the file's name, every log
under its track's folder, no string holding a control, bidi or invisible character, as no MLPerf
document holds one: :func:`suite.record.text.refused_string_at`) and each record's runs (those
of the folder its log link points into), figures, baselines (and its claim in seconds) derived
again from the document's own runs (and claim text). A document that fails any check is not
read: one line says why, as for any other stored file the site does not show. A document naming
a commit with a manifest (:mod:`suite.speedrun.manifest`: the pinned one) holds exactly that
commit's logs (path, sha256, record). Beyond that these checks hold a document to itself only:
its runs' figures, commit and upstream are stored figures, and anyone who edits them
consistently is not caught (self-reported)."""
from __future__ import annotations

import datetime as dt
import math
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from suite.record import reading
from suite.record.text import cut, refused_string_at
from suite.speedrun import manifest

SUBFOLDER = "speedrun"
MAX_BYTES = 32 * 2 ** 20  # the larger track's document is about 1.1 MB
FORMAT = 4  # 2: the field upstream (2026-11-30); 3: each run's untimed_step_lines; 4: each baseline's other_gpus
MAX_ITEMS = 100_000  # records, runs, problems, validations of one run
MAX_TEXT = 20_000  # characters of one string (a README cell, a path, a flag)
MAX_INT = 10 ** 15  # an integer beyond this is no figure of the history (and fits pandas' Int64)
_HEX = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_NAME = re.compile(r"track_([12])\.json")

# kind of each field: "int", "num", "str", "bool", "[str]", "date", "sha", "path" and "?" for None allowed
_DOC = {"format": "int", "source": "str", "track": "int", "name": "str", "target_val_loss": "num",
        "readme_sha256": "sha", "commit": "commit?", "upstream": "commit?", "records": "list", "runs": "list", "problems": "[str]"}
_RECORD = {"record": "int", "row": "int", "claimed": "str", "claimed_s": "num?", "description": "str",
           "description_links": "[str]", "date": "date?", "log_link": "str?", "pr": "str?", "contributors": "str",
           "track": "int", "runs_folder": "path?", "runs": "int", "run_logs": "[path]", "measured_s": "num?",
           "linked_train_time_s": "num?", "measured_over_claimed": "num?", "mean_val_loss": "num?",
           "p_value": "num?", "verdict": "str", "accelerator": "str?", "accelerators": "int?", "flags": "[str]",
           "baselines": "list", "tokens_per_s": "num?", "tokens_per_s_per_gpu": "num?", "mfu_estimate": "num?",
           "mfu_peak": "str?"}
_BASELINE = {"folder": "str", "runs": "int", "other_gpus": "int", "baseline_runs": "int", "baseline_mean_s": "num",
             "speedup_s": "num", "ci95_s": "[num]", "speedup_ratio": "num?"}
_SPEEDUP = ("baseline_runs", "baseline_mean_s", "speedup_s", "ci95_s", "speedup_ratio")  # only with an interval
_RUN = {"log": "path", "log_sha256": "sha", "bytes": "int", "format": "str", "planned_step": "int?",
        "final_step": "int?", "validations": "list", "train_time_s": "num?", "untimed_step_lines": "int?", "step_avg_ms": "num?",
        "reached_planned_step": "bool?", "val_loss": "num?", "gpu": "str?", "gpus": "int?", "torch": "str?",
        "cuda": "str?", "triton": "str?", "python": "str?", "peak_memory_mib": "int?", "source_sha256": "sha?",
        "tokens_per_step": "int?", "tokens_per_step_from": "str", "tokens_per_s": "num?",
        "tokens_per_s_per_gpu": "num?", "flops_per_token": "num?", "flops_per_token_from": "str",
        "mfu_estimate": "num?", "mfu_peak": "str?", "notes": "[str]", "record": "int?", "baseline_of": "int?"}
FORMATS = ("modded-nanogpt", "llm.c")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -MAX_INT <= v <= MAX_INT


def _is_num(v: Any) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v) and abs(v) <= MAX_INT


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and len(v) <= MAX_TEXT


def _is_path(v: Any) -> bool:
    """A repository path under records/, normalised (no ``..``, no absolute path)."""
    return (_is_str(v) and v.startswith("records/") and "\\" not in v
            and posixpath.normpath(v) == v and ".." not in v.split("/"))


def _is_date(v: Any) -> bool:
    if not (isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v)):
        return False
    try:
        dt.date.fromisoformat(v)
    except ValueError:
        return False
    return True


_KINDS = {"int": _is_int, "num": _is_num, "str": _is_str, "path": _is_path, "date": _is_date,
          "bool": lambda v: isinstance(v, bool), "sha": lambda v: isinstance(v, str) and bool(_HEX.fullmatch(v)),
          "commit": lambda v: isinstance(v, str) and bool(_COMMIT.fullmatch(v)),
          "list": lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS}


def _fits(value: Any, kind: str) -> bool:
    if kind.endswith("?"):
        return value is None or _fits(value, kind[:-1])
    if kind.startswith("["):
        inner = kind[1:-1]
        return isinstance(value, list) and len(value) <= MAX_ITEMS and all(_fits(v, inner) for v in value)
    return _KINDS[kind](value)


def _fields(obj: Any, schema: dict[str, str], what: str, optional: tuple[str, ...] = ()) -> str | None:
    if not isinstance(obj, dict):
        return f"{what} is not an object"
    missing = [k for k in schema if k not in obj and k not in optional]
    if missing:
        return f"{what} lacks {missing[0]}"
    extra = [k for k in obj if k not in schema]
    if extra:
        return f"{what} has an unknown field {str(extra[0])[:40]!r}"
    bad = next((k for k, kind in schema.items() if k in obj and not _fits(obj[k], kind)), None)
    return None if bad is None else f"{what}'s {bad} is not a {schema[bad].rstrip('?')} within bounds"


def _validation(v: Any) -> bool:
    return (isinstance(v, list) and len(v) == 3 and _is_int(v[0]) and v[0] >= 0
            and (v[1] is None or _is_num(v[1])) and (v[2] is None or _is_num(v[2])))


def check(doc: Any, file_name: str) -> str | None:
    """Why a stored track document is not read (one line), or ``None`` when every field is of
    its type and bounds and every record's figures are those its runs give."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        return (f"not a speedrun document of format {FORMAT} (format {str(found)[:20]} found): "
                "import the checkout again")
    m = _NAME.fullmatch(file_name)
    if m is None:
        return "not a track's file name (track_1.json or track_2.json)"
    where = refused_string_at(doc)
    if where is not None:
        return (f"{cut(where, 120)}: a control, bidi or invisible character in a string (the importer writes "
                "them as \\uXXXX): import the checkout again")
    why = _fields(doc, _DOC, "the document")
    if why:
        return why
    if doc["track"] != int(m.group(1)):
        return f"its track {doc['track']} is not that of its file name"
    why = _provenance(doc)
    if why:
        return why
    from suite.speedrun.records import TRACKS

    folder = TRACKS[doc["track"]].folder
    for i, run in enumerate(doc["runs"]):
        why = _fields(run, _RUN, f"run {i + 1}")
        if why:
            return why
        if run["format"] not in FORMATS or len(run["validations"]) > MAX_ITEMS \
                or not all(_validation(v) for v in run["validations"]):
            return f"run {i + 1}'s format or validations are not of a log's"
        if not run["log"].startswith(folder + "/"):
            return f"run {i + 1}'s log is not under its track's folder {folder}/"
        if run["untimed_step_lines"] is not None and run["untimed_step_lines"] < 0:
            return f"run {i + 1}'s untimed_step_lines is negative"
        if (run["train_time_s"] is None) != (run["untimed_step_lines"] is None):
            return f"run {i + 1}'s untimed_step_lines is not given with its train_time, or given without one"
    why = manifest.difference(doc)
    if why:
        return f"{why}: import the checkout again"
    for i, rec in enumerate(doc["records"]):
        why = _fields(rec, _RECORD, f"record row {i + 1}")
        if why:
            return why
        if rec["track"] != doc["track"] or not 0 <= rec["record"] < 10 ** 6 or rec["row"] != i + 1:
            return f"record row {i + 1}: its track, number or row is not its place's"
        why = next((w for b in rec["baselines"] if (w := _fields(b, _BASELINE, f"record row {i + 1}'s baseline", _SPEEDUP))), None)
        if why:
            return why
    return _derived(doc)


def _provenance(doc: dict) -> str | None:
    """Why a document's commit and upstream disagree with each other or with the upstream commits
    this goodbench pins (None: they agree). That is all a stored document's provenance can be
    checked for: the logs are not stored, so whether its files were that commit's is the
    importer's word (self-reported), but for their paths, hashes and records, which a pinned
    commit's manifest lists (:func:`suite.speedrun.manifest.difference`)."""
    from suite.speedrun.tree import PINNED

    commit, upstream = doc["commit"], doc["upstream"]
    if upstream is not None and (upstream not in PINNED or commit is None):
        return f"its upstream {upstream[:12]} is not a commit of modded-nanogpt this goodbench pins, or names no commit"
    if commit in PINNED and upstream != commit:
        return f"its commit {commit[:12]} is pinned upstream's, and its upstream is not that commit"
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _derived(doc: dict) -> str | None:
    """Each record's figures derived again from the document's runs (:func:`records.figures`);
    why the first that disagrees does, else ``None``."""
    from suite.speedrun import readme, records

    track = doc["track"]
    if doc["target_val_loss"] != records.TRACKS[track].target:
        return f"its target {doc['target_val_loss']} is not track {track}'s"
    runs = {r["log"]: r for r in doc["runs"]}
    if len(runs) != len(doc["runs"]):
        return "a log is listed twice among its runs"
    rows, by_folder = [], _logs_by_folder(runs)
    for rec in doc["records"]:
        why = _runs_of(rec, runs, by_folder, records.TRACKS[track].folder)
        if why:
            return f"record {rec['record']}: {why}"
        rows.append((rec["record"], [runs[p] for p in rec["run_logs"]], rec["runs_folder"]))
    for rec, (found, flags, beside, baseline_flags) in _record_parts(doc, runs, rows):
        if not _same(rec["claimed_s"], readme.claimed_seconds(rec["claimed"])):
            return (f"record {rec['record']}'s claimed_s ({str(rec['claimed_s'])[:40]}) is not what its claim "
                    f"{rec['claimed'][:40]!r} states: import the checkout again")
        # the stored flags before those its runs give are its selection's, each blocking "met" as
        # every selection flag does (records.decide, as the import decides it)
        words = records.texts(flags)
        cut = len(rec["flags"]) - len(words)
        ours = cut >= 0 and rec["flags"][cut:] == words
        selection = rec["flags"][:cut] if ours else rec["flags"]
        found["verdict"] = records.decide(found["verdict"], records.stored_flags(selection) + flags, baseline_flags)
        wrong = next((k for k in records.FIGURES if not _same(rec[k], found[k])), None)
        if wrong:
            return (f"record {rec['record']}'s {wrong} ({str(rec[wrong])[:40]}) is not what its runs give "
                    f"({str(found[wrong])[:40]}): import the checkout again")
        if not ours:
            return f"record {rec['record']}'s flags are not those its runs give: import the checkout again"
        left = _left_out(rec, by_folder)
        if left and records.left_out_flag(left).text not in selection:
            return (f"record {rec['record']}'s flags leave out the {left} log(s) of its folder it does not count: "
                    "import the checkout again")
        unread = next((f.text for f in records.missing_flags(rec["runs_folder"], doc["problems"],
                                                             records.TRACKS[track].folder)
                       if f.text not in selection), None) if rec["runs_folder"] else None
        if unread:
            return f"record {rec['record']}'s flags leave out its problems' \"{unread}\": import the checkout again"
        why = _baselines_agree(rec, beside)
        if why:
            return f"record {rec['record']}'s {why}: import the checkout again"
    return None


def _record_parts(doc: dict, runs: dict[str, dict],
                  rows: list[tuple[Any, list[dict], str | None]]) -> Iterator[tuple[dict, tuple]]:
    """Each record of ``doc`` with what its runs give (:func:`records.record_parts`), given its
    ``rows`` (its number, its runs, its runs folder) and the document's ``runs`` by log."""
    from suite.speedrun import records
    from suite.speedrun.tree import link_target

    track = doc["track"]
    copied = records.copied_runs(track, rows, runs)
    for rec, (_, chosen, folder) in zip(doc["records"], rows):
        target = link_target(rec["log_link"]) if rec["log_link"] else None
        yield rec, records.record_parts(track, rec["claimed_s"], chosen, runs.get(target) if target else None,
                                        folder, runs, copied)


def flag_codes(doc: dict) -> list[list[str]]:
    """The codes of each record's flags (:class:`records.Flag`), in the order of its stored words,
    of a document :func:`check` read: those its runs give, derived again (a stored flag holds its
    words alone), after its selection's (:data:`records.STORED`)."""
    from suite.speedrun import records

    runs = {r["log"]: r for r in doc["runs"]}
    rows = [(rec["record"], [runs[p] for p in rec["run_logs"]], rec["runs_folder"]) for rec in doc["records"]]
    codes = []
    for rec, (_, flags, _, _) in _record_parts(doc, runs, rows):
        given = [f.code for f in flags]
        codes.append([records.STORED] * (len(rec["flags"]) - len(given)) + given)
    return codes


def _logs_by_folder(runs: dict[str, dict]) -> dict[str, list[str]]:
    """The document's logs by the folder directly holding them, those named baseline* left out."""
    from suite.speedrun import records

    by_folder: dict[str, list[str]] = {}
    for p in runs:
        if not records.is_baseline(posixpath.basename(p)):
            by_folder.setdefault(posixpath.dirname(p), []).append(p)
    return by_folder


def _left_out(rec: dict, by_folder: dict[str, list[str]]) -> int:
    """How many logs of a record's runs folder (not named baseline*) the document holds that its
    run_logs leave out (another format or GPU count than the linked log)."""
    folder = rec["runs_folder"]
    return 0 if folder is None else len(by_folder.get(folder, [])) - len(rec["run_logs"])


def _runs_of(rec: dict, runs: dict[str, dict], by_folder: dict[str, list[str]], track_folder: str) -> str | None:
    """Why a record's runs folder or runs are not those its README log link gives, from the
    document's runs (:func:`records.select`): the folder the link names (or the linked file's),
    under the track's folder, and every log directly in it, not named baseline*, of the linked
    log's format and GPU count. ``None`` when they are."""
    from suite.speedrun.tree import link_target

    lacking = next((p for p in rec["run_logs"] if p not in runs), None)
    if lacking:
        return f"counts a log not among its runs ({lacking[:200]})"
    folder = rec["runs_folder"]
    if folder is None:
        return "lists runs without a runs folder" if rec["run_logs"] or rec["baselines"] else None
    target = link_target(rec["log_link"]) if rec["log_link"] else None
    if target is None or not folder.startswith(track_folder + "/") or folder not in (target, posixpath.dirname(target)):
        return f"its runs folder {folder[:200]} is not the folder its log link points into, under {track_folder}/"
    chosen = [runs[p] for p in by_folder.get(folder, [])]
    linked = runs.get(target)
    if linked is not None:
        chosen = [r for r in chosen if r["format"] == linked["format"] and r["gpus"] == linked["gpus"]]
    if sorted(r["log"] for r in chosen) != rec["run_logs"]:
        return f"its run_logs are not the logs of its runs folder {folder[:200]} alike its linked log"
    return None


def _baselines_agree(rec: dict, found: list[dict]) -> str | None:
    """Why a record's stored baselines are not those its document's runs give (``found``:
    :func:`records.baselines`), or ``None``."""
    if [b["folder"] for b in rec["baselines"]] != [b["folder"] for b in found]:
        return "baseline folders are not those beside its runs folder"
    for stored, derived in zip(rec["baselines"], found):
        wrong = next((k for k in _BASELINE if k in stored or k in derived
                      if not _same(stored.get(k), derived.get(k))), None)
        if wrong:
            return (f"baseline {stored['folder'][:200]}'s {wrong} ({str(stored.get(wrong))[:40]}) is not what its "
                    f"runs give ({str(derived.get(wrong))[:40]})")
    return None


def load_all(results_dir: str | Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """Every readable track document under ``<results_dir>/speedrun/`` (track order) and the
    files not read, with why (file name, one line)."""
    docs: list[dict] = []
    bad: list[tuple[str, str]] = []
    for path, doc in reading.load_folder(Path(results_dir) / SUBFOLDER, "track_*.json", MAX_BYTES, bad):
        why = check(doc, path.name)
        if why:
            bad.append((path.name, why))
        else:
            docs.append(doc)
    return sorted(docs, key=lambda d: d["track"]), bad
