"""Temporary files and folders held by their writer, and the removal of those whose writer died.

A writer creates its temp beside where the result goes (a file ``.<name>.<12 hex digits>.tmp``
or a folder with a prefix of the caller's), takes an exclusive ``flock`` on it, checks that the
name still refers to what it created, and holds the lock until the temp is renamed into place or
removed. A cleaner (:func:`remove_abandoned`) removes a temp only when it can take that lock
itself and the name still refers to what it locked. The kernel drops a process's locks when it
dies, SIGKILL included, so the temps of a killed writer become removable and those of a live
writer never are; no age or clock is involved. A cleaner that takes a new temp in the moment
between its creation and its writer's lock removes it, and the writer, finding its name gone,
creates another.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

# the temp files of :func:`held_file`: ``.<name>.<12 hex digits>.tmp``
TEMP_FILE = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{12}\.tmp")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def temp_name(name: str) -> str:
    """A fresh name of a temp file for ``name``: ``.<name>.<12 hex digits>.tmp``."""
    return f".{name}.{secrets.token_hex(6)}.tmp"


@contextlib.contextmanager
def held_file(directory: Path, name: str) -> Iterator[tuple[int, Path]]:
    """A new, empty temp file for ``name`` in ``directory``, open for writing (the descriptor)
    and locked while the block runs; removed afterwards unless the block renamed it away."""
    fd, path = _held(lambda: _new_file(directory, name))
    try:
        yield fd, path
    finally:
        try:
            if _is(fd, path):
                os.unlink(path)  # before the lock goes: no moment where it lies there unlocked
        finally:
            os.close(fd)


@contextlib.contextmanager
def held_folder(parent: Path, prefix: str, mode: int = 0o755) -> Iterator[Path]:
    """A new folder ``<prefix><random>`` in ``parent``, of ``mode``, locked while the block runs;
    whatever its name holds afterwards is removed (the block may have swapped another folder in)."""
    fd, path = _held(lambda: _new_folder(parent, prefix))
    try:
        os.chmod(path, mode)  # mkdtemp makes 0700
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def remove_abandoned(paths: Iterable[Path], *, folders: bool = False) -> list[Path]:
    """Remove the temps among ``paths`` that no live writer holds (their lock can be taken, and
    the name still refers to what was locked): regular files (folders, with ``folders``), never
    a symbolic link or anything else. Returns what was removed."""
    return _unheld(paths, folders=folders, remove=True)


def unheld(paths: Iterable[Path], *, folders: bool = False) -> list[Path]:
    """The paths among ``paths`` that no live writer holds (as :func:`remove_abandoned` finds
    them), left where they are: for what a caller may not remove because it cannot tell that its
    own kind of writer made it."""
    return _unheld(paths, folders=folders, remove=False)


def _unheld(paths: Iterable[Path], *, folders: bool, remove: bool) -> list[Path]:
    kind = stat.S_ISDIR if folders else stat.S_ISREG
    removed = []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue  # gone, a link, or not ours to read
        try:
            if not kind(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live writer holds it
            if not _is(fd, path):
                continue  # renamed into place (or replaced) since it was opened
            if remove and folders:
                shutil.rmtree(path, ignore_errors=True)
            elif remove:
                os.unlink(path)
            removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def temp_files(directory: Path, name: str | None = None) -> list[Path]:
    """The temp files of :func:`held_file` in ``directory`` (those for ``name`` only, when given)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    for entry in names:
        match = TEMP_FILE.fullmatch(entry)
        if match and (name is None or match["name"] == name):
            found.append(Path(directory) / entry)
    return sorted(found)


def _held(create) -> tuple[int, Path]:
    """``create()`` (a new descriptor and its path) until the lock is taken on a path that still
    refers to what was created (a cleaner may remove it before the lock is taken)."""
    while True:
        fd, path = create()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits only for a cleaner that is removing it
            if _is(fd, path):
                return fd, path
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _new_file(directory: Path, name: str) -> tuple[int, Path]:
    while True:
        path = Path(directory) / temp_name(name)
        try:
            return os.open(path, _CREATE, 0o600), path
        except FileExistsError:
            continue


def _new_folder(parent: Path, prefix: str) -> tuple[int, Path]:
    path = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)), path
    except BaseException:
        os.rmdir(path)
        raise


def _is(fd: int, path: Path) -> bool:
    """True when ``path`` (not followed) is the file or folder open as ``fd``."""
    try:
        there = os.lstat(path)
    except OSError:
        return False
    here = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)
