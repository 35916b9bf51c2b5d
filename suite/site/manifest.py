"""The list of the files a site build wrote, kept in the built folder (:data:`MARKER`): each
file's path and sha256. A later build replaces a folder only when every file in it is one the
list names with its content unchanged (:func:`foreign` finds the others), and afterwards removes
only such files (:func:`remove_own`): a planted marker, a file added or edited since, a link or
anything else is never the build's to remove.

A list is one this user's build could have written (:func:`read`, and :func:`check_output` says
why not) only where the folder and the list are this user's (its effective uid), the list a
regular file that neither group nor others may write (a build writes it :data:`MODE`, whatever
the umask), and every path it names one a build writes (:func:`buildable`: a page, style,
script, download, copy or log, in the build's own folders). Otherwise the folder is no
previous build: a list another user planted, or one naming ``thesis.txt``, removes nothing."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path, PurePosixPath

from suite.record.errors import GoodbenchError
from suite.record.text import safe

MARKER = ".goodbench-site"  # the manifest's name in every build's folder
KIND = "goodbench-site-manifest"
MAX_MARKER_BYTES = 64 * 1024 * 1024
MODE = 0o644  # the list's mode: its owner's to write only
# what a build writes (suite/site/__init__.py): pages, downloads and the list's other kinds in its
# own folders; pages and downloads only at the top. write() refuses a build holding anything else,
# so that a new kind of file is added here before a build can write it.
BUILT_FOLDERS = frozenset({"mlperf", "raw", "runs", "speedrun", "static", "systems", "workloads"})
BUILT_SUFFIXES = frozenset({".css", ".csv", ".html", ".js", ".json", ".txt"})
TOP_SUFFIXES = frozenset({".csv", ".html", ".json"})
NOT_A_LIST = f"no {MARKER}, or not the list of a build's files"


def _sha256(path: Path) -> str | None:
    """The sha256 of the regular file at ``path`` (never followed through a link); None for
    anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        digest = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _entries(folder: Path) -> tuple[list[str], list[str]]:
    """(files, other entries) under ``folder``, as paths relative to it; folders are walked, never
    followed through a link; links and special files are "other"."""
    files: list[str] = []
    other: list[str] = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        here = Path(root)
        for name in list(dirs):
            if (here / name).is_symlink():
                dirs.remove(name)
                other.append((here / name).relative_to(folder).as_posix())
        for name in names:
            path = here / name
            rel = path.relative_to(folder).as_posix()
            (files if stat.S_ISREG(os.lstat(path).st_mode) else other).append(rel)
    return sorted(files), sorted(other)


def buildable(rel: str) -> bool:
    """True when ``rel`` (a path relative to the output folder) is one a build writes: a file of
    :data:`BUILT_SUFFIXES` in one of :data:`BUILT_FOLDERS`, or of :data:`TOP_SUFFIXES` at the
    top; no hidden name, no ``..``, no absolute path."""
    path = PurePosixPath(rel)
    parts = path.parts
    if not parts or path.is_absolute() or "\\" in rel or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return False
    if len(parts) == 1:
        return path.suffix in TOP_SUFFIXES
    return parts[0] in BUILT_FOLDERS and path.suffix in BUILT_SUFFIXES


def write(folder: Path) -> dict[str, str]:
    """Write the manifest of every file under ``folder`` (the build, complete) into it, of
    :data:`MODE` whatever the umask; returns the listed files and their sha256. A file that
    :func:`buildable` does not name is refused (:class:`GoodbenchError`): the next build could not
    remove it."""
    files, _ = _entries(folder)
    listed = {rel: digest for rel in files if rel != MARKER and (digest := _sha256(folder / rel)) is not None}
    unknown = sorted(rel for rel in listed if not buildable(rel))
    if unknown:
        raise GoodbenchError(f"the build wrote {', '.join(unknown[:3])}, which suite/site/manifest.py does not "
                             "name as a build's (BUILT_FOLDERS, BUILT_SUFFIXES): the next build could not replace it")
    payload = (json.dumps({"kind": KIND, "files": listed}, indent=0, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(folder / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                 MODE)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), MODE)  # the umask may have taken more, or less (a group-writable 0664)
        f.write(payload)
    return listed


def _user() -> int | None:
    """This process's effective uid: the owner of what it writes (None where the OS has none)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid() if geteuid is not None else None


def _distrust(folder: Path, marker: os.stat_result) -> str | None:
    """Why the list (``marker``: its status, read from the open file) in ``folder`` cannot be one
    this user's build wrote, in a few words; None where it can."""
    me = _user()
    try:
        here = os.lstat(folder)
    except OSError as exc:
        return f"the folder cannot be read ({exc.strerror})"
    if me is not None and here.st_uid != me:
        return f"the folder is owned by uid {here.st_uid}, not by this user's uid {me}"
    if not stat.S_ISREG(marker.st_mode):
        return f"its {MARKER} is not a regular file"
    if me is not None and marker.st_uid != me:
        return f"its {MARKER} is owned by uid {marker.st_uid}, not by this user's uid {me}"
    writers = [who for bit, who in ((stat.S_IWGRP, "group"), (stat.S_IWOTH, "others")) if marker.st_mode & bit]
    if writers:
        return (f"its {MARKER} may be written by {' and '.join(writers)}: mode {stat.S_IMODE(marker.st_mode):03o}, "
                f"where a build writes {MODE:03o}")
    return None


def _load(folder: Path) -> tuple[dict[str, str] | None, str]:
    """(the files the list in ``folder`` names, "") where it is one this user's build could have
    written; else (None, why not, in a few words)."""
    try:
        fd = os.open(folder / MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # none, or a link
        return None, NOT_A_LIST
    with os.fdopen(fd, "rb") as f:
        status = os.fstat(f.fileno())
        why = _distrust(folder, status)
        if why is not None:
            return None, why
        if status.st_size > MAX_MARKER_BYTES:
            return None, NOT_A_LIST
        try:
            found = json.loads(f.read(MAX_MARKER_BYTES + 1).decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return None, NOT_A_LIST
    files = found.get("files") if isinstance(found, dict) and found.get("kind") == KIND else None
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None, NOT_A_LIST
    outside = sorted(rel for rel in files if not buildable(rel))
    if outside:
        more = len(outside) - 3
        shown = ", ".join(safe(rel) for rel in outside[:3]) + (f" and {more} more" if more > 0 else "")
        return None, f"its {MARKER} names {shown}, which no build writes"
    return files, ""


def read(folder: Path) -> dict[str, str] | None:
    """The files a build's manifest in ``folder`` lists (path → sha256); None when there is no
    manifest there that this user's build could have written (:func:`_load`): no marker, a link,
    an empty or planted one, one another user owns or may write, one naming a file no build
    writes, or not a manifest at all."""
    return _load(folder)[0]


def foreign(folder: Path) -> list[str] | None:
    """The entries under ``folder`` that are not a listed file of its build with its listed
    content (relative paths; empty: the folder is exactly a build's). None when ``folder`` has no
    manifest."""
    listed = read(folder)
    if listed is None:
        return None
    files, other = _entries(folder)
    changed = [rel for rel in files if rel != MARKER and (rel not in listed or _sha256(folder / rel) != listed[rel])]
    return sorted(changed + other)


def _inside(folder: Path, rel: str) -> bool:
    """True when ``rel`` names a path under ``folder`` through real folders only (no ``..``, no
    absolute path, no link on the way)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return False
    here = folder
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or not here.is_dir():
            return False
    return True


def remove_own(folder: Path, listed: dict[str, str]) -> list[str]:
    """Remove from ``folder`` the files ``listed`` names whose content still matches, the marker,
    and the folders left empty; returns what remains (relative paths), never removed."""
    for rel, digest in listed.items():
        path = folder / rel
        if buildable(rel) and _inside(folder, rel) and _sha256(path) == digest:
            path.unlink()
    marker = folder / MARKER
    if read(folder) is not None:
        marker.unlink()
    for root, dirs, _ in os.walk(folder, topdown=False, followlinks=False):
        for name in dirs:
            path = Path(root) / name
            if not path.is_symlink():
                with contextlib.suppress(OSError):  # not empty: something not the build's is in it
                    path.rmdir()
    files, other = _entries(folder)
    return sorted(files + other)


def check_paths(results_dir: str | Path, out_dir: str | Path) -> tuple[Path, Path]:
    """A build's two folders, checked before any work (light: the ``site`` command checks them before
    loading the builder): the results folder exists, and the output is new, empty or a previous
    build (:func:`check_output`); returns (results folder, output as an absolute path);
    :class:`GoodbenchError` otherwise."""
    results = Path(results_dir)
    if not results.is_dir():
        raise GoodbenchError(f"--results-dir {results}: " + (
            "not a directory" if results.exists() else "no such directory"))
    out = Path(os.path.abspath(out_dir))
    if not out.name:
        raise GoodbenchError(f"--out {out_dir}: give a folder of its own to build into")
    check_output(out)
    return results, out


def check_output(out: Path) -> None:
    """Refuse an output path that is a link, a file, or a non-empty folder other than a previous
    build exactly as its manifest (:data:`MARKER`) lists it: a build replaces the files it wrote,
    never a file it did not write or one changed since (:func:`foreign`). A manifest this user's
    build could not have written (:func:`read`) is no manifest: the line says why."""
    if out.is_symlink():
        raise GoodbenchError(f"--out {out}: a symbolic link: give the folder itself")
    if not out.exists():
        return
    if not out.is_dir():
        raise GoodbenchError(f"--out {out}: not a directory")
    if not any(out.iterdir()):
        return
    _, why = _load(out)
    if why:
        raise GoodbenchError(f"--out {out}: not empty and not a site built by goodbench ({why}); a build replaces "
                             "only the files it wrote, so give a new or empty folder")
    foreign_files = foreign(out)
    if foreign_files is None:  # changed since the line above: checked again after the swap too
        raise GoodbenchError(f"--out {out}: not empty and not a site built by goodbench ({NOT_A_LIST}); a build "
                             "replaces only the files it wrote, so give a new or empty folder")
    if foreign_files:
        more = len(foreign_files) - 3
        shown = ", ".join(safe(rel) for rel in foreign_files[:3]) + (f" and {more} more" if more > 0 else "")
        raise GoodbenchError(f"--out {out}: holds what the last build did not write, or changed since: {shown}; "
                             "a build replaces only the files it wrote: move these out, or give a new folder")
