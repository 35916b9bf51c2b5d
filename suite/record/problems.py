"""The problems a results file can have: each a stable code registered once with its meaning and
the rules version that introduced it, the dotted field and a reason. The readers of the record
(suite/record/reading.py) and the validator's rules (suite/validate/) both report them; every
code is listed in docs/rules.md (tests/test_rules_doc.py)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from suite.record.text import safe


@dataclass(frozen=True)
class Problem:
    """One rule broken: a stable ``code``, the dotted ``field`` and a human ``reason``."""

    code: str
    field: str
    reason: str

    def said(self) -> str:
        """``field: reason [code]``; ``reason [code]`` for a problem of the whole file (no field)."""
        return f"{self.field + ': ' if self.field else ''}{self.reason} [{self.code}]"

    def line(self, filename: str) -> str:
        """``FILE: field: reason [code]`` (``FILE: reason [code]`` without a field), printable
        whatever the file name holds."""
        return f"{safe(filename, 200)}: {self.said()}"


_descriptions: dict[str, str] = {}
_since: dict[str, int] = {}

CODES: Mapping[str, str] = MappingProxyType(_descriptions)
"""Every registered code → its one-line meaning (a read-only view of the registry)."""
SINCE: Mapping[str, int] = MappingProxyType(_since)
"""Every registered code → the rules version that introduced it (docs/rules.md's changelog)."""


def code(name: str, description: str, since: int = 1) -> str:
    """Register the problem code ``name`` with its one-line meaning and the rules version that
    introduced it (``since``); returns ``name``.

    Codes are stable: registering one again with another meaning is an error."""
    known = _descriptions.setdefault(name, description)
    if known != description or _since.setdefault(name, since) != since:
        raise ValueError(f"problem code {name!r} is already registered as {known!r} (since v{_since[name]})")
    return name
