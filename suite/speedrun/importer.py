"""``goodbench import speedrun DIR``: a modded-nanogpt checkout → one document per track under
results/speedrun/ (track_1.json, track_2.json), written so that a re-import of the same checkout
gives the same bytes."""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from suite.mlperf.files import Unreadable
from suite.record.results import write_atomic
from suite.speedrun import readme, records, tree
from suite.speedrun.documents import FORMAT
from suite.speedrun.logs import parse_log


def _read_one(args: tuple[str, str]) -> tuple[str, dict | None, str | None]:
    root, path = args
    try:
        data, sha = tree.read_log(Path(root), path)
    except Unreadable as exc:
        return path, None, f"{path}: {exc}"
    run = parse_log(data)
    run.update({"log": path, "log_sha256": sha, "bytes": len(data)})
    return path, run, None


def read_runs(root: Path, logs: list[str], jobs: int | None) -> tuple[dict[str, dict], list[str]]:
    """Every log parsed ({path: run}) and one line per log not read."""
    jobs = jobs or min(len(os.sched_getaffinity(0)), 8)
    work = [(str(root), p) for p in logs]
    if jobs > 1 and len(work) > 50:
        with ProcessPoolExecutor(jobs) as pool:
            done = list(pool.map(_read_one, work, chunksize=16))
    else:
        done = [_read_one(w) for w in work]
    runs, problems = {}, []
    for path, run, problem in done:
        if problem:
            problems.append(problem)
        elif run is not None:
            runs[path] = run
    return runs, problems


def build_documents(root: Path, jobs: int | None = None, on_problem: Callable[[str], None] = lambda _: None) -> dict[int, dict]:
    """The tracks' documents of the checkout at ``root``; ``on_problem`` gets one line per thing
    not read or not understood."""
    found = tree.walk(root)
    problems = list(found.problems)
    try:
        readme_bytes = tree.read_readme(root)
    except Unreadable as exc:
        raise Unreadable(f"README.md: {exc}") from None
    try:
        readme_text = readme_bytes.decode("utf-8")
    except UnicodeDecodeError:
        readme_text = readme_bytes.decode("utf-8", "replace")
        problems.append("README.md: not UTF-8: read with replacement characters")
    tables = readme.record_tables(readme_text)
    runs, unread = read_runs(root, found.logs, jobs)
    problems += unread
    for path, run in runs.items():
        if run["format"] == "none":
            problems.append(f"{path}: {run['notes'][-1]}")
    problems.sort()
    for line in problems:
        on_problem(line)
    commit = tree.checkout_commit(root)
    docs = {}
    for track, info in records.TRACKS.items():
        rows = tables[track - 1] if len(tables) >= track else []
        if len(tables) < track:
            problems.append(f"README.md: no record table for track {track}")
            on_problem(problems[-1])
        mine = {p: r for p, r in runs.items() if p.startswith(info.folder + "/") and r["format"] != "none"}
        recs = []
        for position, row in enumerate(rows, 1):
            rec = records.build_record(track, row, mine, found.folders, found.files, problems)
            rec["row"] = position
            recs.append(rec)
        for rec in recs:
            for path in rec["run_logs"]:
                mine[path].setdefault("record", rec["record"])
            for group in rec["baselines"]:
                for path, run in mine.items():
                    if path.startswith(group["folder"].rstrip("*")) and "record" not in run:
                        run["baseline_of"] = rec["record"]
        docs[track] = {
            "format": FORMAT, "source": "KellerJordan/modded-nanogpt", "track": track, "name": info.name,
            "target_val_loss": info.target, "readme_sha256": hashlib.sha256(readme_bytes).hexdigest(),
            "commit": commit,
            "records": recs,
            "runs": [dict(sorted({"record": None, "baseline_of": None, **mine[p]}.items())) for p in sorted(mine)],
            "problems": [p for p in problems if p.startswith(info.folder + "/") or p.startswith("README")],
        }
    return docs


def dumps(doc: dict) -> str:
    """A document as stored: sorted keys, one record or run per line, so that the same document
    gives the same bytes and a change shows as a few lines."""
    lines = ["{"]
    keys = sorted(doc)
    for i, key in enumerate(keys):
        end = "," if i < len(keys) - 1 else ""
        value = doc[key]
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{json.dumps(key)}: [")
            lines += [json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
                      + ("," if j < len(value) - 1 else "") for j, v in enumerate(value)]
            lines.append("]" + end)
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, sort_keys=True, ensure_ascii=False)}{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_documents(docs: dict[int, dict], results_dir: str | Path) -> list[tuple[Path, bool]]:
    """Write each track's document to results_dir/speedrun/track_N.json; (path, changed) each."""
    out = Path(results_dir) / "speedrun"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for track, doc in sorted(docs.items()):
        path = out / f"track_{track}.json"
        text = dumps(doc).encode("utf-8")
        old = path.read_bytes() if path.is_file() else None
        if old != text:
            write_atomic(path, text)
        written.append((path, old != text))
    return written
