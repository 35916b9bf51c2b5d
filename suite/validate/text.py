"""Text rules shared by the validator and whatever shows document strings: which characters a
results file may not hold, and how untrusted text is made safe to print on one line."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# Control characters (C0, DEL, C1), lone surrogates, bidirectional overrides and isolates,
# zero-width characters and joiners, invisible operators, deprecated format characters and
# line/paragraph separators: none has a place in a results file (rules v2 added U+2060-206F).
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")


def has_control_chars(text: str) -> bool:
    """True when ``text`` holds a character that the validator refuses in any string or key."""
    return CONTROL_CHARS.search(text) is not None


def printable(text: str) -> str:
    """``text`` with every character of :data:`CONTROL_CHARS` written as ``\\uXXXX``: one line,
    nothing reordered or hidden, and the same text back when it holds none."""
    return CONTROL_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe(text: Any, limit: int = 60) -> str:
    """Text safe to print on one line in a problem: no unprintable character, bounded length;
    a missing value (JSON's null, Python's None) reads "nothing", never "None"."""
    text = "nothing" if text is None else str(text)
    clean = "".join(c if c.isprintable() else "?" for c in text[:limit + 1])
    return clean if len(clean) <= limit else clean[:limit] + "…"


def field_path(parts: Iterable[str | int]) -> str:
    """The dotted path of a value (``runs[0].metrics.mfu``), each key made safe."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + safe(part))
    return out
