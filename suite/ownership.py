"""Which records are one run, and whose a run is (docs/rules.md, "Signed results").

Two records are the same run when they have the same run id, or the same sequence of step
times (:func:`steps_key`). A run is *owned* by a key when its file's signature verifies and
the run's id was minted for that key (:func:`suite.signing.is_bound`): no file signed by
another key can hold that id. The store (suite/store.py) and the leaderboard
(``suite.leaderboard.copies``) decide with these claims. Torch-free.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from suite import signing

# Step times of at least this many steps, not all equal, identify a run. Stored to 7 decimals
# (0.1 µs), a measured step time varies from step to step by microseconds or more: the runs of
# results/ and tests/corpus/valid/ (80–200 steps each) have 148–200 distinct step times, so two
# honest runs agreeing in 10 consecutive step times to 0.1 µs is beyond chance. Fewer steps, or
# one constant time (the hand-written documents of tests), say nothing about which run it was.
MIN_STEPS = 10


def steps_key(run: Any) -> str | None:
    """sha256 of the run's step times (each as its float's shortest repr), or None when they
    cannot tell a run apart: fewer than :data:`MIN_STEPS`, all equal, or not numbers."""
    times = run.get("step_times_s") if isinstance(run, dict) else None
    if not isinstance(times, list) or len(times) < MIN_STEPS:
        return None
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in times):
        return None
    if len(set(times)) < 2:
        return None
    return hashlib.sha256(",".join(repr(float(t)) for t in times).encode()).hexdigest()


@dataclass(frozen=True)
class Claim:
    """One run of one file as the store and the leaderboard see it: its ``file``, its ``index``
    in the file's runs, its ``run_id`` and :func:`steps_key`, the fingerprint of the file's
    verified ``signer`` (None: unsigned, or a signature that does not hold), and its ``owner``:
    the signer when the run's id was minted for the signer's key, else None."""

    file: str
    index: int
    run_id: str
    steps: str | None
    signer: str | None
    owner: str | None


def claims(file: str, doc: dict, signer: str | None = None, *, verified: bool = False) -> list[Claim]:
    """The claims of every run of one document. ``signer`` with ``verified=True`` passes a
    signature already checked (:func:`suite.signing.signer`) instead of checking it again."""
    fp = signer if verified else signing.signer(doc)
    public = signing.public_key_of(doc) if fp is not None else None
    out = []
    for i, run in enumerate(doc.get("runs") or []):
        if not isinstance(run, dict) or not isinstance(run.get("run_id"), str):
            continue
        owned = public is not None and signing.is_bound(run, public)
        out.append(Claim(file, i, run["run_id"], steps_key(run), fp, fp if owned else None))
    return out
