"""``goodbench check``: whether this machine is fit to benchmark now."""
from __future__ import annotations

import argparse

from suite.record import dependencies
from suite.run import quiet


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench check`` and its arguments."""
    p = commands.add_parser("check", help="check whether this machine is fit to benchmark now")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="the device of the run to check for, as `run` takes it: auto (default) the GPU "
                        "when torch sees one, else the CPU; cpu: a CPU run (the GPU checks are skipped); "
                        "cuda: a GPU run (an error without one)")
    quiet.add_argument(p, "before checking", "then check (the \"other processes\" check fails if they still do)")
    return p


def run(args) -> int:
    """Run the checks and print each verdict; 0 when the machine is fit, else 1."""
    if dependencies.findable("torch"):  # a first line before torch loads; where it is missing, the error alone
        print(f"# whether this machine is fit to benchmark now (device {args.device})", flush=True)
    from suite.run.check import fit, run_checks
    from suite.run.system import resolve_device

    device = resolve_device(args.device)  # as `run` resolves it: auto is the CPU where torch sees no GPU
    cpu_run = device.type == "cpu"
    if args.wait_quiet is not None:
        quiet.wait(args.wait_quiet, "checking now")
    checks = run_checks(device, cpu_run=cpu_run)
    for c in checks:
        print(f"{c.verdict:<5} {c.name:<17} {c.detail}")
    verdict = fit(checks)
    what = "fit for a CPU run" if cpu_run else "fit to benchmark"
    print(what if verdict else f"not {what}: fix the failed checks")
    return 0 if verdict else 1
