"""Own code's runs trained again (docs/own-code.md, "Reproducing"): goodbench cannot train own
code itself, but where that very code is checked out it can run the recorded command and compare
each run with its original by seed, as a reference run's reproduction is compared
(:mod:`suite.run.reproduce.comparison`): the curve, the throughput's ratio with its 95% interval,
the time to target. The re-run's file, with its ``settings.reproduces`` section, is the
reproduction.

A results file is anyone's text, and running its command is running what it says. So nothing
runs unless the user asks (``--run-recorded-command``, after reading the command printed in
full), and only ``python SCRIPT ARGS`` (or a one-node ``torchrun --nproc-per-node=N SCRIPT ARGS``,
run as ``python -m torch.distributed.run --standalone``), where SCRIPT is a file the original names, tracked by git
in this work tree, whose HEAD is the commit the original recorded, with the sha256 it recorded —
never a program, a ``-c`` string, a file outside the checked-out code (a virtual environment's,
the standard library's) or a file of goodbench's own (:func:`own_file_refusal`). Its ARGS are the
original's: read them before running; none, nor the value after any ``=`` in one, may name a path
outside the code (:func:`argument_refusal`).

It runs in a sandbox (:mod:`suite.run.reproduce.sandbox`): a throwaway copy of the recorded commit,
no network, none of the reviewer's home, configuration, keys, environment, checkout or results;
the file it writes is read back after it has exited, and the reproduction is signed after that."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from suite.figures import derive
from suite.figures.reproducibility import SEED_SPREAD, CurveTolerance, curve_bound
from suite.record import edge_channel, results, tempfiles
from suite.record.errors import GoodbenchError
from suite.record.limits import MAX_FILE_BYTES
from suite.run import signals
from suite.run.edge_reader import clock
from suite.run.identity import git
from suite.run.progress import say
from suite.run.rank_channels import RankChannels
from suite.run.reproduce import sandbox, sandbox_tmp, stamping
from suite.run.reproduce.comparison import REPRODUCED, Comparison, compare_run
from suite.run.reproduce.inputs import Original, as_dict
from suite.run.reproduce.lingering import Lingering
from suite.run.reproduce.measuring import DEFAULT_CAP, Cap, Measuring
from suite.run.reproduce.observed import Observer
from suite.run.reproduce.planning import (
    CannotReproduce,
    Layout,
    Target,
    _digest_here,
    own_code_steps,
    uncommitted_refusal,
)
from suite.run.reproduce.training import Reproduction, section
from suite.trust import signing
from workloads.own import argument_refusal, implementation_name

OUT_VARIABLE = "GOODBENCH_OUT"  # where goodbench.Benchmark writes its file instead of its out=
# the system's name goodbench.Benchmark records instead of its system_name= (empty: the accelerator's own):
# the reviewer's --system-name, as goodbench describes the rest of the reviewer's machine (observed.py)
SYSTEM_NAME_VARIABLE = "GOODBENCH_RERUN_SYSTEM_NAME"  # not run-own's: it replaces the script's
BARE = Observer()  # no --system-name nor --system-overrides
# where it keeps checkpoints instead of its checkpoint_dir=: a fresh folder per re-run, so that no
# finished run of the original's (or of a first re-run) is handed back untrained
CHECKPOINT_VARIABLE = "GOODBENCH_CHECKPOINT_DIR"


def _code(settings: dict) -> dict:
    return as_dict(as_dict(settings.get("implementation")).get("code"))


def code_at_hand(settings: dict, where: Path) -> bool:
    """Whether every file the original names is under ``where`` with the sha256 it recorded (and it names one)."""
    files = as_dict(_code(settings).get("files"))
    return bool(files) and all(_digest_here(where, str(name)) == digest for name, digest in files.items())


def recorded_commit(settings: dict) -> str | None:
    """The git commit the original recorded for its code (None where it recorded none)."""
    commit = _code(settings).get("git_commit")
    return commit if isinstance(commit, str) and commit else None


def workdir(settings: dict) -> str:
    """The folder the original was run from, relative to its work tree's root ("." where not recorded)."""
    return str(_code(settings).get("workdir") or ".")


def recorded_command(settings: dict) -> list[str]:
    """The command the original recorded, as its words."""
    return [str(a) for a in as_dict(settings.get("implementation")).get("command") or []]


def runnable_command(settings: dict, where: Path) -> tuple[list[str], Path]:
    """The recorded command to run with this Python, and the folder to run it in — only
    ``python SCRIPT ARGS`` with SCRIPT one of the code files, here with its recorded sha256,
    tracked by git in the work tree ``where`` whose HEAD is the recorded commit (see the module's
    docstring). :class:`CannotReproduce` otherwise."""
    command, code = recorded_command(settings), _code(settings)
    dirty = uncommitted_refusal(settings)
    if dirty:
        raise CannotReproduce(dirty)
    files = as_dict(code.get("files"))
    shown = shlex.join(command)[:500] or "(none)"
    launcher, command = _launcher(command, shown)
    if len(command) < 2 or command[0] != "python" or command[1].startswith("-") or command[1] not in files \
            or _digest_here(where, command[1]) != files[command[1]]:
        raise CannotReproduce(f"the recorded command `{shown}` is not `python SCRIPT …` (or `torchrun "
                              "--nproc-per-node=N SCRIPT …`) with SCRIPT one of the code files here with their "
                              "recorded sha256: goodbench runs no other command a results file names")
    commit = code.get("git_commit")
    if not isinstance(commit, str) or git(where, "rev-parse", "HEAD") != commit:
        raise CannotReproduce(f"its code is run again only from a git checkout of the commit it recorded "
                              f"({str(commit)[:12] if commit else 'none recorded'}): check it out here first")
    if git(where, "ls-files", "--error-unmatch", command[1]) is None:
        raise CannotReproduce(f"{command[1]} is not tracked by git here: goodbench runs only the checked-out code")
    for refusal in (own_file_refusal(command[1], files[command[1]], where), argument_refusal(command[2:])):
        if refusal:
            raise CannotReproduce(refusal)
    folder = Path(workdir(settings))
    if folder.is_absolute() or ".." in folder.parts or not (where / folder).is_dir():
        raise CannotReproduce(f"the recorded working folder {str(folder)[:200]!r} is not a folder of this work tree")
    script = os.path.relpath((where / command[1]).resolve(), (where / folder).resolve())
    if script.startswith("-"):  # a file named like an option is run as the file
        script = os.path.join(".", script)
    return [sys.executable, *launcher, script, *command[2:]], where / folder


OWN_CODE_FOLDERS = ("examples",)  # in goodbench's own repository, the folders whose scripts are own code


def own_file_refusal(script: str, digest: str, where: Path) -> str | None:
    """Why ``script`` (its recorded sha256 ``digest``) is goodbench's own and not someone's code,
    or None: own code lives in its submitter's repository, so goodbench never runs as own code
    a file with the bytes of one of its own packages' files (wherever it lies), nor, in a
    checkout of goodbench's own repository, a script outside :data:`OWN_CODE_FOLDERS`."""
    if digest in _own_digests():
        return (f"{script} has the bytes of a file of goodbench's own packages ({', '.join(sandbox.GOODBENCH_PACKAGES)}):"
                " goodbench runs only the submitter's own script, never its own modules or entry points")
    top = PurePosixPath(script).parts[0] if PurePosixPath(script).parts else ""
    if _is_goodbench_repository(where) and top not in OWN_CODE_FOLDERS:
        return (f"{script} is a file of goodbench's own repository outside {', '.join(OWN_CODE_FOLDERS)}/: goodbench "
                "runs only the submitter's own script, never its own modules, entry points or tools")
    return None


def _is_goodbench_repository(where: Path) -> bool:
    """Whether the work tree ``where`` is a checkout of goodbench itself (it holds its packages)."""
    return all((where / name / "__init__.py").is_file() for name in sandbox.GOODBENCH_PACKAGES) \
        and (where / "suite" / "__main__.py").is_file()


def _own_digests() -> set[str]:
    """The sha256 of every file of goodbench's own packages as imported here."""
    digests: set[str] = set()
    for folder in sandbox.own_package_dirs():
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
                digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    return digests


MAX_PROCESSES = 64  # a recorded torchrun job of one node is run again with at most this many processes


def _launcher(command: list[str], shown: str) -> tuple[list[str], list[str]]:
    """The torchrun launch of a recorded ``torchrun --nproc-per-node=N SCRIPT ARGS`` (one node,
    ``--standalone``), and the command as ``python SCRIPT ARGS``; ``([], command)`` for any other."""
    if not command or command[0] != "torchrun":
        return [], command
    if len(command) < 3 or not command[1].startswith("--nproc-per-node="):
        raise CannotReproduce(f"the recorded command `{shown}` is a torchrun job of several nodes (or of a form "
                              "goodbench does not run): run it again on its nodes, each with goodbench's library")
    count = command[1].split("=", 1)[1]
    if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= MAX_PROCESSES:
        raise CannotReproduce(f"the recorded command `{shown}` names {count[:20]!r} processes: from 1 to "
                              f"{MAX_PROCESSES}")
    return ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={int(count)}"], ["python", *command[2:]]


def reproduce(original: Original, indexes: list[int], out: Path, tolerance: float, where: Path = Path("."),
              load_key: Callable[[], Any] = lambda: None, timeout: float | None = None,
              report: Callable[[str], None] = lambda line: None, cap: Cap = DEFAULT_CAP,
              code_read: dict | None = None, observer: Observer = BARE,
              tmp: sandbox_tmp.Size | None = None) -> Reproduction:
    """Run the original's recorded command (:func:`runnable_command`: the caller has shown it and
    the user has asked) in a sandbox, on a throwaway copy of the checkout ``where`` at the recorded
    commit (:func:`_rerun`), and compare its runs with the original's ``indexes``; when a run's
    curve agrees but its throughput cannot be told within the tolerance (a busy machine's noise
    is not a difference), the command runs again until every such run's re-runs, pooled, decide
    or ``cap`` is reached (:func:`_measured_on`), as a reference reproduction measures on.
    What describes this machine is goodbench's own (``observer``, :mod:`suite.run.reproduce.observed`),
    never the script's. The sandbox's ``/tmp`` is ``tmp`` (where None,
    :func:`~suite.run.reproduce.sandbox_tmp.size`); a re-run that ran out of it and did not
    reproduce is not judged (:func:`_short_of_room`). The re-run's chosen runs, with
    ``settings.reproduces`` (signed with the key ``load_key``
    returns, read only once every re-run has ended; with the reviewer's attestation of reading the
    code, ``code_read``, where given: :mod:`suite.run.reproduce.attestation`), are written to ``out``. :class:`CannotReproduce`
    when the code is not at hand, the sandbox cannot be made or the command writes no valid file;
    a re-run that cannot be compared is kept beside ``out`` (``*.rerun.json``)."""
    from suite.validate import check_document

    settings = original.doc["settings"]
    if not code_at_hand(settings, where):
        raise CannotReproduce(own_code_steps(settings, where))
    runnable_command(settings, where)  # refused before anything is copied or run
    sandbox.bwrap()
    tmp = tmp or sandbox_tmp.size(None, sandbox.bounds_tmp())
    reservation = results.Reservation.take(out)  # the name held from now: hours of training are never lost to it
    try:
        raw, doc, comparisons = _measured_on(settings, where, timeout, out, original, indexes, tolerance, cap, report,
                                             observer, tmp)
        chosen = {id(c.record) for c in comparisons}
        doc["runs"] = [r for r in doc["runs"] if id(r) in chosen]  # a reproduction holds the runs it compares
        stamping.keep_stamped(doc)  # and the second clock of those runs
        doc["summary"] = derive.summary(doc["runs"])
        doc["settings"]["reproduces"] = section(original, comparisons, tolerance)
        if code_read is not None:
            doc["settings"]["reproduces"]["code_read"] = code_read
        doc.pop("signature", None)
        try:
            key = load_key()  # the signing key is read now, every re-run having ended
        except GoodbenchError as exc:
            raise CannotReproduce(f"{exc}; the re-run is kept as {_keep(raw, out)}") from None
        if key is not None:
            doc = signing.seal(doc, key)
        doc = json.loads(results.dumps(doc))
        problems = check_document(doc)
        if problems:
            raise CannotReproduce(f"the reproduction is not valid: {problems[0].line(str(out))}; the re-run is kept "
                                  f"as {_keep(raw, out)}")
        reservation.write(doc)
    finally:
        reservation.release()
    return Reproduction(doc, comparisons)


def _measured_on(settings: dict, where: Path, timeout: float | None, out: Path, original: Original,
                 indexes: list[int], tolerance: float, cap: Cap,
                 report: Callable[[str], None], observer: Observer,
                 tmp: sandbox_tmp.Size = sandbox_tmp.FLOOR) -> tuple[bytes, dict, list[Comparison]]:
    """The recorded command run (:func:`_rerun`), and run again while a run's curve agrees but its
    throughput's interval does not decide: every chosen run's re-runs pooled
    (:mod:`suite.run.reproduce.measuring`) until none asks for another or ``cap`` is reached. The
    last re-run's bytes, document and comparisons, each judged on all its re-runs (none where a
    re-run ran out of room: :func:`_short_of_room`)."""
    start = time.monotonic()
    raw, use = _rerun(settings, where, timeout, out, observer, tmp)
    uses = [use]
    seconds = time.monotonic() - start
    doc, comparisons = _compared(raw, original, indexes, tolerance, out)
    if not any(c.unsettled for c in comparisons):
        _short_of_room(raw, doc, comparisons, tmp, uses, out)
        return raw, doc, comparisons
    firsts = comparisons
    measurings = [Measuring(cap, tolerance) for _ in firsts]
    while True:
        wants = [m.add(c.target.run, c.record, seconds) for m, c in zip(measurings, comparisons)]
        if not any(wants):
            break
        asking = next(i for i, w in enumerate(wants) if w)
        try:  # the line said first, inside: a signal that lands while it is printed is one while measuring on
            report(f"{firsts[asking].target.label()}: {measurings[asking].progress()} (the recorded command runs again)")
            start = time.monotonic()
            raw, use = _rerun(settings, where, timeout, out, observer, tmp)
            uses.append(use)
        except KeyboardInterrupt:  # SIGTERM or Ctrl-C while measuring on: the last whole re-run is not lost
            report(f"interrupted while measuring on: the last whole re-run is kept as {_keep(raw, out)}")
            raise
        seconds = time.monotonic() - start
        doc, comparisons = _compared(raw, original, indexes, tolerance, out, firsts)
    for m, c in zip(measurings, comparisons):
        report(f"{c.target.label()}: {m.describe()}")
    comparisons = [compare_run(c.target, c.record, tolerance, f if len(m.records) > 1 else None, m,
                               c.cpu_threads)
                   for c, f, m in zip(comparisons, firsts, measurings)]
    _short_of_room(raw, doc, comparisons, tmp, uses, out)
    return raw, doc, comparisons


def _short_of_room(raw: bytes, doc: dict, comparisons: list[Comparison], tmp: sandbox_tmp.Size,
                   uses: list[sandbox_tmp.Use], out: Path) -> None:
    """:class:`CannotReproduce` where a run did not reproduce and a re-run ran the sandbox's ``/tmp``
    full (``uses``: what goodbench read of it in each) or the last re-run's file says a run ran out of
    space (:func:`~suite.run.reproduce.sandbox_tmp.no_space`): its failure, or its slower steps, say
    nothing of the original. A re-run that reproduced is judged all the same."""
    if all(c.verdict == REPRODUCED for c in comparisons):
        return
    full = next((u for u in uses if u.full), None)
    said = sandbox_tmp.no_space(doc)
    if full is not None or said is not None:
        raise CannotReproduce(f"{sandbox_tmp.refusal(tmp, full, said)}; the re-run is kept as {_keep(raw, out)}")


RERUN_FILE = "rerun.json"  # the re-run's results file, in the sandbox's writable output folder


def _rerun(settings: dict, where: Path, timeout: float | None, out: Path, observer: Observer,
           tmp: sandbox_tmp.Size = sandbox_tmp.FLOOR) -> tuple[bytes, sandbox_tmp.Use]:
    """Run the recorded command once in the sandbox (its ``/tmp`` of ``tmp``), on a fresh copy of
    the recorded commit; its file, written where ``GOODBENCH_OUT`` points inside the sandbox, read once it has exited, its
    description of this machine replaced by ``observer``'s (the load before and after the sandbox, and
    over it: the sandbox's processes the re-run's own, not other processes),
    with the second clock this process stamped its edges on (:mod:`suite.run.reproduce.stamping`; a
    torchrun job's on every rank). With it, what goodbench read of the sandbox's ``/tmp``
    (:class:`~suite.run.reproduce.sandbox_tmp.Watch`): a re-run that fails having run it full is refused,
    not judged."""
    scratch = tempfile.mkdtemp(prefix="goodbench-rerun-")
    try:
        code, output = Path(scratch) / "code", Path(scratch) / "out"
        output.mkdir()
        copy_code(settings, where, code)
        argv, cwd = runnable_command(settings, code)
        sandbox.check([code, output], where)
        rerun_path = output / RERUN_FILE

        def sandboxed(writable: list[Path], env: dict[str, str]) -> list[str]:
            return sandbox.command(argv, writable=[code, output, *writable], cwd=cwd, where=where, env={
                OUT_VARIABLE: str(rerun_path), CHECKPOINT_VARIABLE: str(output / "checkpoints"),
                SYSTEM_NAME_VARIABLE: observer.system_name or "", **env}, tmp_bytes=tmp.bytes)

        load_at_start = observer.load()  # outside the sandbox, before it starts: not the re-run's time
        watch = observer.watch()  # over the re-run, outside the sandbox; the sandbox's processes its own
        lingering = Lingering()  # the sandbox's processes, waited for after it exits
        room = sandbox_tmp.Watch(tmp)  # its /tmp, read through them from outside

        def started(pid: int) -> None:
            watch.own(pid)
            lingering.started(pid)
            room.started([p for p in lingering.pids if p != pid])  # bwrap's children: inside the sandbox

        try:
            nproc = stamping.torchrun_ranks(argv)  # a torchrun job's: each rank's socket, bound in the sandbox
            if nproc:
                channels = RankChannels(nproc, clock(), Path(scratch))
                status, pid = stamping.run_ranks(sandboxed([channels.folder], channels.environment()),
                                                 sandbox.BWRAP_ENVIRONMENT, channels, timeout, started=started)
                stamped = functools.partial(stamping.with_rank_clocks, channels=channels)
            else:  # `python SCRIPT ARGS`: its edge channel, its edges stamped here, outside the sandbox
                ends = edge_channel.pair()
                status, pid, reader = stamping.run(sandboxed([], stamping.environment(ends[1])),
                                                   sandbox.BWRAP_ENVIRONMENT, ends, timeout, started=started)
                stamped = functools.partial(stamping.with_second_clock, reader=reader)
            lingered = lingering.wait()  # the sandbox torn down before the end's reading (trial 17)
        finally:
            use = room.stop()
            during = watch.stop()
        load_at_end = observer.load(lingered) if lingered else observer.load()
        raw = read_output(rerun_path)
    finally:
        remove_scratch(Path(scratch))
    if raw is None or status != 0:
        said = sandbox_tmp.no_space(_parsed(raw))
        kept = _keep(raw, out)
        kept_text = f"; what it wrote is kept as {kept}" if kept else " and wrote no results file"
        if use.full or said is not None:
            raise CannotReproduce(f"the recorded command exited {status}: {sandbox_tmp.refusal(tmp, use, said)}"
                                  f"{kept_text}")
        raise CannotReproduce(f"the recorded command exited {status}{kept_text}")
    try:
        raw = stamped(observer.described(raw, load_at_start, load_at_end, during), status, pid)
    except (GoodbenchError, ValueError, KeyError, TypeError) as exc:  # a file the script wrote: anyone's text
        raise CannotReproduce(f"the re-run has no second clock ({exc}), so its times would be its own process's "
                              f"word; it is kept as {_keep(raw, out)}") from None
    off = stamping.disagreement(raw)
    if off is not None:  # refused now, not after measuring on: the validator would refuse it [second-clock]
        raise CannotReproduce(f"the re-run's clocks disagree beyond the tolerance ({off}): its times are not what "
                              f"goodbench's clock saw; it is kept as {_keep(raw, out)}")
    return raw, use


def remove_scratch(scratch: Path) -> None:
    """Remove a re-run's scratch folder, whatever the script left in it (a tree deeper than Python
    recurses): never a traceback, a line where something is left. A SIGTERM or Ctrl-C that comes
    meanwhile is held until the folder is gone, then raised: one that broke into the removal left
    empty ``goodbench-rerun-*`` folders in ``/tmp`` (a walkthrough found five, left by earlier stops)."""
    with signals.holding(deliver=True):
        left = tempfiles.remove_tree(scratch)
        if left:
            say(f"warning: the re-run's scratch folder {left}")


def _parsed(raw: bytes | None) -> object:
    """The re-run's file as JSON where it is that (None otherwise): anyone's text."""
    try:
        return json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        return None


def copy_code(settings: dict, where: Path, dest: Path) -> None:
    """A throwaway git checkout at ``dest`` of the commit the original recorded, fetched from the
    work tree ``where`` (that commit alone: no other history, no untracked file, no configuration
    of the reviewer's); :class:`CannotReproduce` where it cannot be made or its files are not the
    recorded ones."""
    commit = str(_code(settings).get("git_commit"))
    steps = (["init", "-q"], ["fetch", "-q", "--depth=1", "--no-tags", str(where.resolve()), commit],
             ["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", "FETCH_HEAD"])
    dest.mkdir()
    for step in steps:
        if git(dest, *step, timeout=600) is None:
            raise CannotReproduce(f"a copy of commit {commit[:12]} could not be made (`git {' '.join(step[:2])}` "
                                  "failed): goodbench runs own code only on a copy of its recorded commit")
    if not code_at_hand(settings, dest):
        raise CannotReproduce(f"the copy of commit {commit[:12]} does not hold the named files with their recorded "
                              "sha256 (they differ from the commit in this work tree): commit them as recorded")


def read_output(path: Path) -> bytes | None:
    """The re-run's results file, read after the sandbox has exited: a regular file (never a link
    it planted to a file of the reviewer's, nor a pipe), at most a results file's size; None where
    there is none. :class:`CannotReproduce` for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CannotReproduce(f"the re-run's results file cannot be read ({exc.strerror or exc}): not a regular "
                              "file of its own") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        raw = fh.read(MAX_FILE_BYTES + 1) if stat.S_ISREG(info.st_mode) else b""
        if not stat.S_ISREG(info.st_mode) or len(raw) > MAX_FILE_BYTES:
            raise CannotReproduce(f"the re-run's results file is not a regular file of at most {MAX_FILE_BYTES} bytes")
        return raw or None


def _compared(raw: bytes, original: Original, indexes: list[int], tolerance: float, out: Path,
              earlier: list[Comparison] | None = None) -> tuple[dict, list[Comparison]]:
    """The re-run's document and its comparisons (``earlier``: the first re-run's, when this is the second)."""
    try:
        doc = json.loads(raw)
        return doc, _compare(original, indexes, doc, tolerance, earlier)
    except (ValueError, GoodbenchError, KeyError, TypeError) as exc:
        raise CannotReproduce(f"the re-run cannot be compared ({exc}); it is kept as {_keep(raw, out)}") from None


def _keep(raw: bytes | None, out: Path) -> Path | None:
    """The re-run's bytes kept beside ``out`` (never over a file), so that no training is lost."""
    if not raw:
        return None
    kept = out.with_name(out.stem + ".rerun.json")
    n = 2
    while kept.exists():
        kept, n = out.with_name(f"{out.stem}.rerun-{n}.json"), n + 1
    results.write_atomic(kept, raw, overwrite=False)
    return kept


def curve_tolerance(workload_id: str) -> CurveTolerance:
    """How far an own re-run's curve may lie from its original's: the workload's seed-to-seed
    bound where it is held to one (its own code's determinism is not known), else 1%."""
    rel = curve_bound(workload_id, free_job=True)
    if workload_id in SEED_SPREAD:  # a goodbench workload, its seed-to-seed spread measured
        return CurveTolerance(rel=rel, abs=1e-9, verified=False,
                              basis=f"own code: {workload_id}'s seed-to-seed bound, its determinism not measured")
    return CurveTolerance(rel=rel, abs=1e-9, verified=False, basis=f"own code, a free job: {rel:.0%}, not measured")


def _compare(original: Original, indexes: list[int], rerun: dict, tolerance: float,
             earlier: list[Comparison] | None = None) -> list[Comparison]:
    """Each chosen original run against the re-run of its seed (``earlier``: its first measurement's comparison)."""
    by_seed = {r.get("seed"): r for r in rerun.get("runs") or [] if isinstance(r, dict)}
    settings = rerun.get("settings")
    threads = settings.get("cpu_threads") if isinstance(settings, dict) else None
    found: list[Comparison] = []
    for i in indexes:
        run = original.doc["runs"][i]
        record = by_seed.get(run["seed"])
        if record is None:
            raise GoodbenchError(f"the re-run has no run of seed {run['seed']}: it ran seeds "
                                 f"{sorted(str(s) for s in by_seed)}")
        target = Target(index=i, run=run, workload_id=run["workload"]["id"], seed=run["seed"],
                        device_type=str(run["device"]).split(":")[0], precision=run["precision"], layout=Layout(),
                        global_batch=None, tolerance=curve_tolerance(run["workload"]["id"]),
                        implementation=implementation_name(original.doc))
        found.append(compare_run(target, record, tolerance, earlier[len(found)] if earlier else None,
                                 cpu_threads=threads))
    return found
