"""Bounds on the commitments a pull request adds to the store's ledger (docs/submitting.md,
"Commit first"; the check is :mod:`suite.site.publish`'s): each is signed by the key that signed
its file (:mod:`suite.trust.commitment`), stamped within the pull request's time, and there are
few of them — per pull request and per signer. A stored line's stamp is bounded too: never after the
check's clock.

A commitment's place in the ledger is what counts for the file it names; its stamp is what it says
of itself. The stamp may not be earlier than what the pull request was made on — the commit it
branched from, and the last line of the ledger it appends to — nor later than the check's clock,
each by :data:`CLOCK_SKEW` at most, and a pull request's stamps do not go back. Torch-free.
"""
from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass

from suite.store import ledger
from suite.trust import commitment
from suite.validate.tolerance import CLOCK_SLACK

MAX_PER_PULL_REQUEST = 10
"""The most commitments one pull request adds. A commitment is made for one results file about to
be shown, and one file holds a whole suite run (every workload, every seed): a submitter shows a
few files at a time, one per system or scale. Ten leaves room for that; the finding it answers
added 20,001 lines of random hashes in one pull request, which every later check reads."""

MAX_OPEN_PER_SIGNER = 20
"""The most commitments of one key waiting for their file (committed, the file not stored yet),
those the pull request adds included: two pull requests' worth. A key costs nothing to make, so
this bounds what one signer holds open, not what a flood of new keys adds (which the per-pull-request
cap and the maintainers' review bound)."""

CLOCK_SKEW = CLOCK_SLACK
"""How far a stamp may lie outside the pull request's time: 60 s, the validator's bound on a
results file's ``created_at`` after its submission (stamps are to the second; NTP keeps clocks
within milliseconds)."""


@dataclass(frozen=True)
class Window:
    """The times a new commitment's stamp may say: from ``earliest`` (what the pull request was
    made on, ``basis``) to ``latest`` (the check's clock), each widened by :data:`CLOCK_SKEW`."""

    earliest: dt.datetime
    basis: str
    latest: dt.datetime


def after_clock(stamp: dt.datetime, now: dt.datetime) -> bool:
    """Whether ``stamp`` is after the check's clock ``now`` by more than :data:`CLOCK_SKEW`."""
    return stamp > now + CLOCK_SKEW


def _stamped_after_clock(what: str, said: object, now: dt.datetime) -> str:
    """The refusal of ``what`` (a ledger line or a commitment) stamped ``said``, after the clock."""
    return (f"{what} is stamped {said}, after this check's clock ({ledger.stamp_of(now)}) by more than "
            f"{CLOCK_SKEW.total_seconds():.0f} s")


def window(fork_time: dt.datetime, old_entries: list[dict], now: dt.datetime) -> Window:
    """The window of a pull request that branched at a commit of ``fork_time`` from a store whose
    ledger read ``old_entries``, checked at ``now``."""
    # a line stamped after the check's clock is no floor: merged before stored lines' stamps were
    # bounded (:func:`stamp_refusal`), one such line would refuse every later commitment
    stamps = [s for e in old_entries if (s := ledger.parse_stamp(e.get(ledger.STORED, e.get(ledger.COMMITTED))))
              and not after_clock(s, now)]
    last = max(stamps, default=None)
    if last is not None and last > fork_time:
        return Window(last, f"the ledger's last line, stamped {ledger.stamp_of(last)}", now)
    return Window(fork_time, f"the commit it branched from, made {ledger.stamp_of(fork_time)}", now)


def stamp_refusal(entry: dict, now: dt.datetime) -> str | None:
    """Why a new stored line's stamp (``{"file", "stored_at"}``, what ``goodbench submit`` appends)
    is refused, in one line: missing, not a stamp :func:`suite.store.ledger.stamp_of` writes, or after
    the check's clock ``now`` by more than :data:`CLOCK_SKEW`; None when it is none of these. Its
    place in the ledger, not its stamp, orders the file; but the ledger's latest stamp is the floor
    of every later commitment's (:func:`window`), so a stamp in the future would refuse them all."""
    name, said = entry.get("file"), entry.get(ledger.STORED)
    stamp = ledger.parse_stamp(said)
    if stamp is None:
        return (f"the ledger line storing {name} holds no stamp 'goodbench submit' writes (a UTC time as "
                f"{ledger.stamp_of(now)})")
    if after_clock(stamp, now):
        return _stamped_after_clock(f"the ledger line storing {name}", said, now)
    return None


def open_by_signer(entries: list[dict]) -> Counter[str]:
    """How many commitments of each key in a ledger's lines still wait for their file (no stored
    line names it). Lines without a key (rules v7's) count for nobody."""
    stored = {e["file"] for e in entries if ledger.STORED in e}
    return Counter(signer for e in entries
                   if ledger.COMMITTED in e and ledger.STORED not in e and e["file"] not in stored
                   and (signer := commitment.claimed_signer(e)) is not None)


def too_many(count: int) -> str:
    """Why ``count`` commitments in one pull request are refused."""
    return (f"adds {count} commitments; a pull request adds at most {MAX_PER_PULL_REQUEST} "
            "(one per results file about to be shown)")


def refusal(new: list[dict], bounds: Window, waiting: Counter[str]) -> str | None:
    """Why the new commitment lines ``new`` (in order) are refused, in one line; None when each is
    signed by its key, stamped within ``bounds`` and not earlier than the one before it, and the
    caps hold (``waiting``: :func:`open_by_signer` of the store the pull request is judged against)."""
    if len(new) > MAX_PER_PULL_REQUEST:  # before any signature is checked: a flood costs the check nothing
        return too_many(len(new))
    earliest, basis = bounds.earliest, bounds.basis
    signers: Counter[str] = Counter()
    for entry in new:
        name, stamp = entry.get("file"), ledger.parse_stamp(entry.get(ledger.COMMITTED))
        if set(entry) != {"file", ledger.COMMITTED, *commitment.FIELDS} or stamp is None:
            return (f"the commitment to {name} is not signed: 'goodbench submit --commit' signs it with the "
                    "key that signed the file")
        signer = commitment.signer(entry)
        if signer is None:
            return f"the commitment to {name}: its signature does not verify over its file and stamp"
        if stamp < earliest - CLOCK_SKEW:
            return (f"the commitment to {name} is stamped {entry[ledger.COMMITTED]}, before {basis}: a "
                    "commitment cannot be older than what its pull request was made on (commit again, now)")
        if after_clock(stamp, bounds.latest):
            return _stamped_after_clock(f"the commitment to {name}", entry[ledger.COMMITTED], bounds.latest)
        if stamp > earliest:
            earliest, basis = stamp, f"the commitment before it, stamped {entry[ledger.COMMITTED]}"
        signers[signer] += 1
    for signer, count in signers.items():
        if waiting[signer] + count > MAX_OPEN_PER_SIGNER:
            return (f"{signer} would have {waiting[signer] + count} commitments waiting for their files; a key "
                    f"has at most {MAX_OPEN_PER_SIGNER} (store the files committed to first)")
    return None
