"""``goodbench import mlperf``: MLCommons training result trees → imported documents.

The trees are found by :mod:`suite.mlperf.tree` (org, system, benchmark and result files as
result_summarizer finds them). The result files are read by worker processes, one file per task
(both cores by default), each streamed line by line through a size-bounded, link-refusing reader
(:mod:`suite.mlperf.files`) and reduced to a small run summary (:mod:`suite.mlperf.ingest`); no
list of a round's parsed lines is ever held. Runs come back in order, and a system × benchmark
is scored, written and dropped from memory as soon as its last run is in. A file or folder that
cannot be read gives one line naming it and the reason, and the import goes on.
"""
from __future__ import annotations

import contextlib
import json
import os
import statistics
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from suite.mlperf import division, documents, files, ingest, power, published, scoring, systems, tree
from suite.mlperf.tree import Group, parse_round  # noqa: F401  # the command's round check
from suite.record import gitcheck
from suite.record.text import github_address

PARALLEL_FROM = 8  # result files: below this, reading them here beats starting workers


@dataclass
class Outcome:
    """What an import did: rows (one per document) and problems (one line each)."""

    rows: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- reading the runs
def _read(task: ingest.RunTask) -> dict:
    """A worker's task: one result file → its run summary (:func:`suite.mlperf.ingest.read_run`)."""
    return ingest.read_run(task)


def _warm() -> None:
    """Import what the workers use before they fork (each then has it for free)."""
    import mlperf_logging.result_summarizer.result_summarizer  # noqa: F401

    ingest.checker_module()


def _results(tasks: list[ingest.RunTask], jobs: int) -> Iterator[dict]:
    if jobs <= 1 or len(tasks) < PARALLEL_FROM:
        yield from map(_read, tasks)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    chunk = max(1, min(16, len(tasks) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from pool.map(_read, tasks, chunksize=chunk)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------- documents
def _description(group: Group) -> tuple[dict, bytes]:
    """The system description (a JSON object) and its bytes; ValueError why not. Read as
    result_summarizer reads it (``json.load``: a key given twice keeps its last value), less
    NaN and Infinity."""
    try:
        raw = files.read_bytes(group.description)
    except files.Unreadable as exc:
        raise ValueError(f"the system description systems/{group.system}.json: {exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # some descriptions are not UTF-8
    try:
        desc = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"the system description systems/{group.system}.json is not JSON: "
                         f"{str(exc)[:200] or type(exc).__name__}") from None
    if not isinstance(desc, dict):
        raise ValueError(f"the system description systems/{group.system}.json is not a JSON object")
    return desc, raw


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    from suite import __version__

    try:
        logging_version: str | None = version("mlperf-logging")
    except PackageNotFoundError:
        logging_version = None
    return {"goodbench": __version__, "mlperf_logging": logging_version}


def _file_entry(group: Group, path: Path, raw: bytes) -> dict:
    import hashlib

    return {"path": systems.clean(group.rel(path), 1000), "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}


_RUN_KEYS = ("file", "status", "counted", "why", "at_round", "time_to_train_s", "init_s", "eval_s", "train_s",
             "other_s", "samples", "accuracy", "energy_j", "energy_note", "parse_errors", "unmeasured")


ABSENT_WHY = "absent from the copy of the round imported (listed by --absent): not read"


DUPLICATE = "duplicate"  # a run's status: a byte-identical copy of an earlier result log


def mark_duplicates(runs: list[dict]) -> list[dict]:
    """``runs`` with each result log byte-identical (same sha256) to an earlier one of the same
    folder, or stamping its ``run_start`` and ``run_stop`` at the very times an earlier one does,
    replaced by a note naming that one: one log is one run, counted once, however many times it
    was published (result_summarizer counts every copy). Trial V: the fastest log copied over the
    other nine, a line added to each, scored 20.2 minutes against 23.6."""
    first: dict[str, str] = {}
    stamped: dict[tuple, str] = {}
    out = []
    for r in runs:
        digest, stamps = r.get("sha256"), tuple(r["stamps"]) if isinstance(r.get("stamps"), (list, tuple)) else None
        earlier = first.get(digest) if digest else None
        same = "sha256" if earlier else None
        if earlier is None and stamps:
            earlier, same = stamped.get(stamps), "stamps"
        if earlier is not None:
            out.append({"file": r["file"], "sha256": digest, "bytes": r.get("bytes"), "git_blob": r.get("git_blob"),
                        "duplicate_of": earlier, "same": same})
            continue
        if digest:
            first[digest] = r["file"]
        if stamps:
            stamped[stamps] = r["file"]
        out.append(r)
    return out


def _run_entry(run: dict, unit: str | None) -> dict:
    """A run summary as the document stores it (an unreadable run: not counted, no figures; an
    absent one or a copy of another likewise, said so); ``unit``: the document's progress unit
    (a run counting in another says so)."""
    if run.get("absent"):
        return {"file": systems.clean(run["file"], 300), "status": "absent", "counted": False, "why": ABSENT_WHY}
    if run.get("duplicate_of"):
        how = ("byte-identical to {} (same sha256)" if run.get("same") != "stamps" else
               "stamps its run_start and run_stop at the times {} does (the same run)")
        return {"file": systems.clean(run["file"], 300), "status": DUPLICATE, "counted": False,
                "why": systems.clean(f"{how.format(run['duplicate_of'])}: one log, counted once (result_summarizer "
                                     "counts every copy)", 500)}
    if "error" in run:
        return {"file": systems.clean(run["file"], 300), "status": "unreadable", "counted": False,
                "why": systems.clean(run["error"], 500)}
    out = {key: run[key] for key in _RUN_KEYS if key in run}
    out["file"] = systems.clean(run["file"], 300)
    for key in ("status", "why", "energy_note"):
        if out.get(key) is not None:
            out[key] = systems.clean(out[key], 100 if key == "status" else 500)
    out.setdefault("why", None)
    if "accuracy" in out:
        out["accuracy"] = float(f"{out['accuracy']:.6g}")
    if run.get("unit") not in (None, unit):
        out["unit"] = run["unit"]
    return out


def logs_digest(runs: list[dict]) -> dict:
    """The result logs of a document as one entry: how many, their bytes, and the sha256 of
    their names and sha256s in order (``name<TAB>sha256`` lines; "-" for a log not read)."""
    import hashlib

    lines = "".join(f"{r['file']}\t{r.get('sha256') or '-'}\n" for r in runs)
    return {"files": len(runs), "bytes": sum(r.get("bytes") or 0 for r in runs),
            "sha256": hashlib.sha256(lines.encode("utf-8", "surrogateescape")).hexdigest()}


def _factor(group: Group) -> tuple[float | None, str | None, bytes | None]:
    """(RCP factor or None, why None, scaling.json's bytes where it has one)."""
    path = group.folder / "scaling.json"
    raw = None
    if os.path.lexists(path):
        with contextlib.suppress(files.Unreadable):
            raw = files.read_bytes(path)
    try:
        return scoring.scaling_factor(group.folder), None, raw
    except ValueError as exc:
        return None, systems.clean(str(exc), 300), raw


def _with_round_score(score: dict, benchmark: str, runs: list[dict], factor: float | None,
                      factor_problem: str | None) -> dict:
    """``score`` with ``at_round``, the score of the runs the round's own checker counted (those
    today's fails only on checks changed after the round count too), where it differs."""
    if not any(r.get("at_round") for r in runs):
        return score
    counted = [{**r, "counted": bool(r.get("counted") or r.get("at_round"))} for r in runs]
    then = scoring.official_score(benchmark, counted, factor, False, factor_problem)
    if then["minutes"] is None or then["minutes"] == score["minutes"]:
        return score
    return {**score, "at_round": {"minutes": then["minutes"], "status": then["status"],
                                  "runs_counted": then["runs_counted"]}}


def _without_absent(score: dict, group: Group, runs: int) -> dict:
    """The score of a folder the copy holds only part of (``group.absent``): no score where a
    result log or ``scaling.json`` is absent (never one of the part there is), no energy where a
    power log is; as computed otherwise."""
    lacking = len(group.absent_runs)
    if lacking or "scaling.json" in group.absent:
        what = (f"{lacking} of {runs} result logs are" if lacking else "scaling.json is")
        score = {**score, "minutes": None, "runs": runs, "runs_dropped": runs - score["runs_counted"],
                 "status": f"no score: {what} absent from the copy imported"}
        score.pop("at_round", None)
        score.pop("energy_j", None)
        score.pop("energy_status", None)
    elif any(p.startswith("power/") for p in group.absent):
        score = {**score, "energy_j": None, "energy_status": "not measured: power logs absent from the copy imported"}
    return score


def _provenance(group: Group, runs: list[dict], desc_raw: bytes, scaling_raw: bytes | None) -> dict | str:
    """:func:`suite.mlperf.published.verify` of the files a document is built from: its result
    logs read, its system description, scaling.json and its counted runs' power logs, against the
    round's pinned commit."""
    if group.round_note:
        return group.round_note
    read: dict[str, str | None] = {group.rel(group.description): gitcheck.blob_id(desc_raw)}
    if scaling_raw is not None:
        read[group.rel(group.folder / "scaling.json")] = gitcheck.blob_id(scaling_raw)
    found = published.Power(power.has_power(group.folder))
    for r in runs:
        if not r.get("absent"):
            read[group.rel(group.folder / r["file"])] = r.get("git_blob")
        if "power_logs" in r:  # a counted run of a folder with power logs: its energy was computed
            found.runs.add(group.rel(group.folder / "power" / power.result_name(r["file"])))
            found.logs.update({group.rel(group.folder / rel): blob for rel, blob in r["power_logs"].items()})
            found.unread.update({group.rel(group.folder / rel): why for rel, why in r.get("power_unread", {}).items()})
    return published.verify(group.round, group.root, read, {r["file"] for r in runs}, group.rel(group.folder),
                            power=found)


def build_document(group: Group, runs: list[dict], desc: dict, desc_raw: bytes) -> dict:
    """The imported document of one system × benchmark from its run summaries (in the folder's
    order)."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    benchmark = rs._benchmark_alias(group.benchmark)
    factor, factor_problem, scaling_raw = _factor(group)
    runs = mark_duplicates([division.held_to_description(r, desc) for r in runs])
    present = [r for r in runs if not r.get("absent") and not r.get("duplicate_of")]
    score = scoring.official_score(benchmark, present, factor, power.has_power(group.folder), factor_problem)
    score = _with_round_score(score, benchmark, present, factor, factor_problem)
    score = _without_absent(score, group, len(runs))
    source_files = [_file_entry(group, group.description, desc_raw)]
    if scaling_raw is not None:
        source_files.append(_file_entry(group, group.folder / "scaling.json", scaling_raw))
    batch = next((r["global_batch_size"] for r in runs if r.get("counted") and r.get("global_batch_size")), None)
    units = [r["unit"] for r in runs if r.get("unit")]
    unit = max(set(units), key=units.count) if units else None
    system = systems.describe(desc, group.system)
    stated, stated_in = division.decide(desc, [r.get("division") for r in present])
    checked = _provenance(group, runs, desc_raw, scaling_raw)
    return {
        "kind": documents.KIND, "schema_version": documents.SCHEMA_VERSION, "label": documents.LABEL,
        "source": {"name": "MLPerf Training", "round": group.round, "ruleset": group.ruleset,
                   "org_folder": systems.clean(group.org, 300), "system_folder": system["folder"],
                   "benchmark_folder": systems.clean(group.benchmark, 300),
                   "repository": rs._ruleset_url_prefix("training", group.ruleset), "files": source_files,
                   "logs": logs_digest(runs),
                   **({"absent": [systems.clean(p, 1000) for p in group.absent]} if group.absent else {}),
                   **({"verified": checked} if isinstance(checked, dict) else
                      {"not_verified": systems.clean(checked, 500)}),
                   **({"round_note": systems.clean(group.round_note, 300)} if group.round_note else {})},
        "importer": _versions(),
        "submitter": systems.clean(desc.get("submitter") or "", 300) or systems.clean(group.org, 300),
        "division": stated, **({"division_source": stated_in} if stated_in else {}),
        "availability": system["availability"],
        "system": system, "benchmark": benchmark, "quality_target": scoring.quality_target(group.ruleset, benchmark),
        "global_batch_size": batch, "progress_unit": unit, "score": score,
        "runs": [_run_entry(r, unit) for r in runs],
    }


def source_url(doc: dict) -> str | None:
    """The submission's folder on GitHub; None where the document's ``source.repository`` is not
    an address there (:func:`suite.record.text.github_address`: a stored document is anyone's
    text, and a page links only to GitHub)."""
    src = doc["source"]
    repository = github_address(src["repository"])
    return None if repository is None else (
        f"{repository}/tree/main/{src['org_folder']}/results/{src['system_folder']}/{src['benchmark_folder']}")


def system_url(doc: dict) -> str | None:
    """The system description on GitHub; None as for :func:`source_url`."""
    src = doc["source"]
    repository = github_address(src["repository"])
    return None if repository is None else f"{repository}/blob/main/{src['org_folder']}/systems/{src['system_folder']}.json"


def row(doc: dict, stored: Path | None, state: str | None) -> dict:
    """The line of ``--json`` (and of the table) for one document."""
    counted = [r for r in doc["runs"] if r.get("counted")]
    good = [g for g in (ingest.goodput(r)["goodput"] for r in counted) if g is not None]
    median = lambda key: statistics.median(v) if (v := [r[key] for r in counted if r.get(key) is not None]) else None
    rates = [v for v in map(ingest.samples_per_s, counted) if v is not None]
    system, score = doc["system"], doc["score"]
    return {
        "round": doc["source"]["round"], "submitter": doc["submitter"], "system": system["name"],
        "benchmark": doc["benchmark"], "division": doc["division"], "accelerator": system["accelerator"],
        "accelerators": system["accelerators"], "nodes": system["nodes"], "framework": system["framework"],
        "runs": len(doc["runs"]), "runs_counted": score["runs_counted"],
        "score_minutes": score["minutes"], "score_status": score["status"],
        "score_at_round_minutes": (score.get("at_round") or {}).get("minutes"),
        "rcp_scaling_factor": score["rcp_scaling_factor"], "energy_j": score.get("energy_j"),
        "median_init_s": median("init_s"), "median_eval_s": median("eval_s"),
        "median_samples_per_s": statistics.median(rates) if rates else None,
        "median_goodput": statistics.median(good) if good else None,
        "source": source_url(doc), "source_not_verified": doc["source"].get("not_verified"),
        "document": str(stored) if stored is not None else None, "stored": state,
    }


def _known_rulesets() -> set[str]:
    from mlperf_logging.compliance_checker.mlp_compliance import rule_choices

    return {r for r in rule_choices() if (Path(ingest.checker_module().__file__).parent / f"training_{r}").is_dir()}


def run_import(paths: Iterable[str | Path], results_dir: str | Path, round_arg: str | None = None,
               jobs: int | None = None, on_problem: Callable[[str], None] | None = None,
               replace: bool = False, absent: str | None = None) -> Outcome:
    """Import every system × benchmark under ``paths`` into ``<results_dir>/mlperf/``; a stored
    document from other source files is replaced only with ``replace``; ``absent``: the text of
    an ``--absent`` list (:func:`suite.mlperf.tree.read_absent`)."""
    outcome = Outcome()

    def problem(line: str) -> None:
        line = systems.clean(line, 1000) or ""
        outcome.problems.append(line)
        if on_problem is not None:
            on_problem(line)

    found: list[str] = []
    listed = tree.read_absent(absent, found) if absent else {}
    groups = tree.discover(paths, round_arg, _known_rulesets(), found, listed)
    unused = tree.unused_absent(listed, groups)
    if unused:
        found.append(f"--absent: {len(unused)} listed folder(s) of the rounds imported are not in the trees "
                     f"imported (a misspelt org, system or benchmark?): {', '.join(unused[:3])}"
                     + (", …" if len(unused) > 3 else ""))
    for line in found:
        problem(line)
    jobs = default_jobs() if jobs is None else max(1, jobs)
    tasks = [ingest.RunTask(str(f), g.ruleset, g.round, g.benchmark, i) for g in groups for i, f in enumerate(g.files)]
    if not groups:
        return outcome
    _warm()
    results = _results(tasks, jobs)
    for group in groups:
        runs = [next(results) for _ in group.files]
        if group.absent_runs:
            runs = sorted(runs + [{"file": name, "absent": True} for name in group.absent_runs],
                          key=lambda r: tree.natural_key(r["file"]))
        for r in runs:
            if "error" in r:
                problem(f"{group.folder / r['file']}: {r['error']}")
            elif r.get("parse_errors"):
                problem(f"{group.folder / r['file']}: {r['parse_errors']} event line(s) MLCommons' parser cannot "
                        f"read (the first: {r['parse_error']}): the run is not counted")
        try:
            desc, desc_raw = _description(group)
            doc = build_document(group, runs, desc, desc_raw)
            stored, state = documents.store(doc, results_dir, replace=replace)
        except (ValueError, OSError) as exc:
            problem(f"{group.folder}: not imported: {exc}")
            continue
        for r in doc["runs"]:
            if r["status"] == DUPLICATE:
                problem(f"{group.folder / r['file']}: {r['why']}")
        if state == "kept":
            differ = documents.differing_sources(doc, results_dir)
            problem(f"{group.folder}: not stored: {stored} holds this round, org, system and benchmark "
                    f"imported from other source files ({'it cannot be read' if differ is None else ', '.join(differ) + ' differ'}); "
                    "kept as it is (give --replace to replace it)")
        elif group.absent:
            problem(f"{group.folder}: {len(group.absent)} listed file(s) absent from the copy imported (--absent): "
                    f"{doc['score']['status'] if doc['score']['minutes'] is None else 'scored from what is there'}")
        outcome.rows.append(row(doc, stored, state))
    return outcome


def summary_json(rows: list[dict]) -> str:
    """``--json``'s output."""
    return json.dumps(rows, indent=1, allow_nan=False, ensure_ascii=False)
