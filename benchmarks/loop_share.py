"""How much of a run's stamped step blocks lies beyond its steps and batch waits (the loop around
the steps, the flush closing each block, the scheduler's preemptions), beside a burner that keeps
one core busy a set share of the time: the honest slack of rule ``stream-step-times``'s loop share
(suite/validate/stream_rules.py), and whether the run's own host-load record called it quiet.

Each setting runs ``goodbench run`` (smoke scale, CPU, one seed) on the workloads given, the burner
(a Python loop busy ``duty`` of every 10 ms, 0 for none) started before it and stopped after it;
settings alternate, ``--repeats`` times. Per run: the loop share, the other processes' cores the
run recorded on average over it, and whether :func:`suite.figures.load.under_load` calls it
measured under load. The last table gives, per duty, the worst loop share of the runs recorded
quiet and of those recorded under load.

    python benchmarks/loop_share.py [--duty 0 0.25 0.45 1] [--repeats 2] [-w lm-char -w dlrm-small]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from suite.figures.load import under_load  # noqa: E402
from suite.validate.stream_rules import loop_share  # noqa: E402

BURNER = """import os, sys, time
duty, parent = float(sys.argv[1]), os.getppid()
while os.getppid() == parent:  # until stopped, or until this benchmark ends however it ends
    began = time.perf_counter()
    while time.perf_counter() - began < 0.01 * duty:
        pass
    time.sleep(0.01 * (1 - duty))
"""


def one_setting(duty: float, workloads: list[str], folder: Path) -> list[dict]:
    """Run the workloads beside a burner of ``duty``; each run's loop share and recorded load."""
    burner = subprocess.Popen([sys.executable, "-c", BURNER, str(duty)]) if duty > 0 else None
    out = folder / f"duty-{duty}.json"
    out.unlink(missing_ok=True)
    try:
        args = [sys.executable, "-m", "suite", "run", "--scale", "smoke", "--device", "cpu", "--no-sign",
                "-o", str(out)] + [f"--workload={w}" for w in workloads]
        subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    rows = []
    for run in json.loads(out.read_text())["runs"]:
        load = run.get("host_load") or {}
        during = (load.get("during") or {}).get("other_cores")
        rows.append({"duty": duty, "workload": run["workload"]["id"], "share": loop_share(run),
                     "other_cores": during, "under_load": under_load(load) is not None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duty", type=float, nargs="+", default=[0.0, 0.25, 0.45, 1.0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("-w", "--workload", action="append", dest="workloads")
    args = parser.parse_args()
    workloads = args.workloads or ["lm-char", "dlrm-small", "gpt2-124m"]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for duty in args.duty:
                for row in one_setting(duty, workloads, Path(tmp)):
                    rows.append(row)
                    cores = "—" if row["other_cores"] is None else f"{row['other_cores']:.2f}"
                    print(f"repeat {repeat + 1} duty {duty:.2f} {row['workload']:<12} loop share "
                          f"{row['share']:.4f}  other cores {cores:>5}  "
                          f"{'under load' if row['under_load'] else 'quiet'}", flush=True)
    print("\nduty  worst loop share: recorded quiet | recorded under load")
    for duty in args.duty:
        print(f"{duty:.2f}  {_worst(rows, duty, False):>18} | {_worst(rows, duty, True)}")


def _worst(rows: list[dict], duty: float, loaded: bool) -> str:
    """The worst loop share of the runs beside a burner of ``duty`` recorded (not) under load."""
    shares = [r["share"] for r in rows if r["duty"] == duty and r["under_load"] == loaded]
    return f"{max(shares):.4f} ({len(shares)} runs)" if shares else "— (0 runs)"


if __name__ == "__main__":
    main()
