"""Git provenance for the importers (MLPerf's published rounds, the NanoGPT speedrun's history):
the git blob id of bytes read, a checkout's git folder, and the few read-only questions git is
asked about it, all under one hardened environment.

A checkout handed to an importer is anyone's tree, its ``.git`` included, and its configuration
is hostile: a promisor remote whose URL is a command (``ext::sh -c …``) turns a missing object
into a fetch that runs it. So git runs here with no system or global configuration
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``), no prompt, no pager, no lazy fetch
(``GIT_NO_LAZY_FETCH``), no transport at all (``GIT_ALLOW_PROTOCOL=none``, which overrides any
``protocol.*.allow`` of the checkout), no fsmonitor, no hooks, no replace refs, grafts or
commit-graph (each could stand in for a commit's own parents), none of the caller's ``GIT_*``
variables, and git's ownership guard left on (no ``safe.directory`` override: a checkout owned by
another user is not read). A checkout whose configuration makes it a partial clone or names a
promisor remote is refused before any object is read (its configuration read once per state of
its files: :func:`_refuse_promisor`). The blob ids are always computed from the
bytes the importer read (:func:`blob_id`, :class:`BlobHasher`); git only hands over the commit and
tree objects, and each is hashed here against its id before it is believed (:func:`objects`: git
itself does not check what its object store holds, and a checkout is anyone's).
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from pathlib import Path

GIT_TIMEOUT_S = 120
MAX_OUTPUT_BYTES = 64 * 2 ** 20  # the largest listing read (MLPerf v2.1: 65,000 files) is about 8 MB
# a configuration file changed this recently is never cached: a write in the same timestamp tick
# (a coarse kernel clock, FAT or NFS granularity) could leave its stat as it was (racy git)
RACY_S = 2.0
_COMMIT = re.compile(r"[0-9a-f]{40}")


PARTIAL_CLONE = ("the checkout is a partial clone (a promisor remote in its configuration, which git could "
                 "fetch from): it is not read")


class GitRefused(Exception):
    """Why git gave no answer about a checkout (one line)."""


def blob_id(data: bytes) -> str:
    """git's id of a file's bytes (``git hash-object``)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


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


def is_commit(text: object) -> bool:
    """A full SHA-1 commit id in lower case."""
    return isinstance(text, str) and bool(_COMMIT.fullmatch(text))


def git_dir(root: Path) -> Path | None:
    """The git folder of a checkout whose top folder is ``root``: ``.git`` a real folder, or a
    regular file ``gitdir: PATH`` as a worktree's is; None where there is none (a link is not
    followed). Whatever it names is only ever read through :func:`git`."""
    dot = root / ".git"
    if dot.is_symlink():
        return None
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            with open(dot, "rb") as handle:
                text = handle.read(4096).decode("utf-8", "replace").strip()
        except OSError:
            return None
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return target if target.is_absolute() else root / target
    return None


def environment() -> dict[str, str]:
    """The one environment every git command here runs in (see the module docstring)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_NO_LAZY_FETCH="1", GIT_ALLOW_PROTOCOL="none", GIT_PAGER="cat", GIT_OPTIONAL_LOCKS="0",
               # no replace refs, graft file or commit-graph: none may stand in for the objects' own parents
               GIT_NO_REPLACE_OBJECTS="1", GIT_GRAFT_FILE=os.devnull)
    return env


OPTIONS = ("-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}", "-c", "core.commitGraph=false",
           "--no-pager")


def _run(gitdir: Path, *args: str, given: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", f"--git-dir={gitdir}", *OPTIONS, *args], capture_output=True,
                              env=environment(), input=given, stdin=subprocess.DEVNULL if given is None else None,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitRefused(f"git could not be run: {type(exc).__name__}") from None


# the checkouts whose configuration was read, keyed by :func:`_config_key`: None where it passed,
# else why it was refused (a partial clone); :func:`forget` empties it
_CHECKED: dict[tuple, str | None] = {}


def _stamp(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _config_key(gitdir: Path) -> tuple:
    """The checkout's git folder (resolved) and the stat of each file git reads its configuration
    from (``config``, ``config.worktree``, and a worktree's common folder's): an edit, a rename
    or a new file gives another key, so another check."""
    real = os.path.realpath(gitdir)
    files = [os.path.join(real, name) for name in ("config", "config.worktree", "commondir")]
    try:
        with open(files[-1], "rb") as handle:
            common = os.path.realpath(os.path.join(real, handle.read(4096).decode("utf-8", "replace").strip()))
        files += [os.path.join(common, "config"), os.path.join(common, "config.worktree")]
    except OSError:
        pass
    return (real, *(_stamp(f) for f in files))


def _now_ns() -> int:
    return time.time_ns()


def _settled(key: tuple) -> bool:
    """Whether every configuration file of ``key`` (:func:`_config_key`) last changed more than
    :data:`RACY_S` ago, so that a later write gives it another stat."""
    limit = _now_ns() - int(RACY_S * 1e9)
    return all(stamp is None or (stamp[3] < limit and stamp[4] < limit) for stamp in key[1:])


def forget() -> None:
    """Check every checkout's configuration again at its next git command."""
    _CHECKED.clear()


def _refuse_promisor(gitdir: Path) -> None:
    """:class:`GitRefused` where the checkout's configuration makes it a partial clone or names
    a promisor remote: a missing object would be fetched from it (never here, but such a
    checkout is no published one). Read once per checkout and state of its configuration files
    (:func:`_config_key`); a configuration that includes other files is read every time, and so is
    one whose files changed while git read them (the key taken again after the read differs) or
    within :data:`RACY_S` of now (:func:`_settled`)."""
    key = _config_key(gitdir)
    if key in _CHECKED:
        why = _CHECKED[key]
        if why is not None:
            raise GitRefused(why)
        return
    done = _run(gitdir, "config", "--list", "-z")
    if done.returncode:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitRefused(said[-1][:200] if said else "git cannot read the checkout's configuration")
    includes, why = False, None
    for entry in done.stdout.split(b"\0"):
        name, _, value = entry.partition(b"\n")
        name = name.lower()
        includes = includes or name.startswith((b"include.", b"includeif."))
        if name == b"extensions.partialclone" or (name.startswith(b"remote.") and (
                name.endswith(b".promisor") and value.strip().lower() not in (b"false", b"no", b"off", b"0")
                or name.endswith(b".partialclonefilter"))):
            why = PARTIAL_CLONE
            break
    # an included file can change while the checkout's own do not; a write racing the read may
    # have been read under another state's stat
    if (why is not None or not includes) and _config_key(gitdir) == key and _settled(key):
        _CHECKED[key] = why
    if why is not None:
        raise GitRefused(why)


def git(gitdir: Path, *args: str, given: bytes | None = None) -> bytes:
    """The output of one read-only git command on ``gitdir`` (the checkout first checked by
    :func:`_refuse_promisor`; ``given``: its standard input); :class:`GitRefused` with git's last
    line where it fails."""
    _refuse_promisor(gitdir)
    done = _run(gitdir, *args, given=given)
    if done.returncode:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitRefused(said[-1][:200] if said else f"git exit {done.returncode}")
    if len(done.stdout) > MAX_OUTPUT_BYTES:
        raise GitRefused(f"git's answer is over {MAX_OUTPUT_BYTES:,} bytes: not read")
    return done.stdout


def head(gitdir: Path) -> str:
    """The commit at HEAD (:class:`GitRefused` where there is none)."""
    commit = git(gitdir, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}").decode("ascii", "replace").strip()
    if not is_commit(commit):
        raise GitRefused("git names no SHA-1 commit at HEAD")
    return commit


def objects(gitdir: Path, ids: list[str], kind: str) -> dict[str, bytes]:
    """id → content of each object of ``ids`` (``kind``: "commit" or "tree"), every one hashed
    here and refused where its content is not that of its id: git trusts its object store and
    does not check what it reads, so a checkout could hold a forged tree under a published
    commit's tree id (``git ls-tree`` would list it). :class:`GitRefused` where an object is
    missing, of another kind, or not its id's."""
    found: dict[str, bytes] = {}
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return found
    out = git(gitdir, "cat-file", "--batch", given="".join(f"{i}\n" for i in wanted).encode("ascii"))
    at = 0
    for oid in wanted:
        end = out.find(b"\n", at)
        header = out[at:end].split() if end >= 0 else []
        if (len(header) != 3 or header[0].decode("ascii", "replace") != oid or header[1] != kind.encode()
                or not header[2].isdigit()):
            raise GitRefused(f"the checkout lacks {kind} {oid[:12]}, or holds another object under its id")
        size = int(header[2])
        data = out[end + 1:end + 1 + size]
        at = end + 1 + size + 1
        digest = hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)), usedforsecurity=False)
        digest.update(data)
        if len(data) != size or digest.hexdigest() != oid:
            raise GitRefused(f"the checkout's {kind} {oid[:12]} is not the object of that id (a forged object)")
        found[oid] = data
    return found


def _tree_entries(data: bytes) -> list[tuple[bytes, bytes, str]]:
    """(mode, name, id) of each entry of a tree object's content (:class:`GitRefused` for one
    that is not a tree's)."""
    entries = []
    at = 0
    while at < len(data):
        space, nul = data.find(b" ", at), data.find(b"\0", at)
        if space < 0 or nul < space or nul + 21 > len(data):
            raise GitRefused("a tree object of the checkout is not one git writes")
        entries.append((data[at:space], data[space + 1:nul], data[nul + 1:nul + 21].hex()))
        at = nul + 21
    return entries


def _wanted(path: str, paths: tuple[str, ...]) -> bool:
    """Whether ``path`` is under one of ``paths``, or a folder above one (all when none)."""
    return not paths or any(path == p or path.startswith(p + "/") or p.startswith(path + "/") for p in paths)


def ls_tree(gitdir: Path, commit: str, paths: tuple[str, ...] = ()) -> dict[str, str]:
    """path → blob id of every file of ``commit`` (under ``paths`` where given: repository
    paths), as ``git ls-tree -r`` lists them, but from objects each checked against its id here
    (:func:`objects`): the commit, and every tree read from it; :class:`GitRefused` where one
    cannot be read or is not its id's (the commit not in the checkout, a forged object)."""
    if not is_commit(commit):
        raise GitRefused("not a full commit id")
    body = objects(gitdir, [commit], "commit")[commit]
    first = body.split(b"\n", 1)[0].split()
    if len(first) != 2 or first[0] != b"tree" or not is_commit(root := first[1].decode("ascii", "replace")):
        raise GitRefused(f"commit {commit[:12]} names no tree")
    found: dict[str, str] = {}
    level = [("", root)]
    while level:
        trees = objects(gitdir, [oid for _, oid in level], "tree")
        below = []
        for prefix, oid in level:
            for mode, raw_name, entry in _tree_entries(trees[oid]):
                path = prefix + raw_name.decode("utf-8", "surrogateescape")
                if not _wanted(path, paths):
                    continue
                if mode == b"40000":
                    below.append((path + "/", entry))
                elif mode != b"160000":  # a submodule's commit is no file of this one
                    found[path] = entry
        level = below
    return found


def is_ancestor(gitdir: Path, commit: str, of: str) -> bool:
    """Whether ``commit`` is ``of`` or one of its ancestors in the checkout; False where git
    cannot tell (``of`` not in the checkout). The history is read from commit objects each
    checked against its id here (:func:`objects`), never from a commit-graph, graft or replace
    ref that could stand in for them."""
    if not (is_commit(commit) and is_commit(of)):
        return False
    if commit == of:
        return True
    try:
        listed = git(gitdir, "rev-list", of, "--").decode("ascii", "replace").split()
        bodies = objects(gitdir, [c for c in listed if is_commit(c)], "commit")
    except GitRefused:
        return False
    seen, pending = {of}, [of]
    while pending:
        body = bodies.get(pending.pop())
        if body is None:
            continue
        for line in body.split(b"\n\n", 1)[0].split(b"\n"):
            if line.startswith(b"parent "):
                parent = line[7:].decode("ascii", "replace")
                if parent == commit:
                    return True
                if parent not in seen:
                    seen.add(parent)
                    pending.append(parent)
    return False
