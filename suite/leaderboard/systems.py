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

import re
from dataclasses import dataclass

import pandas as pd

from suite.record.text import normal_name
from suite.trust.resemblance import skeleton
from suite.trust.signing import short

IDENTITY = ["system", "signer"]
"""The columns that say which system an entry is of (a signer None: its unsigned files)."""

Identity = tuple[str, str | None]
"""A system: its name and signer (None: the name's unsigned files)."""


def signer_of(value: object) -> str | None:
    """A row's signer as a fingerprint, or None for an unsigned file (a frame may hold NaN)."""
    return value if isinstance(value, str) else None


def labelled(name: str, signer: str | None) -> str:
    """``name`` with its signer beside it: the short fingerprint, as the tables give it, or "unsigned"."""
    return f"{name} ({short(signer) if signer is not None else 'unsigned'})"


@dataclass(frozen=True)
class Shown:
    """How one system is shown: ``label`` (its name, with its signer where another system's name
    reads as its name) and ``note`` (None, or whose system stored first it shares or resembles the
    name of)."""

    label: str
    note: str | None


def _whose(other: Identity) -> str:
    """Whose system ``other`` is, in words."""
    return "another signer's system" if other[1] is not None else "a system of unsigned files"


def _note(mine: Identity, first: Identity) -> str:
    """What a system says of the system stored first whose name reads as its own."""
    if mine[0] == first[0]:
        return f"name shared with {_whose(first)} \u201c{labelled(*first)}\u201d, stored first"
    return f"name resembles \u201c{labelled(*first)}\u201d, {_whose(first)}, stored first"


def reads_as(name: str) -> str:
    """What ``name`` reads as beside other names: its skeleton
    (:func:`suite.trust.resemblance.skeleton`) without a fingerprint written into it, from
    "SHA256" on (a system named "ACME H100 node (SHA256:…)" reads as another's name shown with its
    signer)."""
    return re.sub(r"(^| )sha256( .*)?$", "", skeleton(name))


def device_named(name: str, accelerator: object, count: object) -> bool:
    """Whether ``name`` is the one goodbench gives a system not named (``<accelerator> x<count>``,
    suite/run/system.py): a page shared by everyone's unnamed runs on that device, no one's claim."""
    return name == normal_name(f"{accelerator} x{count}")


def shown(identities: list[Identity], unnamed: frozenset[Identity] = frozenset()) -> dict[Identity, Shown]:
    """How each system is shown, ``identities`` in the order their first entries were stored: two
    systems of two signers (a name's unsigned files one more) whose names read as one
    (:func:`reads_as`) are each shown with their signer, and the later stored says whose system it
    shares or resembles the name of. One signer's names that read alike are its own business, and
    so are ``unnamed`` systems' (their device's name, :func:`device_named`): two signers' unnamed
    runs on one device are shown with their signers, and neither is said to take the other's name."""
    order = {who: k for k, who in enumerate(dict.fromkeys(identities))}
    alike: dict[str, list[Identity]] = {}
    for who in order:  # each list in the order stored
        alike.setdefault(reads_as(who[0]), []).append(who)
    out = {}
    for who in order:
        others = [o for o in alike[reads_as(who[0])] if o[1] != who[1]]  # a signer's own names never clash
        if not others:
            out[who] = Shown(who[0], None)
            continue
        first = others[0] if order[others[0]] < order[who] else None
        if who in unnamed and first is not None and first[0] == who[0]:
            first = None  # the same device's name: shared by design
        out[who] = Shown(labelled(*who), _note(who, first) if first is not None else None)
    return out


def identities(frame: pd.DataFrame) -> list[Identity]:
    """Each row's system: (name, signer or None), in the frame's order."""
    return [(str(name), signer_of(signer)) for name, signer in zip(frame["system"], frame["signer"])]


def with_systems(entries: pd.DataFrame) -> pd.DataFrame:
    """``entries`` (in the order stored) with ``system_shown`` and ``system_note`` (:func:`shown`)."""
    if entries.empty:
        return entries.assign(system_shown=pd.Series(dtype=object), system_note=pd.Series(dtype=object))
    whose = identities(entries)
    unnamed = frozenset(w for w, accelerator, count in zip(whose, entries["accelerator"], entries["count"])
                        if device_named(w[0], accelerator, count))
    seen = shown(whose, unnamed)
    return entries.assign(system_shown=[seen[w].label for w in whose], system_note=[seen[w].note for w in whose])


def ensure(entries: pd.DataFrame) -> pd.DataFrame:
    """``entries`` with ``system_shown`` and ``system_note``: as they are where the board gave them
    (over every stored entry), else computed over these entries alone."""
    return entries if "system_shown" in entries else with_systems(entries)
