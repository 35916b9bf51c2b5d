"""The manifest of a pinned commit (:data:`suite.speedrun.tree.PINNED`): every log ``goodbench
import speedrun`` takes from it, with its sha256, its track and the record (or the baseline of a
record) it belongs to, committed beside this module as ``pinned/<commit>.tsv``. A stored document
that names a commit with a manifest must hold exactly those runs (:func:`difference`): a run left
out, added or with other bytes is caught, where the document's own figures would still agree.

When the pin changes, regenerate it from a clean checkout at the new commit::

    python -m suite.speedrun.manifest_build CHECKOUT   # writes suite/speedrun/pinned/<commit>.tsv
"""
from __future__ import annotations

import functools
from pathlib import Path

FOLDER = Path(__file__).with_name("pinned")
COLUMNS = ("log", "log_sha256", "track", "record", "baseline_of")


def path_of(commit: str) -> Path:
    return FOLDER / f"{commit}.tsv"


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)


def dumps(commit: str, docs: dict[int, dict]) -> str:
    """The manifest of ``commit`` from its tracks' documents (:mod:`suite.speedrun.manifest_build`)."""
    lines = [f"# modded-nanogpt {commit}: every log goodbench import speedrun takes "
             "(regenerate: python -m suite.speedrun.manifest_build CHECKOUT)", "\t".join(COLUMNS)]
    for track, doc in sorted(docs.items()):
        for run in doc["runs"]:
            lines.append("\t".join((run["log"], run["log_sha256"], str(track), _cell(run["record"]),
                                    _cell(run["baseline_of"]))))
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=4)
def load(commit: str) -> dict[str, tuple[str, ...]] | None:
    """{log: (sha256, track, record, baseline_of)} of a commit's manifest, as text; ``None`` where
    the commit has none."""
    path = path_of(commit)
    if not path.is_file():
        return None
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[2:]]
    return {row[0]: tuple(row[1:]) for row in rows}


def difference(doc: dict) -> str | None:
    """Why a document's runs are not the logs of its commit's manifest (the first difference, by
    path), or ``None``: they are, or its commit has no manifest."""
    commit = doc.get("commit")
    if not isinstance(commit, str):
        return None
    listed = load(commit)
    if listed is None:
        return None
    held = {r["log"]: (r["log_sha256"], str(doc["track"]), _cell(r["record"]), _cell(r["baseline_of"]))
            for r in doc["runs"]}
    wanted = {log: row for log, row in listed.items() if row[1] == str(doc["track"])}
    for log in sorted(set(held) | set(wanted)):
        if log not in held:
            return f"its runs lack {log[:200]}, a log of commit {commit[:7]}'s manifest"
        if log not in wanted:
            return f"its runs hold {log[:200]}, no log of commit {commit[:7]}'s manifest"
        if held[log] != wanted[log]:
            what = next(c for c, a, b in zip(COLUMNS[1:], held[log], wanted[log]) if a != b)
            return f"its run {log[:200]}'s {what} is not that of commit {commit[:7]}'s manifest"
    return None
