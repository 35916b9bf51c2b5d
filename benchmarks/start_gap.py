"""The honest start gap of own code held to a target (rule ``start-gap``, suite/validate/quality_rules.py
``START_GAP_S``): the seconds from the end of its start evaluation to ``run_start``, which the library
takes to end the run's initialization (``init_stop``, the log released, a barrier of the ranks). The
plain loop (examples/plain_loop.py, lm-char smoke, a few steps on the CPU) is run ``--repeats`` times
under ``goodbench run-own`` in one process and as a 2-rank torchrun job (gloo), each run's gap read in
its event log (rank 0's wall clock) and on the second clock (the launcher's monotonic stamps of each
rank's start evaluation and ``run_start``); the worst of each is printed with the host's load.

    python benchmarks/start_gap.py [--repeats 5] [--nproc 1 2] [--steps 3]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite.record import mllog

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "plain_loop.py"


def gaps(doc: dict) -> dict[str, list[float]]:
    """Each run's gap in its event log, and each rank's on the second clock (seconds)."""
    found: dict[str, list[float]] = {"log": [], "second clock": []}
    for run in doc["runs"]:
        events = mllog.parse(run["event_log"])
        start = next(e for e in events if e.key == mllog.START_EVAL)
        clock = next(e for e in events if e.key == "run_start")
        found["log"].append(clock.t - start.t)
    for entry in (doc.get("second_clock") or {}).get("runs") or []:
        if entry.get("start_eval_s") is not None and entry.get("run_start_s") is not None:
            found["second clock"].append(entry["run_start_s"] - entry["start_eval_s"])
    return found


def one(nproc: int, steps: int, folder: Path) -> dict[str, list[float]]:
    """One run of the plain loop under ``goodbench run-own`` with ``nproc`` ranks: its gaps."""
    out = folder / f"gap-{nproc}-{time.monotonic_ns()}.json"
    command = [sys.executable, "-m", "suite", "run-own", *(["--nproc-per-node", str(nproc)] if nproc > 1 else []),
               str(SCRIPT), "--out", str(out), "--steps", str(steps), "--device", "cpu"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    if not out.exists():
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    if done.returncode != 0:  # written, its gaps stamped, but refused (a loaded host's clocks may disagree)
        print(f"  (exit {done.returncode}: {done.stderr.strip().splitlines()[-1]})")
    return gaps(json.loads(out.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--nproc", type=int, nargs="+", default=[1, 2], help="ranks of each job (default 1 2)")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    print(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory(prefix="start-gap-") as folder:
        for nproc in args.nproc:
            seen: dict[str, list[float]] = {"log": [], "second clock": []}
            for _ in range(args.repeats):
                for clock, values in one(nproc, args.steps, Path(folder)).items():
                    seen[clock].extend(values)
            for clock, values in seen.items():
                if values:
                    print(f"{nproc} rank(s), {clock}: worst {max(values) * 1e3:.2f} ms, median "
                          f"{sorted(values)[len(values) // 2] * 1e3:.2f} ms over {len(values)} gaps "
                          f"(load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
