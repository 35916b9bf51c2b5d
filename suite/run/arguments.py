"""``goodbench run``'s arguments checked before anything trains: the usage errors of the plan,
``--repeat``, a distributed run and injected failures (found before torch is imported where
they can be)."""
from __future__ import annotations

from suite.record.errors import GoodbenchError, Usage
from suite.record.text import count
from workloads.pinned import CUDA_GRAPH_MODES


def check_plan(args) -> None:
    """Usage errors of the plan itself: ``--seeds`` out of range, an unknown workload, ``--repeat``,
    a data folder that does not exist."""
    from workloads import registry
    from workloads.pinned import SEEDS

    if args.seeds is not None and not 1 <= args.seeds <= len(SEEDS):
        raise Usage(f"--seeds must be between 1 and {len(SEEDS)}")
    unknown = [w for w in args.workload or [] if w not in registry.WORKLOADS]
    if unknown:
        raise Usage(f"unknown workload {', '.join(unknown)}; known: {', '.join(registry.WORKLOADS)}")
    check_repeat(args)
    check_data_dir(args)


def check_data_dir(args) -> None:
    """A data folder that does not exist, said before anything else: ``--data-dir`` (a usage
    error) or ``$GOODBENCH_DATA_DIR`` (GoodbenchError), rather than every file "absent" in it."""
    from workloads import data

    why = data.missing_folder(args.data_dir)
    if why is None:
        return
    if args.data_dir and why.startswith("--data-dir"):
        raise Usage(why)
    raise GoodbenchError(f"{why}, or unset it")


def check_named_data(args) -> None:
    """The data of each workload named with ``-w``, found (or fetched, said first) before the run begins: a
    missing file is said before the busy-machine warning and the ceiling's measurement, after the
    usage errors. The error the run itself raises (suite/run/session.py), which is where the ranks
    of a distributed run look, each on its node."""
    from suite.run.progress import say
    from workloads import registry
    from workloads.data import missing_reason

    for wid in args.workload or []:
        why = missing_reason(wid, registry.get(wid).data_files, args.data_dir, every_place=True, announce=say)
        if why is not None:
            raise GoodbenchError(why)


def check_restarts(args, scale: str) -> None:
    """``--inject-failure`` under torchrun: torchrun must restart the workers once per kill."""
    from suite.run.session import default_seeds
    from workloads import registry

    runs = sum(args.seeds or default_seeds(scale, registry.get(w).kind)
               for w in args.workload or list(registry.WORKLOADS))
    kills = len(set(args.inject_failure)) * runs
    if args.max_restarts < kills:
        raise Usage(f"--inject-failure kills a rank {count(kills, 'time')} ({count(runs, 'run')}); "
                    f"torchrun must restart that often: --max-restarts {kills}")


def check_repeat(args) -> None:
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


def check_parallel(args, parallel, scale: str) -> None:
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
