"""MLCommons system descriptions (``<org>/systems/<system>.json``) read into typed fields.

The descriptions are free text: counts as strings (``"8"``, ``" 128"``), memory as ``"80 GB"``,
``"144384 MiB"`` or ``"95GB"``, empty strings for unknown. Each typed field is parsed from its
text and is None where the text holds no number (or a count over :data:`MAX_COUNT`, which no
system has); the text itself is kept beside it, made safe to show (:func:`clean`).
"""
from __future__ import annotations

import re

from suite.record.text import printable

MAX_COUNT = 1_000_000  # nodes or accelerators: the largest published system has 11,616

_COUNT = re.compile(r"\s*([0-9]{1,12})(?:\.0*)?\s*", re.ASCII)  # a count as MLPerf's descriptions write it
# a number not glued to a word before it ("HBM3" holds no size), with an optional unit
_QUANTITY = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*([KMGTP]i?B|[KMGTP]B?|B)?\b", re.IGNORECASE)
_FACTORS = {"": 1, "B": 1,
            "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
            "P": 1e15, "PB": 1e15,
            "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40, "PIB": 2 ** 50}


def clean(value, limit: int) -> str | None:
    """Free text made safe to show: control, bidi and zero-width characters written as
    ``\\uXXXX`` (:func:`suite.record.text.printable`), white space trimmed, cut to ``limit``
    characters (the last one "…"); None for an empty text."""
    text = printable(str(value if value is not None else "")).strip()
    if not text:
        return None
    return text if len(text) <= limit else text[:limit - 1] + "…"


def count(text) -> int | None:
    """A count from free text: 8, "8", " 128 ", "8.0" → int; "", "N/A", None, a negative number,
    one over :data:`MAX_COUNT`, or any text that is not a plain whole number in ASCII digits
    ("1_000", "1e9", "2x4") → None (an unknown count, never the leading digits)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text if 0 <= text <= MAX_COUNT else None
    if isinstance(text, float):
        return int(text) if text.is_integer() and 0 <= text <= MAX_COUNT else None
    match = _COUNT.fullmatch(str(text or "")[:1000])
    if match is None:  # not a plain whole number: "1_000", "1e9", "8 nodes", "٨" give no count
        return None
    value = int(match.group(1))
    return value if value <= MAX_COUNT else None


def memory_bytes(text) -> float | None:
    """Bytes from a memory size in free text: "80 GB" → 8e10, "144384 MiB" → 144384·2²⁰,
    "95GB" → 9.5e10; a number without unit is taken as GB; None where no size is written."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text) * 1e9
    else:
        match = _QUANTITY.search(str(text or "")[:1000])
        if match is None or len(match.group(1)) > 12:
            return None
        value = float(match.group(1)) * _FACTORS.get((match.group(2) or "GB").upper(), 1e9)
    return value if 0 <= value < 1e18 else None


def describe(desc: dict, folder: str) -> dict:
    """The document's ``system`` section from a system description (``folder``: the system's
    folder name under ``results/``, which MLCommons' file name also uses)."""
    text = lambda key, limit: clean(desc.get(key) or "", limit)
    nodes, per_node = count(desc.get("number_of_nodes")), count(desc.get("accelerators_per_node"))
    memory = memory_bytes(desc.get("accelerator_memory_capacity"))
    # MLCommons' result_summarizer: accelerators_count = accelerators_per_node × number_of_nodes
    accelerators = nodes * per_node if nodes is not None and per_node is not None else None
    return {
        "name": text("system_name", 300) or clean(folder, 300) or "?",
        "folder": clean(folder, 300) or "?",
        "division": text("division", 20),
        "availability": text("status", 200),
        "nodes": nodes,
        "accelerators_per_node": per_node,
        "accelerators": accelerators if accelerators is not None and accelerators <= MAX_COUNT else None,
        "accelerator": text("accelerator_model_name", 300),
        "accelerator_memory_text": text("accelerator_memory_capacity", 200),
        "accelerator_memory_gib": round(memory / 2 ** 30, 3) if memory is not None else None,
        "host_processor": text("host_processor_model_name", 300),
        "host_processors_per_node": count(desc.get("host_processors_per_node")),
        "framework": text("framework", 1000),
        "operating_system": text("operating_system", 300),
        "interconnect": text("accelerator_interconnect", 500),
    }
