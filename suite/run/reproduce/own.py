"""Own code's runs trained again (docs/own-code.md, "Reproducing"): goodbench cannot train own
code itself, but where that code is at hand — every file the original names, here with the
sha256 it recorded — it runs the recorded command from the work tree, the library writing its
results file where ``GOODBENCH_OUT`` says (:mod:`suite.api.benchmark`), and compares each run
with its original by seed as a reference run's reproduction is compared
(:mod:`suite.run.reproduce.comparison`): the curve, the throughput's ratio with its 95% interval,
the time to target. The re-run's file, with its ``settings.reproduces`` section, is the
reproduction."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from suite.figures.reproducibility import CurveTolerance, seed_bound
from suite.record import results
from suite.record.errors import GoodbenchError
from suite.run.reproduce.comparison import Comparison, compare_run
from suite.run.reproduce.inputs import Original, as_dict
from suite.run.reproduce.planning import CannotReproduce, Layout, Target, _digest_here, own_code_steps
from suite.run.reproduce.training import Reproduction, section
from suite.trust import signing

OUT_VARIABLE = "GOODBENCH_OUT"  # where goodbench.Benchmark writes its file instead of its out=


def code_at_hand(settings: dict, where: Path) -> bool:
    """Whether every file the original names is under ``where`` with the sha256 it recorded (and it names one)."""
    files = as_dict(as_dict(as_dict(settings.get("implementation")).get("code")).get("files"))
    return bool(files) and all(_digest_here(where, str(name)) == digest for name, digest in files.items())


def runnable_command(settings: dict, where: Path) -> list[str]:
    """The recorded command, to run with this Python — only ``python SCRIPT ARGS`` where SCRIPT is
    one of the files the original names and that are here with their recorded sha256: a results
    file is anyone's text, and what runs must be the code the user has at hand, never a command the
    file makes up (``python -c …``, a shell, another program). :class:`CannotReproduce` otherwise."""
    import sys

    command = [str(a) for a in as_dict(settings.get("implementation")).get("command") or []]
    files = as_dict(as_dict(as_dict(settings.get("implementation")).get("code")).get("files"))
    if len(command) < 2 or command[0] != "python" or command[1] not in files \
            or _digest_here(where, command[1]) != files[command[1]]:
        shown = " ".join(command)[:200] or "(none)"
        raise CannotReproduce(f"the recorded command `{shown}` is not `python SCRIPT …` with SCRIPT one of the "
                              "code files here with their recorded sha256: goodbench runs no other command "
                              "a results file names")
    return [sys.executable, *command[1:]]


def curve_tolerance(workload_id: str) -> CurveTolerance:
    """How far an own re-run's curve may lie from its original's: the workload's seed-to-seed
    bound where it is held to one (its own code's determinism is not known), else 1%."""
    if workload_id in ("lm-char", "gpt2-124m", "fashion-cnn", "llama-1b", "dlrm-small"):
        return CurveTolerance(rel=seed_bound(workload_id), abs=1e-9, verified=False,
                              basis=f"own code: {workload_id}'s seed-to-seed bound, its determinism not measured")
    return CurveTolerance(rel=0.01, abs=1e-9, verified=False, basis="own code, a free job: 1%, not measured")


def reproduce(original: Original, indexes: list[int], out: Path, tolerance: float, where: Path = Path("."),
              key: Any = None, timeout: float | None = None) -> Reproduction:
    """Run the original's recorded command here and compare its runs with the original's
    ``indexes``; the re-run's file, with ``settings.reproduces`` (signed with ``key`` when given),
    is written to ``out``. :class:`CannotReproduce` when the code is not at hand or the command
    writes no valid file."""
    settings = original.doc["settings"]
    if not code_at_hand(settings, where):
        raise CannotReproduce(own_code_steps(settings, where))
    command = runnable_command(settings, where)
    with tempfile.TemporaryDirectory() as scratch:
        rerun_path = Path(scratch) / "rerun.json"
        done = subprocess.run(command, cwd=where, env={**os.environ, OUT_VARIABLE: str(rerun_path)},
                              timeout=timeout)
        if not rerun_path.is_file():
            raise CannotReproduce(f"the recorded command `{' '.join(command)}` exited {done.returncode} and wrote "
                                  "no results file")
        doc = json.loads(rerun_path.read_text())
    comparisons = _compare(original, indexes, doc, tolerance)
    doc.setdefault("settings", {})["reproduces"] = section(original, comparisons, tolerance)
    doc.pop("signature", None)
    if key is not None:
        doc = signing.seal(doc, key)
    results.write(out, doc)
    return Reproduction(doc, comparisons)


def _compare(original: Original, indexes: list[int], rerun: dict, tolerance: float) -> list[Comparison]:
    """Each chosen original run against the re-run of its seed."""
    by_seed = {r.get("seed"): r for r in rerun.get("runs") or [] if isinstance(r, dict)}
    found = []
    for i in indexes:
        run = original.doc["runs"][i]
        record = by_seed.get(run["seed"])
        if record is None:
            raise GoodbenchError(f"the re-run has no run of seed {run['seed']}: it ran seeds {sorted(str(s) for s in by_seed)}")
        target = Target(index=i, run=run, workload_id=run["workload"]["id"], seed=run["seed"],
                        device_type=str(run["device"]).split(":")[0], precision=run["precision"], layout=Layout(),
                        global_batch=None, tolerance=curve_tolerance(run["workload"]["id"]))
        found.append(compare_run(target, record, tolerance))
    return found
