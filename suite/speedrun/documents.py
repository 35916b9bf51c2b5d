"""The stored speedrun documents (results/speedrun/track_N.json) read back for the site, through
the validator's hostile-safe reader: regular files only, bounded, strict JSON."""
from __future__ import annotations

from pathlib import Path

from suite.record import reading

SUBFOLDER = "speedrun"
MAX_BYTES = 32 * 2 ** 20  # the larger track's document is about 1.1 MB
FORMAT = 1
_KEYS = ("track", "name", "target_val_loss", "records", "runs", "problems")


def load_all(results_dir: str | Path) -> tuple[list[dict], list[tuple[str, str]]]:
    """Every readable track document under ``<results_dir>/speedrun/`` (track order) and the
    files not read, with why (file name, one line)."""
    docs: list[dict] = []
    bad: list[tuple[str, str]] = []
    for path, doc in reading.load_folder(Path(results_dir) / SUBFOLDER, "track_*.json", MAX_BYTES, bad):
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            bad.append((path.name, f"not a speedrun document of format {FORMAT}: import the checkout again"))
        elif any(k not in doc for k in _KEYS) or not isinstance(doc["records"], list) \
                or not isinstance(doc["runs"], list):
            bad.append((path.name, "a speedrun document without its records or runs"))
        else:
            docs.append(doc)
    return sorted(docs, key=lambda d: d["track"]), bad
