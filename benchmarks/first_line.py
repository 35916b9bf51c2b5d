"""How long each ``goodbench`` command takes to say its first line, and to finish.

A user who sees nothing for seconds thinks the command hung: every command should print its first
line within a second on a quiet machine, and anything that runs longer than five seconds should say
what it is doing. This runs each command as a user would (a fresh ``python -m suite`` process, on
the repository's own files, writing only into a temporary folder) and measures, per command, the
wall time until the first byte on stdout or stderr, the wall time in all, and the CPU time the
process used (user + system: the figure that does not depend on what else the machine runs).
Usage::

    python benchmarks/first_line.py [--repeat 3] [--only info,check]

Prints one line per command: the median over ``--repeat`` runs of each figure, and the load
average before the first run (the wall figures mean little on a loaded machine).
"""
from __future__ import annotations

import argparse
import os
import resource
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commands(tmp: Path) -> dict[str, list[str]]:
    """The commands measured, each with arguments that make it do its real job on the
    repository's own files (outputs under ``tmp``)."""
    stored = sorted(p for p in (ROOT / "results").glob("*.json"))
    first = str(stored[0]) if stored else str(ROOT / "tests" / "fixtures" / "reference-smoke.json")
    second = str(stored[1]) if len(stored) > 1 else first
    submit_dir = tmp / "results"
    return {
        "--help": ["--help"],
        "list": ["list"],
        "info": ["info"],
        "check": ["check", "--device", "cpu"],
        "peaks": ["peaks"],
        "prices": ["prices"],
        "validate": ["validate", first],
        "compare": ["compare", first, "--vs", second],
        "submit": ["submit", str(ROOT / "tests" / "fixtures" / "reference-smoke.json"), "--results-dir", str(submit_dir)],
        "site": ["site", "--results-dir", str(ROOT / "results"), "--out", str(tmp / "site")],
        "data list": ["data", "list"],
        "keygen --help": ["keygen", "--help"],
        "reproduce --help": ["reproduce", "--help"],
        "run --help": ["run", "--help"],
    }


def measure(argv: list[str], env: dict) -> tuple[float | None, float, float, int]:
    """One run of ``python -m suite ARGV``: (seconds to its first output byte or None when it
    printed nothing, seconds in all, CPU seconds, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "suite", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = None
    with selectors.DefaultSelector() as sel:
        for stream in (proc.stdout, proc.stderr):
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                if os.read(key.fileobj.fileno(), 65536):
                    first = time.perf_counter() - start if first is None else first
                else:
                    sel.unregister(key.fileobj)
    status = proc.wait()
    total = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return first, total, cpu, status


def main(argv: list[str] | None = None) -> int:
    """Measure every command (or ``--only`` these) ``--repeat`` times and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (default 3; the median is shown)")
    parser.add_argument("--only", help="comma-separated command names of the table (default: all)")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"median of {args.repeat} runs each")
    print(f"{'command':<18} {'first line':>11} {'in all':>9} {'CPU':>8}  exit")
    with tempfile.TemporaryDirectory(prefix="goodbench-first-line-") as tmp:
        table = commands(Path(tmp))
        wanted = args.only.split(",") if args.only else list(table)
        for name in wanted:
            firsts, totals, cpus, status = [], [], [], 0
            for _ in range(args.repeat):
                shutil.rmtree(Path(tmp) / "results", ignore_errors=True)
                first, total, cpu, status = measure(table[name], env)
                firsts.append(first if first is not None else float("inf"))
                totals.append(total)
                cpus.append(cpu)
            first_text = "silent" if statistics.median(firsts) == float("inf") else f"{statistics.median(firsts):.2f} s"
            print(f"{name:<18} {first_text:>11} {statistics.median(totals):>7.2f} s {statistics.median(cpus):>6.2f} s"
                  f"  {status}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
