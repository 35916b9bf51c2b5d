"""The public leaderboard's two steps (docs/submitting.md; .github/workflows/leaderboard.yml).

``python -m suite.site.publish pr --base SHA --head SHA [--comment FILE] [--base-code]``
    Judges what a pull request changes under ``results/`` by the store's own rules, against
    the store as it is at ``--base`` (the branch it would merge into). Each results file it
    adds must be named by the sha256 of its bytes (as ``goodbench submit`` names it) and be
    stored by :func:`suite.store.files.submit_noted` into a scratch copy of the base's store, in the
    order of the ledger lines the pull request appends: validated under today's rules, and
    refused when the store holds one of its runs already (copies, ownership: docs/rules.md).
    A stored file is never changed or removed; ``ledger.jsonl`` only gains lines, each naming
    a file the pull request adds, or committing to one it does not show yet (``goodbench submit
    --commit``: a line naming a sha256 only, published before the file, signed by its key, stamped
    within the pull request's time and few: :mod:`suite.store.commitment_bounds`); ``reviewers.toml`` and ``results/mlperf/`` change by a
    maintainer's hand only, and a change outside ``results/`` is not a results submission.
    An accepted reproduction says which stored file it reproduces, each run's verdict and whether
    the base's ``reviewers.toml`` lists its signer (else the site shows it as an unverified claim).
    Prints the verdicts and writes them as Markdown to ``--comment`` (the pull request's
    comment); exit 0 when every change is accepted, 1 when one is not, 2 when git cannot
    answer. The pull request's files are read as git objects only: nothing of it is checked
    out, imported or run, so the workflow may run this with write permission.

    With ``--base-code`` it runs itself from a temporary git worktree of ``--base`` instead, as
    the workflow does (this checkout's code may differ: a workload or peak entry it adds). That
    runs ``--base``'s code, so ``--base`` must be a trusted ref's commit or one of its ancestors
    (``--trusted-ref``, a short name a tag and a branch both answer to refused; default: the
    branches ``refs/remotes/upstream/main``, ``refs/remotes/origin/main``, ``refs/heads/main``,
    those that exist), never a pull request's; the check starts with a reduced environment
    (:func:`child_environment`: no credential variables or SSH agent, an empty temporary ``HOME``,
    no global git config; the repository's own ``.git/config`` stays readable), and the worktree
    is removed however the run ends.

``python -m suite.site.publish site --out DIR [--results-dir results]``
    Builds the leaderboard as ``goodbench site`` does, for the workflow to publish (GitHub
    Pages) when ``main`` changes.

Torch-free.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from suite.leaderboard.rank_notes import rank_lines
from suite.record.errors import GoodbenchError
from suite.record.limits import MAX_FILE_BYTES
from suite.record.text import safe
from suite.store import commitment_bounds, ledger
from suite.store.files import Refused, submit_noted
from suite.trust import commitment, reviewers, signing
from suite.trust.reviewers import Reviewers
from suite.validate import RULES_VERSION

RESULTS = "results"
STORED_NAME = re.compile(r"results/([0-9a-f]{64})\.json")
MAINTAINERS_ONLY = ("results/reviewers.toml", "results/mlperf/")
LEDGER = f"{RESULTS}/{ledger.NAME}"
# --base-code's default: the branches the docs name, as full refs (a tag named "main" or "origin/main",
# fetched from a fork, resolves before the branch of that short name)
TRUSTED_REFS = ("refs/remotes/upstream/main", "refs/remotes/origin/main", "refs/heads/main")
_SHORT_REF_PLACES = ("refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD")
# what --base-code's child keeps of this environment (every name of ENV_DENIED dropped even so)
ENV_KEPT = ("PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "NO_COLOR", "VIRTUAL_ENV")
ENV_KEPT_PREFIXES = ("LC_", "PYTHON")
ENV_DENIED = re.compile(r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)


@dataclass
class Verdict:
    """What the check says of one changed path: ``accepted``, and why, line by line."""

    path: str
    accepted: bool
    lines: list[str] = field(default_factory=list)
    tag: str | None = None  # a few words beside the verdict: what an accepted reproduction is and whose


@dataclass
class Review:
    """Every changed path's verdict, and the store the pull request was judged against."""

    base: str
    head: str
    stored_before: int
    verdicts: list[Verdict]

    @property
    def accepted(self) -> bool:
        """True when the pull request changes something and every change is accepted."""
        return bool(self.verdicts) and all(v.accepted for v in self.verdicts)


class Terminated(BaseException):
    """SIGTERM, raised as an interrupt where :func:`sigterm_as_interrupt` holds."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (so ``finally`` blocks run, as on
    Ctrl-C); the previous handler is restored after. Outside the main thread, nothing changes."""
    def _raise(signum, frame):
        raise Terminated()
    try:
        previous = signal.signal(signal.SIGTERM, _raise)
    except ValueError:  # not the main thread: signals cannot be handled here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Git:
    """Git plumbing in ``repo``: commits, changed paths, blobs, all read-only, never a checkout of
    the working tree; the one exception is :meth:`detached_worktree`, a temporary checkout of a
    commit elsewhere, removed after."""

    def __init__(self, repo: str | Path = "."):
        self.repo = str(repo)

    def _run(self, *args: str) -> bytes:
        proc = subprocess.run(["git", "-C", self.repo, *args], capture_output=True, check=False)
        if proc.returncode:
            reason = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GoodbenchError(f"git {' '.join(args)}: {reason[-1] if reason else f'exit {proc.returncode}'}")
        return proc.stdout

    def commit(self, rev: str) -> str:
        """The full id of commit ``rev``."""
        return self._run("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").decode().strip()

    def merge_base(self, a: str, b: str) -> str:
        """The commit ``b`` branched from ``a`` at."""
        return self._run("merge-base", a, b).decode().strip()

    def is_ancestor(self, a: str, b: str) -> bool:
        """Whether commit ``a`` is ``b`` or one of its ancestors."""
        proc = subprocess.run(["git", "-C", self.repo, "merge-base", "--is-ancestor", a, b],
                              capture_output=True, check=False)
        if proc.returncode not in (0, 1):
            reason = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GoodbenchError(f"git merge-base --is-ancestor: {reason[-1] if reason else f'exit {proc.returncode}'}")
        return proc.returncode == 0

    def has_commit(self, rev: str) -> bool:
        """Whether ``rev`` names a commit here."""
        try:
            self.commit(rev)
        except GoodbenchError:
            return False
        return True

    @contextlib.contextmanager
    def detached_worktree(self, rev: str, prefix: str = "goodbench-worktree-") -> Iterator[Path]:
        """A temporary git worktree of commit ``rev`` (detached: no branch is made or moved), in a
        new temporary folder; removed when the block ends however it ends, an interrupt during
        ``git worktree add`` included (where ``git worktree remove`` fails, the folder is deleted and
        ``git worktree prune`` drops its registration). SIGINT and SIGTERM wait while it is removed."""
        with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
            tree = Path(scratch) / "base"
            try:
                self._run("worktree", "add", "--detach", "--quiet", str(tree), rev)
                yield tree
            finally:
                self._remove_worktree(tree)

    def _remove_worktree(self, tree: Path) -> None:
        blocked = {signal.SIGINT, signal.SIGTERM}
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # delivered once it is gone
        try:
            try:
                self._run("worktree", "remove", "--force", str(tree))
            except GoodbenchError:  # never added, or added only in part
                shutil.rmtree(tree, ignore_errors=True)
                with contextlib.suppress(GoodbenchError):
                    self._run("worktree", "prune")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def changes(self, old: str, new: str) -> list[tuple[str, str]]:
        """(status letter, path) of every path that differs from ``old`` to ``new`` (renames as a
        deletion and an addition)."""
        out = self._run("diff", "--no-renames", "--no-ext-diff", "--name-status", "-z", old, new).split(b"\0")
        fields = [f.decode("utf-8", "surrogateescape") for f in out if f]
        return list(zip(fields[0::2], fields[1::2], strict=True))

    def files(self, rev: str, folder: str) -> list[str]:
        """The paths of the files directly in ``folder`` at ``rev``."""
        out = self._run("ls-tree", "-z", "--name-only", "--full-tree", rev, folder.rstrip("/") + "/")
        return [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0") if f]

    def size(self, rev: str, path: str) -> int | None:
        """The size in bytes of file ``path`` at ``rev``; None where there is none."""
        try:
            return int(self._run("cat-file", "-s", f"{rev}:{path}"))
        except GoodbenchError:
            return None

    def committed_at(self, rev: str) -> dt.datetime:
        """When commit ``rev`` was made (its committer time), in UTC."""
        return dt.datetime.fromtimestamp(int(self._run("log", "-1", "--format=%ct", rev, "--")), dt.UTC)

    def blob(self, rev: str, path: str) -> bytes:
        """The bytes of file ``path`` at ``rev``."""
        return self._run("cat-file", "blob", f"{rev}:{path}")


def review(repo: str | Path, base: str, head: str, now: dt.datetime | None = None) -> Review:
    """Judge what ``head`` changes under results/ since it branched from ``base`` against the
    store at ``base`` (see the module docstring), at ``now`` (default: this machine's clock)."""
    git = Git(repo)
    base, head = git.commit(base), git.commit(head)
    fork = git.merge_base(base, head)
    changes = git.changes(fork, head)
    with tempfile.TemporaryDirectory(prefix="goodbench-publish-") as scratch:
        store = Path(scratch) / RESULTS
        stored_before = _copy_store(git, base, store)
        trusted = _base_reviewers(git, base, Path(scratch))
        waiting = commitment_bounds.open_by_signer(ledger.entries((store / ledger.NAME).read_bytes())
                                                   if (store / ledger.NAME).exists() else [])
        verdicts, added = _judge_paths(git, fork, head, changes, _Context(now or dt.datetime.now(dt.UTC), waiting))
        verdicts += _store_each(git, head, added, store, Path(scratch) / "incoming", trusted)
    return Review(base, head, stored_before, verdicts)


def _base_reviewers(git: Git, base: str, scratch: Path) -> Reviewers:
    """The trusted reviewers of the store at ``base`` (its ``results/reviewers.toml``; none without
    one): whose reproductions the site would count once merged. A pull request's own
    ``reviewers.toml`` is never read: only a maintainer changes it (:data:`MAINTAINERS_ONLY`)."""
    path = f"{RESULTS}/{reviewers.FILE}"
    size = git.size(base, path)
    if size is None:
        return Reviewers()
    folder = scratch / "base-reviewers"
    folder.mkdir()
    if size <= reviewers.MAX_BYTES:
        (folder / reviewers.FILE).write_bytes(git.blob(base, path))
        return reviewers.load(folder)
    return Reviewers(problem=f"{reviewers.FILE} is larger than {reviewers.MAX_BYTES} bytes: no reviewer is trusted")


def reproduction_said(doc: dict | None, trusted: Reviewers, store: Path, added: list[str]
                      ) -> tuple[str | None, list[str]]:
    """What the check says of a stored file that is a reproduction (``settings.reproduces``): the
    few words beside its verdict (whose key, and whether the site counts it) and its lines: which
    stored file it reproduces and whether the base's store or the pull request holds it, each run's
    original and verdict, and its signer against the base's ``results/reviewers.toml``; (None, [])
    for any other file."""
    settings = doc.get("settings") if isinstance(doc, dict) else None
    section = settings.get("reproduces") if isinstance(settings, dict) else None
    if not isinstance(doc, dict) or not isinstance(section, dict):
        return None, []
    name = f"{section.get('sha256')}.json"
    where = ("held by the base's store" if (store / name).is_file() and f"{RESULTS}/{name}" not in added
             else "added by this pull request" if f"{RESULTS}/{name}" in added
             else "in neither the base's store nor this pull request: no run page shows it until the original is stored")
    lines = [f"a reproduction of {RESULTS}/{_printable(name, 80)} ({where})"]
    entries = found if isinstance(found := section.get("runs"), list) else []
    lines += [f"run {_printable(str(e.get('run_id')), 64)} reproduces run {_printable(str(e.get('original_run_id')), 64)}: "
              f"{_printable(str(e.get('verdict')), 300)}" for e in entries[:20] if isinstance(e, dict)]
    if len(entries) > 20:
        lines.append(f"{len(entries) - 20} more reproduced runs (the first 20 are listed)")
    fp = signing.signer(doc)
    file = f"{RESULTS}/{reviewers.FILE}"
    if isinstance(fp, str) and trusted.trusts(fp):
        name_ = _printable(trusted.names[fp], 80)
        lines.append(f"signed by {fp}, a trusted reviewer's key in the base's {file} ({name_}): the original's run "
                     "pages count it")
        return f"a reproduction by a trusted reviewer ({name_}): counted", lines
    why = f"signed by {fp}, a key not in the base's {file}" if isinstance(fp, str) else "unsigned"
    lines.append(f"{why}: the site lists it as an unverified claim and counts it nowhere (a maintainer adds a "
                 f"reviewer's key to {file} in a pull request of its own)"
                 + (f"; the base's {file} is not read: {trusted.problem}" if trusted.problem else ""))
    return f"a reproduction {'by an untrusted key' if isinstance(fp, str) else 'unsigned'}: an unverified claim, " \
        "not counted", lines


def _copy_store(git: Git, rev: str, store: Path) -> int:
    """Write the store's results files and ledger at ``rev`` into ``store``; how many files."""
    store.mkdir(parents=True)
    count = 0
    for path in git.files(rev, RESULTS):
        if STORED_NAME.fullmatch(path) or path == LEDGER:
            (store / Path(path).name).write_bytes(git.blob(rev, path))
            count += path != LEDGER
    return count


@dataclass(frozen=True)
class _Context:
    """What the ledger's check needs beyond the two commits: the check's clock, and each key's
    commitments waiting in the store it is judged against."""

    now: dt.datetime
    waiting: Counter[str]


def _judge_paths(git: Git, fork: str, head: str, changes: list[tuple[str, str]],
                 context: _Context) -> tuple[list[Verdict], list[str]]:
    """The verdicts on every change but the added results files the ledger lists, and those
    files in the order the pull request's ledger lines store them."""
    verdicts: list[Verdict] = []
    added = sorted(path for status, path in changes if status == "A" and STORED_NAME.fullmatch(path))
    listed: list[str] = []
    ledger_refused = False
    for status, path in changes:
        if status == "A" and STORED_NAME.fullmatch(path):
            continue
        if path == LEDGER:
            verdict, listed = _judge_ledger(git, fork, head, status, added, context)
            verdicts.append(verdict)
            ledger_refused = not verdict.accepted
        elif path.startswith(MAINTAINERS_ONLY):
            verdicts.append(Verdict(path, False, ["a maintainer changes this file, in a pull request of its own"]))
        elif STORED_NAME.fullmatch(path):
            what = {"D": "removes", "M": "changes"}.get(status, "changes the type of")
            verdicts.append(Verdict(path, False, [f"{what} a stored results file: nothing stored is ever "
                                                  "changed or removed"]))
        elif path.startswith(RESULTS + "/"):
            verdicts.append(Verdict(path, False, [
                "not a stored file's name: store a results file with 'goodbench submit FILE', which names it "
                "by the sha256 of its bytes, and add what it stored"]))
        else:
            verdicts.append(Verdict(path, False, ["outside results/: a results submission changes results/ only "
                                                  "(code changes go in a pull request of their own)"]))
    # "the first stored" is judged in the ledger's order, and an unlisted file would count as
    # stored before every listed one: each added file must come with its ledger line
    unlisted = (f"not judged: the change to {LEDGER} that lists it was refused (its verdict says why)"
                if ledger_refused else
                f"not listed in {LEDGER}: add the line 'goodbench submit' appended there with the file")
    verdicts += [Verdict(path, False, [unlisted]) for path in added if path not in listed]
    return verdicts, [path for path in listed if path in added]


def _judge_ledger(git: Git, fork: str, head: str, status: str, added: list[str],
                  context: _Context) -> tuple[Verdict, list[str]]:
    """The verdict on the ledger's change, and the results files its new lines list, in order;
    its new commitments within :mod:`suite.store.commitment_bounds`."""
    old = git.blob(fork, LEDGER) if git.size(fork, LEDGER) is not None else b""
    size = git.size(head, LEDGER)
    new = git.blob(head, LEDGER) if size is not None and size <= ledger.MAX_BYTES else None
    if status == "D" or new is None:
        return Verdict(LEDGER, False, ["removes the store's ledger (or makes it too large to read)"]), []
    if not new.startswith(old):
        return Verdict(LEDGER, False, ["changes lines of the store's ledger: it only ever gains lines"]), []
    listed: list[str] = []
    stored_lines = 0
    promised: list[str] = []
    commitments: list[dict] = []
    flood = sum(ledger.COMMITTED.encode() in line for line in new[len(old):].splitlines())
    if flood > commitment_bounds.MAX_PER_PULL_REQUEST:  # before reading a line of it
        return Verdict(LEDGER, False, [commitment_bounds.too_many(flood)]), []
    # a name the store lists or holds already (a file stored before the ledger counts first)
    known = {name for name, _ in ledger.parse_lines(old)} | {Path(f).name for f in git.files(fork, RESULTS)}
    for line in new[len(old):].splitlines():
        try:
            entry = json.loads(line)
            name, kind = entry["file"], ledger.COMMITTED if ledger.COMMITTED in entry else ledger.STORED
        except (ValueError, KeyError, TypeError):
            return Verdict(LEDGER, False, ["a new ledger line is not one 'goodbench submit' writes"]), []
        path = f"{RESULTS}/{name}"
        fields = {"file", kind, *(commitment.FIELDS if kind == ledger.COMMITTED else ())}
        if ledger.parse_lines(line.strip() + b"\n") != [(name, kind)] or not set(entry) <= fields:
            return Verdict(LEDGER, False, ["a new ledger line is not one 'goodbench submit' writes"]), []
        if kind == ledger.STORED and (why := commitment_bounds.stamp_refusal(entry, context.now)):
            return Verdict(LEDGER, False, [why]), []
        if kind == ledger.COMMITTED:
            if path in added or name in known or name in promised:
                return Verdict(LEDGER, False, [
                    f"a new commitment names {_printable(str(name))}, which this pull request adds, the store "
                    "holds or lists already, or it names twice: commit to a file in a pull request of its own, "
                    "before the file is shown"]), []
            promised.append(name)
            commitments.append(entry)
            continue
        if path not in added:
            return Verdict(LEDGER, False, [
                f"a new ledger line names {_printable(str(name))}, which this pull request does not add (a "
                "'goodbench submit' killed before it stored the file leaves such a line: remove it, or submit "
                "the file again and add it)"]), []
        stored_lines += 1
        if path in listed:  # a submit killed between its line and its file, then made again
            listed.remove(path)  # the file counts where it is last listed, as the store orders it
        listed.append(path)
    if commitments:
        bounds = commitment_bounds.window(git.committed_at(fork), ledger.entries(old), context.now)
        why = commitment_bounds.refusal(commitments, bounds, context.waiting)
        if why is not None:
            return Verdict(LEDGER, False, [why]), []
    again = stored_lines - len(listed)
    said = [f"gains {stored_lines} line(s), each naming a file this pull request adds"
            + (f" ({again} a file listed again: a submit killed before storing it, made again)" if again else "")
            ] if listed else []
    said += [f"commits to {len(promised)} file(s) not shown yet, each by the sha256 of its bytes"] if promised else []
    return Verdict(LEDGER, True, said or ["gains no line"]), listed


def _store_each(git: Git, head: str, added: list[str], store: Path, incoming: Path,
                trusted: Reviewers | None = None) -> list[Verdict]:
    """Store each added file into the scratch store, in order: the store's verdict on each, a
    reproduction's saying what it reproduces and whether the base's reviewers count it
    (:func:`reproduction_said`, ``trusted``: the base's reviewers)."""
    incoming.mkdir()
    verdicts = []
    for path in added:
        name = Path(path).name
        size = git.size(head, path)
        if size is None or size > MAX_FILE_BYTES:
            why = "not a file" if size is None else f"{size} bytes is over the {MAX_FILE_BYTES}-byte limit"
            verdicts.append(Verdict(path, False, [why]))
            continue
        raw = git.blob(head, path)
        digest = hashlib.sha256(raw).hexdigest()
        if f"{digest}.json" != name:
            verdicts.append(Verdict(path, False, [f"its bytes' sha256 is {digest}, not its name: add the file "
                                                  "'goodbench submit' stored, unchanged"]))
            continue
        (incoming / name).write_bytes(raw)
        try:
            stored = submit_noted(incoming / name, store)
        except Refused as exc:
            verdicts.append(Verdict(path, False, [f"refused: {p.said()}" for p in exc.problems]))
            continue
        except GoodbenchError as exc:
            verdicts.append(Verdict(path, False, [f"refused: {exc}"]))
            continue
        tag, said = reproduction_said(stored.doc, trusted or Reviewers(), store, added)
        verdicts.append(Verdict(path, True, ["stored: valid under the rules, and no run of it is stored already",
                                             *said, *(f"note: {n}" for n in stored.notes),
                                             *rank_lines(stored.path, stored.doc)], tag))
    return verdicts


def _printable(text: str, limit: int = 300) -> str:
    """``text`` as a problem line prints it (:func:`suite.record.text.safe`: every refused
    character "?", bounded), its backticks "'": it cannot close a Markdown code block."""
    return safe(text, limit).replace("`", "'")


def report(result: Review) -> str:
    """The verdicts as plain text, one block per changed path."""
    head = (f"goodbench results check: {result.head[:12]} against the store at {result.base[:12]} "
            f"({result.stored_before} results files), rules v{RULES_VERSION}")
    if not result.verdicts:
        return head + "\nthis pull request changes nothing under results/\n"
    out = [head]
    for verdict in result.verdicts:
        tag = f"  ({verdict.tag})" if verdict.tag else ""
        out.append(f"{'ACCEPTED' if verdict.accepted else 'REFUSED'}  {_printable(verdict.path)}{tag}")
        out += [f"    {_printable(line, 2000)}" for line in verdict.lines]
    accepted = sum(v.accepted for v in result.verdicts)
    out.append(f"{accepted} of {len(result.verdicts)} changes accepted")
    return "\n".join(out) + "\n"


def comment(result: Review) -> str:
    """The pull request's comment: a one-line outcome, then :func:`report` in a code block (no
    text a results file holds is ever rendered as Markdown: no mention, link or HTML)."""
    outcome = ("**Accepted**: every change is stored by the store's rules" if result.accepted else
               "**Refused**: fix what the lines below name and push again")
    return (f"### goodbench results check\n\n{outcome}.\n\n```text\n{report(result)}```\n\n"
            "How results are checked and stored: docs/submitting.md.\n")


def child_environment(tree: Path, home: Path, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment ``--base-code`` runs the base's code in: only what Python and git need
    (:data:`ENV_KEPT`, ``LC_*``, ``PYTHON*``), never a name that reads as a credential
    (:data:`ENV_DENIED`: ``GITHUB_TOKEN``, ``SSH_AUTH_SOCK``, ``*SECRET*``, ``*KEY*``, …),
    ``PYTHONPATH`` the worktree alone, ``HOME`` the empty folder ``home`` (not the user's, with its
    ``~/.git-credentials``, ``~/.ssh``, ``~/.config/gh``), and no global or system git config."""
    env = {k: v for k, v in (os.environ if environ is None else environ).items()
           if (k in ENV_KEPT or k.startswith(ENV_KEPT_PREFIXES)) and not ENV_DENIED.search(k)}
    return {**env, "PYTHONPATH": str(tree), "HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1"}


def write_comment(path: str | Path, text: str) -> None:
    """Write the comment whole or not at all: to ``<path>.partial``, then renamed over ``path`` (a
    check killed meanwhile leaves no half-written comment; :func:`with_base_code` removes the
    ``.partial`` its child may leave)."""
    partial = Path(f"{path}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def unambiguous(git: Git, ref: str) -> str:
    """``ref``, where git reads it one way only; else :class:`GoodbenchError`: a short name that two
    refs answer to with different commits (a tag ``main`` beside the branch ``main``: git takes the
    tag), which a fork's tag could make stand in for a trusted branch."""
    if ref.startswith("refs/"):
        return ref
    places = [p.format(ref) for p in _SHORT_REF_PLACES]
    found = {p: git.commit(p) for p in places if git.has_commit(p)}
    if len(set(found.values())) > 1:
        raise GoodbenchError(f"--trusted-ref {safe(ref, 80)} is ambiguous: {', '.join(found)} name different "
                             "commits; name the full ref (refs/heads/…, refs/remotes/…)")
    return ref


def trusted_base(git: Git, base: str, trusted: list[str] | None) -> str:
    """The commit of ``base`` where it is a trusted ref's commit or one of its ancestors (``trusted``,
    each :func:`unambiguous`; None: the refs of :data:`TRUSTED_REFS` that exist here); else
    :class:`GoodbenchError`, one line."""
    refs = [unambiguous(git, r) for r in trusted] if trusted else [r for r in TRUSTED_REFS if git.has_commit(r)]
    commit = git.commit(base)
    if not refs:
        raise GoodbenchError(f"--base-code runs --base's code, and no trusted ref exists here "
                             f"({', '.join(TRUSTED_REFS)}): name one with --trusted-ref")
    if not any(git.is_ancestor(commit, git.commit(ref)) for ref in refs):
        raise GoodbenchError(f"--base-code runs --base's code: {safe(base, 80)} ({commit[:12]}) is not "
                             f"{' or '.join(refs)} nor an ancestor of {'it' if len(refs) == 1 else 'one'} "
                             "(a pull request's code is never run)")
    return commit


def with_base_code(repo: str | Path, base: str, head: str, comment_to: str | None,
                   trusted: list[str] | None = None) -> int:
    """Run ``pr`` with ``base``'s own code, in a git worktree of ``base`` made for it and removed
    after however the run ends (the workflow runs the base branch's code; this checkout's may
    differ); its exit status (128 + N where a signal N ended it). ``base`` must be trusted
    (:func:`trusted_base`); the check runs in :func:`child_environment`."""
    git = Git(repo)
    base, head = trusted_base(git, base, trusted), git.commit(head)
    with sigterm_as_interrupt(), git.detached_worktree(base, prefix="goodbench-base-code-") as tree, \
            tempfile.TemporaryDirectory(prefix="goodbench-base-code-home-") as home:
        print(f"judging with the code of {base[:12]} (a worktree of it at {tree})", file=sys.stderr, flush=True)
        # -P: the base's code comes from PYTHONPATH alone, never from whatever folder is current
        command = [sys.executable, "-P", "-m", "suite.site.publish", "pr", "--repo", str(Path(repo).resolve()),
                   "--base", base, "--head", head]
        if comment_to:
            command += ["--comment", str(Path(comment_to).resolve())]
        try:
            status = subprocess.run(command, cwd=tree, env=child_environment(tree, Path(home)),
                                    check=False).returncode
        finally:
            if comment_to:  # the child's comment, where it was ended while writing it
                Path(f"{Path(comment_to).resolve()}.partial").unlink(missing_ok=True)
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else f"signal {-status}"
        print(f"publish: the check run with {base[:12]}'s code was ended by {name} (exit {128 - status})",
              file=sys.stderr)
        return 128 - status
    return status


def main(argv: list[str] | None = None) -> int:
    """The command line of the module docstring; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m suite.site.publish", description=(__doc__ or "").split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    pr = steps.add_parser("pr", help="judge a pull request's results files against the base's store")
    pr.add_argument("--base", required=True, help=(
        "the commit the pull request would merge into: the leaderboard's main (in a clone of your fork, "
        "origin is the fork: git remote add upstream URL; git fetch upstream; --base upstream/main)"))
    pr.add_argument("--head", required=True, help="the pull request's commit")
    pr.add_argument("--repo", default=".", help="the git repository holding both (default: here)")
    pr.add_argument("--comment", help="also write the verdicts as Markdown to this file")
    pr.add_argument("--base-code", action="store_true", help=(
        "judge with --base's code, as the workflow does, not this checkout's: check --base out into a "
        "temporary git worktree and run this check from there, with no credential in its environment and an "
        "empty temporary HOME (docs/submitting.md says what it can still read); "
        "--base must then be a --trusted-ref or one of its ancestors (never name a pull request's commit)"))
    pr.add_argument("--trusted-ref", action="append", metavar="REF", help=(
        f"with --base-code: a ref whose code may be run, repeatable; a short name that a tag and a branch "
        f"both answer to is refused (default: {', '.join(TRUSTED_REFS)}, those that exist)"))
    site = steps.add_parser("site", help="build the leaderboard to publish")
    site.add_argument("--results-dir", default=RESULTS, help="the store (default: results)")
    site.add_argument("--out", required=True, help="the folder to build into (absent, empty or a previous build)")
    args = parser.parse_args(argv)
    try:
        if args.step == "site":
            from suite.site.builder import build_site

            built = build_site(args.results_dir, args.out)
            print(f"built {built.index}: {built.n_results} results files shown, {len(built.invalid)} not shown")
            return 0
        if args.base_code:
            return with_base_code(args.repo, args.base, args.head, args.comment, args.trusted_ref)
        result = review(args.repo, args.base, args.head)
    except GoodbenchError as exc:
        print(f"publish: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print("publish: stopped by SIGTERM", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("publish: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    print(report(result), end="")
    if args.comment:
        write_comment(args.comment, comment(result))
    return 0 if result.accepted else 1


if __name__ == "__main__":
    sys.exit(main())
