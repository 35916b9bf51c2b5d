"""One run of the suite: several workloads × seeds on one device, gathered into one document."""
from __future__ import annotations

import functools
import json
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suite.figures import derive
from suite.meters.ceiling import MOST_SECONDS_AGAIN, again_when_stopped, matmul_ceiling, measured_again
from suite.mlperf.fields import submission as mlperf_submission
from suite.record import privacy, results, size_ahead
from suite.record.errors import GoodbenchError
from suite.record.results import write_atomic
from suite.run import distributed, driver, system
from suite.run.runner import (
    Progress,
    RankLost,
    RunOptions,
    check_precision,
    precision_for,
    run_one,
)
from suite.run.signals import Stopped, Terminated
from suite.run.supervisor import run_supervised
from suite.validate.registry import Problem
from suite.validate.schema import schema_problems
from suite.validate.walk import walk
from workloads import registry
from workloads.base import Workload
from workloads.data import missing_reason
from workloads.pinned import SEEDS


@dataclass
class SuitePlan:
    """What to run: workload ids, scale, seed count; ``explicit`` when the user named workloads."""

    workload_ids: list[str]
    scale: str
    seeds: int
    explicit: bool
    system_name: str | None = None
    system_overrides: dict | None = None
    command: list[str] = field(default_factory=list)
    global_batch: int | None = None  # open division: every workload's global batch, changed
    repeat: int = 1  # runs of each throughput workload × seed (``--repeat``), one after another

    def workloads(self) -> tuple[list[Workload], list[str]]:
        """The workloads to run and the open-division changes made to their pinned specs."""
        workloads = [registry.get(w) for w in self.workload_ids]
        batch = self.global_batch
        changed = [w for w in workloads if batch is not None and w.spec(self.scale).batch_size != batch]
        changes = [f"{w.id}: global batch {batch} (pinned {w.spec(self.scale).batch_size}); every "
                   "other value as pinned" for w in changed]
        return [w.with_spec_changes(self.scale, batch_size=batch) if w in changed else w
                for w in workloads], changes


def default_seeds(scale: str, kind: str) -> int:
    """Seeds per workload when ``--seeds`` is not given: as many as the rules require
    (:func:`suite.figures.derive.required_seeds`: 5 for TTA workloads at full scale, else 1)."""
    return derive.required_seeds(scale, kind)


def _missing_data(workloads: list, options: RunOptions, progress: Progress, explicit: bool = False) -> dict[str, str]:
    """Workload id → why its data cannot be found, and the command that fetches it: one line with
    no path (a skipped workload's reason, published with the file), or, ``explicit`` (the user
    named the workload), every place looked in. A file downloaded is said first (event
    ``download``). In a distributed run every rank looks on its own node and all ranks agree: a
    workload runs only where every rank has its data."""
    missing: dict[str, str] = {}
    for workload in workloads:
        def announce(line: str, wid: str = workload.id) -> None:
            progress("download", workload=wid, line=line)

        why = missing_reason(workload.id, workload.data_files, options.data_dir, every_place=explicit,
                             announce=announce)
        if why is not None:
            missing[workload.id] = why
    if not options.parallel.distributed:
        return missing
    agreed: dict[str, str] = {}
    for rank, theirs in enumerate(distributed.gather(missing, options.parallel)):
        for wid, reason in theirs.items():
            agreed.setdefault(wid, f"rank {rank}: {reason}")
    return agreed


CEILINGS = "matmul-ceiling.json"  # in the checkpoint root: the ceilings a resumed suite keeps
SESSION = "session.json"  # in the checkpoint root: the suite run a resumed suite continues


def start_session(options: RunOptions) -> dict:
    """The suite run's identity, ``{"id", "started_at"}`` (the document's ``settings.session``;
    every run of it logs the id). A suite that keeps checkpoints saves it in its checkpoint root,
    and a restarted or resumed suite continues that session (its runs' logs name it). Rank 0
    decides; every rank gets the same."""
    path = Path(options.checkpoint_dir) / SESSION if options.checkpoint_dir else None
    found = None
    if options.parallel.is_main:
        try:
            kept = json.loads(path.read_text()) if path is not None and path.is_file() else None
            if isinstance(kept, dict) and isinstance(kept.get("id"), str) and isinstance(kept.get("started_at"), str):
                found = {"id": kept["id"], "started_at": kept["started_at"]}
        except (OSError, ValueError):
            found = None  # a new session, saved again below
        if found is None:
            found = {"id": uuid.uuid4().hex, "started_at": results.utc_now()}
            if path is not None:
                write_atomic(path, json.dumps(found))
    return distributed.broadcast(found, options.parallel)


def with_identity(plan: SuitePlan, options: RunOptions, session: dict, open_changes: list[str]) -> RunOptions:
    """``options`` with what every run's event log says of the suite run: MLPerf's submission
    keys, the system's accelerator name and count, and the session's id (suite/record/claims.py)."""
    accelerator = system.accelerator(options.device)
    return replace(options, session=session["id"], accelerator=(accelerator["name"], accelerator["count"]),
                   submission=mlperf_submission(
                       plan.system_name, plan.system_overrides, f"{accelerator['name']} x{accelerator['count']}",
                       "open" if open_changes else "closed"))


def matmul_ceilings(precisions: list[str], options: RunOptions, progress: Progress) -> dict:
    """The measured matmul ceiling per precision. A suite that keeps checkpoints saves them in
    its checkpoint root and a restarted or resumed suite reuses them (same device model), so
    the records of runs that finished before the restart and the document agree."""
    device = options.device
    name = system.device_name(device)
    path = Path(options.checkpoint_dir) / CEILINGS if options.checkpoint_dir else None
    saved: dict[str, Any] = {}
    if path is not None and path.is_file():
        try:
            kept = json.loads(path.read_text())
            saved = kept["ceilings"] if kept.get("device_name") == name else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            saved = {}  # measured again, and saved again below
    ceilings, measured = {}, False
    for precision in precisions:
        if isinstance(saved.get(precision), dict) and "flops" in saved[precision]:
            ceilings[precision] = saved[precision]
            continue
        progress("ceiling", precision=precision)
        ceilings[precision], measured = matmul_ceiling(device, precision), True
    if path is not None and options.parallel.is_main and measured:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"device_name": name, "ceilings": {**saved, **ceilings}},
                                      allow_nan=False))
    return ceilings


def run_suite(plan: SuitePlan, options: RunOptions, progress: Progress) -> dict:
    """Run the plan and return the results document.

    A workload whose data cannot be found is skipped with its reason when the user did not
    name it, and is an error when they did. A run that fails (any error in one seed: a compile
    or CUDA error, out of memory, a non-finite loss) is kept as "failed" with its reason and the
    suite goes on with the next seed (:func:`suite.run.runner.run_one`). On KeyboardInterrupt the
    document holds every run so far (the interrupted one as "partial") and is returned with
    ``settings.interrupted``; when a distributed run loses a rank, or an error escapes a run's
    own handling, the suite stops likewise, with ``settings.aborted``.
    """
    workloads, open_changes = plan.workloads()
    missing = _missing_data(workloads, options, progress, plan.explicit)
    skipped, runnable = [], []
    for workload in workloads:
        if workload.id in missing:
            if plan.explicit:
                raise GoodbenchError(missing[workload.id])
            skipped.append({"workload": workload.id, "reason": missing[workload.id]})
            progress("skip", workload=workload.id, reason=missing[workload.id])
        else:
            runnable.append(workload)
    if not runnable:
        raise GoodbenchError("no workload could run: " + "; ".join(s["reason"] for s in skipped))

    precisions = sorted({precision_for(w, plan.scale, options.device) for w in runnable})
    for precision in precisions:  # before the ceilings: a refused precision trains nothing
        check_precision(precision)
    ceilings = matmul_ceilings(precisions, options, progress)
    options = replace(options, matmul_ceiling={p: c["flops"] for p, c in ceilings.items()})
    session = start_session(options)
    options = with_identity(plan, options, session, open_changes)
    runs: list[dict] = []
    interrupted, aborted = False, None
    stopped_by: BaseException | None = None  # the interrupt that stopped the runs
    planned, size_said = sum(len(_planned_runs(plan, w)) for w in runnable), False
    for workload in runnable:
        for seed, repeat in _planned_runs(plan, workload):
            try:
                run = run_supervised if options.supervised else run_one
                told = progress if repeat is None else _telling_repeat(progress, repeat, plan.repeat)
                runs.append(_numbered(run(workload, plan.scale, seed, options, told), repeat))
                if not size_said and (too_large := size_ahead.warning(runs, planned)):  # said once
                    progress("size_ahead", line=too_large)
                    size_said = True
            except KeyboardInterrupt as exc:
                stopped_by = exc
                if hasattr(exc, "record"):
                    runs.append(_numbered(exc.record, repeat))
                if isinstance(exc, Terminated) and not isinstance(exc, Stopped) and options.parallel.distributed:
                    # a worker's SIGTERM: torchrun stops the workers after one failed (a user
                    # stopping the job goes through the launcher, which sends SIGINT instead)
                    aborted = ("stopped by SIGTERM (torchrun stops every worker after one failed, or when it is "
                               "stopped itself: its launcher killed)")
                else:
                    interrupted = True
                break
            except RankLost as exc:  # a distributed run lost a rank: no run can follow
                runs.append(exc.record)
                aborted = str(exc)
                break
            except GoodbenchError:
                raise
            except Exception as exc:  # an error outside the run's own handling: its record is lost
                aborted = (f"{workload.id} seed {seed}: {driver.ended_by(exc)} (its record "
                           "could not be put together; the runs before it are kept)")
                break
        if interrupted or aborted:
            break
    stopped = interrupted or aborted
    again = {precision: ceiling for precision, ceiling in ceilings.items()  # stopped: once, where the file needs it
             if not stopped or (interrupted and not aborted and again_when_stopped(
                 ceiling, derive.fastest_device_rate(runs, precision), isinstance(stopped_by, Terminated)))}
    if again:  # measured again after the runs: the fastest seen (ceiling.with_end)
        try:
            for precision, ceiling in again.items():
                progress("ceiling", precision=precision, again=True, most_s=MOST_SECONDS_AGAIN, stopped=stopped)
                try:
                    ceilings[precision] = measured_again(
                        ceiling, functools.partial(matmul_ceiling, options.device, precision, n=ceiling.get("n")),
                        derive.fastest_device_rate(runs, precision), most_seconds=0.0 if stopped else MOST_SECONDS_AGAIN)
                except (RuntimeError, MemoryError) as exc:  # out of memory: the runs and the first ceiling are kept
                    progress("ceiling_not_again", precision=precision, why=driver.ended_by(exc))
        except KeyboardInterrupt:  # stopped while measuring it again: every run is kept, the file says interrupted
            interrupted = True
    settings = _settings(plan, options, [w.id for w in runnable], skipped, open_changes, ceilings,
                         interrupted, aborted)
    settings["session"] = session
    return driver.document(system.describe(options.device, plan.system_name, plan.system_overrides),
                           settings, runs)


def _planned_runs(plan: SuitePlan, workload: Workload) -> list[tuple[int, int | None]]:
    """(seed, repeat number) of each run the plan makes of ``workload``."""
    n = plan.seeds or default_seeds(plan.scale, workload.kind)
    return _seeds_and_repeats(n, plan.repeat if workload.kind == "throughput" else 1)


def _seeds_and_repeats(seeds: int, repeat: int) -> list[tuple[int, int | None]]:
    """(seed, repeat number) of each run of a workload: its first ``seeds`` pinned seeds, each
    run ``repeat`` times in a row (numbered 1 … ``repeat``; None when it runs once)."""
    return [(seed, k if repeat > 1 else None) for seed in SEEDS[:seeds] for k in range(1, repeat + 1)]


def _telling_repeat(progress: Progress, repeat: int, repeats: int) -> Progress:
    """``progress`` with the repeat number (and how many) in every event of the run."""
    return lambda kind, **fields: progress(kind, **fields, repeat=repeat, repeats=repeats)


def _numbered(record: dict, repeat: int | None) -> dict:
    """A run's record with its repeat number (``repeat``: absent from a run made once)."""
    if repeat is not None:
        record["repeat"] = repeat
    return record


def _settings(plan: SuitePlan, options: RunOptions, workload_ids: list[str], skipped: list[dict],
              open_changes: list[str], ceilings: dict, interrupted: bool, aborted: str | None) -> dict:
    """The document's ``settings`` section (:func:`suite.run.driver.settings`); a distributed run
    trains the pinned global batch: still closed."""
    return driver.settings(
        scale=plan.scale, device=options.device, workloads=workload_ids, seeds_per_workload=plan.seeds or None,
        repeat=plan.repeat, peak_tflops=options.peak_tflops, checkpoint_every=options.checkpoint_every,
        inject_failures=list(options.inject_failures), failure_rate_per_hour=options.failure_rate_per_hour,
        compile=options.compile, skipped=skipped, interrupted=interrupted, aborted=aborted,
        division="open" if open_changes else "closed",  # docs/rules.md
        open_changes=open_changes,
        command=privacy.public_command(plan.command)[0],  # no home or temporary folder published
        matmul_ceiling=ceilings, parallel=options.parallel)


def preflight(plan: SuitePlan, options: RunOptions) -> list[Problem]:
    """What the validator would refuse in the results file's ``system`` and ``settings``
    sections (string lengths, control characters, types: the generic walk, then the JSON
    Schema), found before any training. They come from the user's inputs (``--system-name``,
    ``--system-overrides``, the command line) and do not change during the run."""
    workloads, open_changes = plan.workloads()
    settings = _settings(plan, options, [w.id for w in workloads], [], open_changes, {}, False, None)
    doc = results.new_document(system.describe(options.device, plan.system_name, plan.system_overrides),
                               settings, [])
    doc = json.loads(results.dumps(doc))  # judged as the file will hold it (torch's version: a str)
    problems = walk(doc) or schema_problems(doc)
    mine = [p for p in problems if p.field.split(".")[0].split("[")[0] in ("system", "settings")]
    return sorted(mine, key=lambda p: (not p.field.startswith("system"), p.field))  # the system first
