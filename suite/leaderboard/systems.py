"""Which system an entry is of: its name and the key that signed its file, never its name alone.

A system's name is anyone's to write; a signature is its key holder's alone. So the entries of one
name signed by two keys are two systems, each with its own page, its own best entries on the
compare page and its own place among the leaders, and a name's unsigned files are one system more,
apart from every signed one (as scaling efficiency holds a run only to its own signer's baseline:
:func:`suite.leaderboard.rows.with_scaling_efficiency`).

Where two systems' names are one, or read as one (:func:`reads_as`: "ACME Hl00 node" for
"ACME H100 node", or "ACME H100 node (SHA256:…)" for the name shown with a signer), each is
shown with its signer beside its name (``system_shown``), and each but the first stored says
whose system it shares or resembles the name of (``system_note``), so that neither can pass for
the other.
"""
from __future__ import annotations

import pandas as pd

from suite.trust.system_names import Identity, Shown, device_named, labelled, reads_as, shown, signer_of

__all__ = ["IDENTITY", "Identity", "Shown", "device_named", "labelled", "reads_as", "shown", "signer_of",
           "identities", "with_systems", "ensure"]

IDENTITY = ["system", "signer"]
"""The columns that say which system an entry is of (a signer None: its unsigned files)."""


def identities(frame: pd.DataFrame) -> list[Identity]:
    """Each row's system: (name, signer or None), in the frame's order."""
    return [(str(name), signer_of(signer)) for name, signer in zip(frame["system"], frame["signer"])]


def with_systems(entries: pd.DataFrame) -> pd.DataFrame:
    """``entries`` (in the order stored) with ``system_shown`` and ``system_note`` (:func:`shown`)."""
    if entries.empty:
        return entries.assign(system_shown=pd.Series(dtype=object), system_note=pd.Series(dtype=object))
    whose = identities(entries)
    unnamed = frozenset(w for w, accelerator, count in zip(whose, entries.get("accelerator", [None] * len(whose)),
                                                           entries.get("count", [None] * len(whose)))
                        if accelerator is not None and device_named(w[0], accelerator, count))
    seen = shown(whose, unnamed)
    return entries.assign(system_shown=[seen[w].label for w in whose], system_note=[seen[w].note for w in whose])


def ensure(entries: pd.DataFrame) -> pd.DataFrame:
    """``entries`` with ``system_shown`` and ``system_note``: as they are where the board gave them
    (over every stored entry), else computed over these entries alone."""
    return entries if "system_shown" in entries else with_systems(entries)
