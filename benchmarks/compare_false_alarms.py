"""False alarms of `goodbench compare`'s regression gate on identical code, on this machine.

K pairs of results files of one unchanged throughput workload are trained alternately (BASE,
NEW, BASE, NEW, …; each file `goodbench run --repeat R`: R runs in a row in one process), and
compared three ways:

- **one run per side** (the gate as it was before sides of several runs): the first run of a
  pair's BASE file against the first run of its NEW file, the interval from the step times
  inside each run (and, as a second figure, the j-th run against the j-th for every j);
- **one file per side**: a pair's BASE file (R runs) against its NEW file, the interval from
  the spread between the runs of each file;
- **F files per side**: F consecutive pairs' BASE files against their NEW files (K // F trials),
  the interval from the spread between the files (`goodbench compare B1 … BF --vs N1 … NF`).

Nothing changed between the sides, so every "faster"/"slower" verdict on samples/s is a false
alarm, and so is every failure of `--fail-on-regression PCT`. Each rate is given with its Wilson
95% interval over its trials. Each pair trains while holding `--lock` (other timed work on the
machine waits); the load average is recorded before each pair.

    python benchmarks/compare_false_alarms.py --pairs 48 --repeat 3 --files 3
    python benchmarks/compare_false_alarms.py --reuse DIR --files 3    # compare the files of a finished run again
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from suite.compare import engine as compare  # noqa: E402
from suite.record import results  # noqa: E402
from suite.validate import check_document  # noqa: E402


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score 95% interval of a rate of ``hits`` in ``n`` trials."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@contextlib.contextmanager
def held(lock: str | None):
    """Hold ``lock`` (an flock on that file) while timed work runs; nothing when None."""
    if lock is None:
        yield
        return
    Path(lock).parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def train(out: Path, workload: str, repeat: int) -> None:
    """One results file: ``goodbench run --repeat`` of the workload at smoke scale on the CPU."""
    cmd = [sys.executable, "-m", "suite", "run", "-w", workload, "--scale", "smoke", "--device", "cpu",
           "--no-sign", "--repeat", str(repeat), "-o", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)


def one_run(doc: dict, index: int) -> dict:
    """The document with only its run ``index``: one run a side, as a file of one run would be."""
    return {**doc, "runs": [doc["runs"][index]]}


def judge(base: dict, new: dict, gate: compare.Gate) -> dict:
    """samples/s of NEW against BASE: ratio, interval, verdict, what it covers, gate failed."""
    column = compare.compare_documents(base, new)
    row = next(r for p in column.pairs for r in p.rows if r.figure == "samples_per_s")
    failed = bool(gate.apply([column]))
    return {"ratio": row.ratio, "ci95": [row.low, row.high], "verdict": row.verdict, "spread": row.spread,
            "gate_failed": failed}


def load(path: Path) -> dict:
    doc = results.load(str(path))
    problems = check_document(doc)
    if problems:
        raise SystemExit(f"{path}: not valid: {problems[0].line(str(path))}")
    return doc  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=48, help="K: pairs of identical BASE/NEW files")
    ap.add_argument("--repeat", type=int, default=3, help="R: runs per file")
    ap.add_argument("--files", type=int, default=3, help="F: files per side of the across-files comparison")
    ap.add_argument("--workload", default="gpt2-124m", help="a throughput workload")
    ap.add_argument("--threshold", type=float, default=5.0, help="the gate's --fail-on-regression PCT")
    ap.add_argument("--dir", help="where the results files go (default: a new temporary folder)")
    ap.add_argument("--reuse", metavar="DIR", help="train nothing: compare the pairs already in DIR")
    ap.add_argument("--lock", default="/tmp/gb/measure.lock", help="lock held while a pair trains ('' for none)")
    args = ap.parse_args(argv)
    folder = Path(args.reuse or args.dir or tempfile.mkdtemp(prefix="false-alarms-"))
    folder.mkdir(parents=True, exist_ok=True)
    loads = []
    if not args.reuse:
        for i in range(args.pairs):
            with held(args.lock or None):
                loads.append(os.getloadavg()[0])
                started = time.time()
                for side in ("base", "new"):
                    train(folder / f"pair{i:02d}-{side}.json", args.workload, args.repeat)
            print(f"pair {i + 1}/{args.pairs}: {time.time() - started:.0f} s, load {loads[-1]:.2f}", flush=True)
    gate = compare.Gate.parse([f"samples_per_s={args.threshold:g}"])
    paths = sorted(folder.glob("pair*-base.json"))
    docs = [(load(p), load(p.with_name(p.name.replace("-base", "-new")))) for p in paths]
    trials: dict[str, list[dict]] = {"one_run": [], "one_file": [], "files": [], "one_run_each": []}
    for base, new in docs:
        trials["one_run"].append(judge(one_run(base, 0), one_run(new, 0), gate))
        trials["one_file"].append(judge(base, new, gate))
        trials["one_run_each"] += [judge(one_run(base, j), one_run(new, j), gate)
                                   for j in range(min(len(base["runs"]), len(new["runs"])))]
    for start in range(0, len(docs) - args.files + 1, args.files):
        group = docs[start:start + args.files]
        trials["files"].append(judge(compare.merge_side([b for b, _ in group]),
                                     compare.merge_side([n for _, n in group]), gate))
    summary: dict = {"command": " ".join(["python", "benchmarks/compare_false_alarms.py", *(argv or sys.argv[1:])]),
                     "workload": args.workload, "pairs": len(docs), "files_per_side": args.files,
                     "runs_per_file": len(docs[0][0]["runs"]) if docs else 0, "threshold_pct": args.threshold,
                     "load_average_1min": loads, "folder": str(folder)}
    labels = {"one_run": "one run per side", "one_file": "one file per side (its runs' spread)",
              "files": f"{args.files} files per side (their spread)",
              "one_run_each": "one run per side, every j-th run against the j-th (not independent within a pair)"}
    for mode, found in trials.items():
        k = len(found)
        differs = sum(t["verdict"] in (compare.FASTER, compare.SLOWER) for t in found)
        failed = sum(t["gate_failed"] for t in found)
        widths = sorted(math.sqrt(t["ci95"][1] / t["ci95"][0]) - 1 for t in found if t["ci95"][0])
        half = widths[len(widths) // 2] if widths else None  # what a verdict costs: the interval's half-width
        summary[mode] = {"trials": k, "differs": differs, "differs_wilson95": wilson(differs, k),
                         "gate_failed": failed, "gate_wilson95": wilson(failed, k), "median_half_width": half}
        print(f"{labels[mode]}: differs {differs}/{k} (95% {summary[mode]['differs_wilson95'][0]:.0%}–"
              f"{summary[mode]['differs_wilson95'][1]:.0%}), gate at {args.threshold:g}% failed {failed}/{k} "
              f"(95% {summary[mode]['gate_wilson95'][0]:.0%}–{summary[mode]['gate_wilson95'][1]:.0%}); "
              f"median interval ±{half or 0:.1%}")
    (folder / "summary.json").write_text(json.dumps({"summary": summary, "trials": trials}, indent=1))
    if loads:
        print(f"load average (1 min) before each pair: min {min(loads):.2f}, median "
              f"{sorted(loads)[len(loads) // 2]:.2f}, max {max(loads):.2f}")
    print(f"files and summary.json in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
