"""Which records are one run, and whose a run is (docs/rules.md, "One run, one owner").

Two runs of two files are **one run** when they share a run id [``duplicate-run``], their step
times exactly [``duplicate-steps``], the fingerprint of their step times
(:mod:`suite.trust.fingerprint`: a copy rescaled, nudged, shifted or re-signed) [``steps-fingerprint``],
the values of their logged blocks (:mod:`suite.trust.shuffles`: a copy reordered) [``steps-shuffled``],
their logged block sums and stamps (:mod:`suite.trust.log_times`: a copy whose steps were redrawn
inside each block) [``log-times``], or, in two files signed by one key, their curve under different
seeds (one run claimed as another seed) [``seed-copy``: a curve alone says nothing of who ran it,
the workloads train one curve per seed wherever they run]; two files naming one suite run
(``settings.session.id``) hold its runs twice [``duplicate-session``].

Each record is judged by :func:`resolve` on its own evidence, against the records stored before
it (never through a third file): not signed by the key the run's id was minted for (its *owner*),
it is a **copy**; signed by its owner, it is a copy when its key holds the run already or when it
matches two runs signed by their owners (a bridge between them), **disputed** when it matches one
run another key's owner signed first (a signature proves who wrote a file, not who ran it first, so
both are kept and the later is shown as disputed; "stored" counts from a file's commitment where it
has one, :mod:`suite.store.ledger`), and else kept — the unsigned records it matches, stored before
it, then shown as its copies. So a signed file wins over an
unsigned copy stored before it, and an unsigned file cannot take a signed run. The store
(suite/store/files.py) refuses a new file that :func:`resolve` would show as a copy; the leaderboard
(``suite.leaderboard.rows``) shows what it says of every stored file. Torch-free.
"""
from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from suite.trust import fingerprint, log_times, shuffles, signing

# Step times of at least this many steps, not all equal, identify a run by equality. Stored to 7
# decimals (0.1 µs), a measured step time varies from step to step by microseconds or more: the
# runs of results/ and tests/corpus/valid/ (80–200 steps each) have 148–200 distinct step times,
# so two honest runs agreeing in 10 consecutive step times to 0.1 µs is beyond chance. Fewer
# steps, or one constant time (the hand-written documents of tests), say nothing about which run
# it was. (A run of fingerprint.MIN_STEPS steps or more is also compared by its fingerprint.)
MIN_STEPS = 10

# how two records are one run, strongest first: the code a refused submission gets
DUPLICATE_RUN, DUPLICATE_STEPS = "duplicate-run", "duplicate-steps"
STEPS_FINGERPRINT, STEPS_SHUFFLED = "steps-fingerprint", "steps-shuffled"
LOG_TIMES = "log-times"
SEED_COPY, DUPLICATE_SESSION = "seed-copy", "duplicate-session"
CODES = (DUPLICATE_RUN, DUPLICATE_STEPS, STEPS_FINGERPRINT, STEPS_SHUFFLED, LOG_TIMES, SEED_COPY, DUPLICATE_SESSION)
COPY, DISPUTED = "copy", "disputed"


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


def not_equal(pairs: Iterable[tuple[int, int, float]], steps: Sequence[str | None],
              flagged: set[int] | None = None) -> Iterator[tuple[int, int, float]]:
    """The ``(a, b, measure)`` of ``pairs`` (indexes into ``steps``, each run's :func:`steps_key`)
    whose runs' step times are not equal: equal ones are ``duplicate-steps``, which says so. With
    ``flagged``, only the first pair of each later run ``b`` not in it, which is then added to it
    (a run is flagged once, by the first rule that finds it)."""
    for a, b, measure in pairs:
        if (flagged is not None and b in flagged) or (steps[a] is not None and steps[a] == steps[b]):
            continue
        if flagged is not None:
            flagged.add(b)
        yield a, b, measure


@dataclass(frozen=True, eq=False)
class Claim:
    """One run of one file as the store and the leaderboard see it: its ``file``, its ``index``
    in the file's runs, its ``run_id`` and :func:`steps_key`, the fingerprint of the file's
    verified ``signer`` (None: unsigned, or a signature that does not hold), and its ``owner``:
    the signer when the run's id was minted for the signer's key, else None. ``workload``,
    ``seed``, ``session`` (the file's ``settings.session.id``), ``steps_print``
    (:func:`suite.trust.fingerprint.signature`), ``curve`` (:func:`suite.trust.fingerprint.curve_of`)
    ``blocks`` (:func:`suite.trust.shuffles.sorted_blocks`) and ``clock``
    (:func:`suite.trust.log_times.log_times`) tell one run in another file."""

    file: str
    index: int
    run_id: str
    steps: str | None
    signer: str | None
    owner: str | None
    workload: str | None = None
    seed: Any = None
    session: str | None = None
    steps_print: np.ndarray | None = field(default=None, repr=False)
    curve: fingerprint.Curve | None = field(default=None, repr=False)
    blocks: shuffles.SortedBlocks | None = field(default=None, repr=False)
    clock: log_times.LogTimes | None = field(default=None, repr=False)


def session_of(doc: Any) -> str | None:
    """The suite run a document names (``settings.session.id``), else None."""
    settings = doc.get("settings") if isinstance(doc, dict) else None
    session = settings.get("session") if isinstance(settings, dict) else None
    sid = session.get("id") if isinstance(session, dict) else None
    return sid if isinstance(sid, str) and sid else None


def claims(file: str, doc: dict, signer: str | None = None, *, verified: bool = False) -> list[Claim]:
    """The claims of every run of one document. ``signer`` with ``verified=True`` passes a
    signature already checked (:func:`suite.trust.signing.signer`; None: treat it as unsigned)
    instead of checking it again."""
    fp = signer if verified else signing.signer(doc)
    public = signing.public_key_of(doc) if fp is not None else None
    session = session_of(doc)
    out = []
    for i, run in enumerate(doc.get("runs") or []):
        if not isinstance(run, dict) or not isinstance(run.get("run_id"), str):
            continue
        owned = public is not None and signing.is_bound(run, public)
        workload = run.get("workload")
        wid = workload.get("id") if isinstance(workload, dict) else None
        out.append(Claim(file, i, run["run_id"], steps_key(run), fp, fp if owned else None,
                         wid if isinstance(wid, str) else None, run.get("seed"), session,
                         fingerprint.signature(run.get("step_times_s")), fingerprint.curve_of(run),
                         shuffles.sorted_blocks(run), log_times.log_times(run)))
    return out


@dataclass(frozen=True)
class Link:
    """Two claims of two files that are one run (``a`` before ``b`` in the order given), ``code``
    saying how; ``similarity`` for a fingerprint's (for a reordered copy's, the distance of its
    sorted blocks, :func:`suite.trust.shuffles.distance`)."""

    a: int
    b: int
    code: str
    similarity: float | None = None


def links(claims: Sequence[Claim], query: Collection[int] | None = None, *, any_key: bool = False) -> list[Link]:
    """Every pair of ``claims`` of different files that are one run (by id, step times,
    fingerprint, or curve under other seeds), or of the ``query`` claims (indexes into ``claims``)
    with any other; one :class:`Link` per pair, its strongest relation. Two files naming one
    suite run are linked by :func:`sessions`, not here. ``any_key``: one curve under other seeds
    links claims whatever their signers (to gather the records a judgement may need before their
    signatures are checked), not only those signed by one key."""
    asked = set(range(len(claims))) if query is None else set(query)
    found: dict[tuple[int, int], Link] = {}

    def add(i: int, j: int, code: str, similarity: float | None = None) -> None:
        if i == j or claims[i].file == claims[j].file or (i not in asked and j not in asked):
            return
        i, j = min(i, j), max(i, j)
        if (i, j) not in found or CODES.index(code) < CODES.index(found[(i, j)].code):
            found[(i, j)] = Link(i, j, code, similarity)

    for key, code in ((lambda c: c.run_id, DUPLICATE_RUN), (lambda c: c.steps, DUPLICATE_STEPS)):
        groups: dict[Any, list[int]] = {}
        for i, c in enumerate(claims):
            if key(c) is not None:
                groups.setdefault(key(c), []).append(i)
        for members in groups.values():
            for i in members:
                if i in asked:
                    for j in members:
                        add(i, j, code)
    by_workload: dict[str, list[int]] = {}
    for i, c in enumerate(claims):
        if c.workload is not None:
            by_workload.setdefault(c.workload, []).append(i)
    for members in by_workload.values():
        _fingerprint_links(claims, members, asked, add)
        _shuffle_links(claims, members, asked, add)
        _clock_links(claims, members, asked, add)
        _curve_links(claims, members, asked, add, any_key)
    return sorted(found.values(), key=lambda link: (link.a, link.b))


def _fingerprint_links(claims: Sequence[Claim], members: list[int], asked: set[int], add) -> None:
    printed = [i for i in members if claims[i].steps_print is not None]
    rows = [i for i in printed if i in asked]
    if not rows or len(printed) < 2:
        return
    sims = fingerprint.similarity([claims[i].steps_print for i in rows],  # type: ignore[misc]
                                  [claims[j].steps_print for j in printed])  # type: ignore[misc]
    found = ((rows[int(r)], printed[int(c)], float(sims[r, c]))
             for r, c in zip(*np.nonzero(sims >= fingerprint.THRESHOLD)))
    for i, j, similarity in not_equal(found, [c.steps for c in claims]):
        add(i, j, STEPS_FINGERPRINT, similarity)


def _shuffle_links(claims: Sequence[Claim], members: list[int], asked: set[int], add) -> None:
    blocked = [i for i in members if claims[i].blocks is not None]
    rows = [r for r, i in enumerate(blocked) if i in asked]
    if not rows or len(blocked) < 2:
        return
    found = shuffles.reordered_pairs([claims[i].blocks for i in blocked], rows)
    for r, c, d in not_equal(found, [claims[i].steps for i in blocked]):
        add(blocked[r], blocked[c], STEPS_SHUFFLED, d)


def _clock_links(claims: Sequence[Claim], members: list[int], asked: set[int], add) -> None:
    clocked = [i for i in members if claims[i].clock is not None]
    rows = [r for r, i in enumerate(clocked) if i in asked]
    if not rows or len(clocked) < 2:
        return
    found = log_times.same_clock_pairs([claims[i].clock for i in clocked], rows)
    for r, c, residual in not_equal(found, [claims[i].steps for i in clocked]):
        add(clocked[r], clocked[c], LOG_TIMES, residual)


def _curve_links(claims: Sequence[Claim], members: list[int], asked: set[int], add, any_key: bool) -> None:
    """One curve under other seeds, in two files signed by one key (a key claiming one run as two
    seeds). Across keys a curve says nothing of who ran it: every workload trains the same curve
    for a seed wherever it runs, so a file whose seed labels were swapped would otherwise demote
    every later honest run of those seeds (trial 16); which label is wrong, only a re-run tells."""
    curves = [claims[i].curve for i in members]
    mine = {k for k, i in enumerate(members) if i in asked}
    for a, b in fingerprint.same_curve_pairs(curves, mine):
        i, j = members[a], members[b]
        one_key = claims[i].signer is not None and claims[i].signer == claims[j].signer
        if claims[i].seed != claims[j].seed and (one_key or any_key):  # the same seed trains one curve again
            add(i, j, SEED_COPY)


def seed_conflicts(claims: Sequence[Claim]) -> list[tuple[int, int]]:
    """Every pair (i < j) of ``claims`` of one workload holding one curve under different seeds in
    files not signed by one key: neither is demoted (a curve says nothing of who ran it across
    keys, :func:`_curve_links`), but one of the two seed labels is wrong."""
    by_workload: dict[str, list[int]] = {}
    for i, c in enumerate(claims):
        if c.workload is not None and c.curve is not None:
            by_workload.setdefault(c.workload, []).append(i)
    found = []
    for members in by_workload.values():
        for a, b in fingerprint.same_curve_pairs([claims[i].curve for i in members]):
            i, j = sorted((members[a], members[b]))
            ci, cj = claims[i], claims[j]
            if ci.file != cj.file and ci.seed != cj.seed and (ci.signer is None or ci.signer != cj.signer):
                found.append((i, j))
    return sorted(found)


def sessions(claims: Sequence[Claim]) -> dict[str, list[str]]:
    """The suite runs named by more than one file: session id → those files, in order."""
    files: dict[str, list[str]] = {}
    for c in claims:
        if c.session is not None and c.file not in files.setdefault(c.session, []):
            files[c.session].append(c.file)
    return {s: f for s, f in files.items() if len(f) > 1}


@dataclass(frozen=True)
class Verdict:
    """What :func:`resolve` says of a claim that is not the one kept: ``status`` (:data:`COPY`
    or :data:`DISPUTED`), the ``original`` kept, and ``via``, the claim it was found to be one
    run with, ``code`` saying how (``similarity`` for a fingerprint)."""

    status: str
    original: Claim
    via: Claim
    code: str
    similarity: float | None = None


def _kept(members: Sequence[Claim]) -> Claim:
    """The record of one suite run that is kept: the first whose file is signed by its owner's key, else the first."""
    return next((c for c in members if c.owner is not None), members[0])


def _strength(link: Link) -> tuple[int, int]:
    return CODES.index(link.code), link.a


def resolve(claims: Sequence[Claim]) -> dict[tuple[str, int], Verdict]:
    """Every claim that is not the record kept of its run, keyed by (file, index), with its
    :class:`Verdict`. ``claims`` are in the order their files were stored (:mod:`suite.store.ledger`).

    Each claim is judged, in that order, on its own evidence only: the :func:`links` between it
    and the claims stored before it — never through a third file (a file that shares one run's
    step times and another run's curve joins neither run to the other). A claim with no such
    link is kept. One not signed by its owner's key is a copy of the record it is linked to. One
    signed by its owner (``owner``) is

    - a copy when a record it is linked to was signed by the same key (a key holds a run once),
      or when it is linked to two records kept and signed by their owners (it matches two runs:
      it is neither, and demotes neither);
    - disputed when it is linked to one record signed by another key's owner, not a copy, and
      either kept or disputed with a record this claim is linked to as well (the first signature
      stored stays); a record disputed with a run this claim does not match is a bridge between
      two runs, no record of this claim's run: it is now a copy, and demotes nothing;
    - else kept, and every record it is linked to that no owner signed and no owner's record
      holds already is now its copy (a signed file wins over an unsigned copy stored before it).

    So a later file never demotes a run signed by its owner, and an earlier one only when it is a
    record of that run alone. A file naming a suite run another
    file named (:func:`sessions`) is judged the same way as a whole: its runs not judged already
    are copies (or disputed) of the kept file's."""
    earlier: dict[int, list[Link]] = {}
    for link in links(claims):  # a < b: a was stored first
        earlier.setdefault(link.b, []).append(link)
    verdicts: dict[int, Verdict] = {}
    position = {id(claim): k for k, claim in enumerate(claims)}
    for i, c in enumerate(claims):
        mine = sorted(earlier.get(i, ()), key=_strength)
        if not mine:
            continue
        if c.owner is None:
            verdicts[i] = _verdict(COPY, claims, mine[0], mine[0])
            continue
        signed = [link for link in mine if claims[link.a].owner is not None
                  and (link.a not in verdicts or verdicts[link.a].status != COPY)]
        same = [link for link in signed if claims[link.a].owner == c.owner]
        signed = _standing(signed, {link.a for link in mine}, verdicts, claims, c.owner, position)
        kept = [link for link in signed if link.a not in verdicts]
        if same:
            verdicts[i] = _verdict(COPY, claims, same[0], mine[0])
        elif len({link.a for link in kept}) >= 2:
            verdicts[i] = _verdict(COPY, claims, kept[0], mine[0])
        elif signed:
            verdicts[i] = _verdict(DISPUTED, claims, (kept or signed)[0], mine[0])
        else:
            for link in mine:  # the unsigned records of this run stored before it are its copies
                held = verdicts.get(link.a)
                if claims[link.a].owner is None and (held is None or held.original.owner is None):
                    verdicts[link.a] = Verdict(COPY, c, c, link.code, link.similarity)
    out = {(claims[i].file, claims[i].index): verdict for i, verdict in verdicts.items()
           if claims[i].file != verdict.original.file}  # one file holding one run twice: the validator's
    by_file: dict[str, list[Claim]] = {}
    for c in claims:
        by_file.setdefault(c.file, []).append(c)
    for files in sessions(claims).values():
        firsts = [by_file[f][0] for f in files]
        kept_claim = _kept(firsts)
        for f in files:
            if f == kept_claim.file:
                continue
            for c in by_file[f]:
                if (c.file, c.index) not in out:
                    original = next((k for k in by_file[kept_claim.file] if k.workload == c.workload), kept_claim)
                    status = DISPUTED if by_file[f][0].owner not in (None, kept_claim.owner) else COPY
                    out[(c.file, c.index)] = Verdict(status, original, original, DUPLICATE_SESSION)
    return out


def _standing(signed: list[Link], linked: set[int], verdicts: dict[int, Verdict], claims: Sequence[Claim],
              owner: str, position: dict[int, int]) -> list[Link]:
    """The ``signed`` links of a claim signed by ``owner`` (linked to the earlier records
    ``linked``) to records that may dispute it: kept ones, its own key's, and disputed ones whose
    kept record it matches too (the same run). A record already disputed with a run the claim does
    not match holds that run's evidence as well as the claim's: a bridge, no standing record of the
    claim's run. It cannot demote the claim, and is itself a copy (it matches two runs that are
    not one), whichever of the two was stored first. ``position``: each claim's index, by ``id``."""
    out = []
    for link in signed:
        held = verdicts.get(link.a)
        if held is None or claims[link.a].owner == owner or position[id(held.original)] in linked:
            out.append(link)
        else:
            verdicts[link.a] = Verdict(COPY, held.original, held.via, held.code, held.similarity)
    return out


def _verdict(status: str, claims: Sequence[Claim], decisive: Link, strongest: Link) -> Verdict:
    """A claim's verdict: the record stored before it that ``decisive`` links it to is the run
    kept; ``strongest``, its strongest link to a record stored before it, says how it is one run."""
    return Verdict(status, claims[decisive.a], claims[strongest.a], strongest.code, strongest.similarity)


def how(verdict: Verdict) -> str:
    """How a claim is one run with the one it was found with, for a note: "" for the same run
    id, else " (the same step times)" and the like."""
    if verdict.code == STEPS_FINGERPRINT:
        return f" (its step times rescaled or nudged: fingerprint similarity {verdict.similarity:.3f})"
    if verdict.code == STEPS_SHUFFLED:
        return f" (the same step times in each logged block, reordered, rescaled or nudged: distance {verdict.similarity:.2g})"
    if verdict.code == LOG_TIMES:
        return (" (the same logged block sums and stamps, the steps inside the blocks redrawn: "
                f"residual {(verdict.similarity or 0.0):.2%} of the blocks' time)")
    return {DUPLICATE_STEPS: " (the same step times)", SEED_COPY: " (the same curve, under another seed)",
            DUPLICATE_SESSION: " (the same suite run)"}.get(verdict.code, "")


def connected(claims: Sequence[Claim], start: Iterable[int]) -> list[int]:
    """The indexes of ``claims`` linked to those of ``start`` (:func:`links`, and files naming the
    same suite run), directly or through others, ``start`` included, in order."""
    found = set(start)
    frontier = set(found)
    while frontier:
        reached = {end for link in links(claims, frontier, any_key=True) for end in (link.a, link.b)}
        named = {claims[i].session for i in frontier} - {None}
        reached |= {i for i, c in enumerate(claims) if c.session in named}
        frontier = reached - found
        found |= frontier
    return sorted(found)
