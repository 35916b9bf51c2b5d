"""The inputs of a reproduction: the original results file (its bytes' sha256 and its
document, validated first), the runs chosen from it, and what this machine offers a re-run."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from suite.record.errors import GoodbenchError, Usage


@dataclass(frozen=True)
class Original:
    """The results file to reproduce: its path, the sha256 of its bytes and its document."""

    path: str
    sha256: str
    doc: dict


def read_original(path: str) -> Original:
    """The file's bytes, within the validator's limits (size, UTF-8, strict JSON), hashed,
    parsed and validated: a file the validator refuses (under the rules it was stored under,
    :func:`suite.validate.check_stored`) is no result to reproduce, and is refused with its first
    problem on one line. What validation cannot catch — records invented consistently — is what
    a reproduction is for."""
    from suite import validate

    raw, problems = validate.read_bounded(Path(path))
    if problems or raw is None:
        raise GoodbenchError(problems[0].line(path) if problems else f"{path}: unreadable")
    doc, problems = validate.parse(raw)
    if not problems:
        problems, _ = validate.check_stored(doc)
    if problems:
        more = f" (and {len(problems) - 1} more: goodbench validate lists them)" if len(problems) > 1 else ""
        raise GoodbenchError(f"refused by the validator, not reproduced: {problems[0].line(path)}{more}")
    return Original(path, hashlib.sha256(raw).hexdigest(), dict(doc))


def chosen(original: Original, indexes: list[int] | None) -> list[int]:
    """The runs ``--run`` names (each once, in the order given), or every run."""
    n = len(original.doc["runs"])
    if not indexes:
        return list(range(n))
    bad = [i for i in indexes if not 0 <= i < n]
    if bad:
        allowed = "0" if n == 1 else f"0 to {n - 1}"
        raise Usage(f"{original.path} has {n} run{'s' if n != 1 else ''}: --run {bad[0]} is not one of {allowed}")
    return list(dict.fromkeys(indexes))


@dataclass(frozen=True)
class Machine:
    """What this machine offers a re-run."""

    cuda_devices: int
    cuda_name: str | None = None
    cpu_model: str | None = None
    cpu_capability: str | None = None
    torch: str | None = None


def this_machine() -> Machine:
    import torch

    from suite.run import system

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return Machine(n, torch.cuda.get_device_name(0) if n else None, system.cpu_info()["cpu_model"],
                   system.cpu_capability(), str(torch.__version__))


def as_dict(value) -> dict:
    """``value`` where it is an object, else an empty one: an edited file may hold anything."""
    return value if isinstance(value, dict) else {}
