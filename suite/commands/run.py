"""``goodbench run``: train workloads and write one results file (under torchrun when
``--nproc-per-node`` is given: suite/run/launch.py)."""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from suite import __version__
from suite.commands.common import POSITIVE_FLOAT, POSITIVE_INT, Usage, count, error_text, say
from suite.meters import host_load
from suite.record.errors import GoodbenchError
from suite.run import launch
from suite.run.progress import ProgressPrinter
from suite.trust import signing
from workloads.pinned import COMPILE_MODES, CUDA_GRAPH_MODES

if TYPE_CHECKING:
    from suite.record.results import Reservation


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench run`` and its arguments."""
    p = commands.add_parser("run", help="run workloads and write one results file")
    p.add_argument("-w", "--workload", action="append", metavar="ID",
                   help="workload to run (repeatable; default: the whole suite)")
    p.add_argument("--scale", choices=["smoke", "full"],
                   help="pinned variant (default: full on a GPU, smoke on the CPU)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where to train: auto (default) the GPU when torch sees one, else the CPU")
    p.add_argument("--seeds", type=int, help="seeds per workload (default: 5 for TTA at full scale, else 1)")
    p.add_argument("--repeat", type=POSITIVE_INT, default=1, metavar="N",
                   help="run each seed of a throughput workload N times in a row, into the one results "
                        "file (several runs a side, for goodbench compare's spread between runs)")
    p.add_argument("--data-dir", help="directory holding dataset files (looked in first)")
    p.add_argument("--peak-tflops", type=POSITIVE_FLOAT, help="peak TFLOP/s for MFU where the device is not in the table")
    p.add_argument("--system-name", help="name of this system on the leaderboard")
    p.add_argument("--system-overrides", metavar="FILE",
                   help="JSON object correcting fields of the system description")
    p.add_argument("-o", "--output", help="results file (default: runs/<UTC time>-<scale>.json)")
    p.add_argument("--checkpoint-every", type=POSITIVE_INT, metavar="N",
                   help="save a checkpoint every N steps, into out.ckpt/ for -o out.json (the "
                        "results file with .ckpt for .json); removed once every run completed, "
                        "else kept for --resume")
    p.add_argument("--resume", metavar="DIR",
                   help="resume the runs checkpointed in DIR (e.g. out.ckpt/ of an interrupted "
                        "run), into a new results file; DIR is kept")
    p.add_argument("--inject-failure", type=POSITIVE_INT, action="append", metavar="STEP",
                   help="SIGKILL the training worker (under torchrun: the last rank) at STEP and "
                        "restart it (repeatable)")
    p.add_argument("--failure-rate", type=POSITIVE_FLOAT, metavar="PER_HOUR",
                   help="SIGKILL the worker at random times, this many per hour on average")
    p.add_argument("--failure-seed", type=int, default=0, help="seed of --failure-rate's times")
    p.add_argument("--compile", default="off", choices=COMPILE_MODES,
                   help="torch.compile mode of the trained model (default: off); recorded in settings")
    p.add_argument("--no-sign", action="store_true",
                   help="write the results unsigned even when a signing key exists (goodbench keygen)")
    d = p.add_argument_group("distributed (re-launches the run under torchrun; docs/distributed.md)")
    d.add_argument("--nproc-per-node", type=POSITIVE_INT, metavar="N", help="processes (GPUs) on this node")
    d.add_argument("--nnodes", type=POSITIVE_INT, default=1, metavar="M", help="nodes in the run (default 1)")
    d.add_argument("--node-rank", type=int, metavar="R", help="this node's rank (static rendezvous)")
    d.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="c10d rendezvous of a multi-node run")
    d.add_argument("--max-restarts", type=int, default=0, metavar="K",
                   help="torchrun restarts all workers up to K times after a failure (resume)")
    d.add_argument("--parallel", choices=["ddp", "fsdp"], default="ddp",
                   help="DDP (every workload) or FSDP2 (gpt2-124m, llama-1b)")
    d.add_argument("--global-batch", type=POSITIVE_INT, metavar="ROWS",
                   help="OPEN division: train every workload at this global batch instead of the "
                        "pinned one (e.g. to grow it with the world size); recorded as a change")
    d.add_argument("--micro-batch", type=POSITIVE_INT, metavar="ROWS",
                   help="rows per micro-batch; gradients accumulate up to the per-rank share")
    return p


def run(args) -> int:
    """Train the plan here (or re-launch under torchrun) and write the results file; 0 when every run completed."""
    from workloads import registry
    from workloads.pinned import SEEDS

    # what needs no torch is refused before torch is imported (which takes seconds)
    if args.seeds is not None and not 1 <= args.seeds <= len(SEEDS):
        raise Usage(f"--seeds must be between 1 and {len(SEEDS)}")
    unknown = [w for w in args.workload or [] if w not in registry.WORKLOADS]
    if unknown:
        raise Usage(f"unknown workload {', '.join(unknown)}; known: {', '.join(registry.WORKLOADS)}")
    _check_repeat(args)
    if args.output and not launch.in_torchrun():  # a worker's rank 0 takes over its launcher's reservation
        _refuse_taken_output(Path(args.output))
    if os.environ.get("RANK", "0") == "0":  # a first line at once: torch and the workloads take seconds to load
        say("preparing the run: loading torch and the workloads")
    from suite.run.system import resolve_device

    device = resolve_device(args.device)
    scale = args.scale or ("full" if device.type == "cuda" else "smoke")
    if args.nproc_per_node and not launch.in_torchrun():
        return _launch(args, scale)
    from suite.run import distributed

    parallel = distributed.from_env(device.type, args.parallel, args.micro_batch)
    _check_parallel(args, parallel, scale)
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


def _refuse_taken_output(out: Path) -> None:
    """Refuse ``-o FILE`` at once when a results file or a live run holds the name, as reserving it
    would (:class:`suite.record.results.Reservation`); the name is reserved for good just before training."""
    if not out.exists():
        return
    from suite.record import results

    try:
        results.Reservation.take(out).release()  # an abandoned (empty, unlocked) reservation is taken over
    except results.NameTaken as exc:
        raise GoodbenchError(str(exc)) from None
    except OSError:
        pass  # reserving it later says why


def _run_process(args, device, scale: str, parallel) -> int:
    """One process's run: a single process, or one rank of a torchrun run (rank 0 reports)."""
    from dataclasses import replace

    from suite.run.runner import RunOptions
    from suite.run.session import SuitePlan
    from suite.run.system import load_overrides
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

    out, checkpoint_dir, reservation = _paths(args, scale, parallel, preflight)
    key = keys[0] if keys else None
    run_key = signing.public_bytes(key) if key is not None else None
    try:
        return _train(args, plan, replace(options, checkpoint_dir=checkpoint_dir, run_key=run_key), out,
                      reservation, key)
    finally:
        if reservation is not None:
            reservation.release()  # the run wrote nothing: the name is free again


def _preflight(plan, options) -> None:
    """Fail before training when the results file would be refused for what the user gave
    (``--system-name``, ``--system-overrides``, the command line): the validator's walk and
    schema on the system and settings sections, which the run does not change."""
    from suite.run.session import preflight
    from suite.trust.labels import name_refusal, trust_words_in

    if isinstance(plan.system_name, str) and trust_words_in(plan.system_name):  # rule name-trust
        raise GoodbenchError(f"the results file would be refused, not training: --system-name: "
                             f"{name_refusal(plan.system_name)}")
    problems = preflight(plan, options)
    if problems:
        more = f" (and {count(len(problems) - 1, 'more problem')})" if len(problems) > 1 else ""
        raise GoodbenchError(f"the results file would be refused, not training: "
                             f"{problems[0].field}: {problems[0].reason} [{problems[0].code}]{more}; "
                             "fix --system-name / --system-overrides")


def _signing_key(args):
    """The signing key (suite/trust/signing.py) unless ``--no-sign``; None when there is none."""
    return None if args.no_sign else signing.load_key()


def _train(args, plan, options, out: Path, reservation: Reservation | None, key=None) -> int:
    """Train the plan; rank 0 writes the results file into its reservation and reports."""
    from suite.figures import report
    from suite.run.session import run_suite

    parallel, checkpoint_dir = options.parallel, options.checkpoint_dir
    if parallel.is_main:
        say(f"goodbench {__version__}: {', '.join(plan.workload_ids)} at {plan.scale} scale on "
            f"{options.device}" + (f", rank 0 of {parallel.world_size} ({parallel.backend}, "
                                   f"{parallel.mode})" if parallel.distributed else ""))
        _warn_if_busy()
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
    if key is not None:
        doc = signing.seal(doc, key)
    reservation.write(doc)
    print(report.run_summary(doc["runs"]))
    for r in doc["runs"]:
        if r["error"]:
            say(f"{r['workload']['id']} seed {r['seed']}: {r['status']}: {r['error']}")
    for line in report.score_lines(doc["summary"]) + report.repeat_lines(doc["runs"]):
        print(line)
    for skipped in doc["settings"]["skipped"]:
        print(f"skipped {skipped['workload']}: {skipped['reason']}")
    loaded = host_load.runs_under_load(doc["runs"])
    if loaded:
        say(f"warning: {loaded}: such runs are flagged and left out of comparisons")
    print(f"results written to {out}")
    print(signing.closing_line(doc, args.no_sign))
    _checkpoints_after(args, checkpoint_dir, out, doc)
    if doc["settings"]["interrupted"]:
        say("interrupted: the results file holds the runs so far")
        return _interrupted_status()
    if doc["settings"]["aborted"]:
        say(f"stopped: {doc['settings']['aborted']}; the results file holds the runs so far")
        return 1
    return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1


def _warn_if_busy() -> None:
    """Say at the start when other processes use the machine (``goodbench check``'s test): what
    is measured now is recorded "measured under load" and left out of comparisons."""
    why = host_load.under_load({"start": host_load.snapshot()})
    if why:
        say(f"warning: {why.replace('at its start', 'now')}: this run's results will be flagged "
            "\"measured under load\" and left out of comparisons (goodbench check says so before a run)")


def _checkpoints_after(args, checkpoint_dir: str | None, out: Path, doc: dict) -> None:
    """Remove ``<results file>.ckpt/`` once every run completed (the results file holds every
    run's event log; nothing is left to resume), else keep it and say what it is for. A
    ``--resume`` directory is the user's: kept."""
    if checkpoint_dir is None or not Path(checkpoint_dir).exists():
        return
    settings = doc["settings"]
    done = not settings["interrupted"] and not settings["aborted"] \
        and all(r["status"] == "complete" for r in doc["runs"])
    if args.resume is not None:
        say(f"checkpoints kept in {checkpoint_dir} (a --resume directory is not removed)")
    elif not done:
        say(f"checkpoints kept in {checkpoint_dir}: not every run completed; "
            f"`goodbench run … --resume {checkpoint_dir} -o NEW.json` continues the runs "
            "not finished (finished ones are kept, not trained again)")
    elif Path(checkpoint_dir) == out.with_suffix(".ckpt"):
        import shutil

        try:
            shutil.rmtree(checkpoint_dir)
            say(f"checkpoints removed ({checkpoint_dir}): every run completed, and "
                f"{out} holds their event logs")
        except OSError as exc:
            say(f"checkpoints kept in {checkpoint_dir}: removing them failed ({error_text(exc)})")


def _interrupted_status() -> int:
    """The shell's status of a run stopped by a signal: 143 after SIGTERM, 130 after SIGINT."""
    from suite.run.signals import sigterm_received

    return 143 if sigterm_received() else 130


def _paths(args, scale: str, parallel, preflight=None) -> tuple[Path, str | None, Reservation | None]:
    """The results file and checkpoint root, chosen by rank 0 and agreed by every rank, and
    rank 0's reservation of the results file's name (:class:`suite.record.results.Reservation`; None
    on the other ranks). ``preflight`` (rank 0, first) raises what would fail the file. After
    torchrun restarted the workers, the run resumes from the results file's ``.ckpt``
    directory (``out.json`` → ``out.ckpt``)."""
    from suite.run import checkpoint, distributed

    answer: tuple = (None, None, None)
    reservation = None
    if parallel.is_main:
        try:
            if preflight is not None:
                preflight()
            out, reservation = _reserve_output(args, scale)
            resume = args.resume
            if resume is None and launch.restart_count() > 0 \
                    and out.with_suffix(".ckpt").is_dir():
                resume = str(out.with_suffix(".ckpt"))
            wanted = bool(args.checkpoint_every or args.inject_failure or args.failure_rate)
            answer = (str(out), checkpoint.choose_root(out, resume, wanted), None)
        except GoodbenchError as exc:
            if reservation is not None:
                reservation.release()
                reservation = None
            answer = (None, None, str(exc))
    out, root, error = distributed.broadcast(answer, parallel)
    if error:
        raise GoodbenchError(error)
    return Path(out), root, reservation


def _reserve_output(args, scale: str) -> tuple[Path, Reservation]:
    """Reserve the results file's name before training (:class:`suite.record.results.Reservation`):
    a name taken by a file or by another run fails at once with ``-o``; a default name taken
    (another run started in the same second) falls back to the next free one, and says so.
    Returns (path, reservation)."""
    from suite.record import results

    first = out = _output_path(args, scale)
    for n in range(2, 101):
        try:
            reservation = results.Reservation.take(out)
        except results.NameTaken as exc:
            if args.output:
                raise GoodbenchError(str(exc)) from None
            out = first.with_name(f"{first.stem}-{n}{first.suffix}")
            continue
        except OSError as exc:
            raise GoodbenchError(f"cannot write the results file {out}: {exc.strerror or exc}") from None
        if out != first:
            say(f"{first} is taken (another run started in the same second): writing {out}")
        return out, reservation
    raise GoodbenchError(f"{first} and 99 names after it are taken; give -o FILE")


def _output_path(args, scale: str) -> Path:
    return Path(args.output) if args.output else Path("runs") / (
        dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{scale}.json")


def _launch(args, scale: str) -> int:
    """Re-launch this command under torchrun (suite.run.launch), after the checks the workers
    would fail on. On one node the launcher reserves the results file's name and hands it to
    the workers' rank 0 (which takes the unlocked, empty reservation over); the name is
    freed again when the workers wrote nothing."""
    from workloads.placement import Parallel

    # the workers would refuse these: say so before torchrun starts them
    _check_parallel(args, Parallel(world_size=args.nproc_per_node * (args.nnodes or 1),
                                   mode=args.parallel, micro_batch=args.micro_batch), scale)
    if (args.nnodes or 1) == 1:
        _signing_key(args)  # an unreadable signing key too (rank 0 runs here)
    if args.inject_failure:
        from suite.run.session import default_seeds
        from workloads import registry

        runs = sum(args.seeds or default_seeds(scale, registry.get(w).kind)
                   for w in args.workload or list(registry.WORKLOADS))
        kills = len(set(args.inject_failure)) * runs
        if args.max_restarts < kills:
            raise Usage(f"--inject-failure kills a rank {count(kills, 'time')} ({count(runs, 'run')}); "
                        f"torchrun must restart that often: --max-restarts {kills}")
    reservation = None
    if (args.nnodes or 1) == 1:
        out, reservation = _reserve_output(args, scale)
        reservation.close()  # unlocked: rank 0 takes it over
    else:  # rank 0 may be on another node: it reserves the name there
        out = _output_path(args, scale)
        if out.exists():
            raise GoodbenchError(f"{out} exists; goodbench never overwrites a results file")
    try:
        return launch.launch(args.argv, str(out), args.nproc_per_node, args.nnodes,
                             args.node_rank, args.rdzv_endpoint, max_restarts=args.max_restarts)
    except ValueError as exc:
        raise Usage(str(exc)) from None
    finally:
        if reservation is not None:
            reservation.release()


def _check_repeat(args) -> None:
    """Usage errors of ``--repeat``: it repeats throughput workloads (a TTA score is over
    distinct seeds), and not with checkpoints or injected failures (kept per seed)."""
    from workloads import registry

    if args.repeat == 1:
        return
    tta = [w for w in args.workload or [] if registry.get(w).kind == "tta"]
    if tta:
        raise Usage(f"--repeat runs a throughput workload's seeds again; {', '.join(tta)} "
                    "scores time to accuracy over distinct seeds: use --seeds N")
    if args.checkpoint_every or args.resume or args.inject_failure or args.failure_rate:
        raise Usage("--repeat measures throughput from run to run; it does not combine with "
                    "--checkpoint-every, --resume, --inject-failure or --failure-rate")


def _check_parallel(args, parallel, scale: str) -> None:
    """Usage errors of a distributed run, found before any process group is joined."""
    from workloads import registry

    if args.parallel == "fsdp":
        bad = [w for w in args.workload or list(registry.WORKLOADS) if not registry.get(w).supports_fsdp]
        if bad:
            able = [w.id for w in registry.WORKLOADS.values() if w.supports_fsdp]
            raise Usage(f"--parallel fsdp is for {', '.join(able)}, not {', '.join(bad)}")
    if parallel.distributed and args.failure_rate:
        raise Usage("--failure-rate supervises one process; under torchrun use --inject-failure "
                    "STEP (the last rank is killed there) with --max-restarts")
    if args.micro_batch and args.compile in CUDA_GRAPH_MODES:
        raise Usage(f"--compile {args.compile} records CUDA graphs, and with --micro-batch a graph "
                    "replayed for the next micro-batch may overwrite what the previous one left "
                    "for the gradients; the combination is refused until it has been checked on a "
                    "GPU: use --compile default or max-autotune-no-cudagraphs")
    for wid in args.workload or list(registry.WORKLOADS):
        workload = registry.get(wid)
        if args.global_batch:
            workload = workload.with_spec_changes(scale, batch_size=args.global_batch)
        try:
            parallel.micro_batches(workload.samples_per_step(workload.spec(scale)))
            parallel.rows(workload.samples_per_step(workload.spec(scale)))
        except ValueError as exc:
            raise Usage(f"{wid}: {exc}") from None
