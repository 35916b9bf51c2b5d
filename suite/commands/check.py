"""``goodbench check``: whether this machine is fit to benchmark now."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench check`` and its arguments."""
    p = commands.add_parser("check", help="check whether this machine is fit to benchmark now")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="cpu: check for a CPU run (the GPU checks are skipped); auto: a GPU "
                        "is expected (default)")
    return p


def run(args) -> int:
    """Run the checks and print each verdict; 0 when the machine is fit, else 1."""
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
