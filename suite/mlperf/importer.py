"""``goodbench import mlperf``: MLCommons training result trees → imported documents.

A PATH is a submission tree (``<org>/results/<system>/<benchmark>/result_N.txt`` with
``<org>/systems/<system>.json`` and, where the review set one, ``scaling.json`` beside the
results), a round's repository checkout holding many orgs, any folder above those, or a folder
inside a submission tree. The round (``v5.1``: ruleset ``5.1.0``) is read from the nearest
folder above the org named ``v5.1`` or ``training_results_v5.1``, or given with ``--round``.

The result files are read by worker processes, one file per task (both cores by default), each
streamed line by line and reduced to a small run summary (:mod:`suite.mlperf.ingest`); no list
of a round's parsed lines is ever held. Runs come back in order, and a system × benchmark is
scored, written and dropped from memory as soon as its last run is in. A file or folder that
cannot be read gives one line naming it and the reason, and the import goes on.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import statistics
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from suite.mlperf import documents, ingest, scoring, systems

_ROUND_DIR = re.compile(r"^(?:training_results_)?v(\d+)\.(\d+)(?:\.\d+)?$")
_ROUND_ARG = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")
_RESULT = re.compile(r"^result_(\d+)\.txt$")
_SKIP_DIRS = {".git", "node_modules", "__pycache__"}
PARALLEL_FROM = 8  # result files: below this, reading them here beats starting workers


@dataclass
class Group:
    """One system × benchmark folder of a submission tree."""

    round: str            # "v5.1"
    ruleset: str          # "5.1.0"
    root: Path            # the folder holding the org folder
    org: str              # the org folder's name
    system: str           # the system folder's name (and its description's file name)
    benchmark: str        # the benchmark folder's name, as result_summarizer takes it
    files: list[Path] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.root / self.org / "results" / self.system / self.benchmark

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


@dataclass
class Outcome:
    """What an import did: rows (one per stored document) and problems (one line each)."""

    rows: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- finding the trees
def parse_round(text: str) -> tuple[str, str]:
    """"v5.1", "5.1" or "5.1.0" → ("v5.1", "5.1.0"); ValueError for anything else."""
    match = _ROUND_ARG.match(text.strip())
    if match is None:
        raise ValueError(f"--round {text!r}: give the round as v5.1 (or 5.1.0)")
    major, minor = match.group(1), match.group(2)
    return f"v{major}.{minor}", f"{major}.{minor}.0"


def _round_of(org_dir: Path) -> tuple[str, str] | None:
    for parent in org_dir.parents:
        match = _ROUND_DIR.match(parent.name)
        if match:
            return f"v{match.group(1)}.{match.group(2)}", f"{match.group(1)}.{match.group(2)}.0"
    return None


def _org_dirs(path: Path, problems: list[str]) -> Iterator[tuple[Path, Path | None]]:
    """(org folder, subtree of it to read or None for all) for every submission tree at or
    under ``path``; a path inside a tree (``<org>/results/<system>``) gives its org."""
    for parent in [path, *path.parents]:
        if parent.name == "results" and parent.parent != parent:
            yield parent.parent, path if path != parent else None
            return
    stack = [path]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{folder}: cannot be read: {exc.strerror or exc}")
            continue
        names = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
        if "results" in names:
            yield folder, None
            continue
        stack.extend(Path(e.path) for e in reversed(entries)
                     if e.is_dir(follow_symlinks=False) and e.name not in _SKIP_DIRS)


def _subdirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def discover(paths: Iterable[str | Path], round_arg: str | None, problems: list[str]) -> list[Group]:
    """Every system × benchmark folder under ``paths``, in path order (problems appended)."""
    from mlperf_logging.compliance_checker.mlp_compliance import rule_choices

    forced = parse_round(round_arg) if round_arg else None
    known = rule_choices()
    groups: list[Group] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given).absolute()
        if not path.exists():
            problems.append(f"{given}: no such file or directory")
            continue
        if not path.is_dir():
            problems.append(f"{given}: not a folder (give a submission tree or a round's checkout)")
            continue
        found = False
        for org_dir, within in _org_dirs(path, problems):
            found = True
            rnd = forced or _round_of(org_dir)
            if rnd is None:
                problems.append(f"{org_dir}: cannot tell the round (no folder named like v5.1 above "
                                "it); give --round")
                continue
            if rnd[1] not in known:
                problems.append(f"{org_dir}: round {rnd[0]} has no MLCommons ruleset in this "
                                f"mlperf-logging (known: {', '.join(sorted(known))})")
                continue
            try:
                for system_dir in _subdirs(org_dir / "results"):
                    for bench_dir in _subdirs(system_dir):
                        if within is not None and within not in (bench_dir, *bench_dir.parents):
                            continue
                        if bench_dir in seen:
                            continue
                        seen.add(bench_dir)
                        files = sorted((p for p in bench_dir.iterdir() if _RESULT.match(p.name)),
                                       key=lambda p: int(_RESULT.match(p.name).group(1)))  # type: ignore[union-attr]
                        if not files:
                            problems.append(f"{bench_dir}: no result_N.txt files")
                            continue
                        groups.append(Group(rnd[0], rnd[1], org_dir.parent, org_dir.name,
                                            system_dir.name, bench_dir.name, files))
            except OSError as exc:
                problems.append(f"{org_dir}: cannot be read: {exc.strerror or exc}")
        if not found:
            problems.append(f"{given}: no MLPerf submission tree (<org>/results/<system>/<benchmark>/) under it")
    return groups


# ---------------------------------------------------------------- reading the runs
class _Hashing(io.RawIOBase):
    """A raw reader that hashes what passes through it (the file is read once)."""

    def __init__(self, raw):
        self.raw, self.sha256, self.size = raw, hashlib.sha256(), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer)
        if n:
            self.sha256.update(memoryview(buffer)[:n])
            self.size += n
        return n or 0

    def close(self) -> None:
        self.raw.close()
        super().close()


@dataclass(frozen=True)
class _Task:
    run: ingest.RunTask
    rel: str


def _read(task: _Task) -> dict:
    """A worker's task: one result file → its run summary, with the file's sha256 and size."""
    run_task = task.run
    try:
        raw = _Hashing(open(run_task.path, "rb"))  # noqa: SIM115  # closed by the wrapper below
    except OSError as exc:
        return {"file": task.rel, "index": run_task.index, "error": f"cannot be read: {exc.strerror or exc}"}
    hashing = raw
    try:
        with io.TextIOWrapper(io.BufferedReader(raw), encoding="latin-1", newline=None) as handle:
            loglines, failed = ingest.parse_lines(handle, run_task.ruleset)
            handle.read()  # the rest (nothing after the last line) for the hash
    except OSError as exc:
        return {"file": task.rel, "index": run_task.index, "error": f"cannot be read: {exc.strerror or exc}"}
    if not loglines:
        return {"file": task.rel, "index": run_task.index, "sha256": hashing.sha256.hexdigest(),
                "bytes": hashing.size,
                "error": "no :::MLLOG line in the file" + (f" ({len(failed)} malformed)" if failed else "")}
    try:
        run = ingest.read_loglines(loglines, failed, run_task)
    except Exception as exc:  # a log nothing above foresaw: this file's line, not the import's end
        return {"file": task.rel, "index": run_task.index, "sha256": hashing.sha256.hexdigest(),
                "bytes": hashing.size, "error": ingest._one_line(f"cannot be read: {type(exc).__name__}: {exc}")}
    run.update(file=task.rel, sha256=hashing.sha256.hexdigest(), bytes=hashing.size)
    return run


def _warm() -> None:
    """Import what the workers use before they fork (each then has it for free)."""
    import mlperf_logging.result_summarizer.result_summarizer  # noqa: F401

    ingest._checker_module()


def _results(tasks: list[_Task], jobs: int) -> Iterator[dict]:
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
def _system(group: Group) -> dict:
    import json

    path = group.root / group.org / "systems" / f"{group.system}.json"
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: the system description cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # some descriptions are not UTF-8
    try:
        desc = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: the system description is not JSON: {exc}") from None
    if not isinstance(desc, dict):
        raise ValueError(f"{path}: the system description is not a JSON object")
    return desc


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    from suite import __version__

    try:
        logging_version: str | None = version("mlperf-logging")
    except PackageNotFoundError:
        logging_version = None
    return {"goodbench": __version__, "mlperf_logging": logging_version}


def _source_files(group: Group, runs: list[dict]) -> list[dict]:
    files = [{"path": r["file"], "sha256": r["sha256"], "bytes": r["bytes"]} for r in runs if r.get("sha256")]
    for extra in (group.root / group.org / "systems" / f"{group.system}.json", group.folder / "scaling.json"):
        if extra.is_file():
            data = extra.read_bytes()
            files.append({"path": group.rel(extra), "sha256": hashlib.sha256(data).hexdigest(),
                          "bytes": len(data)})
    return files


def _run_entry(run: dict) -> dict:
    """A run summary as the document stores it (an unreadable run: not counted, no figures)."""
    if "error" in run:
        return {"file": run["file"], "sha256": run.get("sha256"), "bytes": run.get("bytes"),
                "index": run["index"], "error": run["error"], "compliant": None, "parse_errors": None,
                "counted": False, "not_counted_reason": run["error"], "score_minutes": None,
                "status": "unreadable", "time_to_train_s": None, "init_s": None, "eval_s": None,
                "train_s": None, "samples": None, "samples_per_s": None, "goodput": None,
                "energy": {"value": None, "status": "not measured: the log cannot be read"}}
    return run


def build_document(group: Group, runs: list[dict], desc: dict) -> dict:
    """The imported document of one system × benchmark from its run summaries."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    runs = [_run_entry(r) for r in sorted(runs, key=lambda r: r["index"])]
    score = scoring.official_score(group.benchmark, runs, scoring.scaling_factor(str(group.folder)))
    system = systems.describe(desc, group.system)
    repository = rs._ruleset_url_prefix("training", group.ruleset)
    path = f"{group.org}/results/{group.system}/{group.benchmark}"
    system_url = rs._details_url(group.system, {"submitter": group.org}, "training", group.ruleset)
    return {
        "kind": documents.KIND, "schema_version": documents.SCHEMA_VERSION, "label": documents.LABEL,
        "source": {"name": "MLPerf Training", "round": group.round, "ruleset": group.ruleset,
                   "org_folder": group.org, "path": path, "repository": repository,
                   "url": f"{repository}/tree/main/{path}", "system_url": system_url,
                   "files": _source_files(group, runs)},
        "importer": _versions(),
        "submitter": str(desc.get("submitter") or group.org).strip() or group.org,
        "division": system["division"], "availability": system["availability"],
        "system": system, "benchmark": group.benchmark, "score": score, "runs": runs,
    }


def row(doc: dict, stored: Path | None, state: str | None) -> dict:
    """The line of ``--json`` (and of the table) for one document."""
    runs = doc["runs"]
    good = [r["goodput"]["goodput"] for r in runs if r.get("counted") and r.get("goodput")
            and r["goodput"].get("goodput") is not None]
    inits = [r["init_s"] for r in runs if r.get("counted") and r.get("init_s") is not None]
    evals = [r["eval_s"] for r in runs if r.get("counted") and r.get("eval_s") is not None]
    rates = [r["samples_per_s"] for r in runs if r.get("counted") and r.get("samples_per_s") is not None]
    system = doc["system"]
    return {
        "round": doc["source"]["round"], "submitter": doc["submitter"], "system": system["name"],
        "benchmark": doc["benchmark"], "division": doc["division"], "accelerator": system["accelerator"],
        "accelerators": system["accelerators"], "nodes": system["nodes"], "framework": system["framework"],
        "runs": len(runs), "runs_counted": doc["score"]["runs_counted"],
        "score_minutes": doc["score"]["minutes"], "score_status": doc["score"]["status"],
        "rcp_scaling_factor": doc["score"]["rcp_scaling_factor"],
        "median_init_s": statistics.median(inits) if inits else None,
        "median_eval_s": statistics.median(evals) if evals else None,
        "median_samples_per_s": statistics.median(rates) if rates else None,
        "median_goodput": statistics.median(good) if good else None,
        "source": doc["source"]["url"], "document": str(stored) if stored is not None else None,
        "stored": state,
    }


def run_import(paths: Iterable[str | Path], results_dir: str | Path, round_arg: str | None = None,
               jobs: int | None = None, on_problem: Callable[[str], None] | None = None) -> Outcome:
    """Import every system × benchmark under ``paths`` into ``<results_dir>/mlperf/``."""
    outcome = Outcome()

    def problem(line: str) -> None:
        outcome.problems.append(line)
        if on_problem is not None:
            on_problem(line)

    found: list[str] = []
    groups = discover(paths, round_arg, found)
    for line in found:
        problem(line)
    jobs = default_jobs() if jobs is None else max(1, jobs)
    tasks = [_Task(ingest.RunTask(str(f), g.ruleset, g.round, g.benchmark, int(_RESULT.match(f.name).group(1))),  # type: ignore[union-attr]
                   g.rel(f)) for g in groups for f in g.files]
    if not tasks:
        return outcome
    _warm()
    results = _results(tasks, jobs)
    for group in groups:
        runs = [next(results) for _ in group.files]
        for r in runs:
            if "error" in r:
                problem(f"{group.root / r['file']}: {r['error']}")
        try:
            doc = build_document(group, runs, _system(group))
            stored, state = documents.store(doc, results_dir)
        except (ValueError, OSError) as exc:
            problem(f"{group.folder}: not imported: {exc}")
            continue
        outcome.rows.append(row(doc, stored, state))
    return outcome
