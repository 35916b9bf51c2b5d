"""The results store: submitted files, content-addressed, never overwritten.

A file lands as ``<results-dir>/<sha256 of its bytes>.json`` (docs/rules.md, "Submitting"):
no string from the document ever reaches a file name. Submission validates the file, then
holds an exclusive ``flock`` on the results directory itself (no lock file is created), refuses
a file whose bytes are already stored, or one of whose runs the store holds already — the same
run id, step times, step-time fingerprint, blocks reordered, log clock, curve under another seed
in a file of the same key, or suite run (:mod:`suite.trust.ownership`; a curve under another seed
in another key's file is stored with a note, and the site shows it on both runs) — unless the new file is signed and would be kept (the stored one is
unsigned: it is shown as a copy from then on) or disputed (another key signed the run first);
the notes say which. It lists the file in the store's ledger (:mod:`suite.store.ledger`: the order
"the first stored" is judged in), then writes through a temp file with fsync and a hard link,
which fails rather than overwrite. A refused submission leaves the store byte-identical, and
no stored file is ever changed. A submission that lands also removes the temp files that killed
writers left in the store (those no live writer holds locked, :mod:`suite.record.tempfiles`); readers
never see them (:func:`stored_files` lists ``*.json`` names that do not start with a dot).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from suite.record import results
from suite.record.errors import GoodbenchError
from suite.record.tempfiles import held_file, remove_abandoned, temp_files
from suite.record.text import safe
from suite.store import ledger, naming
from suite.trust import commitment, fingerprint, log_times, ownership, shuffles, signing, system_names
from suite.validate import Problem, check_document, parse, read_bounded

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Refused(GoodbenchError):
    """The submission was refused; ``problems`` says why."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(p.reason for p in problems))
        self.problems = problems


def safe_filename(text: str, limit: int = 64, key: str | None = None) -> str:
    """A file-name component from any string: [A-Za-z0-9._-] only, no leading dot, bounded.

    For code that names files after document strings (system names, workload ids); never
    empty, never ``.``/``..``, never a path. With ``key`` (the site passes the full string),
    "-" and 8 hex digits of its sha256 are appended, so distinct keys give distinct names.
    """
    clean = _UNSAFE.sub("-", str(text)).strip(".-")[:limit].strip(".-") or "unnamed"
    if key is None:
        return clean
    return f"{clean}-{hashlib.sha256(str(key).encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


@contextlib.contextmanager
def locked(results_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the (existing) results directory."""
    fd = os.open(results_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def stored_files(results_dir: str | Path) -> list[Path]:
    """Every results file in the store, in name order (temp files start with a dot)."""
    return sorted(p for p in Path(results_dir).glob("*.json") if not p.name.startswith("."))


@dataclass(frozen=True)
class Stored:
    """Where a submission landed, and ``notes``: why it was stored though one of its runs was
    already stored (signed over an unsigned copy, or disputed), and which stored record it turned
    from disputed into a copy (a bridge between two runs); ``doc``: the document stored, as read
    and held to every rule on its way in (None: not given), so that no later step reads it again."""

    path: Path
    notes: tuple[str, ...] = ()
    doc: dict | None = field(default=None, compare=False, repr=False)


# what reading a stored file's claims may raise on a file no validator would pass (a 400-digit
# step time overflows a float): such a file is not read, as the site leaves it out ("Files not shown")
NOT_READ = (ValueError, LookupError, TypeError, AttributeError, ArithmeticError, RecursionError)


def _stored_claims(results_dir: Path) -> tuple[list[ownership.Claim], dict[str, dict]]:
    """Every stored run's claim in store order (:mod:`suite.store.ledger`), signatures not yet checked,
    and the stored documents by file name. Each file is read as the site reads it
    (:func:`suite.store.naming.load_stored`: bounded, and not one submit did not store); one that
    cannot be read, or whose runs cannot (:data:`NOT_READ`), claims no runs."""
    out: list[ownership.Claim] = []
    docs: dict[str, dict] = {}
    for path in ledger.in_store_order(results_dir, stored_files(results_dir)):
        doc, unread = naming.load_stored(path)
        if unread is not None:
            continue
        try:
            if not all(isinstance(run["run_id"], str) for run in doc["runs"]):
                continue  # not a results file's runs
            found = ownership.claims(path.name, doc, None, verified=True)
        except NOT_READ:
            continue
        docs[path.name] = doc
        out += found
    return out, docs


def _name_notes(doc: dict, docs: dict[str, dict]) -> list[str]:
    """What the leaderboard will say of the new document's system name beside the stored ones
    (``docs``, in store order): shared with, or reading as, another signer's system stored first
    (:func:`suite.trust.system_names.shown`); only the stored files whose names read as its own
    have their signatures checked."""
    name, mine = doc["system"]["name"], signing.signer(doc)
    alike = []
    for d in docs.values():
        other = d["system"].get("name") if isinstance(d.get("system"), dict) else None
        if isinstance(other, str) and system_names.reads_as(other) == system_names.reads_as(name):
            alike.append((other, signing.signer(d)))
    accelerator = doc["system"]["accelerator"]
    unnamed = frozenset({(name, mine)} if system_names.device_named(name, accelerator["name"], accelerator["count"]) else ())
    shown = system_names.shown([*alike, (name, mine)], unnamed)[(name, mine)]
    if shown.note is None:
        return []
    return [f"system \u201c{safe(name)}\u201d: {shown.note}; the leaderboard shows this file's system as "
            f"\u201c{safe(shown.label)}\u201d, a system apart (a system is its name and signer)"]


def _here(claim: ownership.Claim, other: ownership.Claim) -> str:
    """" (this file's run X)" where ``claim``'s run id is not ``other``'s (``goodbench sign`` mints
    run ids anew: a user searched their file for the stored file's id and found nothing)."""
    return "" if claim.run_id == other.run_id else f" (this file's run {claim.run_id})"


def _refusal(claim: ownership.Claim, verdict: ownership.Verdict) -> Problem:
    via, where = verdict.via, f"runs[{claim.index}]"
    if verdict.code == ownership.DUPLICATE_RUN:
        return Problem(verdict.code, f"{where}.run_id", f"run {claim.run_id} is already stored in {via.file}")
    if verdict.code == ownership.DUPLICATE_STEPS:
        return Problem(verdict.code, f"{where}.step_times_s",
                       f"its step times are those of run {via.run_id}{_here(claim, via)} already stored in "
                       f"{via.file}: one run is stored once")
    if verdict.code == ownership.STEPS_FINGERPRINT:
        return Problem(verdict.code, f"{where}.step_times_s",
                       f"its step times are those of run {via.run_id}{_here(claim, via)} stored in {via.file}, "
                       "rescaled or nudged "
                       f"(fingerprint similarity {verdict.similarity:.3f}; from {fingerprint.THRESHOLD} on, "
                       "one run): one run is stored once")
    if verdict.code == ownership.STEPS_SHUFFLED:
        return Problem(verdict.code, f"{where}.step_times_s",
                       f"the step times of run {via.run_id} stored in {via.file}, in each logged block reordered, "
                       f"rescaled or nudged (distance of the sorted blocks {verdict.similarity:.2g}; up to "
                       f"{shuffles.THRESHOLD:g}, one run): one run is stored once")
    if verdict.code == ownership.LOG_TIMES:
        return Problem(verdict.code, f"{where}.event_log",
                       f"the logged block sums and stamps of run {via.run_id} stored in {via.file}, its steps "
                       f"redrawn inside each block (median residual {(verdict.similarity or 0.0):.2%} of the "
                       f"blocks' time; up to {log_times.TOLERANCE:.3%}, one run): one run is stored once")
    if verdict.code == ownership.SEED_COPY:
        return Problem(verdict.code, f"{where}.curve",
                       f"the curve of run {via.run_id} (seed {via.seed}) stored in {via.file}, claimed here "
                       f"for seed {claim.seed}: one run is one seed")
    return Problem(verdict.code, "settings.session.id",
                   f"suite run {claim.session} is already stored in {via.file}: one suite run is one file")


def _name_taken(dest: Path) -> Problem | None:
    """Why the file cannot be stored under its name ``dest``: the store holds it already, or holds
    something else there (a symbolic link, dangling or not, or anything but a file: trial 11's
    dangling link let the ledger list a file never stored). None: the name is free."""
    if dest.is_symlink() or (os.path.lexists(dest) and not dest.is_file()):
        return Problem("duplicate", "", f"the store holds a symbolic link or something other than a file at "
                                        f"{dest.name}: remove it, then submit again")
    if dest.exists():
        return Problem("duplicate", "", f"already submitted as {dest.name}")
    return None


def _collisions(doc: dict, dest: Path, results_dir: Path,
                found: tuple[list[ownership.Claim], dict[str, dict]]) -> tuple[list[Problem], list[str]]:
    """What refuses the new document (a run of it the store already holds, :mod:`suite.trust.ownership`),
    and the notes of what storing it changes: stored runs now shown as copies of its runs, its
    runs shown as disputed, or a stored record disputed with another run now shown as a copy (it
    is a record of this file's run as well: a bridge, :func:`_bridge_note`). ``found``: the store's
    claims and documents (:func:`_stored_claims`)."""
    taken = _name_taken(dest)
    if taken is not None:
        return [taken], []
    stored, docs = found
    pool = _in_place(results_dir, stored, ownership.claims(dest.name, doc))
    near = ownership.connected(pool, [i for i, c in enumerate(pool) if c.file == dest.name])
    if all(pool[i].file == dest.name for i in near):
        return [], []
    checked: dict[str, dict[int, ownership.Claim]] = {}  # the stored files concerned, signatures checked
    for i in near:
        if pool[i].file != dest.name and pool[i].file not in checked:
            checked[pool[i].file] = {c.index: c for c in ownership.claims(pool[i].file, docs[pool[i].file])}
    subset = [checked[pool[i].file][pool[i].index] if pool[i].file != dest.name else pool[i] for i in near]
    before = ownership.resolve([c for c in subset if c.file != dest.name])
    after = ownership.resolve(subset)
    problems: list[Problem] = []
    notes: list[str] = []
    for c in subset:
        verdict = after.get((c.file, c.index))
        if verdict is None:
            continue
        if c.file == dest.name and verdict.status == ownership.COPY:
            if (problem := _refusal(c, verdict)) not in problems:
                problems.append(problem)
            continue
        held = before.get((c.file, c.index))
        if c.file == dest.name or (verdict.original.file == dest.name and held is None):
            note = _note(c, verdict, dest.name)
        elif verdict.status == ownership.COPY and held is not None and held.status == ownership.DISPUTED:
            note = _bridge_note(c, held, subset, dest.name)  # a stored bridge, disputed until now
        else:
            continue
        if note not in notes:
            notes.append(note)
    return problems, notes + [n for n in _seed_conflicts(subset, dest.name) if n not in notes]


def _seed_conflicts(subset: list[ownership.Claim], new: str) -> list[str]:
    """A note for each run of the new file whose curve is a stored run's under another seed, in a
    file of another key (or unsigned) and no other evidence of one run: neither is demoted (a
    curve says nothing of who ran it), but one of the two seed labels is wrong."""
    out = []
    mine = [k for k, c in enumerate(subset) if c.file == new]
    for link in ownership.links(subset, mine, any_key=True):
        if link.code != ownership.SEED_COPY:
            continue  # the same signer's: judged by resolve; or one run by other evidence
        a, b = subset[link.a], subset[link.b]
        claim, other = (a, b) if a.file == new else (b, a)
        if claim.signer is not None and claim.signer == other.signer:
            continue
        out.append(f"run {claim.run_id} (seed {claim.seed}) has the curve of run {other.run_id} (seed {other.seed}) "
                   f"in {other.file}, another key's: neither is demoted (a curve says nothing of who ran it), but "
                   "one of the two seed labels is wrong; `goodbench reproduce` of either tells which")
    return out


def _bridge_note(claim: ownership.Claim, held: ownership.Verdict, subset: list[ownership.Claim], new: str) -> str:
    """Why a stored run shown as disputed (``held``) is now a copy: it is also a run of the new
    file that the run it was disputed with is not, so it holds two runs' evidence (a bridge
    between them, :func:`suite.trust.ownership.resolve`), a record of neither."""
    where = next(k for k, c in enumerate(subset) if c is claim)
    found = [link for link in ownership.links(subset, [where])
             if subset[link.b if link.a == where else link.a].file == new]
    kept = held.original
    if found:
        link = min(found, key=lambda x: ownership.CODES.index(x.code))
        mine = subset[link.b if link.a == where else link.a]
        how = ownership.how(ownership.Verdict(ownership.COPY, mine, mine, link.code, link.similarity))
        also = f"is also run {mine.run_id} of this file{how}, which run {kept.run_id} is not"
    else:
        also = f"is also a run of this file, which run {kept.run_id} is not"
    return (f"run {claim.run_id} of {claim.file}, shown as disputed with run {kept.run_id} of {kept.file}, {also}: "
            f"it holds the evidence of two runs (a bridge between them, a record of neither), so {claim.file}'s "
            "run is now shown as a copy, not ranked")


def _in_place(results_dir: Path, stored: list[ownership.Claim], new: list[ownership.Claim]) -> list[ownership.Claim]:
    """The stored claims (in store order) with the new file's: last, or where its commitment
    stands in the ledger (:mod:`suite.store.ledger`) when it was committed to before some of them."""
    if not new:
        return stored
    order = ledger.order(results_dir)
    if new[0].file not in order:
        return stored + new
    after = set(order[order.index(new[0].file) + 1:])
    cut = next((i for i, c in enumerate(stored) if c.file in after), len(stored))
    return stored[:cut] + new + stored[cut:]


def _note(claim: ownership.Claim, verdict: ownership.Verdict, new: str) -> str:
    """Why a run is stored though the store holds it too: the new file's, disputed; or a stored
    one, now shown as a copy of the new file's (one note per file for a whole suite run)."""
    if claim.file == new:  # disputed: another key signed it, stored first
        what = f"suite run {claim.session}" if verdict.code == ownership.DUPLICATE_SESSION else f"run {claim.run_id}"
        kept = verdict.original  # found through another record of the run: name the kept one
        how = ownership.how(verdict) if verdict.via.file == kept.file else " (the same run)"
        return (f"{what} is also in {kept.file}{how}, signed by {kept.owner} "
                "and stored first: this file is stored, its run shown as disputed, not ranked")
    mine = verdict.original
    if verdict.status == ownership.DISPUTED:  # stored before this file, but after its commitment
        return (f"run {mine.run_id} is also in {claim.file}{ownership.how(verdict)}, signed by another key and "
                f"stored after this file was committed to in the ledger: {claim.file}'s run is now shown as "
                "disputed, not ranked")
    if verdict.code == ownership.DUPLICATE_SESSION:
        return (f"suite run {claim.session} is also in {claim.file}, which is not signed by its owner's key "
                f"({mine.owner}): {claim.file}'s runs are now shown as copies, not ranked")
    also = "" if claim.run_id == mine.run_id else f", there as run {claim.run_id}"
    return (f"run {mine.run_id} is also in {claim.file}{ownership.how(verdict)}{also}, which is not signed by "
            f"its owner's key ({mine.owner}): {claim.file}'s run is now shown as a copy, not ranked")


def _commitment_key(doc: dict, key: Ed25519PrivateKey | None) -> Ed25519PrivateKey:
    """The key that signs a commitment to ``doc`` (``key``, default the user's): it must be the
    key that signed ``doc`` (a commitment is counted per signer, and an unsigned file is demoted
    by any signed copy of it anyway). :class:`GoodbenchError` (one line) otherwise."""
    owner = signing.signer(doc)
    if owner is None:
        raise GoodbenchError("only a signed file can be committed to: an unsigned one loses its runs to any "
                             "signed copy whatever its place; sign it (`goodbench keygen`, then `goodbench sign FILE`)")
    key = key or signing.load_key()
    mine = None if key is None else signing.fingerprint(signing.public_bytes(key))
    if key is None or mine != owner:
        raise GoodbenchError(f"the file is signed by {owner}, and a commitment to it is signed by that key, "
                             f"not {mine or 'no key'} (the key at {signing.key_path()}, or the one given)")
    return key


def submit(path: str | Path, results_dir: str | Path) -> Path:
    """Validate ``path`` and store it; returns where it landed or raises :class:`Refused`."""
    return submit_noted(path, results_dir).path


def submit_noted(path: str | Path, results_dir: str | Path, commit: bool = False,
                 key: Ed25519PrivateKey | None = None) -> Stored:
    """:func:`submit`, with the notes of a file stored over copies of its runs (:class:`Stored`).
    ``commit``: only commit to the file (:mod:`suite.store.ledger`): validated and checked as its
    submission would be, then named by its sha256 in the ledger, the line signed by ``key``
    (default the user's, :func:`suite.trust.signing.load_key`), which must be the key that signed
    the file; the file itself is not stored, and ``path`` of the answer is where it will land."""
    results_dir = Path(results_dir)
    raw, problems = read_bounded(path)
    if problems or raw is None:
        raise Refused(problems)
    doc, problems = parse(raw)
    problems = problems or check_document(doc)
    if problems:
        raise Refused(problems)
    dest = results_dir / naming.stored_name(raw)
    taken = _name_taken(dest)
    if taken is not None:  # refuse before touching anything, even the directory
        raise Refused([taken])
    sign_line = None
    if commit:
        chosen = _commitment_key(doc, key)

        def sign_line(name: str, stamp: str) -> dict[str, str]:
            return commitment.sign(name, stamp, chosen)
    results_dir.mkdir(parents=True, exist_ok=True)
    with locked(results_dir):
        found = _stored_claims(results_dir)
        problems, notes = _collisions(doc, dest, results_dir, found)
        if problems:
            raise Refused(problems)
        notes += _name_notes(doc, found[1])
        if commit:
            if dest.name in ledger.committed(results_dir):
                raise Refused([Problem("duplicate", "", f"already committed to as {dest.name}")])
            ledger.record(results_dir, dest.name, kind=ledger.COMMITTED, signed=sign_line)
            return Stored(dest, tuple(notes), doc)
        remove_abandoned(temp_files(results_dir))  # a killed writer's, never a live one's
        _store(results_dir, dest, raw)
    return Stored(dest, tuple(notes), doc)


def _store(results_dir: Path, dest: Path, raw: bytes) -> None:
    """Store ``raw`` as ``dest`` (the store's lock held): its bytes synced into a held temp file
    first, then its ledger line, then the file linked into place (never over one). A file stored
    is always listed; a file the disk refused leaves no line (the line is taken back when the
    link fails) and says so in one line."""
    try:
        with held_file(results_dir, dest.name) as (fd, tmp):
            results.write_synced(fd, raw)
            size = ledger.record(results_dir, dest.name)  # before the file: a file stored is always listed
            try:
                os.link(tmp, dest)
            except OSError:
                ledger.take_back(results_dir, size)
                raise
            results.synced_dir(dest)  # linked: a failing flush of the folder is said, the file stays stored
    except FileExistsError:
        raise Refused([Problem("duplicate", "", f"already submitted as {dest.name}")]) from None
    except OSError as exc:
        raise GoodbenchError(f"cannot store {dest}: {exc.strerror or exc}; nothing was stored") from None
