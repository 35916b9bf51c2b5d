"""The build: validate and copy every results file, write its run pages, pool the entries, then write
the workload, system, compare and index pages and the static files.

Per-file work (validate, copy, run pages) is spread over processes for large result sets; so are
the workload and system pages.

The site is built into a fresh sibling of the output folder (``.<name>.new-*``) and swapped in
when complete (an atomic exchange of the two folders where the OS has one, else two renames),
so a rebuild holds exactly the current pages and a build that fails or is interrupted leaves the
previous site as it was. Every build holds the output's parent folder shared (``flock``) while it
lasts; a build that starts alone (it takes that lock exclusively first) removes the folders a
killed build left there — named ``.<name>.new-`` and mkdtemp's 8 characters, this user's, held by
no process, holding only what a build writes at its top — and says which (:attr:`Built.removed`);
any other folder of that name pattern may be a user's and is left where it is, named in
:attr:`Built.leftovers` (only when no other build runs: a live build's fresh folder lies there
unlocked for a moment as it is made and swapped in). The output folder must be absent, empty or a previous build exactly as the list of its files
(:data:`MARKER`, :mod:`suite.site.manifest`) names them; any other folder is refused, whatever it
holds, and left as it is, and of the previous build only the listed files are removed.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import glob
import math
import os
import pickle
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from suite.cost import entries as costs
from suite.cost import prices
from suite.leaderboard import pipeline
from suite.leaderboard import rows as leaderboard
from suite.record.errors import GoodbenchError
from suite.record.reading import read_bounded
from suite.record.results import utc_now
from suite.record.tempfiles import held_folder, remove_tree, unheld
from suite.site import about_pages, manifest, mlperf_pages, pages, price_page, refused, run_page, speedrun_pages
from suite.site.names import file_slug
from suite.site.render import copy_static
from suite.site.tables import downloads
from suite.store.files import stored_files
from suite.store.ledger import in_store_order
from suite.trust import reviewers
from workloads import own, registry

PARALLEL_FROM = 200  # files: below this, one process is faster than starting workers


MARKER = manifest.MARKER  # written into every build: the list of its files, which a later build may replace


@dataclass(frozen=True)
class Built:
    """What a build made: the index page, the number of results files shown, the files not
    shown with why (file name, first problem as one line), and the folders beside the output named
    like a build's fresh folder that no live build holds (left where they are)."""

    index: Path
    n_results: int
    invalid: list[tuple[str, str]]
    leftovers: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)  # killed builds' folders beside the output, removed


def build(results_dir: str | Path, out_dir: str | Path, workers: int | None = None) -> Path:
    """Render ``results_dir`` into ``out_dir``; returns the path of ``index.html``."""
    return build_site(results_dir, out_dir, workers).index


def build_site(results_dir: str | Path, out_dir: str | Path, workers: int | None = None,
               table: prices.Table | None = None, progress: Callable[[str], None] | None = None) -> Built:
    """Render ``results_dir`` into a fresh folder and swap it in as ``out_dir`` (see the module
    docstring), costs priced with ``table`` (None: the shipped price table), each stage said to
    ``progress`` as it starts; :class:`GoodbenchError`
    for a missing results folder or an output folder that is not a previous build."""
    table = table if table is not None else prices.load()
    results, out = manifest.check_paths(results_dir, out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _building(out) as removed:
        with _fresh_folder(out) as fresh:
            try:
                index, n_results, invalid = _build_into(results, fresh, workers, table, progress or (lambda line: None))
                manifest.write(fresh)
            except OSError as exc:  # a full disk's write names no file: say where the site was being written
                where = exc.filename if exc.filename is not None else fresh
                raise GoodbenchError(f"cannot write the site into {where} (the new build of {out}): "
                                     f"{exc.strerror or exc}; {out} is left as it was") from None
            _swap_in(fresh, out)
            kept = _remove_previous(fresh)
        leftovers = (_leftovers(out) if removed.alone() else []) + kept
    return Built(Path(out_dir) / index.relative_to(fresh), n_results, invalid, leftovers, removed.folders)


def _remove_previous(previous: Path) -> list[Path]:
    """Remove the previous build, swapped out to ``previous``: only the files its manifest lists
    with their listed content. Anything else (put there after the output was checked) is never
    removed: the folder holding it is renamed ``.<name>.kept-*`` beside the output and returned."""
    remains = manifest.remove_own(previous, manifest.read(previous) or {})
    if not remains:
        return []
    kept = previous.with_name(previous.name.replace(".new-", ".kept-", 1))
    os.rename(previous, kept)
    return [kept]


def _siblings(out: Path, kind: str) -> str:
    return f".{out.name}.{kind}-"


def _fresh_folder(out: Path) -> contextlib.AbstractContextManager[Path]:
    """A new folder beside ``out``, locked (flock) while this build uses it; removed afterwards
    (after the swap it holds the previous site)."""
    return held_folder(out.parent, _siblings(out, "new"))


def _leftovers(out: Path) -> list[Path]:
    """The folders beside ``out`` named like a build's fresh folder that no live build holds and
    that :func:`_remove_killed` left (not a killed build's as far as it can tell: a user's, or one
    it could not remove)."""
    return sorted(unheld(out.parent.glob(glob.escape(_siblings(out, "new")) + "*"), folders=True))


# what a build writes at the top of its folder: a folder beside the output holding anything else is not a killed build's
BUILD_ENTRIES = frozenset({MARKER, "index.html", "compare.html", "compare.csv", "compare.json", "methodology.html",
                           "submitting.html", "prices.html", "mlperf.html", "runs.csv", "runs.json", "mlperf", "raw",
                           "runs", "speedrun", "static", "systems", "workloads"})
_MKDTEMP_TAIL = re.compile(r"[a-z0-9_]{8}")  # tempfile.mkdtemp's random part: what follows a fresh folder's prefix


class _Builds:
    """This build's hold on the output's parent folder (a shared ``flock`` every build holds while
    it lasts) and the killed builds' folders it removed when it started alone."""

    def __init__(self, fd: int, out: Path):
        self.fd, self.out = fd, out
        self.folders: list[Path] = []

    def alone(self) -> bool:
        """Whether no other build runs now (the lock taken exclusively; the caller takes it shared
        again): only then are the folders named like a build's and unheld not some live build's
        (one just made and not yet locked, or one a build swapped a site into), and those killed
        builds left are removed (:func:`_remove_killed`). Asked at a build's start and at its end."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another build holds it, or no lock here (unreadable folder, NFS): not alone
            return False
        self.folders += _remove_killed(self.out)
        return True


@contextlib.contextmanager
def _building(out: Path) -> Iterator[_Builds]:
    """Hold the output's parent folder shared while this build lasts (every build does). A build
    that can take it exclusively first is the only one: the folders beside the output named like a
    build's fresh folder that no build holds are then killed builds' leftovers, and are removed
    (:func:`_remove_killed`) before this build makes its own; with another build under way none is
    touched (the race of two builds: one's fresh folder lies there unlocked for a moment)."""
    try:
        fd = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # a folder this user may enter but not read: the build goes on, removing nothing
        fd = -1
    try:
        builds = _Builds(fd, out)
        builds.alone()  # at its start: the killed builds' folders go before this one makes its own
        with contextlib.suppress(OSError):  # to the end: a build starting now leaves this one's folder alone
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield builds
    finally:
        if fd >= 0:
            os.close(fd)  # its lock goes with it


def _remove_killed(out: Path) -> list[Path]:
    """Remove the folders beside ``out`` that a killed build left (the caller holds the builds'
    lock exclusively): named ``.<name>.new-`` and mkdtemp's 8 characters, a real folder of this
    user's that no process holds, holding nothing but what a build writes at its top
    (:data:`BUILD_ENTRIES`). Another folder of that name is left where it is (a user's, perhaps)
    and named by :func:`_leftovers`. The folders removed."""
    prefix = _siblings(out, "new")
    removed = []
    for path in unheld(out.parent.glob(glob.escape(prefix) + "*"), folders=True):
        try:
            info = os.lstat(path)
            entries = set(os.listdir(path))
        except OSError:
            continue
        if not (_MKDTEMP_TAIL.fullmatch(path.name[len(prefix):]) and stat.S_ISDIR(info.st_mode)
                and info.st_uid == os.geteuid() and entries <= BUILD_ENTRIES):
            continue
        if remove_tree(path) is None:
            removed.append(path)
    return sorted(removed)


def _swap_in(fresh: Path, out: Path) -> None:
    """Put ``fresh`` at ``out``; the previous site (if any) ends up at ``fresh``."""
    if not out.exists():
        os.rename(fresh, out)
        fresh.mkdir()  # for _fresh_folder to remove
        return
    if _exchange(fresh, out):
        return
    old = fresh.with_name(fresh.name.replace(".new-", ".old-", 1))  # no atomic exchange: two renames
    os.rename(out, old)
    try:
        os.rename(fresh, out)
    except OSError:
        os.rename(old, out)  # the previous site back
        raise
    os.rename(old, fresh)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where the OS or
    the filesystem cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def _build_into(results_dir: Path, out: Path, workers: int | None, table: prices.Table,
                progress: Callable[[str], None]) -> tuple[Path, int, list[tuple[str, str]]]:
    """Render ``results_dir`` into the (new, empty) folder ``out``: (index page, results shown, files not shown)."""
    with tempfile.TemporaryDirectory(prefix="goodbench-site-readings-") as folder:  # never published
        return _build_with(results_dir, out, workers, Path(folder), table, progress)


def _build_with(results_dir: Path, out: Path, workers: int | None, readings: Path, table: prices.Table,
                progress: Callable[[str], None]) -> tuple[Path, int, list[tuple[str, str]]]:
    """:func:`_build_into`, each file's one reading kept in ``readings`` for the pages rewritten
    once every file is read."""
    for sub in ("raw", "runs", "workloads", "systems", "static"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    paths = in_store_order(results_dir, stored_files(results_dir))  # never a temp file; the first stored first
    built_at = utc_now()
    workers = workers or os.cpu_count() or 1
    parallel = len(paths) >= PARALLEL_FROM and workers > 1
    progress(f"reading and validating {len(paths)} results file{'' if len(paths) == 1 else 's'}")
    with ProcessPoolExecutor(workers) if parallel else contextlib.nullcontext() as pool:
        parts, invalid, links, summaries, named = _gather(paths, out, pool, workers, built_at, readings, table)
        trusted = reviewers.load(results_dir)  # whose reproductions count (results/reviewers.toml)
        if trusted.problem:
            invalid.append((reviewers.FILE, trusted.problem))
        board = pipeline.board(parts, results_dir, trusted)  # copies, scaling, trust, ranking groups
        runs, copies = board.runs, board.copies
        entries = costs.with_costs(board.entries, table)  # accelerator-hours × the class's list price
        again = runs["reproduces"].notna()  # a reproduction's runs: no entry of their own
        built = {"built_at": built_at, "n_results": int(entries["file"].nunique()), "n_runs": int((~again).sum()),
                 "n_reproductions": int(runs.loc[again, "file"].nunique())}
        progress("writing the workload and system pages")
        ids = list(registry.WORKLOADS) + ([own.FREE_JOB] if (entries["workload"] == own.FREE_JOB).any() else [])
        built["refused"] = refused.by_workload(named, ids)  # each workload page points to its own
        workloads = _map(pool, pages.workload_pages, [out] * len(ids), ids,
                         [entries[entries["workload"] == w] for w in ids], [built] * len(ids))
        names = sorted(entries["system"].unique())
        parts = [names[i::workers * 2] for i in range(workers * 2)] if pool is not None else [names]
        groups = [entries[entries["system"].isin(part)] for part in parts if part]
        files = [set(g["file"]) for g in groups]
        mine = [{k: v for k, v in summaries.items() if k[0] in f} for f in files]  # each group's entries
        systems = sorted((s for found in _map(pool, pages.system_pages, [out] * len(groups), groups,
                                              [built] * len(groups), [links] * len(groups), mine)
                          for s in found), key=lambda s: (s["order"], s["name"]))
    pages.compare_page(out, entries, built, summaries)
    downloads(runs, out / "runs")
    run_page.write_reproduced(out, results_dir, runs, built_at, copies, trusted,  # "reproduced N times on …", copies
                              read=lambda file: pickle.loads((readings / f"{file_slug(file)}.pickle").read_bytes()),
                              table=table)
    # each said only where the store holds imported documents (a store without them writes no such page)
    mlperf = mlperf_pages.write(out, results_dir, built, table, progress)  # imported MLPerf results: pages of their own
    speedrun = speedrun_pages.write(out, results_dir, built, table, progress)  # the imported NanoGPT speedrun, apart too
    price_page.write(out, table, built)  # the price table costs are computed with, every entry's source and date
    pages.index_page(out, workloads, systems, invalid, built, mlperf=mlperf, speedrun=speedrun,
                     latest=pages.latest_results(entries, [p.name for p in paths]))
    about_pages.write(out, built)  # methodology and how to submit
    copy_static(out / "static")
    return out / "index.html", int(entries["file"].nunique()), invalid


def _map(pool: ProcessPoolExecutor | None, fn, *args) -> list:
    """``fn`` over zipped ``args``: in the worker processes when there is a pool, else here."""
    return list(pool.map(fn, *args) if pool is not None else map(fn, *args))


def _gather(paths: list[Path], out_dir: Path, pool: ProcessPoolExecutor | None, workers: int, built_at: str,
            readings: Path, table: prices.Table):
    names = [str(p) for p in paths]
    # many small chunks, so that both workers stay busy to the end
    size = math.ceil(len(names) / (workers * 16)) if pool is not None else max(1, len(names))
    chunks = [names[i:i + size] for i in range(0, len(names), size)] or [[]]
    parts = _map(pool, _process, chunks, [str(out_dir)] * len(chunks), [built_at] * len(chunks),
                 [str(readings)] * len(chunks), [table] * len(chunks))
    invalid = [i for part in parts for i in part[1]]
    links: dict[tuple[str, str | None], set[str]] = {}
    for system, text in (pair for part in parts for pair in part[2]):
        links.setdefault(system, set()).add(text)
    summaries = {key: value for part in parts for key, value in part[3].items()}
    named = {name: ids for part in parts for name, ids in part[4].items()}  # the refused files' workloads
    return [rows for part in parts for rows in part[0]], invalid, links, summaries, named


def _process(paths: list[str], out_dir: str, built_at: str, readings: str, table: prices.Table):
    """Read each file once (validated, its signer checked, its figures recomputed:
    :func:`suite.leaderboard.rows.read_stored`), copy valid ones to raw/, write their run pages
    (the recomputed figures, as the tables show them) and event logs, and keep the reading in
    ``readings`` for the pages rewritten once every file is read; return each file's rows
    (:func:`suite.leaderboard.pipeline.file_rows`), invalid files, ((system name, signer), interconnect
    text) pairs, each entry's comparison summary (suite/compare/engine.py; keyed by file, workload and scale)
    and, for each invalid file, the workload ids its runs name (:func:`suite.site.refused.workload_ids`)."""
    parts, invalid, links = [], [], []
    summaries: dict[tuple[str, str, str], dict] = {}
    named: dict[str, list[str]] = {}
    out = Path(out_dir)
    for p in map(Path, paths):
        stored, problem, parsed = leaderboard.read_stored_parsed(p)
        if stored is None:
            invalid.append((p.name, problem))
            named[p.name] = refused.workload_ids(parsed)
            continue
        _copy(p, out / "raw" / f"{file_slug(p.name)}.json")
        shared = run_page.doc_context(p.name, stored.figures, list(stored.waived), signer=stored.signer, table=table)
        parts.append(pipeline.file_rows(stored))
        summaries.update(pages.entry_summaries(p.name, stored.figures))
        if shared["interconnect"] is not None:
            links.append(((stored.doc["system"]["name"], stored.signer), shared["interconnect"]))
        run_page.write_pages(out, p.name, stored.figures, shared, built_at)
        (Path(readings) / f"{file_slug(p.name)}.pickle").write_bytes(pickle.dumps(stored))
    return parts, invalid, links, summaries, named


def _copy(src: Path, dest: Path) -> None:
    """``dest`` as a byte copy of the results file ``src`` (never a link: editing the site's copy
    must not change a stored result), read as the validator reads it (no symbolic link)."""
    raw, problems = read_bounded(src)
    if problems or raw is None:
        raise GoodbenchError(problems[0].line(src.name) if problems else f"{src}: unreadable")
    dest.write_bytes(raw)
