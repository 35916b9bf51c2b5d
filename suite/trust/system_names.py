"""How a system's name is shown beside other systems' names: its signer beside it where two
signers' names read as one, and a note on the later stored (:mod:`suite.leaderboard.systems` says
which system each entry is of). Plain functions of names and signers, for the store's notes at
submit and the leaderboard alike."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from suite.record.text import normal_name
from suite.trust.resemblance import skeleton
from suite.trust.signing import short

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


_FINGERPRINT = re.compile(r"(^| )s ?h ?[a4] ?[2z] ?s ?[6bg]( .*)?$")
"""A fingerprint written into a name, as its skeleton reads: "SHA256" from its first letter on,
spelt with a space anywhere ("SHA2 56", "SHA 25 6") and with the letters drawn alike that the
skeleton leaves apart ("SH4256", "SHAZ56", "SHA25G"; trial 13), then anything or nothing."""

_LABEL = re.compile(r"[(\[{\u2768\u276a\u2772\u27ee\u2985\ufe59\u207d\u208d][^()\[\]{}]{0,24}"
                    r"[:\u2236\ua789\u02d0\u02f8\u0589\u05c3]\s*[A-Za-z0-9+/]{8}")
"""Text shaped as the signer the tables show beside a name, "(SHA256:LyydO9s8Jkti…)", whatever
its prefix ("(KEY:LyydO9s8…)"): an opening bracket, a colon (or one drawn alike) within 25
characters, then eight characters of base64 (a review: "DGX (gpu:H100x8)" and "DGX (gpu:A100x8)"
read as one name at four)."""


def reads_as(name: str) -> str:
    """What ``name`` reads as beside other names: its skeleton
    (:func:`suite.trust.resemblance.skeleton`) without a fingerprint written into it: from an
    opening bracket whose text is shaped as a signer (:data:`_LABEL`, whatever its prefix), or from
    "SHA256" spelt any way a glance reads so (:data:`_FINGERPRINT`), on (a system named "ACME H100
    node (SHA2 56:…)" reads as another's name shown with its signer)."""
    label = _LABEL.search(unicodedata.normalize("NFKC", name))
    bare = name if label is None else unicodedata.normalize("NFKC", name)[:label.start()]
    return re.sub(_FINGERPRINT, "", skeleton(bare))


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
