"""Temporary files and folders held by their writer, and the removal of those whose writer died.

A writer creates its temp beside where the result goes (a file ``.<name>.<12 hex digits>.tmp``
or a folder with a prefix of the caller's), takes an exclusive ``flock`` on it, checks that the
name still refers to what it created, and holds the lock until the temp is renamed into place or
removed. A cleaner (:func:`remove_abandoned`) removes a temp only when it can take that lock
itself and the name still refers to what it locked (a folder, only when it is one its writer could
have left: this user's, private, holding nothing but files, FIFOs and sockets). The kernel drops a
process's locks when it dies, SIGKILL included, so the temps of a killed writer become removable
and those of a live writer never are; no age or clock is involved. A cleaner that takes a new temp
in the moment between its creation and its writer's lock removes it, and the writer, finding its
name gone, creates another.

:func:`remove_tree` removes a folder of goodbench's own whose contents someone else's code wrote
(a re-run's scratch copy and output folder), however deep, never following a link.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
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
    whatever its name holds afterwards is removed (the block may have swapped another folder in),
    and what cannot be is said in one warning line on stderr."""
    fd, path = _held(lambda: _new_folder(parent, prefix))
    try:
        os.chmod(path, mode)  # mkdtemp makes 0700
        yield path
    finally:
        left = remove_tree(path)  # what the block left there, however deep; a link swapped in is left
        os.close(fd)
        if left:
            print(f"warning: {left}", file=sys.stderr, flush=True)


def remove_abandoned(paths: Iterable[Path], *, folders: bool = False) -> list[Path]:
    """Remove the temps among ``paths`` that no live writer holds (their lock can be taken, and
    the name still refers to what was locked): regular files (folders, with ``folders``), never
    a symbolic link or anything else. A folder only where its writer could have left it: a real
    folder of this user's (the effective uid's), of mode 0700 (a private :func:`held_folder`'s,
    and mkdtemp's before the writer sets another), holding only regular files, FIFOs and sockets, removed
    name by name through the folder's own descriptor, then itself; anything else under such a
    name (another user's, one holding a folder or a link, however deep) is left where it is,
    silently, as is a folder that any step of its removal fails on. Returns what was removed."""
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
                if not _remove_private_folder(fd, path):
                    continue  # not one a writer of ours could have left: left alone
            elif remove:
                os.unlink(path)
            removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def _remove_private_folder(fd: int, path: Path) -> bool:
    """Remove the folder open as ``fd`` at ``path`` (:func:`remove_abandoned`'s conditions); False,
    with nothing removed, where it is not one. Its entries are looked at and unlinked through ``fd``,
    so a link or folder swapped in under one of its names is never followed; OSError propagates."""
    here = os.fstat(fd)
    if here.st_uid != os.geteuid() or stat.S_IMODE(here.st_mode) != 0o700:
        return False
    names = os.listdir(fd)
    for name in names:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False
    for name in names:
        os.unlink(name, dir_fd=fd)  # a folder swapped in since is refused (EISDIR), never entered
    os.rmdir(path)  # an empty folder, and never what a link names
    return True


def remove_tree(path: Path) -> str | None:
    """Remove the folder ``path`` and everything under it, whoever's code wrote it there: however
    deep (:func:`shutil.rmtree` recurses on Python 3.11 and 3.12, and a tree a few thousand folders deep
    raises RecursionError, which its ``ignore_errors`` does not cover), never following a symbolic
    link (one at ``path`` itself is left as it is), folders made unwritable inside it made writable
    first. Where :func:`shutil.rmtree` leaves anything, coreutils finish the job, walking the tree
    without recursing and following no link: ``chmod -R u+rwX`` on the folder as opened here (its
    descriptor, so that nothing swapped in at ``path`` since is followed), then ``rm -rf
    --one-file-system``. None once nothing is left at ``path``; else one line saying what was left
    where, for the caller to print (never an exception)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} is left there: it could not be opened as a folder ({exc.strerror})"
    try:
        with contextlib.suppress(RecursionError):  # deeper than Python's recursion: removed below
            shutil.rmtree(path, ignore_errors=True)
        for argv in (["chmod", "-R", "u+rwX", "--", f"/dev/fd/{fd}"], ["rm", "-rf", "--one-file-system", "--", str(path)]):
            if not os.path.lexists(path):
                return None
            try:
                subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               pass_fds=(fd,), check=False)
            except OSError:
                break  # no coreutils here
    finally:
        os.close(fd)
    if not os.path.lexists(path):
        return None
    return f"{path} could not be removed whole: what is left of it is there (remove it by hand)"


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
