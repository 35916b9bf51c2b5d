"""Own code's runs trained again (docs/own-code.md, "Reproducing"): goodbench cannot train own
code itself, but where that very code is checked out it can run the recorded command and compare
each run with its original by seed, as a reference run's reproduction is compared
(:mod:`suite.run.reproduce.comparison`): the curve, the throughput's ratio with its 95% interval,
the time to target. The re-run's file, with its ``settings.reproduces`` section, is the
reproduction.

A results file is anyone's text, and running its command is running what it says. So nothing
runs unless the user asks (``--run-recorded-command``, after reading the command printed in
full), and only ``python SCRIPT ARGS``, where SCRIPT is a file the original names, tracked by git
in this work tree, whose HEAD is the commit the original recorded, with the sha256 it recorded —
never a program, a ``-c`` string, or a file outside the checked-out code (a virtual environment's,
the standard library's). Its ARGS are the original's: read them before running."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from suite.figures import derive
from suite.figures.reproducibility import CurveTolerance, seed_bound
from suite.record import results
from suite.record.errors import GoodbenchError
from suite.run.identity import git
from suite.run.reproduce.comparison import Comparison, compare_run
from suite.run.reproduce.inputs import Original, as_dict
from suite.run.reproduce.planning import CannotReproduce, Layout, Target, _digest_here, own_code_steps
from suite.run.reproduce.training import Reproduction, section
from suite.trust import signing

OUT_VARIABLE = "GOODBENCH_OUT"  # where goodbench.Benchmark writes its file instead of its out=


def _code(settings: dict) -> dict:
    return as_dict(as_dict(settings.get("implementation")).get("code"))


def code_at_hand(settings: dict, where: Path) -> bool:
    """Whether every file the original names is under ``where`` with the sha256 it recorded (and it names one)."""
    files = as_dict(_code(settings).get("files"))
    return bool(files) and all(_digest_here(where, str(name)) == digest for name, digest in files.items())


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
    files = as_dict(code.get("files"))
    shown = shlex.join(command)[:500] or "(none)"
    if len(command) < 2 or command[0] != "python" or command[1] not in files \
            or _digest_here(where, command[1]) != files[command[1]]:
        raise CannotReproduce(f"the recorded command `{shown}` is not `python SCRIPT …` with SCRIPT one of the "
                              "code files here with their recorded sha256: goodbench runs no other command "
                              "a results file names")
    commit = code.get("git_commit")
    if not isinstance(commit, str) or git(where, "rev-parse", "HEAD") != commit:
        raise CannotReproduce(f"its code is run again only from a git checkout of the commit it recorded "
                              f"({str(commit)[:12] if commit else 'none recorded'}): check it out here first")
    if git(where, "ls-files", "--error-unmatch", command[1]) is None:
        raise CannotReproduce(f"{command[1]} is not tracked by git here: goodbench runs only the checked-out code")
    folder = Path(workdir(settings))
    if folder.is_absolute() or ".." in folder.parts or not (where / folder).is_dir():
        raise CannotReproduce(f"the recorded working folder {str(folder)[:200]!r} is not a folder of this work tree")
    script = os.path.relpath((where / command[1]).resolve(), (where / folder).resolve())
    return [sys.executable, script, *command[2:]], where / folder


def reproduce(original: Original, indexes: list[int], out: Path, tolerance: float, where: Path = Path("."),
              key: Any = None, timeout: float | None = None) -> Reproduction:
    """Run the original's recorded command here (:func:`runnable_command`: the caller has shown it
    and the user has asked) and compare its runs with the original's ``indexes``; the re-run's
    chosen runs, with ``settings.reproduces`` (signed with ``key`` when given), are written to
    ``out``. :class:`CannotReproduce` when the code is not at hand or the command writes no valid
    file; a re-run that cannot be compared is kept beside ``out`` (``*.rerun.json``)."""
    from suite.validate import check_document

    settings = original.doc["settings"]
    if not code_at_hand(settings, where):
        raise CannotReproduce(own_code_steps(settings, where))
    argv, cwd = runnable_command(settings, where)
    reservation = results.Reservation.take(out)  # the name held from now: hours of training are never lost to it
    try:
        with tempfile.TemporaryDirectory() as scratch:
            rerun_path = Path(scratch) / "rerun.json"
            try:
                done = subprocess.run(argv, cwd=cwd, env={**os.environ, OUT_VARIABLE: str(rerun_path)},
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                raise CannotReproduce(f"the recorded command ran longer than {timeout:g} s and was stopped") from None
            raw = rerun_path.read_bytes() if rerun_path.is_file() else None
        if raw is None or done.returncode != 0:
            kept = _keep(raw, out)
            raise CannotReproduce(f"the recorded command exited {done.returncode}" + (
                f"; what it wrote is kept as {kept}" if kept else " and wrote no results file"))
        try:
            doc = json.loads(raw)
            comparisons = _compare(original, indexes, doc, tolerance)
        except (ValueError, GoodbenchError, KeyError, TypeError) as exc:
            raise CannotReproduce(f"the re-run cannot be compared ({exc}); it is kept as {_keep(raw, out)}") from None
        chosen = {id(c.record) for c in comparisons}
        doc["runs"] = [r for r in doc["runs"] if id(r) in chosen]  # a reproduction holds the runs it compares
        doc["summary"] = derive.summary(doc["runs"])
        doc["settings"]["reproduces"] = section(original, comparisons, tolerance)
        doc.pop("signature", None)
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
    if workload_id in ("lm-char", "gpt2-124m", "fashion-cnn", "llama-1b", "dlrm-small"):
        return CurveTolerance(rel=seed_bound(workload_id), abs=1e-9, verified=False,
                              basis=f"own code: {workload_id}'s seed-to-seed bound, its determinism not measured")
    return CurveTolerance(rel=0.01, abs=1e-9, verified=False, basis="own code, a free job: 1%, not measured")


def _compare(original: Original, indexes: list[int], rerun: dict, tolerance: float) -> list[Comparison]:
    """Each chosen original run against the re-run of its seed."""
    by_seed = {r.get("seed"): r for r in rerun.get("runs") or [] if isinstance(r, dict)}
    found = []
    for i in indexes:
        run = original.doc["runs"][i]
        record = by_seed.get(run["seed"])
        if record is None:
            raise GoodbenchError(f"the re-run has no run of seed {run['seed']}: it ran seeds "
                                 f"{sorted(str(s) for s in by_seed)}")
        target = Target(index=i, run=run, workload_id=run["workload"]["id"], seed=run["seed"],
                        device_type=str(run["device"]).split(":")[0], precision=run["precision"], layout=Layout(),
                        global_batch=None, tolerance=curve_tolerance(run["workload"]["id"]))
        found.append(compare_run(target, record, tolerance))
    return found
