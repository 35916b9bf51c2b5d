"""Walking a modded-nanogpt checkout, safe on any tree: the two tracks' folders under records/,
real folders and regular files only (no symbolic link is followed, no file over the size limit is
read); every file not read is one line in ``problems``."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from suite.mlperf.files import Unreadable, entries, is_folder, open_regular

TRACK_FOLDERS = {1: "records/track_1_short", 2: "records/track_2_medium"}
NOT_IMPORTED = {  # folders of records/ that are no speed track, each with why it is not read
    "records/track_3_optimization": "the optimization track is not imported: its README ranks runs by steps to "
                                    "3.28 at a fixed architecture, batch size and data with no time limit, a claim in "
                                    "steps that neither speed track's table, chart nor downloads hold"}
LOG_SUFFIXES = (".txt", ".log", ".out", ".stdout")
MAX_LOG_BYTES = 64 * 2 ** 20  # the largest log of the history is under 3 MB
MAX_README_BYTES = 4 * 2 ** 20


@dataclass
class Tree:
    """What a walk found: the folders and files (repository paths with '/'), the log files, and
    one line per entry not read."""
    folders: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    logs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def walk(root: Path) -> Tree:
    """The folders, files and logs under the tracks' folders of ``root``."""
    tree = Tree()
    for track_folder in TRACK_FOLDERS.values():
        pending = [track_folder]
        while pending:
            rel = pending.pop()
            try:
                found = entries(root / rel)
            except OSError as exc:
                tree.problems.append(f"{rel}: cannot be listed: {exc.strerror or exc}")
                continue
            tree.folders.add(rel)
            for entry in found:
                path = f"{rel}/{entry.name}"
                if is_folder(entry):
                    pending.append(path)
                elif entry.is_symlink():
                    tree.problems.append(f"{path}: a symbolic link: not followed")
                else:
                    tree.files.add(path)
                    if entry.name.lower().endswith(LOG_SUFFIXES):
                        tree.logs.append(path)
    tree.logs.sort()
    for folder, why in NOT_IMPORTED.items():
        if os.path.lexists(root / folder):
            tree.problems.append(f"{folder}: {why}")
    return tree


def read_log(root: Path, path: str) -> tuple[bytes, str]:
    """(bytes, sha256) of one log; :class:`Unreadable` with the reason otherwise."""
    handle, _ = open_regular(root / path, MAX_LOG_BYTES)
    with handle:
        data = handle.read(MAX_LOG_BYTES + 1)
    if len(data) > MAX_LOG_BYTES:
        raise Unreadable(f"over the {MAX_LOG_BYTES:,}-byte limit for a log: not read")
    return data, hashlib.sha256(data).hexdigest()


def read_readme(root: Path) -> bytes:
    """The bytes of the checkout's README.md (:class:`Unreadable` when it cannot be read)."""
    handle, _ = open_regular(root / "README.md", MAX_README_BYTES)
    with handle:
        data = handle.read(MAX_README_BYTES + 1)
    if len(data) > MAX_README_BYTES:
        raise Unreadable(f"over the {MAX_README_BYTES:,}-byte limit: not read")
    return data


def link_target(link: str) -> str | None:
    """A README link as a repository path ('records/…', normalised); ``None`` for a link that
    leaves the repository or is not a path inside it (a URL, an absolute path)."""
    if "://" in link or link.startswith(("/", "#")):
        return None
    path = os.path.normpath(link.split("#", 1)[0]).replace(os.sep, "/")
    if path == ".." or path.startswith("../") or path in (".", ""):
        return None
    return path


def checkout_commit(root: Path) -> str | None:
    """The commit the checkout's .git names as HEAD (40 hex digits), read without git and without
    following a link; ``None`` when there is no such .git or it names none."""
    from suite.mlperf.files import read_bytes

    try:
        head = read_bytes(root / ".git" / "HEAD", 4096).decode("ascii").strip()
        if head.startswith("ref: "):
            ref = head[5:]
            if ".." in ref or not ref.startswith("refs/"):
                return None
            try:
                head = read_bytes(root / ".git" / ref, 4096).decode("ascii").strip()
            except Unreadable:
                packed = read_bytes(root / ".git" / "packed-refs", 2 ** 20).decode("ascii", "replace")
                head = next((line.split()[0] for line in packed.splitlines()
                             if line.endswith(" " + ref)), "")
    except (Unreadable, UnicodeDecodeError):
        return None
    return head if len(head) == 40 and all(c in "0123456789abcdef" for c in head) else None
