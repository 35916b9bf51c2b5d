"""Reading the files of a submission tree, safe on any tree: regular files only, never through a
symbolic link, never more than a size limit, never blocking.

A published round holds no symbolic link, FIFO or device; a crafted tree may, and following one
could read a file outside the tree (its contents would reach a document and the site), hang the
import (a FIFO), or read without end (``/dev/zero``). Every file of a tree is opened here with
``O_NOFOLLOW | O_NONBLOCK`` and checked on the descriptor that is read (a regular file, within
its limit), so a file swapped for a link between a check and the read is refused too.
"""
from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
from pathlib import Path

# The largest result log of the published rounds v0.6-v5.1 is 4.1 MB. A log's event lines of
# the keys the checker reads are held while it is checked (about 8 bytes of memory per byte of
# such lines), so the limit bounds what one worker holds: about 130 MB at 16 MiB.
MAX_LOG_BYTES = 16 * 2 ** 20
MAX_JSON_BYTES = 2 ** 20  # a system description or scaling.json (the largest published: 2.5 kB)


class Unreadable(Exception):
    """A file of the tree that is not read, with the reason as one line."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike, max_bytes: int, dir_fd: int | None = None) -> tuple[io.FileIO, int]:
    """(binary file, size) of a regular file of at most ``max_bytes`` (``path`` relative to the
    open folder ``dir_fd`` when given); :class:`Unreadable` for a symbolic link, anything but a
    regular file, a larger file, or one that cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("a symbolic link: not followed") from None
        raise Unreadable(f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"{_kind(info.st_mode)}, not a regular file: not read")
        if info.st_size > max_bytes:
            raise Unreadable(f"{info.st_size:,} bytes, over the {max_bytes:,}-byte limit for this file: not read")
        os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True), info.st_size
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a small regular file (see :func:`open_regular`)."""
    handle, _ = open_regular(path, max_bytes)
    with handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the check
        raise Unreadable(f"over the {max_bytes:,}-byte limit for this file: not read")
    return data


class HashingReader(io.RawIOBase):
    """A raw reader over an open file that hashes what passes through it and stops with
    :class:`Unreadable` past ``max_bytes`` (a file that grows while it is read)."""

    def __init__(self, raw: io.FileIO, max_bytes: int, also=None):
        self.raw, self.max_bytes, self.sha256, self.size = raw, max_bytes, hashlib.sha256(), 0
        self.also = also  # a second hash of the same bytes (a git blob id), or None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer) or 0
        if n:
            self.size += n
            if self.size > self.max_bytes:
                raise Unreadable(f"grew over the {self.max_bytes:,}-byte limit while read: not read")
            self.sha256.update(memoryview(buffer)[:n])
            if self.also is not None:
                self.also.update(memoryview(buffer)[:n])
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def entries(folder: Path) -> list[os.DirEntry]:
    """The entries of ``folder`` in name order (``OSError`` when it cannot be listed)."""
    with os.scandir(folder) as found:
        return sorted(found, key=lambda e: e.name)


def is_folder(entry: os.DirEntry) -> bool:
    """A real folder (a link to one is not followed)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
