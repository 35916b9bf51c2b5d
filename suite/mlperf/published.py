"""Whether an imported tree is MLCommons' published round: its files against a pinned commit.

MLCommons publishes each round as the git repository ``mlcommons/training_results_<round>``. A
document says its source is verified (``source.verified``: the commit and how many files) only
where the import read every file it took — the result logs, the system description and
``scaling.json`` — from a git checkout holding the round's pinned commit (:data:`PINNED`), each
file's git blob id equal to the one that commit lists at the same path, and the folder holds no
result log that commit does not list. Anything else — a copy of the files without ``.git``, a
changed log, another commit, a round given with ``--round`` that is not the tree's — is imported
the same but not verified, and the pages say "source not verified"; nothing is claimed that was
not checked. The blob ids are computed from the bytes read (:func:`blob_id`); git is asked only
for the commit's listing (``ls-tree`` runs no hook or filter), with no transport allowed, so a
crafted checkout's configuration cannot make it fetch or run a command.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from functools import cache
from pathlib import Path

from suite.mlperf.tree import is_result

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
_LINE = re.compile(r"^[0-7]{6} blob ([0-9a-f]{40})\t(.+)$")
MAX_LISTING_BYTES = 64 * 2 ** 20  # the largest round's listing (v2.1: 65,000 files) is about 8 MB
GIT_TIMEOUT_S = 120


def blob_id(data: bytes) -> str:
    """git's id of a file's bytes (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class BlobHasher:
    """git's id of a file read in pieces, its size known before (None where the size read is
    not the size given: the file changed while it was read)."""

    def __init__(self, size: int):
        self.size, self.seen, self.sha1 = size, 0, hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)

    def update(self, data) -> None:
        self.seen += len(data)
        self.sha1.update(data)

    def hexdigest(self) -> str | None:
        return self.sha1.hexdigest() if self.seen == self.size else None


def _git_dir(root: Path) -> Path | None:
    """The git folder of a checkout whose top folder is ``root`` (``.git`` a folder, or a file
    ``gitdir: PATH`` as a worktree's is); None where there is none."""
    dot = root / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot
    if dot.is_file() and not dot.is_symlink():
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return target if target.is_absolute() else root / target
    return None


@cache
def listing(root: Path, commit: str) -> dict[str, str] | str:
    """path → blob id of every file at ``commit`` in the checkout at ``root``; or why none."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return "the tree is not a git checkout"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    # no system or global configuration, no prompt, and no transport at all: a checkout's own
    # configuration may name a promisor remote and a command to reach it, and a missing object
    # must not start a fetch (GIT_ALLOW_PROTOCOL overrides any protocol.*.allow of the checkout)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_NO_LAZY_FETCH="1", GIT_ALLOW_PROTOCOL="none")
    try:
        done = subprocess.run(["git", f"--git-dir={git_dir}", "-c", "core.fsmonitor=false", "ls-tree", "-r",
                               "--full-tree", commit], capture_output=True, env=env, timeout=GIT_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git could not list the commit: {type(exc).__name__}"
    if done.returncode != 0 or len(done.stdout) > MAX_LISTING_BYTES:
        return f"git cannot list MLCommons' published commit {commit[:12]} in the checkout"
    found: dict[str, str] = {}
    for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
        match = _LINE.match(line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def verify(rnd: str, root: Path, files: dict[str, str | None], published_logs: set[str] | None = None,
           folder: str = "") -> dict | str:
    """``{"commit", "files"}`` where every file read (path under ``root`` → its blob id) is the
    pinned commit's at the same path and ``folder``'s result logs are those the commit lists;
    else why not (one line)."""
    commit = PINNED.get(rnd)
    if commit is None:
        return f"no published commit of round {rnd} is known to this goodbench"
    listed = listing(root, commit)
    if isinstance(listed, str):
        return listed
    for path, blob in files.items():
        if blob is None or listed.get(path) != blob:
            return f"{path} is not the file MLCommons published at {commit[:12]}"
    if published_logs is not None:
        prefix = folder.rstrip("/") + "/"
        theirs = {p[len(prefix):] for p in listed if p.startswith(prefix) and is_result(p[len(prefix):])}
        if theirs != published_logs:
            return f"the result logs of {folder} are not those MLCommons published at {commit[:12]}"
    return {"commit": commit, "files": len(files)}
