"""Training the plan's runs again (this process, or one rank of a torchrun run) and, on rank 0,
the reproduction's results file: the re-runs, and ``settings.reproduces`` naming the original by
sha256 with each run's comparison. A run whose throughput alone is not shown within its tolerance
(its interval outside it, or across its edge) is trained again until its re-runs, pooled, decide
or a cap is reached (:mod:`suite.run.reproduce.measuring`)."""
from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.record import results
from suite.record.errors import GoodbenchError
from suite.run.reproduce.comparison import REPRODUCED, Comparison, compare_run
from suite.run.reproduce.inputs import Original
from suite.run.reproduce.measuring import DEFAULT_CAP, Cap, Measuring
from suite.run.reproduce.planning import Plan
from suite.trust import signing

Progress = Callable[..., None]


@dataclass
class Reproduction:
    """What rank 0 wrote: the document and each run's comparison."""

    doc: dict
    comparisons: list[Comparison]
    interrupted: bool = False  # stopped by SIGINT or SIGTERM: the runs finished before it

    @property
    def reproduced(self) -> bool:
        return all(c.verdict == REPRODUCED for c in self.comparisons)


def section(original: Original, comparisons: list[Comparison], tolerance: float) -> dict[str, Any]:
    """The ``settings.reproduces`` section (docs/results-format.md)."""
    return {"sha256": original.sha256, "file": Path(original.path).name[:200],
            "throughput_tolerance": tolerance, "runs": [c.to_json() for c in comparisons]}


def default_output() -> Path:
    return Path("runs") / (dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-reproduction.json")


def train(the_plan: Plan, out: Path, *, data_dir: str | None, tolerance: float, progress: Progress,
          report: Callable[[str], None], system_name: str | None = None, system_overrides: dict | None = None,
          command: list[str] | None = None, sign: bool = True, cap: Cap = DEFAULT_CAP) -> Reproduction | None:
    """Train every target again (this process is one rank of a torchrun run when the plan's
    layout has several processes) and, on rank 0, write the reproduction into ``out``
    (reserved here) and return it; None on the other ranks. With ``sign`` and a signing key
    (suite/trust/signing.py), rank 0 mints the run ids for the key and signs the file."""
    import torch

    from suite.run import distributed
    from suite.run.signals import stop_on_sigterm

    layout = the_plan.layout
    device = torch.device(the_plan.device_type)
    parallel = distributed.from_env(device.type, layout.mode, layout.micro_batch)  # type: ignore[arg-type]
    if parallel.world_size != layout.world_size:
        raise GoodbenchError(f"the original ran {layout.world_size} processes; this is one of "
                             f"{parallel.world_size}")
    key = signing.load_key() if sign and parallel.is_main else None
    reservation = results.Reservation.take(out) if parallel.is_main else None
    if the_plan.cpu_threads is not None and device.type == "cpu":
        torch.set_num_threads(the_plan.cpu_threads)  # a CPU curve can depend on it
    try:
        stop_on_sigterm()
        device = distributed.init(parallel, device)
        try:
            found = _train_all(the_plan, out, device, parallel, data_dir, tolerance, progress, report,
                               system_name, system_overrides, command or [],
                               signing.public_bytes(key) if key is not None else None, cap)
        except BaseException:
            distributed.shutdown(wait=False)
            raise
        distributed.shutdown(wait=True)
        if found is not None and key is not None:
            found.doc = signing.seal(found.doc, key)
        if found is not None and reservation is not None:
            reservation.write(found.doc)
        return found
    finally:
        if reservation is not None:
            reservation.release()


def _train_all(the_plan: Plan, out: Path, device, parallel, data_dir, tolerance: float, progress: Progress,
               report: Callable[[str], None], system_name, system_overrides, command,
               run_key: bytes | None = None, cap: Cap = DEFAULT_CAP) -> Reproduction | None:

    from suite.run import driver, session, system
    from suite.run.runner import RunOptions

    splan = session.SuitePlan(
        workload_ids=list(dict.fromkeys(t.workload_id for t in the_plan.targets)), scale=the_plan.scale,
        seeds=0, explicit=True, system_name=system_name, system_overrides=system_overrides, command=command,
        global_batch=the_plan.global_batch)
    options = RunOptions(device=device, data_dir=data_dir, peak_tflops=the_plan.peak_tflops,
                         checkpoint_every=the_plan.checkpoint_every, parallel=parallel,
                         compile=the_plan.compile, run_key=run_key)
    checkpoints = out.with_suffix(".ckpt") if the_plan.checkpoint_every else None
    if parallel.is_main and checkpoints is not None and (checkpoints.exists() or checkpoints.is_symlink()):
        raise GoodbenchError(f"{checkpoints} exists: the reproduction keeps its checkpoints there and removes "
                             "them when it ends, so it never trains beside another run's (a run's resume state, "
                             "goodbench run --checkpoint-every); move it, or give another -o")
    if parallel.is_main:
        problems = session.preflight(splan, options)
        if problems:
            raise GoodbenchError(f"the reproduction would be refused, not training: {problems[0].said()}; "
                                 "fix --system-name")
    workloads, open_changes = splan.workloads()
    the_session = session.start_session(options)
    options = session.with_identity(splan, options, the_session, open_changes)
    by_id = {w.id: w for w in workloads}
    comparisons: list[Comparison] = []
    interrupted = False
    try:
        for n, target in enumerate(the_plan.targets):
            found = _measured_on(target, n, by_id[target.workload_id], the_plan.scale, options, parallel,
                                 checkpoints, tolerance, progress, report, cap)
            found = _measured_drift(found, target, by_id[target.workload_id], the_plan.scale, options, parallel,
                                    tolerance, report, checkpoints / f"run{n}-drift" if checkpoints else None)
            if found is not None:
                comparisons.append(found)
    except KeyboardInterrupt:  # SIGINT, or SIGTERM (suite/run/signals.py): keep the runs finished
        if parallel.distributed or not comparisons:
            raise
        interrupted = True
        report(f"interrupted: the reproduction holds the {len(comparisons)} run(s) trained again before it")
    finally:
        if checkpoints is not None and parallel.is_main:
            shutil.rmtree(checkpoints, ignore_errors=True)
    if not parallel.is_main:
        return None
    settings = session._settings(splan, options, splan.workload_ids, [], open_changes, {}, interrupted, None)
    settings["seeds_per_workload"] = None
    settings["session"] = the_session
    settings["reproduces"] = section(the_plan.original, comparisons, tolerance)
    runs = [c.record for c in comparisons]
    doc = driver.document(system.describe(device, system_name, system_overrides), settings, runs)
    return Reproduction(doc, comparisons, interrupted)


def _measured_on(target, n: int, workload, scale: str, options, parallel, checkpoints: Path | None,
                 tolerance: float, progress: Progress, report: Callable[[str], None], cap: Cap) -> Comparison | None:
    """``target`` trained again, and again while its curve agrees but its throughput's interval
    is not decided (:mod:`suite.run.reproduce.measuring`: the re-runs' windows pooled, up to
    ``cap``); rank 0's comparison of the last re-run, judged on all of them (None on other ranks)."""
    import time
    from dataclasses import replace

    import torch

    from suite.run import distributed
    from suite.run.runner import run_one

    quiet: Progress = lambda *a, **k: None
    threads = torch.get_num_threads()  # what the file's settings.cpu_threads records (suite/run/driver.py)
    measuring = Measuring(cap, tolerance)
    first: Comparison | None = None
    found: Comparison | None = None
    for attempt in range(1, cap.measurements + 1):
        opts = options if checkpoints is None else \
            replace(options, checkpoint_dir=str(checkpoints / f"run{n}-attempt{attempt}"))
        start = time.monotonic()
        record = run_one(workload, scale, target.seed, opts, progress if parallel.is_main else quiet)
        seconds = time.monotonic() - start
        if "repeat" in target.run:  # a run of `run --repeat`: its number keeps the seeds apart
            record["repeat"] = target.run["repeat"]
        again = False
        if parallel.is_main:
            found = compare_run(target, record, tolerance, first, cpu_threads=threads)
            first = first or found
            if first.unsettled:
                again = measuring.add(target.run, record, seconds)
                found = compare_run(target, record, tolerance, first if attempt > 1 else None, measuring,
                                    cpu_threads=threads)
                report(f"[{target.label()}] " + (measuring.progress() if again else measuring.describe()))
        if not distributed.broadcast(again, parallel):
            break
    return found


def _measured_drift(found: Comparison | None, target, workload, scale: str, options, parallel, tolerance: float,
                    report: Callable[[str], None], checkpoint_dir: Path | None) -> Comparison | None:
    """``found`` again, its curve held to the drift this machine's kernels cause (measured here:
    :mod:`suite.run.reproduce.drift`), when its curve differs beyond the exact bound; else ``found``.
    Every rank takes part in an in-place second run; rank 0 compares."""
    from dataclasses import replace

    from suite.figures.reproducibility import EXACT, measured
    from suite.run import distributed, system
    from suite.run.reproduce import drift as drift_module
    from suite.run.reproduce.comparison import curve_agreement
    from suite.run.runner import run_one

    differs = found is not None and not found.curve.agrees and found.record.get("status") == "complete"
    if not distributed.broadcast(differs, parallel):
        return found
    second: dict | None = None
    if target.device_type == "cpu" and not parallel.distributed:
        kernels = drift_module.other_cpu_kernels(system.cpu_capability())
        if kernels is None:
            how = "this CPU runs the default instruction set already: no other kernels to train under"
        else:
            report(f"[{target.label()}] curve beyond {EXACT.rel:g} of the original: training it again under "
                   f"ATEN_CPU_CAPABILITY={kernels} to measure how far this machine's kernels move it")
            how = f"the same seed under ATEN_CPU_CAPABILITY={kernels}"
            try:
                second = drift_module.cpu_rerun(workload, scale, target.seed, options, kernels)
            except RuntimeError as exc:
                how = str(exc)
    else:
        if parallel.is_main:
            report(f"[{target.label()}] curve beyond {EXACT.rel:g} of the original: training it once more to "
                   "measure how far this machine's kernels move it")
        opts = options if checkpoint_dir is None else replace(options, checkpoint_dir=str(checkpoint_dir))
        second = run_one(workload, scale, target.seed, opts, lambda *a, **k: None)
        how = "the same seed trained once more"
    if found is None:
        return None
    rel = None
    if second is None or second.get("status") != "complete":
        how = how if second is None else f"{how}, which ended {second.get('status')}"
    else:
        between = curve_agreement(found.record.get("curve") or [], second.get("curve") or [], EXACT,
                                  target.device_type)
        if between.first_difference and between.first_difference.startswith("eval steps differ"):
            how = f"{how}, which met its target at another evaluation"
        else:
            rel = between.max_rel_diff
    again = compare_run(replace(target, tolerance=measured(target.workload_id, target.device_type, rel, how)),
                        found.record, tolerance, cpu_threads=found.cpu_threads)
    again.measurements, again.first_ratio, again.first_within, again.measuring = \
        found.measurements, found.first_ratio, found.first_within, found.measuring
    return again
