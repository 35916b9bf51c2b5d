"""MLCommons system descriptions (``<org>/systems/<system>.json``) read into typed fields.

The descriptions are free text: counts as strings (``"8"``, ``" 128"``), memory as ``"80 GB"``,
``"144384 MiB"`` or ``"95GB"``, empty strings for unknown. Each typed field is parsed from its
text and is None where the text holds no number; the text itself is kept beside it.
"""
from __future__ import annotations

import re

_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
# a number not glued to a word before it ("HBM3" holds no size), with an optional unit
_QUANTITY = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*([KMGTP]i?B|[KMGTP]B?|B)?\b", re.IGNORECASE)
_FACTORS = {"": 1, "B": 1,
            "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
            "P": 1e15, "PB": 1e15,
            "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40, "PIB": 2 ** 50}


def count(text) -> int | None:
    """A count from free text: 8, "8", " 128 " → int; "", "N/A", None → None."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    if isinstance(text, float) and text.is_integer():
        return int(text)
    match = _NUMBER.search(str(text or ""))
    if match is None:
        return None
    value = float(match.group().replace(",", "."))
    return int(value) if value.is_integer() else None


def memory_bytes(text) -> float | None:
    """Bytes from a memory size in free text: "80 GB" → 8e10, "144384 MiB" → 144384·2²⁰,
    "95GB" → 9.5e10; a number without unit is taken as GB; None where no size is written."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) * 1e9
    match = _QUANTITY.search(str(text or ""))
    if match is None:
        return None
    unit = (match.group(2) or "GB").upper()
    return float(match.group(1)) * _FACTORS.get(unit, 1e9)


def describe(desc: dict, folder: str) -> dict:
    """The document's ``system`` section from a system description (``folder``: the system's
    folder name under ``results/``, which MLCommons' file name also uses)."""
    text = lambda key: str(desc.get(key) or "").strip()
    nodes, per_node = count(desc.get("number_of_nodes")), count(desc.get("accelerators_per_node"))
    memory = memory_bytes(desc.get("accelerator_memory_capacity"))
    return {
        "name": text("system_name") or folder,
        "folder": folder,
        "division": text("division") or None,
        "availability": text("status") or None,
        "nodes": nodes,
        "accelerators_per_node": per_node,
        # MLCommons' result_summarizer: accelerators_count = accelerators_per_node × number_of_nodes
        "accelerators": nodes * per_node if nodes is not None and per_node is not None else None,
        "accelerator": text("accelerator_model_name") or None,
        "accelerator_memory_text": text("accelerator_memory_capacity") or None,
        "accelerator_memory_gib": round(memory / 2 ** 30, 3) if memory is not None else None,
        "host_processor": text("host_processor_model_name") or None,
        "host_processors_per_node": count(desc.get("host_processors_per_node")),
        "framework": text("framework") or None,
        "operating_system": text("operating_system") or None,
        "interconnect": text("accelerator_interconnect") or None,
    }
