"""The list of the files a site build wrote, kept in the built folder (:data:`MARKER`): each
file's path and sha256. A later build replaces a folder only when every file in it is one the
list names with its content unchanged (:func:`foreign` finds the others), and afterwards removes
only such files (:func:`remove_own`): a planted marker, a file added or edited since, a link or
anything else is never the build's to remove."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path

from suite.record.errors import GoodbenchError

MARKER = ".goodbench-site"  # the manifest's name in every build's folder
KIND = "goodbench-site-manifest"
MAX_MARKER_BYTES = 64 * 1024 * 1024


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


def write(folder: Path) -> dict[str, str]:
    """Write the manifest of every file under ``folder`` (the build, complete) into it; returns
    the listed files and their sha256."""
    files, _ = _entries(folder)
    listed = {rel: digest for rel in files if rel != MARKER and (digest := _sha256(folder / rel)) is not None}
    (folder / MARKER).write_text(json.dumps({"kind": KIND, "files": listed}, indent=0, sort_keys=True) + "\n",
                                 encoding="utf-8")
    return listed


def read(folder: Path) -> dict[str, str] | None:
    """The files a build's manifest in ``folder`` lists (path → sha256); None when there is no
    manifest there: no marker, a link, an empty or planted one, or not a manifest at all."""
    marker = folder / MARKER
    try:
        if marker.is_symlink() or not marker.is_file() or marker.stat().st_size > MAX_MARKER_BYTES:
            return None
        found = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    files = found.get("files") if isinstance(found, dict) and found.get("kind") == KIND else None
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        return None
    return files


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
        if _inside(folder, rel) and _sha256(path) == digest:
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
    never a file it did not write or one changed since (:func:`foreign`)."""
    if out.is_symlink():
        raise GoodbenchError(f"--out {out}: a symbolic link: give the folder itself")
    if not out.exists():
        return
    if not out.is_dir():
        raise GoodbenchError(f"--out {out}: not a directory")
    if not any(out.iterdir()):
        return
    foreign_files = foreign(out)
    if foreign_files is None:
        raise GoodbenchError(f"--out {out}: not empty and not a site built by goodbench (no {MARKER}, or not "
                             "the list of a build's files); a build replaces only the files it wrote, so give a new "
                             "or empty folder")
    if foreign_files:
        shown = ", ".join(foreign_files[:3]) + (f" and {len(foreign_files) - 3} more" if len(foreign_files) > 3 else "")
        raise GoodbenchError(f"--out {out}: holds what the last build did not write, or changed since: {shown}; "
                             "a build replaces only the files it wrote: move these out, or give a new folder")
