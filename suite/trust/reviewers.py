"""The site's trusted reviewers: the signing keys whose reproductions count (docs/rules.md,
"Reproducing a result").

A reproduction is itself a self-reported file: anyone can train a run again — or claim to — and
say "reproduced" or "differs". The site counts a reproduction for its original ("reproduced N
times", "differs N times") only when a key listed in the results directory's ``reviewers.toml``
signed it; every other reproduction is listed apart as an unverified claim. The file is kept by
whoever keeps the results directory::

    [[reviewer]]
    name = "Example Lab benchmark team"
    fingerprint = "SHA256:…"          # as `goodbench keygen` prints it

Torch-free. A file that cannot be read trusts nobody, and says why.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from suite.record.text import has_control_chars

FILE = "reviewers.toml"
MAX_BYTES = 64 * 1024
MAX_REVIEWERS = 1000
FINGERPRINT = re.compile(r"SHA256:[A-Za-z0-9+/]{43}")  # matched whole (fullmatch): "$" lets "…\n" through


@dataclass(frozen=True)
class Reviewers:
    """Trusted fingerprint → the reviewer's name; ``problem``: why the file was not read (None: fine
    or absent)."""

    names: dict[str, str] = field(default_factory=dict)
    problem: str | None = None

    def trusts(self, fingerprint: str | None) -> bool:
        return fingerprint is not None and fingerprint in self.names


def load(results_dir: str | Path) -> Reviewers:
    """The trusted reviewers of ``results_dir`` (none when it has no ``reviewers.toml``)."""
    path = Path(results_dir) / FILE
    if not path.exists() and not path.is_symlink():
        return Reviewers()
    if path.is_symlink() or not path.is_file():
        return Reviewers(problem=f"{FILE} is not a regular file: no reviewer is trusted")
    from suite.record.reading import read_bounded

    raw, problems = read_bounded(path, MAX_BYTES)  # never more than the limit read
    if raw is None and problems[0].code == "file-too-large":
        return Reviewers(problem=f"{FILE} is larger than {MAX_BYTES} bytes: no reviewer is trusted")
    if raw is None and problems[0].code != "not-json":  # empty: no reviewer, as a file that lists none
        return Reviewers(problem=f"{FILE} cannot be read ({problems[0].reason}): no reviewer is trusted")
    try:
        data = tomllib.loads((raw or b"").decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:  # recursion: nested too deep
        return Reviewers(problem=f"{FILE} cannot be read ({type(exc).__name__}): no reviewer is trusted")
    entries = data.get("reviewer", [])
    if not isinstance(entries, list) or len(entries) > MAX_REVIEWERS:
        return Reviewers(problem=f"{FILE}: [[reviewer]] must be a list of at most {MAX_REVIEWERS} tables")
    names: dict[str, str] = {}
    for n, entry in enumerate(entries):
        fp = entry.get("fingerprint") if isinstance(entry, dict) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(fp, str) or not FINGERPRINT.fullmatch(fp) or not isinstance(name, str) \
                or not 0 < len(name) <= 200 or has_control_chars(name):
            return Reviewers(problem=f"{FILE}: reviewer {n + 1} needs a name (1–200 printable characters) and "
                                     "a fingerprint as `goodbench keygen` prints it (SHA256:…): no reviewer is trusted")
        names[fp] = name
    return Reviewers(names)
