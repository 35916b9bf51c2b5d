"""``goodbench run`` once its arguments are parsed: check them, then train the plan here (or
re-launch it under torchrun: suite/run/launch.py), write the results file into its reservation
(suite/run/output.py), validate what it wrote as the library does (suite/run/driver.py) and say
what happened; the exit status."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from suite import __version__
from suite.record import dependencies
from suite.record.errors import GoodbenchError, Usage
from suite.record.text import count
from suite.run import arguments, launch, output, quiet
from suite.run.progress import RUN_UNDER_LOAD, ProgressPrinter, say, warn_if_busy
from suite.trust import signing

if TYPE_CHECKING:
    from suite.record.results import Reservation


def run(args) -> int:
    """Train the plan here (or re-launch under torchrun) and write the results file; 0 when every run completed."""
    # what needs no torch is refused before torch is imported (which takes seconds)
    arguments.check_plan(args)
    if args.wait_quiet is not None and (args.nnodes or 1) > 1:  # one node's wait would outlast the others' rendezvous
        raise Usage(quiet.ON_SEVERAL_NODES)
    if args.wait_quiet is not None and launch.in_torchrun():  # its launcher waits, before the workers start
        raise Usage("--wait-quiet waits before torchrun starts the workers, not in a worker: give it to "
                    "goodbench run --nproc-per-node N")
    if args.output and not launch.in_torchrun():  # a worker's rank 0 takes over its launcher's reservation
        output.refuse_taken_output(Path(args.output))
    launcher = bool(args.nproc_per_node) and not launch.in_torchrun()
    if launcher and args.device == "cpu" and dependencies.findable("torch"):
        return _launch(args, args.scale or "smoke")  # a launcher trains nothing: told the device, it needs no torch
    # a first line at once: torch and the workloads take seconds to load (where torch is missing,
    # the one line is the error naming the extra)
    if os.environ.get("RANK", "0") == "0" and dependencies.findable("torch"):
        say("preparing the run: loading torch and the workloads")
    from suite.run.system import resolve_device

    device = resolve_device(args.device)
    scale = args.scale or ("full" if device.type == "cuda" else "smoke")
    if launcher:
        return _launch(args, scale)
    from suite.run import distributed

    parallel = distributed.from_env(device.type, args.parallel, args.micro_batch)
    arguments.check_parallel(args, parallel, scale)
    if not parallel.distributed:  # the ranks look each on its node, in the run
        arguments.check_named_data(args)
    from suite.run.signals import stop_on_sigterm

    # SIGTERM (Slurm, timeout, docker stop; torchrun after a peer failed) stops the run like
    # Ctrl-C: the runs so far are written, the running one as partial
    stop_on_sigterm()
    device = distributed.init(parallel, device)
    try:
        status = _run_process(args, device, scale, parallel)
    except BaseException:
        distributed.shutdown(wait=False)
        raise
    distributed.shutdown(wait=status == 0)  # after a failure the peers may be gone
    return status


def _run_process(args, device, scale: str, parallel) -> int:
    """One process's run: a single process, or one rank of a torchrun run (rank 0 reports)."""
    from dataclasses import replace

    from suite.run.overrides import load_overrides
    from suite.run.runner import RunOptions
    from suite.run.session import SuitePlan
    from workloads import registry

    plan = SuitePlan(workload_ids=args.workload or list(registry.WORKLOADS), scale=scale,
                     seeds=args.seeds, explicit=bool(args.workload), system_name=args.system_name,
                     system_overrides=load_overrides(args.system_overrides),
                     command=["goodbench", *sys.argv[1:]], global_batch=args.global_batch,
                     repeat=args.repeat)
    options = RunOptions(
        device=device, data_dir=args.data_dir, peak_tflops=args.peak_tflops,
        checkpoint_every=args.checkpoint_every,
        inject_failures=tuple(args.inject_failure or ()),
        failure_rate_per_hour=args.failure_rate, failure_seed=args.failure_seed,
        parallel=parallel, compile=args.compile)

    keys: list = []  # rank 0 writes and signs the file: its key, read where its errors reach every rank

    def preflight() -> None:
        _preflight(plan, options)
        keys.append(_signing_key(args))

    out, checkpoint_dir, reservation = output.agreed_paths(args, scale, parallel, preflight)
    key = keys[0] if keys else None
    run_key = signing.public_bytes(key) if key is not None else None
    try:
        return _train(args, plan, replace(options, checkpoint_dir=checkpoint_dir, run_key=run_key), out,
                      reservation, key)
    finally:
        if reservation is not None:
            from suite.run.signals import holding

            # a second Ctrl-C here would leave the empty placeholder behind; one held is dropped: the
            # process ends with the status it has, the first signal's
            with holding():
                reservation.release()  # the run wrote nothing: the name is free again


def _preflight(plan, options) -> None:
    """Fail before training when the results file would be refused for what the user gave
    (``--system-name``, ``--system-overrides``, the command line): the validator's walk and
    schema on the system and settings sections, which the run does not change."""
    from suite.run.session import preflight
    from suite.trust.labels import label_refusal

    why = label_refusal(plan.system_name) if isinstance(plan.system_name, str) else None
    if why is not None:  # rule name-trust
        raise GoodbenchError(f"the results file would be refused, not training: --system-name: {why}")
    problems = preflight(plan, options)
    if problems:
        more = f" (and {count(len(problems) - 1, 'more problem')})" if len(problems) > 1 else ""
        raise GoodbenchError(f"the results file would be refused, not training: "
                             f"{problems[0].said()}{more}; "
                             "fix --system-name / --system-overrides")


def _signing_key(args):
    """The signing key (suite/trust/signing.py) unless ``--no-sign``; None when there is none."""
    return None if args.no_sign else signing.load_key()


def _train(args, plan, options, out: Path, reservation: Reservation | None, key=None) -> int:
    """Train the plan; rank 0 writes the results file into its reservation and reports."""
    from suite.figures import report
    from suite.run import driver
    from suite.run.session import run_suite
    from suite.validate import refusals

    parallel, checkpoint_dir = options.parallel, options.checkpoint_dir
    if parallel.is_main:
        say(f"goodbench {__version__}: {', '.join(plan.workload_ids)} at {plan.scale} scale on "
            f"{options.device}" + (f", rank 0 of {parallel.world_size} ({parallel.backend}, "
                                   f"{parallel.mode})" if parallel.distributed else ""))
        if args.wait_quiet is not None:  # before the first workload: no clock runs yet
            quiet.wait(args.wait_quiet, "training anyway")
        warn_at_start(waited=args.wait_quiet is not None)
    doc = run_suite(plan, options, ProgressPrinter() if parallel.is_main else lambda *a, **k: None)
    if not parallel.is_main:
        return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1
    if doc["settings"]["aborted"] and launch.restarts_left():
        say(f"stopped: {doc['settings']['aborted']}; torchrun restarts the workers, and the "
            "restarted run writes the results file")
        return 1
    if not doc["runs"]:
        say(f"stopped before any run was recorded ({doc['settings']['aborted'] or 'interrupted'}); "
            "no results file written")
        return _interrupted_status() if doc["settings"]["interrupted"] else 1
    assert reservation is not None  # rank 0 holds one
    doc, written, problems, unsaved = driver.write_validated(driver.sealed(doc, key), reservation.write, out)
    print(report.file_summary(doc))
    for r in doc["runs"]:
        if r["error"]:
            say(f"{r['workload']['id']} seed {r['seed']}: {r['status']}: {r['error']}")
    for skipped in doc["settings"]["skipped"]:
        print(f"skipped {skipped['workload']}: {skipped['reason']}")
    if doc["settings"]["skipped"]:  # the reasons name no path (the file is published): the folders, here only
        from workloads.data import search_dirs

        print(f"dataset folders looked in: {', '.join(str(d) for d in search_dirs(options.data_dir))} "
              "(goodbench data where)")
    loaded = report.load_warning(doc["runs"])
    if loaded:
        say(loaded)
    if unsaved is not None:  # the runs are kept elsewhere (or printed), and so are the checkpoints
        print(driver.validated_line(str(written), problems))
        say(f"goodbench: error: {unsaved}")
        return 1
    print(f"results written to {out}")
    print(driver.validated_line(str(out), problems))
    print(signing.closing_line(doc, args.no_sign))
    output.checkpoints_after(args, checkpoint_dir, out, doc)
    if doc["settings"]["interrupted"]:
        say("interrupted: the results file holds the runs so far")
        return _interrupted_status()
    if doc["settings"]["aborted"]:
        say(f"stopped: {doc['settings']['aborted']}; the results file holds the runs so far")
        return 1
    refused = refusals(problems)
    if refused:  # as run-own ends: a file submit and compare refuse is no success
        say(driver.refused_advice(refused))
        return 1
    return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1


def _interrupted_status() -> int:
    """The shell's status of a run stopped by a signal: 143 after SIGTERM, 130 after SIGINT."""
    from suite.run.signals import sigterm_received

    return 143 if sigterm_received() else 130


def _launch(args, scale: str) -> int:
    """Re-launch this command under torchrun (suite.run.launch), after the checks the workers
    would fail on. On one node the launcher reserves the results file's name and hands it to
    the workers' rank 0 (which takes the unlocked, empty reservation over); the name is
    freed again when the workers wrote nothing."""
    from workloads.placement import Parallel

    # the workers would refuse these: say so before torchrun starts them
    arguments.check_parallel(args, Parallel(world_size=args.nproc_per_node * (args.nnodes or 1),
                                   mode=args.parallel, micro_batch=args.micro_batch), scale)
    if (args.nnodes or 1) == 1:
        _signing_key(args)  # an unreadable signing key too (rank 0 runs here)
    if args.inject_failure:
        arguments.check_restarts(args, scale)
    reservation = None
    if (args.nnodes or 1) == 1:
        out, reservation = output.reserve_output(args, scale)
        reservation.close()  # unlocked: rank 0 takes it over
    else:  # rank 0 may be on another node: it reserves the name there
        out = output.output_path(args, scale)
        if out.exists():
            raise GoodbenchError(f"{out} exists; goodbench never overwrites a results file")
    try:
        if args.wait_quiet is not None:  # here, not in the workers: they would wait in each other's collectives
            quiet.wait(args.wait_quiet, "launching the workers anyway")
        return launch.launch(args.argv, str(out), args.nproc_per_node, args.nnodes,
                             args.node_rank, args.rdzv_endpoint, max_restarts=args.max_restarts)
    except ValueError as exc:
        raise Usage(str(exc)) from None
    finally:
        if reservation is not None:
            reservation.release()


def warn_at_start(waited: bool) -> None:
    """:func:`~suite.run.progress.warn_if_busy` at the suite's start, naming ``--wait-quiet`` where it
    was not given (``waited``: it was, and the machine is busy still)."""
    warn_if_busy(RUN_UNDER_LOAD if waited else
                 f"{RUN_UNDER_LOAD}; goodbench run --wait-quiet 600 waits up to ten minutes for them to stop before it "
                 "measures")
