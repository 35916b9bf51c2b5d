"""Which code an own implementation's results file measured (the library writes it,
:mod:`suite.api.benchmark`; ``goodbench reproduce`` checks it, :mod:`suite.run.reproduce.own`): its git commit and whether the work
tree had changes, and the sha256 of the files the user names (docs/own-code.md). Self-reported:
nothing in a results file can prove which code ran; ``goodbench reproduce`` can only run the
recorded command where the same code is at hand."""
from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from suite.record.errors import GoodbenchError
from suite.record.privacy import public_path

MAX_FILES = 100  # files named for their sha256: a description, not an archive


def file_digests(paths: Iterable[str | Path], root: Path | None = None) -> dict[str, str]:
    """The sha256 of each named file, keyed by its name (:func:`shown`). :class:`GoodbenchError`
    for a file that cannot be read."""
    digests: dict[str, str] = {}
    for path in list(paths)[:MAX_FILES]:
        resolved = Path(path).resolve()
        name = shown(resolved, root)
        try:
            digests[name] = hashlib.sha256(resolved.read_bytes()).hexdigest()
        except OSError as exc:
            raise GoodbenchError(f"cannot read {path} to identify the code: {exc.strerror or exc}") from None
    return digests


def shown(path: Path, root: Path | None) -> str:
    """How a file is named in a results file: by its path inside the work tree ``root`` (else
    inside the working folder), as ``goodbench reproduce`` finds it again from there; a file
    outside both by its published path (no home or temporary folder)."""
    resolved = path.resolve()
    for base in (root, Path.cwd().resolve()):
        if base is not None and resolved.is_relative_to(base):
            return resolved.relative_to(base).as_posix()
    return public_path(str(path))


def git(where: Path, *args: str, timeout: float = 30) -> str | None:
    """What ``git -C where ARGS`` prints, stripped; None where git is missing, fails or takes
    longer than ``timeout`` seconds."""
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(where: Path) -> tuple[Path | None, str | None, bool | None]:
    """(work tree root, commit, dirty: tracked files changed) of the git work tree holding
    ``where``; (None, None, None) outside one or without git."""
    top, commit = git(where, "rev-parse", "--show-toplevel", timeout=10), git(where, "rev-parse", "HEAD", timeout=10)
    if top is None or commit is None:
        return None, None, None
    status = git(where, "status", "--porcelain", "--untracked-files=no", timeout=10)
    return Path(top).resolve(), commit, None if status is None else bool(status)


def code_identity(files: Iterable[str | Path] = ()) -> tuple[dict[str, Any], Path | None]:
    """``settings.implementation.code``: the git commit and dirty flag of the work tree holding
    the first of ``files`` (else the working folder; None outside one), the sha256 of ``files``
    and the working folder relative to the work tree's root (``workdir``); and that root (None
    outside one)."""
    files = list(files)
    root, commit, dirty = git_state(Path(files[0]).resolve().parent if files else Path.cwd())
    here = Path.cwd().resolve()
    workdir = here.relative_to(root).as_posix() if root is not None and here.is_relative_to(root) else "."
    return {"git_commit": commit, "git_dirty": dirty, "files": file_digests(files, root), "workdir": workdir}, root


def default_command(argv: list[str], root: Path | None, nproc_per_node: int = 1, nnodes: int = 1) -> list[str]:
    """How this process was started, as a command to run again from the work tree's root (else
    the working folder): ``python SCRIPT ARGS``, the script named by :func:`shown`; a worker of
    a torchrun job of ``nproc_per_node`` processes on each of ``nnodes`` nodes:
    ``torchrun [--nnodes=N] --nproc-per-node=P SCRIPT ARGS``."""
    if not argv or not argv[0] or argv[0] == "-c":
        return ["python", "-c", "..."]
    script = [shown(Path(argv[0]), root), *argv[1:]]
    if nproc_per_node == 1 and nnodes == 1:
        return ["python", *script]
    return ["torchrun", *([f"--nnodes={nnodes}"] if nnodes > 1 else []), f"--nproc-per-node={nproc_per_node}",
            *script]
