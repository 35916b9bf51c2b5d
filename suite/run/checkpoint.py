"""Crash-safe checkpoints: atomic writes, a sha256 per checkpoint, the last two kept.

A checkpoint of step N is two files in the run's checkpoint directory: ``ckpt-N.pt`` (the
``torch.save`` payload) and, written after it, ``ckpt-N.json`` (step, size and sha256 of the
payload). Each is written to a temp file, fsynced and renamed, so a reader never sees half a
file. A payload without its manifest (the writer died between the two) or whose size or sha256
does not match is passed over and the previous good checkpoint is used. Payloads are loaded
with ``weights_only=True``: tensors and plain containers only, never arbitrary objects.
"""
from __future__ import annotations

import hashlib
import io
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from suite.record.errors import GoodbenchError
from suite.record.results import write_atomic

KEEP = 2
FORMAT = 1


@dataclass
class Loaded:
    """A checkpoint read back: its step, state, file, and the newer ones passed over (why)."""

    step: int
    state: dict
    path: Path
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _name(step: int) -> str:
    return f"ckpt-{step:09d}"


def save(directory: str | Path, step: int, state: dict, keep: int = KEEP) -> dict:
    """Write the checkpoint of ``step`` atomically, then prune all but the newest ``keep``.

    Returns the manifest: ``{"format", "step", "bytes", "sha256", "file"}``.
    """
    directory = Path(directory)
    buffer = io.BytesIO()
    torch.save(state, buffer)
    payload = buffer.getvalue()
    manifest: dict[str, Any] = {"format": FORMAT, "step": step, "bytes": len(payload),
                "sha256": hashlib.sha256(payload).hexdigest(), "file": _name(step) + ".pt"}
    write_atomic(directory / manifest["file"], payload)
    write_atomic(directory / (_name(step) + ".json"), json.dumps(manifest))
    prune(directory, keep)
    return manifest


def prune(directory: Path, keep: int = KEEP) -> None:
    """Delete all checkpoints but the newest ``keep`` complete ones (and orphaned payloads)."""
    stems = [m.stem for m in sorted(directory.glob("ckpt-*.json"))]
    if not stems:
        return
    kept = set(stems[-keep:])
    for path in directory.glob("ckpt-*"):
        if path.stem in kept or path.suffix not in (".json", ".pt"):
            continue
        if path.suffix == ".json" or path.stem < stems[-1]:
            path.unlink(missing_ok=True)


def _read(manifest_path: Path, map_location) -> Loaded | tuple[str, str]:
    """The checkpoint a manifest names, or (file, why it was passed over)."""
    directory = manifest_path.parent
    try:
        manifest = json.loads(manifest_path.read_text())
        payload = (directory / manifest["file"]).read_bytes()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return manifest_path.name, f"unreadable: {exc}"
    if len(payload) != manifest["bytes"]:
        return manifest["file"], f"size {len(payload)} != {manifest['bytes']} (torn)"
    if hashlib.sha256(payload).hexdigest() != manifest["sha256"]:
        return manifest["file"], "sha256 mismatch (corrupt)"
    state = torch.load(io.BytesIO(payload), map_location=map_location, weights_only=True)
    return Loaded(step=manifest["step"], state=state, path=directory / manifest["file"])


def load_latest(directory: str | Path, map_location: str | torch.device = "cpu",
                skipped: list[tuple[str, str]] | None = None) -> Loaded | None:
    """The newest checkpoint whose payload matches its manifest, or None when there is none;
    those passed over, newer ones first, are added to ``skipped`` (file, why) where given (and are
    the answer's :attr:`Loaded.skipped`)."""
    skipped = [] if skipped is None else skipped
    for manifest_path in sorted(Path(directory).glob("ckpt-*.json"), reverse=True):
        read = _read(manifest_path, map_location)
        if isinstance(read, Loaded):
            read.skipped = skipped
            return read
        skipped.append(read)
    return None


def load_step(directory: str | Path, step: int,
              map_location: str | torch.device = "cpu") -> Loaded:
    """The checkpoint of ``step`` (another rank chose it); GoodbenchError when this process
    cannot read it intact, e.g. a node that does not see the checkpoint directory."""
    read = _read(Path(directory) / (_name(step) + ".json"), map_location)
    if not isinstance(read, Loaded):
        raise GoodbenchError(f"checkpoint of step {step} in {directory}: {read[1]} on this node; "
                             "checkpoints must be on a file system every node sees")
    return read


def capture_rng() -> dict:
    """The global RNG states (python, numpy, torch CPU and CUDA) in a weights-only-safe form."""
    state = np.random.get_state(legacy=True)
    if not isinstance(state, tuple):  # the global generator is always MT19937: the legacy tuple
        raise GoodbenchError("numpy's global RNG state is not MT19937's")
    kind, keys, pos, has_gauss, gauss = state
    py_version, py_state, py_gauss = random.getstate()
    return {
        "python": [py_version, torch.tensor(py_state, dtype=torch.int64), py_gauss],
        "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, gauss],
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def restore_rng(states: dict) -> None:
    """Restore the global RNG states captured by :func:`capture_rng`."""
    py_version, py_state, py_gauss = states["python"]
    random.setstate((py_version, tuple(int(x) for x in py_state.tolist()), py_gauss))
    kind, keys, pos, has_gauss, gauss = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    torch.set_rng_state(states["torch"])
    if states["cuda"]:
        torch.cuda.set_rng_state_all(states["cuda"])


def choose_root(results_path: Path, resume: str | None, wanted: bool) -> str | None:
    """The checkpoint root of a run: ``--resume DIR``, else the results file with ``.ckpt`` for
    its suffix (``out.json`` → ``out.ckpt``) when checkpoints or failure injection are asked
    for (it must not exist yet), else None."""
    if resume is not None:
        if not Path(resume).is_dir():
            raise GoodbenchError(f"--resume {resume}: no such checkpoint directory")
        return resume
    if not wanted:
        return None
    root = results_path.with_suffix(".ckpt")
    if root.exists():
        raise GoodbenchError(f"{root} exists; pass --resume {root} to continue that run")
    return str(root)
