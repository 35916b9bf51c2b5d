"""File and URL names of the site's pages and files: every name derived from a results file goes through here."""
from __future__ import annotations

from pathlib import Path

from suite.store.files import safe_filename


def safe_name(text: str, key: str | None = None) -> str:
    """File and URL name for a string from a results file: ``safe_filename`` cut to 40, plus 8 hex of sha256."""
    return safe_filename(text, 40, key=text if key is None else key)


def run_slug(file: str, run_id: str) -> str:
    """Page name of one run (unique per file and run id)."""
    return safe_name(run_id, key=f"{file}/{run_id}")


def file_slug(file: str) -> str:
    """Name of the raw copy of one results file."""
    return safe_name(Path(file).stem, key=file)


def system_slug(system: str, signer: str | None) -> str:
    """Page name of one system: its name and signer (:mod:`suite.leaderboard.systems`; a name's
    unsigned files keep the page of the name alone), so that two keys' systems of one name never
    share a page."""
    return safe_name(system) if signer is None else safe_name(system, key=f"{system}\n{signer}")
