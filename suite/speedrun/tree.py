"""Walking a modded-nanogpt checkout, safe on any tree: the two tracks' folders under records/,
real folders and regular files only (no symbolic link is followed, at any depth: every folder is
opened from the one above it with ``O_NOFOLLOW``; no file over the size limit is read; no file or
folder whose name holds a control, bidi or invisible character); every file not read is one line
in ``problems``. And the commit the files were verified against, where the
checkout is a git repository whose HEAD holds them, and whether that commit is upstream's (a
pinned commit of KellerJordan/modded-nanogpt, or an ancestor of one)."""
from __future__ import annotations

import errno
import hashlib
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from suite.mlperf.files import Unreadable, is_folder, open_regular
from suite.record import gitcheck
from suite.record.text import has_control_chars, printable

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
    missing: list[str] = field(default_factory=list)  # track folders not opened, with why


@contextmanager
def open_folder(root: Path, rel: str):
    """An open descriptor of the folder ``rel`` (a repository path) under ``root``, each part
    opened from the one above without following a link; :class:`Unreadable` where a part is a
    link, not a folder or absent."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in rel.split("/"):
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(part, fd)):
                    raise Unreadable(f"{part} is a symbolic link: not followed") from None
                if exc.errno == errno.ENOENT:
                    raise Unreadable("absent") from None
                raise Unreadable(f"cannot be opened: {exc.strerror or exc}") from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def walk(root: Path) -> Tree:
    """The folders, files and logs under the tracks' folders of ``root``; a track folder that
    cannot be opened (absent, a link, or under a linked records/) is one line in ``missing``."""
    tree = Tree()
    for track_folder in TRACK_FOLDERS.values():
        pending = [track_folder]
        while pending:
            rel = pending.pop()
            try:
                with open_folder(root, rel) as fd, os.scandir(fd) as listed:
                    found = sorted(listed, key=lambda e: e.name)
                    kinds = [(e.name, is_folder(e), e.is_symlink()) for e in found]
            except (Unreadable, OSError) as exc:
                why = str(exc) if isinstance(exc, Unreadable) else f"cannot be listed: {exc.strerror or exc}"
                (tree.missing if rel == track_folder else tree.problems).append(f"{rel}: {why}")
                continue
            tree.folders.add(rel)
            for name, is_dir, link in kinds:
                path = f"{rel}/{name}"
                if has_control_chars(name):
                    tree.problems.append(f"{rel}/{printable(name)}: a control, bidi or invisible character in its "
                                         "name: not read")
                elif is_dir:
                    pending.append(path)
                elif link:
                    tree.problems.append(f"{path}: a symbolic link: not followed")
                else:
                    tree.files.add(path)
                    if name.lower().endswith(LOG_SUFFIXES):
                        tree.logs.append(path)
    tree.logs.sort()
    for other, why in NOT_IMPORTED.items():
        if os.path.lexists(root / other):
            tree.problems.append(f"{other}: {why}")
    return tree


def read_log(root: Path, path: str) -> tuple[bytes, str]:
    """(bytes, sha256) of one log, opened through its folders without following a link;
    :class:`Unreadable` with the reason otherwise."""
    folder, name = path.rsplit("/", 1)
    with open_folder(root, folder) as fd:
        handle, _ = open_regular(name, MAX_LOG_BYTES, dir_fd=fd)
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


UPSTREAM = "KellerJordan/modded-nanogpt"
# The commits of KellerJordan/modded-nanogpt this goodbench knows as upstream's, as
# suite/mlperf/published.py pins MLCommons' rounds: the head the shipped documents under
# results/speedrun were imported from (2026-11-30). A commit is upstream's only where it is one of
# these or, in the checkout imported, an ancestor of one. Each has a manifest of its logs
# (suite/speedrun/pinned/<commit>.tsv): pinning a commit, regenerate it with
# ``python -m suite.speedrun.manifest_build CHECKOUT`` from a clean checkout at that commit.
PINNED = ("f411b3d346aa52d3504324ca93c230fd84c6c07f",)
NOT_VERIFIED = "local files, not verified"


@dataclass
class Provenance:
    """What the checkout's git says of the files read: the commit at HEAD holding every one of
    them (None: not verified), the pinned upstream commit that commit is or precedes (None: not
    known to be upstream's), and one line per thing to say (``records/…``: a log the commit
    holds and the checkout lacks)."""
    commit: str | None = None
    upstream: str | None = None
    lines: list[str] = field(default_factory=list)


def upstream_of(gitdir: Path, commit: str) -> str | None:
    """The pinned upstream commit (:data:`PINNED`) that ``commit`` is, or is an ancestor of in the
    checkout (:func:`suite.record.gitcheck.is_ancestor`: from commit objects checked against their
    ids); None otherwise."""
    if commit in PINNED:
        return commit
    return next((pinned for pinned in PINNED if gitcheck.is_ancestor(gitdir, commit, pinned)), None)


def verified_commit(root: Path, read: dict[str, str], present: set[str]) -> Provenance:
    """The commit at HEAD of ``root``'s git checkout where every file read (``read``: repository
    path → its git blob id, the logs and README.md) is a blob of that commit with the same id, and
    whether it is upstream's (:func:`upstream_of`); else no commit, and why ("local files, not
    verified"). Its lines also name each log file of the commit's track folders the checkout lacks
    (not in ``present``: not read). git runs only through :mod:`suite.record.gitcheck`."""
    gitdir = gitcheck.git_dir(root)
    if gitdir is None:
        return Provenance(lines=[f"no git checkout (.git): {NOT_VERIFIED}"])
    try:
        commit = gitcheck.head(gitdir)
        blobs = gitcheck.ls_tree(gitdir, commit, ("README.md", *TRACK_FOLDERS.values()))
    except gitcheck.GitRefused as exc:
        return Provenance(lines=[f"git cannot read the checkout's HEAD ({str(exc)[:200]}): {NOT_VERIFIED}"])
    differ = sorted(p for p, blob in read.items() if blobs.get(p) != blob)
    lacking = [f"{p}: in commit {commit[:7]}, absent from the checkout: not read" for p in sorted(blobs)
               if p not in present and p.lower().endswith(LOG_SUFFIXES)]
    if differ:
        return Provenance(lines=[f"{len(differ)} file(s) read are not those of commit {commit[:7]} at HEAD "
                                 f"(first: {differ[0]}): {NOT_VERIFIED}", *lacking])
    upstream = upstream_of(gitdir, commit)
    if upstream is None:
        lacking.insert(0, f"commit {commit[:7]} at HEAD is not a commit of {UPSTREAM} this goodbench knows, nor an "
                          f"ancestor of one in the checkout: recorded as a local commit, not known to be upstream's")
    return Provenance(commit, upstream, lacking)
