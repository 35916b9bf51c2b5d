"""Finding the submissions of MLCommons training result trees: org folders, system × benchmark
folders and their result files, as MLCommons' result_summarizer finds them.

An org folder holds ``results/``; each folder under ``results/`` is a system (its description is
``systems/<system>.json``), each folder under a system a benchmark, and every file there named
``result_*.txt`` a run (result_summarizer's glob: ``result_0.txt``, but also
``result_<job id>_<N>.txt`` and ``result_<id>_raw_<N>.txt``, which some submitters of v4.0 and
v4.1 published). The round (``v5.1``: ruleset ``5.1.0``) is read from the nearest folder above
the org named ``v5.1`` or ``training_results_v5.1``, or given. Nothing here follows a symbolic
link: a linked folder or file is named as such and left out.

A copy of a round may lack files the published tree has (a partial clone whose largest blobs
were not fetched): ``--absent FILE`` lists them (``v1.0/<org>/results/<system>/<benchmark>/
result_1.txt``, one per line). Each group keeps the paths listed for it that the copy lacks, a
folder the copy lacks entirely included, so that no partial folder is scored as if it were the
published one (:func:`suite.mlperf.importer.build_document` says what they change).
"""
from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from suite.mlperf import files

RESULT_PATTERN = "result_*.txt"  # result_summarizer's glob in a benchmark folder
_ROUND_DIR = re.compile(r"^(?:training_results_)?v(\d+)\.(\d+)(?:\.\d+)?$")
_ROUND_ARG = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")
_DIGITS = re.compile(r"(\d+)")
_SKIP_DIRS = {".git", "node_modules", "__pycache__"}


@dataclass
class Group:
    """One system × benchmark folder of a submission tree."""

    round: str            # "v5.1"
    ruleset: str          # "5.1.0"
    root: Path            # the folder holding the org folder
    org: str              # the org folder's name
    system: str           # the system folder's name (and its description's file name)
    benchmark: str        # the benchmark folder's name, as result_summarizer takes it
    files: list[Path] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # paths the published folder has and the copy lacks
    round_note: str | None = None  # where --round is not what the tree's path says

    @property
    def absent_runs(self) -> list[str]:
        """The result files among :attr:`absent`."""
        return [p for p in self.absent if is_result(p)]

    @property
    def folder(self) -> Path:
        return self.root / self.org / "results" / self.system / self.benchmark

    @property
    def description(self) -> Path:
        return self.root / self.org / "systems" / f"{self.system}.json"

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def parse_round(text: str) -> tuple[str, str]:
    """"v5.1", "5.1" or "5.1.0" → ("v5.1", "5.1.0"); ValueError for anything else."""
    match = _ROUND_ARG.match(text.strip())
    if match is None:
        raise ValueError(f"--round {text!r}: give the round as v5.1 (or 5.1.0)")
    major, minor = match.group(1), match.group(2)
    return f"v{major}.{minor}", f"{major}.{minor}.0"


def round_of(org_dir: Path) -> tuple[str, str] | None:
    """The round of an org folder from the nearest folder above it named like ``v5.1``."""
    for parent in org_dir.parents:
        match = _ROUND_DIR.match(parent.name)
        if match:
            return f"v{match.group(1)}.{match.group(2)}", f"{match.group(1)}.{match.group(2)}.0"
    return None


def natural_key(name: str) -> tuple:
    """``result_2.txt`` before ``result_10.txt``: digit runs compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(name))


def _org_dirs(path: Path, problems: list[str]) -> Iterator[tuple[Path, Path | None]]:
    """(org folder, subtree of it to read or None for all) for every submission tree at or
    under ``path``; a path inside a tree (``<org>/results/<system>``) gives its org."""
    for parent in [path, *path.parents]:
        if parent.name == "results" and parent.parent != parent:
            yield parent.parent, path if path != parent else None
            return
    stack = [path]
    while stack:
        folder = stack.pop()
        try:
            found = files.entries(folder)
        except OSError as exc:
            problems.append(f"{folder}: cannot be read: {exc.strerror or exc}")
            continue
        if any(e.name == "results" and files.is_folder(e) for e in found):
            yield folder, None
            continue
        stack.extend(Path(e.path) for e in reversed(found) if files.is_folder(e) and e.name not in _SKIP_DIRS)


def _folders(folder: Path, problems: list[str]) -> list[Path]:
    """The real subfolders of ``folder`` (hidden ones left out); a link to a folder is named."""
    out = []
    for entry in files.entries(folder):
        if entry.name.startswith("."):
            continue
        if files.is_folder(entry):
            out.append(Path(entry.path))
        elif entry.is_symlink():
            problems.append(f"{entry.path}: a symbolic link: not followed")
    return out


def is_result(path: str) -> bool:
    """A path under a benchmark folder that result_summarizer takes as a run."""
    return "/" not in path and fnmatch.fnmatchcase(path, RESULT_PATTERN)


def result_files(bench_dir: Path) -> list[Path]:
    """The run logs of a benchmark folder: every entry named ``result_*.txt``, in natural order
    (what is not a regular file is kept, to be named when it is read)."""
    names = [e.name for e in files.entries(bench_dir) if fnmatch.fnmatchcase(e.name, RESULT_PATTERN)]
    return [bench_dir / name for name in sorted(names, key=natural_key)]


AbsentKey = tuple[str, str, str, str]  # (round, org, system, benchmark)
MAX_ABSENT_PROBLEMS = 5  # malformed --absent lines named one by one; the rest counted


def read_absent(text: str, problems: list[str]) -> dict[AbsentKey, list[str]]:
    """The ``--absent`` list: ``<round>/<org>/results/<system>/<benchmark>/<path>`` lines → the
    paths under each system × benchmark folder (blank lines and ``#`` comments skipped; a line of
    another shape, or with a ``.`` or ``..`` part, named in ``problems``)."""
    out: dict[AbsentKey, list[str]] = {}
    bad = 0
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split("/")
        if (len(parts) < 6 or parts[2] != "results" or not _ROUND_DIR.match(parts[0])
                or any(part in ("", ".", "..") for part in parts)):
            bad += 1
            if bad <= MAX_ABSENT_PROBLEMS:
                problems.append(f"--absent line {number}: not <round>/<org>/results/<system>/<benchmark>/<file>: "
                                f"{line[:200]!r}")
            continue
        rnd = parse_round(parts[0].removeprefix("training_results_"))[0]
        out.setdefault((rnd, parts[1], parts[3], parts[4]), []).append("/".join(parts[5:]))
    if bad > MAX_ABSENT_PROBLEMS:
        problems.append(f"--absent: {bad - MAX_ABSENT_PROBLEMS} more line(s) of another shape")
    return out


def _absent_here(absent: dict[AbsentKey, list[str]], key: AbsentKey, folder: Path) -> list[str]:
    """The paths listed absent for one folder that the copy indeed lacks."""
    return sorted({p for p in absent.get(key, []) if not os.path.lexists(folder / p)}, key=natural_key)


def unused_absent(absent: dict[AbsentKey, list[str]], groups: list[Group]) -> list[str]:
    """Folders ``--absent`` names that no group of the rounds imported is (a mistyped org, system
    or benchmark would otherwise let a partial folder be scored)."""
    used = {(g.round, g.org, g.system, g.benchmark) for g in groups}
    rounds = {g.round for g in groups}
    return ["/".join((k[0], k[1], "results", k[2], k[3])) for k in sorted(absent) if k[0] in rounds and k not in used]


def discover(paths: Iterable[str | Path], round_arg: str | None, known: set[str],
             problems: list[str], absent: dict[AbsentKey, list[str]] | None = None) -> list[Group]:
    """Every system × benchmark folder under ``paths`` whose round has a ruleset in ``known``,
    in path order, with the result files ``absent`` lists for it (problems appended, one line
    each)."""
    absent = absent or {}
    forced = parse_round(round_arg) if round_arg else None
    groups: list[Group] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given).absolute()
        if not path.exists():
            problems.append(f"{given}: no such file or directory")
            continue
        if not path.is_dir():
            problems.append(f"{given}: not a folder (give a submission tree or a round's checkout)")
            continue
        found = False
        for org_dir, within in _org_dirs(path, problems):
            found = True
            path_round = round_of(org_dir)
            rnd = forced or path_round
            note = None if forced is None or forced == path_round else (
                f"round {forced[0]} given by --round; the tree's path says "
                + (path_round[0] if path_round else "no round"))
            if rnd is None:
                problems.append(f"{org_dir}: cannot tell the round (no folder named like v5.1 above "
                                "it); give --round")
                continue
            if rnd[1] not in known:
                problems.append(f"{org_dir}: round {rnd[0]} has no MLCommons ruleset in this "
                                f"mlperf-logging (known: {', '.join(sorted(known, key=natural_key))})")
                continue
            try:
                for system_dir in _folders(org_dir / "results", problems):
                    for bench_dir in _folders(system_dir, problems):
                        if within is not None and within not in (bench_dir, *bench_dir.parents):
                            continue
                        if bench_dir in seen:
                            continue
                        seen.add(bench_dir)
                        runs = result_files(bench_dir)
                        missing = _absent_here(absent, (rnd[0], org_dir.name, system_dir.name, bench_dir.name),
                                               bench_dir)
                        if not runs and not any(is_result(p) for p in missing):
                            problems.append(f"{bench_dir}: no {RESULT_PATTERN} files")
                            continue
                        groups.append(Group(rnd[0], rnd[1], org_dir.parent, org_dir.name,
                                            system_dir.name, bench_dir.name, runs, missing, note))
                for (a_round, a_org, a_system, a_bench), names in sorted(absent.items()):
                    bench_dir = org_dir / "results" / a_system / a_bench
                    if (a_round, a_org) != (rnd[0], org_dir.name) or bench_dir in seen or os.path.lexists(bench_dir):
                        continue
                    if within is not None and within not in (bench_dir, *bench_dir.parents):
                        continue
                    seen.add(bench_dir)  # the whole folder is absent from the copy
                    if not any(is_result(p) for p in names):
                        problems.append(f"{bench_dir}: listed by --absent without any {RESULT_PATTERN} file")
                        continue
                    groups.append(Group(rnd[0], rnd[1], org_dir.parent, org_dir.name, a_system, a_bench, [],
                                        sorted(set(names), key=natural_key), note))
            except OSError as exc:
                problems.append(f"{org_dir}: cannot be read: {exc.strerror or exc}")
        if not found:
            problems.append(f"{given}: no MLPerf submission tree (<org>/results/<system>/<benchmark>/) under it")
    return groups
