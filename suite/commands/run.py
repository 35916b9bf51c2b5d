"""``goodbench run``: train workloads and write one results file (under torchrun when
``--nproc-per-node`` is given: suite/run/launch.py). Its arguments; what they do is
suite/run/command.py."""
from __future__ import annotations

import argparse

from suite.commands.common import POSITIVE_FLOAT, POSITIVE_INT, output_path
from suite.run import quiet
from workloads.pinned import COMPILE_MODES, SEEDS


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench run`` and its arguments."""
    # no abbreviated options (argparse would take --wait for --wait-quiet): the launcher passes
    # the command line on to the workers without its own options, which it knows by their full
    # names only (suite/run/launch.py: worker_argv); an abbreviation is refused naming the option
    p = commands.add_parser("run", help="run workloads and write one results file", allow_abbrev=False)
    p.add_argument("-w", "--workload", action="append", metavar="ID",
                   help="workload to run (repeatable; default: the whole suite)")
    p.add_argument("--scale", choices=["smoke", "full"],
                   help="pinned variant (default: full on a GPU, smoke on the CPU)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where to train: auto (default) the GPU when torch sees one, else the CPU")
    p.add_argument("--seeds", type=int, help=f"seeds per workload, 1 to {len(SEEDS)}, the first of the pinned list "
                                             "(default: 5 for TTA at full scale, else 1)")
    p.add_argument("--repeat", type=POSITIVE_INT, default=1, metavar="N",
                   help="run each seed of a throughput workload N times in a row, into the one results "
                        "file (several runs a side, for goodbench compare's spread between runs)")
    p.add_argument("--data-dir", help="directory holding dataset files (looked in first)")
    p.add_argument("--peak-tflops", type=POSITIVE_FLOAT, help="peak TFLOP/s for MFU where the device is not in the table")
    p.add_argument("--system-name", help="name of this system on the leaderboard")
    p.add_argument("--system-overrides", metavar="FILE",
                   help="JSON object correcting fields of the system description")
    p.add_argument("-o", "--output", type=output_path, help="results file (default: runs/<UTC time>-<scale>.json)")
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
    quiet.add_argument(p, "before training (with --nproc-per-node: before torchrun starts the workers)",
                       "then train, its runs flagged \"measured under load\" if they still do")
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
    from suite.run import command

    return command.run(args)
