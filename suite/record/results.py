"""The results record: its typed shape, building it, writing it atomically, reading it back, and
small accessors for the figures that readers (CLI, leaderboard, site, summary) show.

A results file is JSON; :class:`Document` and the classes below are its typed view (TypedDicts,
so a parsed file *is* the record and costs nothing to convert). The JSON Schema
(``suite/schema/results-v1.json``) is the definition: these types name exactly its fields, what
:mod:`suite.figures.derive` writes is what it defines, and ``docs/results-format.md`` documents each of
its fields (tests/test_record_definition.py, tests/test_docs.py). Torch-free: reading results never loads a training stack.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import json
import math
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

from suite import __version__
from suite.record.rules_version import RULES_VERSION
from suite.record.tempfiles import held_file, remove_abandoned, temp_files

SCHEMA_VERSION = 1


# ---------------------------------------------------------------- the record's shape
class Window(TypedDict, total=False):
    """The steady-state window: steps ``first_step``..``last_step`` (``segments`` when resumed)."""

    first_step: int
    last_step: int
    steps: int
    seconds: float
    segments: list[list[int]]


CPU_MEMORY_STATUS = "not measured: torch counts peak memory on CUDA devices only"
"""The peak memory status of every run on a CPU (written by suite/run/instruments.py; a CUDA file
holding it is refused, rule device-evidence)."""
CPU_TELEMETRY_STATUS = "not measured: GPU telemetry needs a CUDA device"
"""The telemetry status of every run on a CPU (written by suite/run/instruments.py; a CUDA file
holding it is refused, rule device-evidence)."""

class StepTimes(TypedDict):
    """Per-step time distribution over the window, seconds."""

    mean: float
    p50: float
    p90: float
    p99: float
    max: float


class Throughput(TypedDict):
    """Steady-state throughput, recomputed by the validator from the step times."""

    steps_per_s: float
    samples_per_s: float
    tokens_per_s: float | None
    window: Window
    step_time_s: StepTimes


class Target(TypedDict):
    """A workload's quality target as a results file records it (``derive.target_record``)."""

    metric: str
    direction: Literal["min", "max"]
    value: float


class Metrics(TypedDict, total=False):
    """A run's figures; every optional figure is None with its ``*_status`` saying why."""

    flops_per_step: float
    samples_per_step: int
    tokens_per_step: int | None
    throughput: Throughput | None
    throughput_status: str
    peak_flops: float | None
    mfu: float | None
    mfu_status: str
    tta_s: float | None
    target: Target | None
    tta_status: str
    final_quality: dict[str, float | None] | None
    energy_method: str | None
    energy_status: str
    energy_to_train_j: float | None
    energy_to_target_j: float | None
    energy_window_j: float | None
    energy_per_sample_j: float | None
    energy_per_token_j: float | None
    matmul_ceiling_flops: float | None
    share_of_ceiling: float | None
    mean_power_w: float | None
    max_power_w: float | None
    # the device's peak memory over the run (self-reported; absent in files of earlier versions)
    peak_memory_allocated_gib: float | None
    peak_memory_reserved_gib: float | None
    peak_memory_status: str
    energy_window_error_j: float | None  # the window energy's error bound from the meter's update period


class Goodput(TypedDict):
    """Goodput and its badput buckets, recomputed by the validator from the event log."""

    wall_s: float
    productive_s: float
    badput_s: dict[str, float]
    goodput: float | None
    effective_goodput: float | None
    effective_goodput_status: str
    steps_kept: int
    failures: int
    restarts: int
    lost_steps: int
    recovery_s: list[float]


class WorkloadRef(TypedDict):
    id: str
    version: int
    spec_hash: str
    kind: Literal["tta", "throughput"]


class Run(TypedDict, total=False):
    """One workload × scale × seed."""

    run_id: str
    run_id_nonce: str  # only when the id was minted for a signing key (suite/trust/signing.py)
    workload: WorkloadRef
    scale: str
    seed: int
    device: str
    precision: str
    precision_flags: dict[str, Any] | None
    repeat: int  # only in a run of goodbench run --repeat N: which of its seed's runs (1 … N)
    status: Literal["complete", "failed", "partial"]
    error: str | None
    started_at: str
    wall_s: float
    time_to_train_s: float
    phases_s: dict[str, float]
    steps: int
    step_times_s: list[float]
    telemetry: dict[str, Any]
    host_load: dict[str, Any]  # self-reported: the host's load at start and end, and over the run (suite/meters/host_load.py)
    event_log: list[str]
    distributed: dict[str, Any] | None
    goodput: Goodput | None
    faults: dict[str, Any]
    pinned_evaluation: dict[str, Any]  # own code held to a target: goodbench's evaluation of its model (self-reported)
    curve: list[dict[str, Any]]
    metrics: Metrics


class Document(TypedDict, total=False):
    """A whole results file: one suite run on one system."""

    schema_version: int
    rules_version: int
    suite: dict[str, str]
    created_at: str
    system: dict[str, Any]
    settings: dict[str, Any]
    runs: list[Run]
    summary: dict[str, dict[str, Any]]
    signature: dict[str, str]  # only in a signed file (suite/trust/signing.py)
    second_clock: dict[str, Any]  # only in own code's file run by goodbench run-own (suite/run/own_launch.py; an entry per run per rank)


# A run record as the accessors take it: the typed view, or a plain dict (the runner builds one,
# and code that reads parsed JSON holds one).
RunRecord = Run | dict[str, Any]

# The statistics of ``StepTimes``.
StepStat = Literal["mean", "p50", "p90", "p99", "max"]


# ---------------------------------------------------------------- accessors
def throughput(run: RunRecord) -> Throughput | None:
    """The run's steady-state throughput, or None where it has no steady-state window."""
    return run["metrics"].get("throughput")


def samples_per_s(run: RunRecord) -> float | None:
    """Steady-state samples/s, or None."""
    tput = throughput(run)
    return tput["samples_per_s"] if tput else None


def tokens_per_s(run: RunRecord) -> float | None:
    """Steady-state tokens/s, or None (no window, or a workload without tokens)."""
    tput = throughput(run)
    return tput["tokens_per_s"] if tput else None


def step_time_s(run: RunRecord, stat: StepStat = "p50") -> float | None:
    """One statistic of the window's step times (mean, p50, p90, p99, max), or None."""
    tput = throughput(run)
    return tput["step_time_s"][stat] if tput else None


def median_samples_per_s(run: RunRecord) -> float | None:
    """Samples/s at the window's median step time (its samples per step over its p50), or None."""
    tput = throughput(run)
    if not tput or not tput["steps_per_s"] or not tput["step_time_s"]["p50"]:
        return None
    return tput["samples_per_s"] / tput["steps_per_s"] / tput["step_time_s"]["p50"]


def as_number(value) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else None (an integer too large
    for a float included)."""
    if type(value) not in (int, float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def count(value: Any) -> int | None:
    """``value`` where it is a count a record may hold (an integer above 0, not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def world_size(run: RunRecord) -> int:
    """Processes one step ran on: a distributed run's world size, else 1."""
    return int((run.get("distributed") or {}).get("world_size", 1))


def mig_enabled(run: RunRecord) -> bool:
    """Whether the run's telemetry found its device to be a MIG slice (NVML's handle or UUID),
    whatever the device's name says."""
    telemetry = run.get("telemetry") or {}
    settings = telemetry.get("settings") if isinstance(telemetry, dict) else None
    return bool(settings.get("mig_enabled")) if isinstance(settings, dict) else False


def step_times_digest(run: RunRecord) -> str | None:
    """sha256 of the run's raw step-time sequence (None without step times): two runs with the
    same sequence are one run (docs/rules.md)."""
    import hashlib

    times = run.get("step_times_s")
    if not isinstance(times, list) or not times:
        return None
    return hashlib.sha256(json.dumps(times, allow_nan=False).encode()).hexdigest()


def division(doc: Mapping[str, Any]) -> str:
    """The division of a document; a file that does not say is closed."""
    return doc["settings"].get("division", "closed")


def utc_now() -> str:
    """Current UTC time in ISO 8601 with a Z suffix, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_document(system: dict, settings: dict, runs: list[dict]) -> dict:
    """A complete results document (schema v1) for one run of the suite, stamped with the
    version of the rules it was written under."""
    return {
        "schema_version": SCHEMA_VERSION,
        "rules_version": RULES_VERSION,
        "suite": {"name": "goodbench", "version": __version__},
        "created_at": utc_now(),
        "system": system,
        "settings": settings,
        "runs": runs,
    }


def dumps(doc: Mapping[str, Any]) -> str:
    """The document's JSON text (NaN/Inf refused: they are not JSON)."""
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def write_atomic(path: str | os.PathLike, data: bytes | str, *, overwrite: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temp file in the same directory, fsync, then rename.

    A reader sees the old file or the whole new one, never a torn one. With ``overwrite=False``
    the final step is a hard link, which fails with FileExistsError if ``path`` exists. The temp
    file (``.<name>.<12 hex digits>.tmp``) is locked while it exists, so that the one a killed
    writer leaves can be told from a live one and removed (:mod:`suite.record.tempfiles`).
    """
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with held_file(path.parent, path.name) as (fd, tmp):
            write_synced(fd, payload)
            if overwrite:
                os.replace(tmp, path)
            else:
                os.link(tmp, path)
            synced_dir(path)
    except OSError as exc:
        if exc.filename is None:  # a full disk's write names no file: name the one being written
            exc.filename = str(path)
        raise
    return path


def write_synced(fd: int, payload: bytes) -> None:
    """``payload`` into the open temp file ``fd`` (mode 0644: results are meant to be read), fsynced."""
    os.fchmod(fd, 0o644)
    with os.fdopen(fd, "wb", closefd=False) as fh:  # the descriptor, and its lock, stay open
        fh.write(payload)
        fh.flush()
        os.fsync(fh.fileno())


def synced_dir(path: Path) -> None:
    """Flush the folder of ``path``, just renamed or linked into place (:func:`fsync_dir`). The
    document is written by then: a flush that fails (EIO, as NFS reports a write-back error) is
    said on stderr, not raised, so that a caller never writes the same document twice."""
    try:
        fsync_dir(path.parent)
    except OSError as exc:
        print(f"warning: {path} is written, but its folder could not be flushed to disk "
              f"({exc.strerror or exc}): a crash now could lose its name", file=sys.stderr, flush=True)


def fsync_dir(directory: Path) -> None:
    """Flush ``directory``'s entries to disk, so that a file's new name survives a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write(path: str | os.PathLike, doc: Document | dict[str, Any], *, overwrite: bool = False) -> Path:
    """Write a results document atomically; never over an existing file unless ``overwrite``."""
    return write_atomic(path, dumps(doc), overwrite=overwrite)


def cannot_write(path: str | os.PathLike, exc: OSError) -> str:
    """Why ``path`` cannot be written, in words for "cannot write the results file PATH: …": a
    folder above it that is a file (``runs`` where ``runs/`` was meant) said as such, not as
    mkdir's "File exists"."""
    for parent in Path(path).parents:
        if os.path.lexists(parent):
            if not parent.is_dir():
                return f"{parent} exists and is not a folder"
            break
    return exc.strerror or str(exc)


class NameTaken(FileExistsError):
    """The output name is taken: a results file, or the reservation of a run still writing it."""


class ReservedElsewhere(NameTaken):
    """The output name ``path`` is reserved by another goodbench run that is still running (it holds
    the placeholder's lock), and writes it when it ends. Its message asks for another ``-o``;
    :meth:`saying` words it for another way of naming the output."""

    def __init__(self, path: os.PathLike | str):
        self.path = Path(path)
        super().__init__(self.saying("another -o"))

    def saying(self, instead: str) -> str:
        """The refusal, ending in what to give instead (``instead``: "another -o")."""
        return f"{self.path} is reserved by another goodbench run, which writes it when it ends; give {instead}"


class Reservation:
    """An output name held by one run from its start: ``path`` created exclusively
    (``O_CREAT|O_EXCL``) as an empty placeholder, ``flock``-ed while the run lasts, and replaced
    by the results file at the end (:meth:`write`) or removed when the run writes nothing
    (:meth:`release`). A second run asking for the same name fails at once (:class:`NameTaken`).

    An empty file that nobody holds locked is the reservation of a run that stopped without
    writing (killed; a torchrun worker restarted; the launcher's reservation, handed to its
    rank 0 by :meth:`close`): :meth:`take` takes it over.
    """

    def __init__(self, path: Path, fd: int, taken_over: bool = False):
        info = os.fstat(fd)
        self.path, self._fd, self._id, self.written = path, fd, (info.st_dev, info.st_ino), False
        self.taken_over = taken_over  # the name held an abandoned placeholder (a killed run's), now this one's

    @classmethod
    def take(cls, path: str | os.PathLike) -> Reservation:
        """Reserve ``path``; :class:`NameTaken` when a file holds it, :class:`ReservedElsewhere`
        when a live reservation does. The temp files a killed run left for this name (no live
        writer holds them) are removed."""
        reservation = cls._reserve(Path(path))
        remove_abandoned(temp_files(reservation.path.parent, reservation.path.name))
        return reservation

    @classmethod
    def _reserve(cls, path: Path) -> Reservation:
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                fd = os.open(path, flags | os.O_NONBLOCK)
            except OSError:  # a symbolic link, a directory, a file we may not write: not ours
                raise NameTaken(f"{path} exists; goodbench never overwrites a results file") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise ReservedElsewhere(path) from None
            info = os.fstat(fd)
            if not _is_empty_file((info.st_dev, info.st_ino), path):
                os.close(fd)
                raise NameTaken(f"{path} exists; goodbench never overwrites a results file") from None
            return cls(path, fd, taken_over=True)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # just created: nobody else holds it
        return cls(path, fd)

    def write(self, doc: Document | dict[str, Any]) -> Path:
        """Replace the reservation by the results document, atomically (temp file, fsync, rename).
        Refuses (:class:`NameTaken`) when the path no longer holds this run's empty placeholder."""
        with held_file(self.path.parent, self.path.name) as (fd, tmp):
            write_synced(fd, dumps(doc).encode())
            if not _is_empty_file(self._id, self.path):
                raise NameTaken(f"{self.path} was replaced while this run held it; not overwritten")
            os.replace(tmp, self.path)
            self.written = True  # from here the document is at its name, whatever the folder's flush says
            synced_dir(self.path)
        self.close()
        return self.path

    def release(self) -> None:
        """Remove the placeholder when nothing was written into it (still this reservation's
        empty file), and let go of the lock."""
        try:
            if not self.written and _is_empty_file(self._id, self.path):
                self.path.unlink()
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        """Let go of the lock; the placeholder stays (another process may take it over)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _is_empty_file(identity: tuple[int, int], path: Path) -> bool:
    """True when ``path`` (not followed) is the empty regular file of this (device, inode)."""
    try:
        there = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(there.st_mode) and (there.st_dev, there.st_ino) == identity and there.st_size == 0


class Unreadable(ValueError):
    """A file that is not a readable results document; the message is one line naming why."""


def parse(raw: bytes, name: str = "<bytes>") -> Document:
    """A document from JSON bytes, read defensively (no duplicate keys, NaN, huge numbers or
    deep nesting: :mod:`suite.record.reading`); :class:`Unreadable` otherwise. Parsing does
    not validate: :func:`suite.validate.check_document` does."""
    from suite.record.reading import parse as parse_bounded

    doc, problems = parse_bounded(raw)
    if problems:
        raise Unreadable(problems[0].line(name))
    if not isinstance(doc, dict):
        raise Unreadable(f"{name}: not a JSON object")
    return doc  # type: ignore[return-value]


def load(path: str | os.PathLike) -> Document:
    """The document in a results file (a regular file within the size limit), or :class:`Unreadable`."""
    from suite.record.reading import read_bounded

    raw, problems = read_bounded(Path(path))
    if problems or raw is None:
        raise Unreadable(problems[0].line(str(path)) if problems else f"{path}: unreadable")
    return parse(raw, str(path))
