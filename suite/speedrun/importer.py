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
from suite.record import gitcheck
from suite.record.results import write_atomic
from suite.record.text import printable
from suite.speedrun import documents, readme, records, tree
from suite.speedrun.documents import FORMAT
from suite.speedrun.logs import BadNumber, parse_log

BLOB = "_blob"  # a run's git blob id while it is imported (never stored)


def _read_one(args: tuple[str, str]) -> tuple[str, dict | None, str | None]:
    root, path = args
    try:
        data, sha = tree.read_log(Path(root), path)
        run = parse_log(data)
    except Unreadable as exc:
        return path, None, f"{path}: {exc}"
    except BadNumber as exc:
        return path, None, f"{path}: {exc}: the log is not read"
    run.update({"log": path, "log_sha256": sha, "bytes": len(data), BLOB: gitcheck.blob_id(data)})
    return path, run, None


def read_runs(root: Path, logs: list[str], jobs: int | None) -> tuple[dict[str, dict], list[str]]:
    """Every log parsed ({path: run}, each with its git blob id under :data:`BLOB`) and one line
    per log not read."""
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
    not read or not understood. :class:`Unreadable` (nothing is written) where a track's folder
    under records/ cannot be opened (absent, or a symbolic link) or the README has no record
    table for a track: the folder is no modded-nanogpt checkout."""
    try:
        readme_bytes = tree.read_readme(root)
    except Unreadable as exc:
        raise Unreadable(f"README.md: {exc}") from None
    found = tree.walk(root)
    if found.missing:
        raise Unreadable(f"{found.missing[0]}: a track's folder of modded-nanogpt must be a real folder "
                         "of the checkout: nothing imported")
    problems = list(found.problems)
    try:
        readme_text = readme_bytes.decode("utf-8")
    except UnicodeDecodeError:
        readme_text = readme_bytes.decode("utf-8", "replace")
        problems.append("README.md: not UTF-8: read with replacement characters")
    tables = readme.record_tables(readme_text, problems)
    if len(tables) < len(records.TRACKS):
        raise Unreadable(f"README.md: {len(tables)} record table(s) (| # | Record time | … |) where modded-nanogpt's "
                         f"has {len(records.TRACKS)}: nothing imported")
    runs, unread = read_runs(root, found.logs, jobs)
    problems += unread
    blobs = {path: run.pop(BLOB) for path, run in runs.items()}
    blobs["README.md"] = gitcheck.blob_id(readme_bytes)
    provenance = tree.verified_commit(root, blobs, found.files)
    problems += [line for line in provenance.lines if line.startswith("records/")]
    for path, run in runs.items():
        if run["format"] == "none":
            problems.append(f"{path}: {run['notes'][-1]}")
    problems = sorted(printable(line) for line in problems)  # a path or a README cell as \uXXXX where it needs
    for line in problems:
        on_problem(line)
    for line in provenance.lines:
        if not line.startswith("records/"):
            on_problem(printable(line))
    docs = {}
    for track, info in records.TRACKS.items():
        rows = tables[track - 1]
        mine = {p: r for p, r in runs.items() if p.startswith(info.folder + "/") and r["format"] != "none"}
        chosen = [records.select(track, row, mine, found.folders, found.files, problems) for row in rows]
        copied = records.copied_runs(track, [(row["record"], c.chosen, c.folder) for row, c in zip(rows, chosen)], mine)
        recs = []
        for position, (row, selection) in enumerate(zip(rows, chosen), 1):
            rec = records.build_record(track, row, selection, mine, copied)
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
            "commit": provenance.commit, "upstream": provenance.upstream,
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
            lines += [json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
                      + ("," if j < len(value) - 1 else "") for j, v in enumerate(value)]
            lines.append("]" + end)
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)}{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_documents(docs: dict[int, dict], results_dir: str | Path) -> list[tuple[Path, bool]]:
    """Write each track's document to results_dir/speedrun/track_N.json; (path, changed) each.
    Every document is first read back as the site reads it: one it would refuse is never written
    (:class:`ValueError`, nothing written)."""
    texts = {track: dumps(doc).encode("utf-8") for track, doc in sorted(docs.items())}
    for track, text in texts.items():
        why = documents.check(json.loads(text), f"track_{track}.json")
        if why:
            raise ValueError(f"track_{track}.json would not be read back ({why}): not written")
    out = Path(results_dir) / "speedrun"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for track, text in texts.items():
        path = out / f"track_{track}.json"
        old = path.read_bytes() if path.is_file() else None
        if old != text:
            write_atomic(path, text)
        written.append((path, old != text))
    return written
