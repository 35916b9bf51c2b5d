"""Dataset registry and lookup: every file a workload reads, with its canonical URL and sha256.

A file is looked for, in order, in ``--data-dir``, ``$GOODBENCH_DATA_DIR`` and the user
cache (``$XDG_CACHE_HOME/goodbench``, default ``~/.cache/goodbench``); if it is in none, it is
downloaded from its canonical URL into the cache (unless ``GOODBENCH_OFFLINE=1``). A file is
used only after its sha256 matches the pinned one.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DataFile:
    """One pinned dataset file: ``name`` is its path relative to a data directory."""

    name: str
    url: str
    sha256: str  # 64 lowercase hex digits, as sha256sum prints them
    size: int


def pin_problem(file: DataFile) -> str | None:
    """What is wrong with the form of ``file``'s pin (its sha256 and size), in words; None when well formed."""
    if not (len(file.sha256) == 64 and all(c in "0123456789abcdef" for c in file.sha256)):
        return (f"data file {file.name}: sha256 {file.sha256!r} is not 64 lowercase hex digits "
                "(the file's sha256 as sha256sum prints it)")
    if isinstance(file.size, bool) or not isinstance(file.size, int) or file.size < 1:
        return f"data file {file.name}: size {file.size!r} is not the file's size in bytes"
    return None


PUT_IT = "put the file under --data-dir or $GOODBENCH_DATA_DIR"  # what :class:`DataNotFound` ends with


class DataNotFound(Exception):
    """A dataset file could not be found or fetched with the right checksum. ``str()`` names every
    place looked in and ends with where to put the file (:data:`PUT_IT`); :attr:`looked` is the
    same without that end, for a caller that says how to get it its own way; :attr:`short` says
    why in a few words, with no path (what a results file and a skipped workload's line carry)."""

    def __init__(self, looked: str, short: str = ""):
        super().__init__(f"{looked}; {PUT_IT}")
        self.looked = looked
        self.short = short or looked


def missing_reason(workload_id: str, files, data_dir: str | os.PathLike | None = None,
                   every_place: bool = False, announce: Announce | None = None) -> str | None:
    """Why a workload's data ``files`` cannot be had, and how to get them; None where each is at
    hand (fetched into the cache if need be, as :func:`locate` does, which tells ``announce``). One
    line naming no path (a skipped workload's reason, published with its results file), or with
    ``every_place`` every place looked in (said to the user who named the workload). Needs no torch."""
    try:
        for file in files:
            locate(file, data_dir, announce)
    except DataNotFound as exc:
        return (f"{exc.looked if every_place else exc.short}; `goodbench data fetch -w {workload_id}` gets it "
                f"(offline: `goodbench data fetch -w {workload_id} --mirror DIR` copies it from a folder holding it; "
                "or give --data-dir DIR, or set GOODBENCH_DATA_DIR)")
    return None


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir() -> Path:
    """The user cache where downloads land."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "goodbench"


def search_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The directories looked in, in order."""
    dirs = [Path(data_dir)] if data_dir else []
    if os.environ.get("GOODBENCH_DATA_DIR"):
        dirs.append(Path(os.environ["GOODBENCH_DATA_DIR"]))
    dirs.append(cache_dir())
    return dirs


def missing_folder(data_dir: str | os.PathLike | None = None) -> str | None:
    """What is wrong with the data folder the user named: ``--data-dir`` where given, else
    ``$GOODBENCH_DATA_DIR`` (a stale variable beside a good ``--data-dir`` stops nothing): one that
    does not exist (a typo?) or is not a folder, in words; None when it is a folder or none is
    named. The user cache may not exist yet (a download makes it)."""
    named = [("--data-dir", Path(data_dir))] if data_dir else (
        [("GOODBENCH_DATA_DIR", Path(os.environ["GOODBENCH_DATA_DIR"]))] if os.environ.get("GOODBENCH_DATA_DIR") else [])
    for option, folder in named:
        shown = f"--data-dir {folder}" if option == "--data-dir" else f"GOODBENCH_DATA_DIR={folder}"
        if not folder.exists():
            return f"{shown}: no such folder (a typo?); give the folder that holds the dataset files"
        if not folder.is_dir():
            return f"{shown}: a file, not a folder; give the folder that holds the dataset files"
    return None


def is_present(file: DataFile, data_dir: str | os.PathLike | None = None) -> bool:
    """True when a copy with the right size sits in one of the search dirs (checksum not read)."""
    return any((d / file.name).is_file() and (d / file.name).stat().st_size == file.size
               for d in search_dirs(data_dir))


VERIFY_LIMIT = 256 << 20  # `goodbench list` hashes files up to this size (about 0.3 s each)


@dataclass(frozen=True)
class Presence:
    """What :func:`presence` found: ``status`` is "yes" (a copy whose sha256 matches), "no"
    (no copy), "corrupt" (only copies of the wrong size or sha256: ``run`` refuses them) or
    "unverified" (a copy of the right size too large to hash quickly); ``path`` the copy."""

    status: str
    path: Path | None = None


def presence(file: DataFile, data_dir: str | os.PathLike | None = None,
             hash_limit: int = VERIFY_LIMIT) -> Presence:
    """Whether ``run`` would find a verified copy of ``file`` in the search dirs (no download):
    the first copy whose sha256 matches, in search order, as :func:`locate` takes it. Copies
    above ``hash_limit`` bytes are not hashed (their size must match): "unverified"."""
    corrupt = unverified = None
    for directory in search_dirs(data_dir):
        path = directory / file.name
        if not path.is_file():
            continue
        if path.stat().st_size != file.size:
            corrupt = corrupt or path
        elif file.size > hash_limit:
            unverified = unverified or path
        elif sha256_of(path) == file.sha256:
            return Presence("yes", path)
        else:
            corrupt = corrupt or path
    if unverified is not None:
        return Presence("unverified", unverified)
    return Presence("corrupt", corrupt) if corrupt is not None else Presence("no")


Announce = Callable[[str], None]
"""Where a download is said before it begins (:func:`fetching`): a file of tens of megabytes
fetched unsaid left a run silent after its first line."""


def fetching(file: DataFile, url: str) -> str:
    """The line said before ``file`` is fetched from ``url`` (:func:`source_url`)."""
    return f"fetching {file.name} ({file.size:,} bytes) from {url}"


def locate(file: DataFile, data_dir: str | os.PathLike | None = None, announce: Announce | None = None) -> Path:
    """Path of a verified copy of ``file``, downloading it into the cache if needed (said first
    to ``announce``, where given).

    Raises :class:`DataNotFound` naming the file, its URL, its checksum and where it looked.
    """
    tried: list[str] = []
    wrong = 0
    actual = ""
    for directory in search_dirs(data_dir):
        path = directory / file.name
        if not path.is_file():
            tried.append(f"{path} (absent)" if directory.is_dir() else
                         f"{directory} (not a folder)" if directory.exists() else f"{directory} (no such folder)")
            continue
        actual = sha256_of(path)
        if actual == file.sha256:
            return path
        wrong += 1
        tried.append(f"{path} (wrong sha256 {actual[:12]}…, not the pinned {file.sha256[:12]}…: run refuses it)")
    if offline():
        tried.append(f"{file.url} (not downloaded: GOODBENCH_OFFLINE=1)")
        why = "not downloaded: GOODBENCH_OFFLINE=1"
    else:
        if announce is not None:
            announce(f"{fetching(file, file.url)} into {cache_dir()}")
        try:
            return fetch(file)
        except (OSError, ValueError) as exc:
            no_network = _no_network(exc)  # said as that, not as urllib's "<urlopen error [Errno -2] …>"
            tried.append(f"{file.url} (download failed: {'no network' if no_network else exc})")
            why = f"the download failed{no_network}"
    folders = _folders(len(search_dirs(data_dir)))
    pin = ""
    if wrong:  # found, but not the pinned bytes: said so, not "not found" (as `goodbench data verify` says it)
        copies = "1 copy" if wrong == 1 else f"{wrong} copies"
        found = f"has {copies} with a wrong sha256 (run refuses it) and none with the pinned one"
        pin = (f"; the last copy's sha256 is {actual}, the pinned one {file.sha256}: if you are adding this "
               "dataset, the pin may be wrong")
        short = f"{file.name}: {copies} with a wrong sha256 in {folders} (run refuses it), {why}"
    else:
        found, short = "not found", f"{file.name} not found in {folders}, {why}"
    raise DataNotFound(  # its canonical URL is among the places looked in
        f"dataset file {file.name} (sha256 {file.sha256[:12]}…) {found}; looked in: " + "; ".join(tried) + pin,
        short=short,
    )


def _no_network(exc: BaseException) -> str:
    """" (no network)" where ``exc`` says the address did not resolve or could not be reached, else ""."""
    reason = getattr(exc, "reason", exc)  # urllib's URLError wraps the socket's error
    return " (no network)" if isinstance(reason, (socket.gaierror, ConnectionError, TimeoutError)) else ""


def _folders(n: int) -> str:
    return "1 folder" if n == 1 else f"{n} folders"


def offline() -> bool:
    """Whether downloads are forbidden (``GOODBENCH_OFFLINE=1``)."""
    return os.environ.get("GOODBENCH_OFFLINE") == "1"


def source_url(file: DataFile, source: str | None = None) -> str:
    """The URL :func:`fetch` reads ``file`` from: its canonical one, or its name under ``source``
    (a folder or a URL)."""
    if source is None:
        return file.url
    if "://" in source:
        return source.rstrip("/") + "/" + file.name
    return (Path(source) / file.name).resolve().as_uri()


def fetch(file: DataFile, source: str | None = None, dest_dir: Path | None = None) -> Path:
    """Copy ``file`` into ``dest_dir`` (default the user cache) from ``source`` — a folder or a URL
    under which it lies by its name (a mirror) — or, by default, from its canonical URL; the
    copy becomes visible only once its sha256 matches (ValueError otherwise, OSError when it
    cannot be read)."""
    url = source_url(file, source)
    dest = (dest_dir or cache_dir()) / file.name
    made = [d for d in (dest.parent, *dest.parent.parents) if not d.exists()]  # taken away again on a failure
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".download-")
    fetched = False
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=30) as resp:
            for chunk in iter(lambda: resp.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != file.sha256:
            raise ValueError(f"{url}: sha256 {digest.hexdigest()[:12]}… does not match the pinned "
                             f"{file.sha256[:12]}…")
        os.replace(tmp, dest)
        fetched = True
        return dest
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        for folder in [] if fetched else made:  # deepest first; one that holds something else stays
            with contextlib.suppress(OSError):
                folder.rmdir()
