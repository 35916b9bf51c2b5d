"""The ``goodbench`` command line: one small function per subcommand, no logic of its own.

Exit status: 0 ok, 1 input or rules failed, 2 usage error. Expected failures print one line
and no traceback; ``--debug`` shows the traceback.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
import tempfile
import traceback
from pathlib import Path

from suite import __version__, distributed
from suite.errors import GoodbenchError

FSDP_WORKLOADS = ("gpt2-124m", "llama-1b")  # models with transformer blocks to shard


def _stderr(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- list
def cmd_list(args) -> int:
    from workloads import data, registry

    print(f"{'id':<12} {'ver':>3}  {'kind':<10} {'full-scale target':<22} {'data':<34} present")
    for w in registry.WORKLOADS.values():
        target = w.spec("full").target
        files = _data_summary([f.name for f in w.data_files])
        present = all(data.is_present(f, args.data_dir) for f in w.data_files)
        print(f"{w.id:<12} {w.version:>3}  {w.kind:<10} {target.describe() if target else '—':<22} "
              f"{files:<34} {'yes' if present else 'no'}")
        print(f"{'':<12}      {w.task}")
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
        elif event == "finished":
            _stderr(f"[{f['workload']} seed {f['seed']}] finished before the restart "
                    f"({f['status']}): its record is kept")


def cmd_run(args) -> int:
    from suite.runner import SEEDS
    from suite.system import resolve_device
    from workloads import registry

    if args.seeds is not None and not 1 <= args.seeds <= len(SEEDS):
        raise _Usage(f"--seeds must be between 1 and {len(SEEDS)}")
    unknown = [w for w in args.workload or [] if w not in registry.WORKLOADS]
    if unknown:
        raise _Usage(f"unknown workload {', '.join(unknown)}; known: {', '.join(registry.WORKLOADS)}")
    device = resolve_device(args.device)
    scale = args.scale or ("full" if device.type == "cuda" else "smoke")
    if args.nproc_per_node and not distributed.in_torchrun():
        return _launch(args, scale)
    parallel = distributed.from_env(device.type, args.parallel, args.micro_batch)
    _check_parallel(args, parallel, scale)
    if distributed.in_torchrun():
        from suite.runner import stop_on_sigterm

        stop_on_sigterm()  # torchrun's SIGTERM after a peer failed: rank 0 still writes
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
    import pandas as pd

    from suite import results
    from suite.runner import RunOptions
    from suite.session import SuitePlan, run_suite
    from suite.system import load_overrides
    from workloads import registry

    plan = SuitePlan(workload_ids=args.workload or list(registry.WORKLOADS), scale=scale,
                     seeds=args.seeds, explicit=bool(args.workload), system_name=args.system_name,
                     system_overrides=load_overrides(args.system_overrides),
                     command=["goodbench", *sys.argv[1:]], global_batch=args.global_batch)
    out, checkpoint_dir = _paths(args, scale, parallel)
    if parallel.is_main:
        _stderr(f"goodbench {__version__}: {', '.join(plan.workload_ids)} at {scale} scale on "
                f"{device}" + (f", rank 0 of {parallel.world_size} ({parallel.backend}, "
                               f"{parallel.mode})" if parallel.distributed else ""))
    from suite import goodput

    options = RunOptions(
        device=device, data_dir=args.data_dir, peak_tflops=args.peak_tflops,
        checkpoint_every=args.checkpoint_every, checkpoint_dir=checkpoint_dir,
        inject_failures=tuple(args.inject_failure or ()),
        failure_rate_per_hour=args.failure_rate, failure_seed=args.failure_seed,
        parallel=parallel, compile=args.compile)
    doc = run_suite(plan, options, ProgressPrinter() if parallel.is_main else lambda *a, **k: None)
    if not parallel.is_main:
        return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1
    if doc["settings"]["aborted"] and distributed.restarts_left():
        _stderr(f"stopped: {doc['settings']['aborted']}; torchrun restarts the workers, and the "
                "restarted run writes the results file")
        return 1
    if not doc["runs"]:
        _stderr(f"stopped before any run was recorded ({doc['settings']['aborted'] or 'interrupted'}); "
                "no results file written")
        return 130 if doc["settings"]["interrupted"] else 1
    results.write_atomic(out, results.dumps(doc), overwrite=False)
    rows = [{
        "workload": r["workload"]["id"], "seed": r["seed"], "status": r["status"],
        "steps": r["steps"], "wall s": round(r["wall_s"], 2),
        "TTA s": _round(r["metrics"]["tta_s"]),
        "samples/s": _round((r["metrics"]["throughput"] or {}).get("samples_per_s")),
        "p50 step ms": _round(1000 * r["metrics"]["throughput"]["step_time_s"]["p50"])
        if r["metrics"]["throughput"] else None,
        "MFU": _round(r["metrics"]["mfu"], 3),
        "of ceiling": _round(r["metrics"].get("share_of_ceiling"), 3),
        "energy": "n/m" if r["metrics"]["energy_to_train_j"] is None
        else f"{r['metrics']['energy_to_train_j']:.0f} J",
    } for r in doc["runs"]]
    print(pd.DataFrame(rows).fillna("—").to_string(index=False))
    if goodput.summary_rows(doc["runs"]):
        print("goodput and badput (seconds):")
        print(pd.DataFrame(goodput.summary_rows(doc["runs"])).fillna("—").to_string(index=False))
    for r in doc["runs"]:
        if r["error"]:
            _stderr(f"{r['workload']['id']} seed {r['seed']}: {r['status']}: {r['error']}")
    for key, entry in doc["summary"].items():
        score = entry["tta"]
        if score and score["seeds"] > 1:
            ci = score["ci95_s"]
            print(f"{key}: time to target, olympic mean {_round(score['olympic_mean_s'])} s"
                  + (f" (95% CI {ci[0]:.2f}–{ci[1]:.2f})" if ci else "")
                  + f" over {score['seeds']} seeds, {score['converged']} converged"
                  + ("" if score["valid"] else f" — INVALID: {score['reason']}"))
    for skipped in doc["settings"]["skipped"]:
        print(f"skipped {skipped['workload']}: {skipped['reason']}")
    print(f"results written to {out}")
    if doc["settings"]["interrupted"]:
        _stderr("interrupted: the results file holds the runs so far")
        return 130
    if doc["settings"]["aborted"]:
        _stderr(f"stopped: {doc['settings']['aborted']}; the results file holds the runs so far")
        return 1
    return 0 if all(r["status"] == "complete" for r in doc["runs"]) else 1


def _paths(args, scale: str, parallel) -> tuple[Path, str | None]:
    """The results file and checkpoint root, chosen by rank 0 and agreed by every rank. After
    torchrun restarted the workers, the run resumes from ``<results file>.ckpt``."""
    from suite import checkpoint

    answer: tuple = (None, None, None)
    if parallel.is_main:
        try:
            out = _output_path(args, scale)
            if out.exists():
                raise GoodbenchError(f"{out} exists; goodbench never overwrites a results file")
            _check_writable(out)
            resume = args.resume
            if resume is None and distributed.restart_count() > 0 \
                    and out.with_suffix(".ckpt").is_dir():
                resume = str(out.with_suffix(".ckpt"))
            wanted = bool(args.checkpoint_every or args.inject_failure or args.failure_rate)
            answer = (str(out), checkpoint.choose_root(out, resume, wanted), None)
        except GoodbenchError as exc:
            answer = (None, None, str(exc))
    out, root, error = distributed.broadcast(answer, parallel)
    if error:
        raise GoodbenchError(error)
    return Path(out), root


def _check_writable(out: Path) -> None:
    """Fail before training, not after, when the results file cannot be written."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise GoodbenchError(f"cannot write the results file {out}: {exc.strerror or exc}") from None


def _output_path(args, scale: str) -> Path:
    return Path(args.output) if args.output else Path("runs") / (
        dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{scale}.json")


def _launch(args, scale: str) -> int:
    """Re-launch this command under torchrun with the same arguments and one output path."""
    import subprocess

    from workloads.parallel import Parallel

    out = _output_path(args, scale)
    if out.exists():
        raise GoodbenchError(f"{out} exists; goodbench never overwrites a results file")
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
            raise _Usage(f"--inject-failure kills a rank {kills} time(s) ({runs} run(s)); "
                         f"torchrun must restart that often: --max-restarts {kills}")
    try:
        cmd = distributed.torchrun_command(
            distributed.worker_argv(args.argv, str(out)), args.nproc_per_node, args.nnodes,
            args.node_rank, args.rdzv_endpoint, max_restarts=args.max_restarts)
    except ValueError as exc:
        raise _Usage(str(exc)) from None
    _stderr("launching: " + " ".join(cmd))
    proc = subprocess.Popen(cmd, env=distributed.launch_env(os.environ))
    interrupted = False
    while True:  # Ctrl-C reaches the workers too: wait until rank 0 has written what it has
        try:
            status = proc.wait()
            return 130 if interrupted else status
        except KeyboardInterrupt:
            interrupted = True
            _stderr("interrupted: waiting for the workers to stop and write the runs so far")


def _check_parallel(args, parallel, scale: str) -> None:
    """Usage errors of a distributed run, found before any process group is joined."""
    from workloads import registry

    if args.parallel == "fsdp":
        bad = [w for w in args.workload or list(registry.WORKLOADS) if w not in FSDP_WORKLOADS]
        if bad:
            raise _Usage(f"--parallel fsdp is for {', '.join(FSDP_WORKLOADS)}, not {', '.join(bad)}")
    if parallel.distributed and args.failure_rate:
        raise _Usage("--failure-rate supervises one process; under torchrun use --inject-failure "
                     "STEP (the last rank is killed there) with --max-restarts")
    for wid in args.workload or list(registry.WORKLOADS):
        workload = registry.get(wid)
        if args.global_batch:
            workload = workload.with_spec_changes(scale, batch_size=args.global_batch)
        try:
            parallel.micro_batches(workload.samples_per_step(workload.spec(scale)))
            parallel.rows(workload.samples_per_step(workload.spec(scale)))
        except ValueError as exc:
            raise _Usage(f"{wid}: {exc}") from None


def _round(value, digits: int = 2):
    return None if value is None else round(value, digits)


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

    try:
        dest = submit(args.file, args.results_dir)
    except Refused as exc:
        for problem in exc.problems:
            print(f"refused: {problem.line(args.file)}")
        return 1
    print(f"stored {args.file} as {dest}")
    return 0


def cmd_site(args) -> int:
    from suite.site import build

    print(build(args.results_dir, args.out))
    return 0


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
                    print(f"{section}.{key}: {value}")
            else:
                print(f"{section}: {values}")
    return 0


def cmd_check(args) -> int:
    from suite.check import fit, run_checks
    from suite.system import resolve_device

    checks = run_checks(resolve_device(args.device))
    for c in checks:
        print(f"{c.verdict:<5} {c.name:<17} {c.detail}")
    verdict = fit(checks)
    print("fit to benchmark" if verdict else "not fit to benchmark: fix the failed checks")
    return 0 if verdict else 1


def cmd_project(args) -> int:
    import pandas as pd

    from suite import projection, results

    from suite.validate import load

    doc, problems = load(args.file)
    if problems:
        raise GoodbenchError(f"cannot read {problems[0].line(args.file)}")
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        raise GoodbenchError(f"{args.file}: no runs to project from")
    if not 0 <= args.run < len(runs):
        raise _Usage(f"--run must be between 0 and {len(runs) - 1}")
    try:
        measured = projection.measured_from_run(runs[args.run], args.restart_seconds)
    except projection.CannotProject as exc:
        raise GoodbenchError(f"{args.file}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GoodbenchError(f"{args.file}: run {args.run} lacks what a projection needs ({exc!r})") from None
    counts = tuple(sorted(set(projection.GPU_COUNTS) | ({args.gpus} if args.gpus else set())))
    rows = projection.table(measured, args.mtbf_hours, counts, args.checkpoint_every)
    print(f"step {measured.step_s:.4g} s, checkpoint {measured.checkpoint_s:.4g} s, restart "
          f"{measured.restart_s:.4g} s ({measured.restart_source}), steady efficiency "
          f"{measured.steady_efficiency:.4f}; per-GPU MTBF {args.mtbf_hours:g} h")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    out = Path(args.output) if args.output else Path(args.file).with_suffix(".projection.json")
    results.write_atomic(out, json.dumps({"source": args.file, "mtbf_hours": args.mtbf_hours,
                                          "measured": measured.__dict__, "points": rows},
                                         indent=1, allow_nan=False))
    print(f"projection written to {out}")
    return 0


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
                   help="save a checkpoint every N steps (into <results file>.ckpt/)")
    p.add_argument("--resume", metavar="DIR", help="resume the runs checkpointed in DIR")
    p.add_argument("--inject-failure", type=POSITIVE_INT, action="append", metavar="STEP",
                   help="SIGKILL the training worker (under torchrun: the last rank) at STEP and "
                        "restart it (repeatable)")
    p.add_argument("--failure-rate", type=POSITIVE_FLOAT, metavar="PER_HOUR",
                   help="SIGKILL the worker at random times, this many per hour on average")
    p.add_argument("--failure-seed", type=int, default=0, help="seed of --failure-rate's times")
    p.add_argument("--compile", default="off",  # the modes of workloads.base.COMPILE_MODES
                   choices=["off", "default", "reduce-overhead", "max-autotune",
                            "max-autotune-no-cudagraphs"],
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
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("project", help="project a run's goodput to N GPUs with failures")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--gpus", type=POSITIVE_INT, help="a GPU count to add to the table (1 … 100k)")
    p.add_argument("--mtbf-hours", type=POSITIVE_FLOAT, required=True, help="mean time between failures of one GPU")
    p.add_argument("--restart-seconds", type=NON_NEGATIVE_FLOAT, help="restart cost (default: measured in FILE)")
    p.add_argument("--checkpoint-every", type=POSITIVE_INT, metavar="STEPS",
                   help="checkpoint interval in steps (default: Young/Daly optimum)")
    p.add_argument("--run", type=int, default=0, metavar="INDEX", help="which run of FILE (default 0)")
    p.add_argument("-o", "--output", help="JSON output (default: FILE with .projection.json)")
    p.set_defaults(func=cmd_project)

    p = sub.add_parser("info", help="print the system description a run would record")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--system-name")
    p.add_argument("--system-overrides", metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.func(args)
    except _Usage as exc:
        parser.error(str(exc))
    except BrokenPipeError:  # output piped into a reader that closed early (e.g. head)
        return 0
    except (GoodbenchError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        _stderr(f"goodbench: error: {exc}")
        return 1
    except KeyboardInterrupt:
        _stderr("goodbench: interrupted")
        return 130
