"""Whether an imported tree is MLCommons' published round: its files against a pinned commit.

MLCommons publishes each round as the git repository ``mlcommons/training_results_<round>``. A
document says its source is verified (``source.verified``: the commit, how many files and how many
power logs) only where the import read every file it took — the result logs, the system
description, ``scaling.json`` and its counted runs' power logs — from a git checkout holding the
round's pinned commit (:data:`PINNED`), each file's git blob id equal to the one that commit lists
at the same path, and the folder holds the result logs (and the power logs) that commit lists.
Anything else — a copy of the files without ``.git``, a changed log, another commit, a round given
with ``--round`` that is not the tree's — is imported the same but not verified, and the pages say
"source not verified". The blob ids are computed from the bytes read
(:func:`suite.record.gitcheck.blob_id`); git is asked only for the commit's listing, through
:mod:`suite.record.gitcheck` (one hardened environment for both importers: no transport, no lazy
fetch, no hook, a partial clone refused; every commit and tree object hashed against its id before
it is read), so a crafted checkout's configuration cannot make it fetch or run a command, nor its
object store list forged files as published. That check is the importer's, when it imports: a
stored document's ``verified`` is its word (self-reported), which the site cannot check again.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from suite.mlperf.tree import is_result
from suite.record import gitcheck

# The commit of mlcommons/training_results_<round> each round is checked against: the head of
# each repository when its documents under results/mlperf were last imported (2026-11-30).
PINNED = {
    "v0.6": "f312518c2d6107eec983750eed23950f1f0c8a0e",
    "v0.7": "0a8a85a209c8e45b661596c382cc20f4e32fd2fe",
    "v1.0": "50619b5df63f1d646715a82c1fb8c35f271e25fa",
    "v1.1": "ebe92f81f7a69255a3b0a907595d8be623d75ec6",
    "v2.0": "8437fbb78349aa3c3054aeccb1d47d2a315a80e7",
    "v2.1": "158189d4cbfbee366c10da1f0f086c85d8f15b5f",
    "v3.0": "63e326c400f5d8bb8c6070a9ab08332d4931152e",
    "v3.1": "d06288b2bd675a9d88e0e6181f5bb5626b71ec19",
    "v4.0": "6fe954378efe4a1a1bd665550b18ff8f26018def",
    "v4.1": "b87b9e396f771345d4ef122ba33456304f15228d",
    "v5.0": "0fdc28f013256aea84fa36fdaf1e0fa46094b18c",
    "v5.1": "441d65f4445cd59687466533fd9f55399136e7a4",
}


@cache
def listing(root: Path, commit: str) -> dict[str, str] | str:
    """path → blob id of every file at ``commit`` in the checkout at ``root``; or why none
    (:mod:`suite.record.gitcheck`: git under its one hardened environment)."""
    gitdir = gitcheck.git_dir(root)
    if gitdir is None:
        return "the tree is not a git checkout"
    try:
        return gitcheck.ls_tree(gitdir, commit)
    except gitcheck.GitRefused as exc:
        if str(exc).startswith(gitcheck.PARTIAL_CLONE):
            return str(exc)
        return f"git cannot list MLCommons' published commit {commit[:12]} in the checkout"


@dataclass
class Power:
    """The power logs an import found: whether the benchmark folder has a ``power`` folder (it
    decides how the score is computed), the power folder of each run whose energy was computed
    (``<folder>/power/<result name>``), each power log found there (repository path → its git
    blob id where it was read, else None) and each that could not be read (path → why)."""
    folder: bool = False
    runs: set[str] = field(default_factory=set)
    logs: dict[str, str | None] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)


def _is_power_log(name: str) -> bool:
    return fnmatch.fnmatchcase(name, "node_*.txt") or fnmatch.fnmatchcase(name, "sw_*.txt")


def _power(listed: dict[str, str], under: list[str], folder: str, power: Power, commit: str) -> str | None:
    """Why the power logs found are not those the commit lists (None: they are): a ``power``
    folder the commit has not (or lacks), a run's power logs (``node_*.txt``, ``sw_*.txt``) not
    those the commit lists for it, a power log that could not be read, or one read that is not the
    commit's (``under``: the paths ``listed`` holds in ``folder``). A log left unread because the
    energy stopped at an earlier one (not measured) gives no figure and is not checked."""
    prefix = folder.rstrip("/") + "/power/"
    theirs = [p for p in under if p.startswith(prefix)]
    if bool(theirs) != power.folder:
        return f"{prefix.rstrip('/')} is {'absent from' if theirs else 'not in'} what MLCommons published at {commit[:12]}"
    published = {p for p in theirs if (parts := p.rsplit("/", 1))[0] in power.runs and _is_power_log(parts[1])}
    if published != set(power.logs):
        return f"the power logs of {folder} are not those MLCommons published at {commit[:12]}"
    if power.unread:  # its run's energy is lost: not the commit's file as far as the import can tell
        path = min(power.unread)
        return (f"{path} could not be read ({power.unread[path]}), so it is not checked as the file MLCommons "
                f"published at {commit[:12]}")
    for path, blob in power.logs.items():
        if blob is not None and listed.get(path) != blob:
            return f"{path} is not the file MLCommons published at {commit[:12]}"
    return None


def verify(rnd: str, root: Path, files: dict[str, str | None], published_logs: set[str] | None = None,
           folder: str = "", power: Power | None = None) -> dict | str:
    """``{"commit", "files"[, "power_logs"]}`` where every file read (path under ``root`` → its
    blob id) is the pinned commit's at the same path, ``folder``'s result logs are those the commit
    lists and, with ``power``, the power logs found are the commit's (:func:`_power`;
    ``power_logs``: how many were read and checked, where any was); else why not (one line)."""
    commit = PINNED.get(rnd)
    if commit is None:
        return f"no published commit of round {rnd} is known to this goodbench"
    listed = listing(root, commit)
    if isinstance(listed, str):
        return listed
    for path, blob in files.items():
        if blob is None or listed.get(path) != blob:
            return f"{path} is not the file MLCommons published at {commit[:12]}"
    prefix = folder.rstrip("/") + "/"
    under = [p for p in listed if p.startswith(prefix)] if published_logs is not None or power is not None else []
    if published_logs is not None:
        theirs = {p[len(prefix):] for p in under if is_result(p[len(prefix):])}
        if theirs != published_logs:
            return f"the result logs of {folder} are not those MLCommons published at {commit[:12]}"
    if power is not None:
        why = _power(listed, under, folder, power, commit)
        if why:
            return why
    checked = sum(blob is not None for blob in (power.logs.values() if power else ()))
    return {"commit": commit, "files": len(files), **({"power_logs": checked} if checked else {})}
