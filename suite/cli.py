"""The ``goodbench`` command line: one small function per subcommand, no logic of its own.

Exit status: 0 ok, 1 input or rules failed, 2 usage error, 130 interrupted (SIGINT), 143
stopped by SIGTERM. Expected failures print one line and no traceback; ``--debug`` shows the
traceback.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from suite import __version__, launch
from suite.errors import GoodbenchError
from workloads.pinned import COMPILE_MODES, CUDA_GRAPH_MODES

if TYPE_CHECKING:
    from suite.results import Reservation


def _stderr(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


def _count(n: int, noun: str, plural: str | None = None) -> str:
    """"1 run", "2 runs"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


# ---------------------------------------------------------------- list
def cmd_list(args) -> int:
    from workloads import data, registry

    print(f"{'id':<12} {'ver':>3}  {'kind':<10} {'full-scale target':<22} {'data':<34} present")
    notes: list[str] = []
    for w in registry.WORKLOADS.values():
        target = w.spec("full").target
        files = _data_summary([f.name for f in w.data_files])
        found = {f: data.presence(f, args.data_dir) for f in w.data_files}
        # the worst of its files: one corrupt or missing file stops the workload
        present = next((s for s in ("corrupt", "no", "unverified")
                        if any(p.status == s for p in found.values())), "yes" if found else "—")
        print(f"{w.id:<12} {w.version:>3}  {w.kind:<10} {target.describe() if target else '—':<22} "
              f"{files:<34} {present}")
        print(f"{'':<12}      {w.task}")
        for f, p in found.items():
            if p.status == "corrupt":
                notes.append(f"{p.path}: size or sha256 differs from the pinned {f.sha256[:12]}…; "
                             "`goodbench run` refuses it")
            elif p.status == "unverified":
                notes.append(f"{p.path}: {f.size / 2**20:.0f} MiB, sha256 not checked by `list` "
                             "(`goodbench run` checks it)")
    print("present: yes = every file found with its pinned sha256 (in --data-dir, "
          "$GOODBENCH_DATA_DIR or the user cache); — = synthetic data, nothing to find")
    for note in notes:
        print(note)
    return 0


def _data_summary(names: list[str]) -> str:
    """"synthetic (none)", the one file, or "<dir>/ (N files)"."""
    if not names:
        return "synthetic (none)"
    if len(names) == 1:
        return names[0]
    folders = {n.rsplit("/", 1)[0] for n in names}
    return f"{folders.pop()}/ ({len(names)} files)" if len(folders) == 1 else f"{len(names)} files"


# ---------------------------------------------------------------- run
class ProgressPrinter:
    """Formats the runner's progress events as lines on stderr."""

    def __init__(self):
        self.label, self.max_steps = "", 0

    def __call__(self, event: str, **f) -> None:
        if event == "run_start":
            self.label, self.max_steps = f"{f['workload']} seed {f['seed']}", f["max_steps"]
            _stderr(f"[{self.label}] training, at most {self.max_steps} steps")
        elif event == "step":
            per_step = f["elapsed"] / f["step"]
            eta = per_step * (self.max_steps - f["step"])
            _stderr(f"[{self.label}] step {f['step']}/{self.max_steps}  loss {f['loss']:.4f}  "
                    f"{1 / per_step:.2f} steps/s  ETA ≤ {eta:.0f} s")
        elif event == "eval":
            quality = "  ".join(f"{k} {v:.4f}" for k, v in f.items() if k != "step")
            _stderr(f"[{self.label}] eval at step {f['step']}: {quality}")
        elif event == "ceiling":
            _stderr(f"measuring the {f['precision']} matmul ceiling of this device")
        elif event == "warnings":
            for warning in f["warnings"]:
                _stderr(f"[{self.label}] warning: {warning}")
        elif event == "skip":
            _stderr(f"[{f['workload']}] skipped: {f['reason']}")
        elif event == "killed":
            why = "injected failure" if f["cause"].startswith("injected") else f["cause"]
            _stderr(f"[{f['workload']} seed {f['seed']}] killed (SIGKILL) at step {f['step']}: "
                    f"{why}; restarting the worker")
        elif event == "resumed":
            _stderr(f"[{f['workload']} seed {f['seed']}] " + (
                f"resumed from the checkpoint of step {f['step']}" if f["step"]
                else "restarted from step 0: no checkpoint to resume from"))
        elif event == "finished":
            _stderr(f"[{f['workload']} seed {f['seed']}] finished before the restart "
                    f"({f['status']}): its record is kept")


def cmd_run(args) -> int:
    from suite.system import resolve_device
    from workloads import registry
    from workloads.pinned import SEEDS

    if args.seeds is not None and not 1 <= args.seeds <= len(SEEDS):
        raise _Usage(f"--seeds must be between 1 and {len(SEEDS)}")
    unknown = [w for w in args.workload or [] if w not in registry.WORKLOADS]
    if unknown:
        raise _Usage(f"unknown workload {', '.join(unknown)}; known: {', '.join(registry.WORKLOADS)}")
    device = resolve_device(args.device)
    scale = args.scale or ("full" if device.type == "cuda" else "smoke")
    if args.nproc_per_node and not launch.in_torchrun():
        return _launch(args, scale)
    from suite import distributed

    parallel = distributed.from_env(device.type, args.parallel, args.micro_batch)
    _check_parallel(args, parallel, scale)
    from suite.runner import stop_on_sigterm

    # SIGTERM (Slurm, timeout, docker stop; torchrun after a peer failed) stops the run like
    # Ctrl-C: the runs so far are written, the running one as partial
    stop_on_sigterm()
    device = distributed.init(parallel, device)
    try:
        status = _run(args, device, scale, parallel)
    except BaseException:
        distributed.shutdown(wait=False)
        raise
    distributed.shutdown(wait=status == 0)  # after a failure the peers may be gone
    return status


def _run(args, device, scale: str, parallel) -> int:
    """One process's run: a single process, or one rank of a torchrun run (rank 0 reports)."""
    from dataclasses import replace

    from suite.runner import RunOptions
    from suite.session import SuitePlan
    from suite.system import load_overrides
    from workloads import registry

    plan = SuitePlan(workload_ids=args.workload or list(registry.WORKLOADS), scale=scale,
                     seeds=args.seeds, explicit=bool(args.workload), system_name=args.system_name,
                     system_overrides=load_overrides(args.system_overrides),
                     command=["goodbench", *sys.argv[1:]], global_batch=args.global_batch)
    options = RunOptions(
        device=device, data_dir=args.data_dir, peak_tflops=args.peak_tflops,
        checkpoint_every=args.checkpoint_every,
        inject_failures=tuple(args.inject_failure or ()),
        failure_rate_per_hour=args.failure_rate, failure_seed=args.failure_seed,
        parallel=parallel, compile=args.compile)

    out, checkpoint_dir, reservation = _paths(args, scale, parallel, lambda: _preflight(plan, options))
    try:
        return _train(args, plan, replace(options, checkpoint_dir=checkpoint_dir), out, reservation)
    finally:
        if reservation is not None:
            reservation.release()  # the run wrote nothing: the name is free again


def _preflight(plan, options) -> None:
    """Fail before training when the results file would be refused for what the user gave
    (``--system-name``, ``--system-overrides``, the command line): the validator's walk and
    schema on the system and settings sections, which the run does not change."""
    from suite.session import preflight

    problems = preflight(plan, options)
    if problems:
        more = f" (and {_count(len(problems) - 1, 'more problem')})" if len(problems) > 1 else ""
        raise GoodbenchError(f"the results file would be refused, not training: "
                             f"{problems[0].field}: {problems[0].reason} [{problems[0].code}]{more}; "
                             "fix --system-name / --system-overrides")


def _train(args, plan, options, out: Path, reservation: Reservation | None) -> int:
    """Train the plan; rank 0 writes the results file into its reservation and reports."""
    from suite import report
    from suite.session import run_suite

    parallel, checkpoint_dir = options.parallel, options.checkpoint_dir
    if parallel.is_main:
        _stderr(f"goodbench {__version__}: {', '.join(plan.workload_ids)} at {plan.scale} scale on "
                f"{options.device}" + (f", rank 0 of {parallel.world_size} ({parallel.backend}, "
                                       f"{parallel.mode})" if parallel.distributed else ""))
    doc = run_suite(plan, options, ProgressPrinter() if parallel.is_main else lambda *a, **k: None)
    if not parallel.is_main:
        return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1
    if doc["settings"]["aborted"] and launch.restarts_left():
        _stderr(f"stopped: {doc['settings']['aborted']}; torchrun restarts the workers, and the "
                "restarted run writes the results file")
        return 1
    if not doc["runs"]:
        _stderr(f"stopped before any run was recorded ({doc['settings']['aborted'] or 'interrupted'}); "
                "no results file written")
        return _interrupted_status() if doc["settings"]["interrupted"] else 1
    assert reservation is not None  # rank 0 holds one
    reservation.write(doc)
    print(report.run_summary(doc["runs"]))
    for r in doc["runs"]:
        if r["error"]:
            _stderr(f"{r['workload']['id']} seed {r['seed']}: {r['status']}: {r['error']}")
    for line in report.score_lines(doc["summary"]):
        print(line)
    for skipped in doc["settings"]["skipped"]:
        print(f"skipped {skipped['workload']}: {skipped['reason']}")
    print(f"results written to {out}")
    _checkpoints_after(args, checkpoint_dir, out, doc)
    if doc["settings"]["interrupted"]:
        _stderr("interrupted: the results file holds the runs so far")
        return _interrupted_status()
    if doc["settings"]["aborted"]:
        _stderr(f"stopped: {doc['settings']['aborted']}; the results file holds the runs so far")
        return 1
    return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1


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
        _stderr(f"checkpoints kept in {checkpoint_dir} (a --resume directory is not removed)")
    elif not done:
        _stderr(f"checkpoints kept in {checkpoint_dir}: not every run completed; "
                f"`goodbench run … --resume {checkpoint_dir} -o NEW.json` continues the runs "
                "not finished (finished ones are kept, not trained again)")
    elif Path(checkpoint_dir) == out.with_suffix(".ckpt"):
        import shutil

        try:
            shutil.rmtree(checkpoint_dir)
            _stderr(f"checkpoints removed ({checkpoint_dir}): every run completed, and "
                    f"{out} holds their event logs")
        except OSError as exc:
            _stderr(f"checkpoints kept in {checkpoint_dir}: removing them failed ({_error_text(exc)})")


def _interrupted_status() -> int:
    """The shell's status of a run stopped by a signal: 143 after SIGTERM, 130 after SIGINT."""
    from suite.runner import sigterm_received

    return 143 if sigterm_received() else 130


def _paths(args, scale: str, parallel, preflight=None) -> tuple[Path, str | None, Reservation | None]:
    """The results file and checkpoint root, chosen by rank 0 and agreed by every rank, and
    rank 0's reservation of the results file's name (:class:`suite.results.Reservation`; None
    on the other ranks). ``preflight`` (rank 0, first) raises what would fail the file. After
    torchrun restarted the workers, the run resumes from the results file's ``.ckpt``
    directory (``out.json`` → ``out.ckpt``)."""
    from suite import checkpoint, distributed

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
    """Reserve the results file's name before training (:class:`suite.results.Reservation`):
    a name taken by a file or by another run fails at once with ``-o``; a default name taken
    (another run started in the same second) falls back to the next free one, and says so.
    Returns (path, reservation)."""
    from suite import results

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
            _stderr(f"{first} is taken (another run started in the same second): writing {out}")
        return out, reservation
    raise GoodbenchError(f"{first} and 99 names after it are taken; give -o FILE")


def _output_path(args, scale: str) -> Path:
    return Path(args.output) if args.output else Path("runs") / (
        dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{scale}.json")


def _launch(args, scale: str) -> int:
    """Re-launch this command under torchrun (suite.launch), after the checks the workers
    would fail on. On one node the launcher reserves the results file's name and hands it to
    the workers' rank 0 (which takes the unlocked, empty reservation over); the name is
    freed again when the workers wrote nothing."""
    from workloads.placement import Parallel

    # the workers would refuse these: say so before torchrun starts them
    _check_parallel(args, Parallel(world_size=args.nproc_per_node * (args.nnodes or 1),
                                   mode=args.parallel, micro_batch=args.micro_batch), scale)
    if args.inject_failure:
        from suite.session import default_seeds
        from workloads import registry

        runs = sum(args.seeds or default_seeds(scale, registry.get(w).kind)
                   for w in args.workload or list(registry.WORKLOADS))
        kills = len(set(args.inject_failure)) * runs
        if args.max_restarts < kills:
            raise _Usage(f"--inject-failure kills a rank {_count(kills, 'time')} ({_count(runs, 'run')}); "
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
        raise _Usage(str(exc)) from None
    finally:
        if reservation is not None:
            reservation.release()


def _check_parallel(args, parallel, scale: str) -> None:
    """Usage errors of a distributed run, found before any process group is joined."""
    from workloads import registry

    if args.parallel == "fsdp":
        bad = [w for w in args.workload or list(registry.WORKLOADS) if not registry.get(w).supports_fsdp]
        if bad:
            able = [w.id for w in registry.WORKLOADS.values() if w.supports_fsdp]
            raise _Usage(f"--parallel fsdp is for {', '.join(able)}, not {', '.join(bad)}")
    if parallel.distributed and args.failure_rate:
        raise _Usage("--failure-rate supervises one process; under torchrun use --inject-failure "
                     "STEP (the last rank is killed there) with --max-restarts")
    if args.micro_batch and args.compile in CUDA_GRAPH_MODES:
        raise _Usage(f"--compile {args.compile} records CUDA graphs, and with --micro-batch a graph "
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
            raise _Usage(f"{wid}: {exc}") from None


# ---------------------------------------------------------------- validate / submit / site / info
def cmd_validate(args) -> int:
    from suite.validate import validate_files

    failed = False
    for name, problems in zip(args.files, validate_files(args.files)):
        for problem in problems:
            print(problem.line(name))
        if not problems:
            print(f"{name}: ok")
        failed |= bool(problems)
    return 1 if failed else 0


def cmd_submit(args) -> int:
    from suite.store import Refused, submit

    results_dir = Path(args.results_dir)
    if results_dir.exists() and not results_dir.is_dir():
        raise _Usage(f"--results-dir {args.results_dir} is a file, not a directory")
    try:
        dest = submit(args.file, args.results_dir)
    except Refused as exc:
        for problem in exc.problems:
            print(f"refused: {problem.line(args.file)}")
        return 1
    print(f"stored {args.file} as {dest}")
    return 0


def cmd_site(args) -> int:
    from suite.site.builder import build_site

    built = build_site(args.results_dir, args.out)
    print(built.index)
    if built.invalid:
        name, reason = built.invalid[0]
        _stderr(f"{_count(len(built.invalid), 'file')} in {args.results_dir} not shown (invalid; "
                f"listed on the index page under \"Files not shown\"), the first: {reason}")
    return 0


def cmd_import(args) -> int:
    """``goodbench import mlperf PATH ...``: MLPerf Training results → results/mlperf/."""
    from suite.mlperf.commands import import_command

    return import_command(args.paths, args.results_dir, args.round, args.jobs, args.json)


def cmd_export(args) -> int:
    """``goodbench export mlperf FILE -o DIR``: a results file → an MLCommons submission tree."""
    from suite.mlperf.commands import export_command

    return export_command(args.file, args.output, args.org, args.check)


def cmd_info(args) -> int:
    from suite.system import describe, load_overrides, resolve_device

    info = describe(resolve_device(args.device), args.system_name,
                    load_overrides(args.system_overrides))
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        for section, values in info.items():
            if isinstance(values, dict):
                for key, value in values.items():
                    print(f"{section}.{key}: {_shown(value)}")
            else:
                print(f"{section}: {_shown(values)}")
    return 0


def _shown(value) -> str:
    """A system-description value as ``info`` prints it: unknown/none as "—", booleans as
    yes/no, lists and objects as compact JSON."""
    if value is None or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def cmd_check(args) -> int:
    from suite.check import fit, run_checks
    from suite.system import resolve_device

    cpu_run = args.device == "cpu"
    checks = run_checks(resolve_device(args.device), cpu_run=cpu_run)
    for c in checks:
        print(f"{c.verdict:<5} {c.name:<17} {c.detail}")
    verdict = fit(checks)
    what = "fit for a CPU run" if cpu_run else "fit to benchmark"
    print(what if verdict else f"not {what}: fix the failed checks")
    return 0 if verdict else 1


def cmd_peaks(args) -> int:
    """The peak table MFU and the validator use, or the entry one device name resolves to."""
    from suite import report
    from suite.meters import mfu

    if args.name is None:
        print(report.peak_table(mfu.PEAKS))
        print("dense: without 2:4 sparsity (datasheets' sparse figures halved); fp32: the rate "
              "without tensor cores; TDP: the board power, the validator's bound on mean power "
              "(+10%). A MIG slice gets no peak.")
        return 0
    entry = mfu.find_peak(args.name)
    if entry is None:
        slice_ = " (a MIG slice: a fraction of the GPU's SMs)" if mfu.is_mig(args.name) else ""
        print(f"{args.name}: no peak known — pass --peak-tflops{slice_}")
        return 0
    print(f"{args.name}: {entry.name}")
    print(report.peak_table([entry]))
    return 0


def cmd_reproduce(args) -> int:
    """Train a file's runs again here and compare (suite/reproduce.py); 0 when every run reproduced."""
    from suite import reproduce

    try:
        return reproduce.command(args, ProgressPrinter())
    except reproduce.Usage as exc:
        raise _Usage(str(exc)) from None


def cmd_project(args) -> int:
    from suite import projection, report, results
    from suite.validate import load

    doc, problems = load(args.file)
    if problems:
        raise GoodbenchError(f"cannot read {problems[0].line(args.file)}")
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        raise GoodbenchError(f"{args.file}: no runs to project from")
    if not 0 <= args.run < len(runs):
        allowed = "must be 0" if len(runs) == 1 else f"must be between 0 and {len(runs) - 1}"
        raise _Usage(f"{args.file} has {_count(len(runs), 'run')}; --run {allowed}")
    try:
        measured = projection.measured_from_run(runs[args.run], args.restart_seconds)
    except projection.CannotProject as exc:
        raise GoodbenchError(f"{args.file}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GoodbenchError(f"{args.file}: run {args.run} lacks what a projection needs ({exc!r})") from None
    counts = tuple(sorted(set(projection.GPU_COUNTS) | ({args.gpus} if args.gpus else set())))
    rows = projection.table(measured, args.mtbf_hours, counts, args.checkpoint_every)
    print(report.projection(measured, args.mtbf_hours, rows))
    out = Path(args.output) if args.output else Path(args.file).with_suffix(".projection.json")
    results.write_atomic(out, json.dumps({"source": args.file, "mtbf_hours": args.mtbf_hours,
                                          "measured": measured.__dict__, "points": rows},
                                         indent=1, allow_nan=False))
    print(f"projection written to {out}")
    return 0


# ---------------------------------------------------------------- compare
def cmd_compare(args) -> int:
    """NEW files against BASE (suite/compare.py); exit 1 when the regression gate fails."""
    import os

    from suite import compare, compare_report

    try:
        gate = compare.Gate.parse(args.fail_on_regression or [])
    except ValueError as exc:
        raise _Usage(f"--fail-on-regression {exc}") from None
    base_doc, *new_docs = (_valid_document(f) for f in [args.base, *args.new])
    columns = [compare.compare_documents(base_doc, doc, name) for name, doc in zip(args.new, new_docs)]
    if not any(col.pairs for col in columns):
        raise GoodbenchError(f"{args.base} shares no workload with {', '.join(args.new)}: nothing to compare")
    regressions = gate.apply(columns) if gate.thresholds else []
    unchecked = gate.unchecked(columns) if gate.thresholds else []
    parts = (args.base, base_doc, columns, gate, regressions, unchecked)
    if args.format == "json":
        print(compare_report.as_json(*parts))
    elif args.format == "markdown":
        print(compare_report.markdown(*parts))
    else:
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        print(compare_report.text(*parts, colour=colour))
    return 1 if regressions else 0


def _valid_document(path: str) -> dict:
    """A results file that passes validation, or GoodbenchError naming its first problem."""
    from suite import results
    from suite.validate import check_document

    try:
        doc = results.load(path)
    except results.Unreadable as exc:
        raise GoodbenchError(str(exc)) from None
    problems = check_document(doc)
    if problems:
        more = f" (and {_count(len(problems) - 1, 'more problem')}: goodbench validate {path})" \
            if len(problems) > 1 else ""
        raise GoodbenchError(f"not a valid results file: {problems[0].line(path)}{more}")
    return doc  # type: ignore[return-value]


# ---------------------------------------------------------------- parser
def _number_type(kind, *, allow_zero: bool = False):
    """An argparse type: a finite number of ``kind`` above 0 (or at least 0)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"{text!r} must be {'0 or more' if allow_zero else 'above 0'}")
        return value
    return parse


POSITIVE_INT, POSITIVE_FLOAT = _number_type(int), _number_type(float)
NON_NEGATIVE_FLOAT = _number_type(float, allow_zero=True)


def _plain_number(value) -> str:
    """1000000 → "1,000,000", 0.001 → "0.001"."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _range_type(kind, low, high=None):
    """An argparse type: a number of ``kind`` from ``low`` to ``high`` (both included; no upper
    bound when ``high`` is None)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if not (math.isfinite(value) and low <= value and (high is None or value <= high)):
            span = f"{_plain_number(low)} or more" if high is None \
                else f"from {_plain_number(low)} to {_plain_number(high)}"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: {span}")
        return value
    return parse


# goodbench project's inputs: beyond these the model says nothing useful (and floats overflow)
PROJECT_GPUS = _range_type(int, 1, 1_000_000)
PROJECT_MTBF_HOURS = _range_type(float, 1e-3, 1e9)
PROJECT_RESTART_S = _range_type(float, 0, 1e7)
PROJECT_CHECKPOINT_STEPS = _range_type(int, 1, 1_000_000_000)


class _Usage(Exception):
    """A usage error found after parsing (exit 2)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="goodbench", description=
                                     "A standardized GPU training benchmark suite with a leaderboard.")
    parser.add_argument("--version", action="version", version=f"goodbench {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="list the workloads and whether their data is here")
    p.add_argument("--data-dir", help="directory holding dataset files")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="run workloads and write one results file")
    p.add_argument("-w", "--workload", action="append", metavar="ID",
                   help="workload to run (repeatable; default: the whole suite)")
    p.add_argument("--scale", choices=["smoke", "full"],
                   help="pinned variant (default: full on a GPU, smoke on the CPU)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--seeds", type=int, help="seeds per workload (default: 5 for TTA at full scale, else 1)")
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
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", help="check results files against the schema and rules")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("submit", help="validate a results file and add it to the results directory")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--results-dir", default="results")
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("site", help="render the static leaderboard")
    p.add_argument("--results-dir", default="results")
    p.add_argument("--out", default="site/_build")
    p.set_defaults(func=cmd_site)

    p = sub.add_parser("check", help="check whether this machine is fit to benchmark now")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="cpu: check for a CPU run (the GPU checks are skipped); auto: a GPU "
                        "is expected (default)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("peaks", help="the peak table MFU uses, or the entry a device name resolves to")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help='a device name as torch or NVML reports it ("NVIDIA H100 80GB HBM3")')
    p.set_defaults(func=cmd_peaks)

    p = sub.add_parser("project", help="project a run's goodput to N GPUs with failures")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--gpus", type=PROJECT_GPUS, help="a GPU count to add to the table (1 … 1,000,000)")
    p.add_argument("--mtbf-hours", type=PROJECT_MTBF_HOURS, required=True,
                   help="mean time between failures of one GPU, in hours (0.001 … 1e9)")
    p.add_argument("--restart-seconds", type=PROJECT_RESTART_S,
                   help="restart cost in seconds, 0 … 1e7 (default: measured in FILE)")
    p.add_argument("--checkpoint-every", type=PROJECT_CHECKPOINT_STEPS, metavar="STEPS",
                   help="checkpoint interval in steps, 1 … 1e9 (default: Young/Daly optimum)")
    p.add_argument("--run", type=_range_type(int, 0), default=0, metavar="INDEX",
                   help="which run of FILE, from 0 (default 0)")
    p.add_argument("-o", "--output", help="JSON output (default: FILE with .projection.json)")
    p.set_defaults(func=cmd_project)

    p = sub.add_parser("reproduce", help="train a results file's runs again here and say whether they reproduce",
                       description="Re-run the recorded runs of FILE on this machine with the settings they "
                       "recorded, compare curve, throughput and time to target, and write a results file "
                       "naming FILE by sha256 (docs/rules.md, \"Reproducing a result\"). Exit 0 when every "
                       "run reproduced, 1 otherwise.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--run", type=_range_type(int, 0), action="append", metavar="N",
                   help="reproduce run N of FILE, from 0 (repeatable; default: every run)")
    p.add_argument("--tolerance", type=POSITIVE_FLOAT, default=20.0, metavar="PCT",
                   help="throughput tolerance: the re-run's samples/s within PCT%% of the recorded "
                        "(default 20; a run outside it is measured once more before it is called a difference)")
    p.add_argument("--data-dir", help="directory holding dataset files (looked in first)")
    p.add_argument("--system-name", help="name of this system on the leaderboard")
    p.add_argument("--system-overrides", metavar="FILE",
                   help="JSON object correcting fields of the system description")
    p.add_argument("-o", "--output", help="results file of the reproduction (default: runs/<UTC time>-reproduction.json)")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("compare", help="compare results files: ratios, 95%% intervals, verdicts",
                       description="Compare each NEW file with BASE: for every workload and scale in "
                       "both, each headline figure's ratio NEW/BASE with a 95%% interval and a verdict "
                       "(faster, slower, no significant change). docs/compare.md has the statistics.")
    p.add_argument("base", metavar="BASE", help="the results file to compare against")
    p.add_argument("new", nargs="+", metavar="NEW", help="results files to compare (one column each)")
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text",
                   help="text table (default; colour on a terminal), markdown for a pull-request "
                        "comment, JSON for tools")
    p.add_argument("--fail-on-regression", action="append", metavar="[FIGURE=]PCT",
                   help="exit 1 when a figure is significantly worse (the whole interval on the worse "
                        "side of 1) and its ratio is worse by more than PCT%%; a bare PCT applies to "
                        "samples_per_s and tta, FIGURE=PCT to one figure (repeatable; figures: "
                        "samples_per_s, tokens_per_s, step_time_p50, step_time_p99, mfu, tta, "
                        "energy_per_sample, goodput)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("import", help="import MLPerf Training results (derived documents under results/mlperf/)")
    p.add_argument("source", choices=["mlperf"], help="what to import: mlperf (MLCommons training results)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a submission tree (<org>/results/<system>/<benchmark>/result_N.txt) or a round's checkout")
    p.add_argument("--results-dir", default="results", help="documents go to DIR/mlperf/ (default: results)")
    p.add_argument("--round", help="the MLPerf round (v5.1) when no folder above the tree names it")
    p.add_argument("--jobs", type=POSITIVE_INT, help="processes reading logs (default: the usable cores)")
    p.add_argument("--json", action="store_true", help="print one JSON object per system × benchmark")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="export a results file as an MLCommons submission tree")
    p.add_argument("target", choices=["mlperf"], help="what to export to: mlperf (MLCommons training)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write the tree into")
    p.add_argument("--org", help="the submitting organization (default: the system description's, else its name)")
    p.add_argument("--check", action="store_true",
                   help="run MLCommons' compliance checker on every exported log (needs mlperf-logging)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("info", help="print the system description a run would record")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--system-name")
    p.add_argument("--system-overrides", metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)
    for command_parser in sub.choices.values():  # errors found after parsing use its usage line
        command_parser.set_defaults(command_parser=command_parser)
    return parser


def _error_text(exc: Exception) -> str:
    """One line for an expected failure: an OSError as "FILE: reason", not "[Errno N] …"."""
    if isinstance(exc, OSError) and exc.strerror:
        files = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        return f"{files}: {exc.strerror}" if files else exc.strerror
    return str(exc)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.func(args)
    except _Usage as exc:
        usage: argparse.ArgumentParser = getattr(args, "command_parser", parser)
        usage.error(str(exc))  # exits with status 2
    except BrokenPipeError:  # output piped into a reader that closed early (e.g. head)
        return 0
    except (GoodbenchError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        _stderr(f"goodbench: error: {_error_text(exc)}")
        return 1
    except KeyboardInterrupt:
        runner = sys.modules.get("suite.runner")  # loaded where SIGTERM is turned into this
        terminated = runner is not None and runner.sigterm_received()
        _stderr("goodbench: stopped by SIGTERM" if terminated else "goodbench: interrupted")
        return 143 if terminated else 130
