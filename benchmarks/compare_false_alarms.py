"""False alarms of `goodbench compare`'s regression gate on identical code, on this machine.

K pairs of results files of one unchanged throughput workload are trained back to back (BASE,
then NEW, each `goodbench run --repeat R`: R runs in a row in one process), and each pair is
compared twice:

- **one run per side** (the gate as it was before runs could be compared across): the first run
  of BASE against the first run of NEW, the interval from the step times inside each run (and,
  as a second figure, the j-th run of BASE against the j-th of NEW for every j);
- **R runs per side**: BASE's R runs against NEW's R runs, the interval from the spread between
  the runs (docs/compare.md).

Nothing changed between the sides, so every "faster"/"slower" verdict on samples/s is a false
alarm, and so is every failure of `--fail-on-regression PCT`. Each rate is given with its Wilson
95% interval over the K pairs. Each pair trains while holding `--lock` (other timed work on the
machine waits); the load average is recorded before each pair.

    python benchmarks/compare_false_alarms.py --pairs 20 --repeat 5
    python benchmarks/compare_false_alarms.py --reuse DIR        # compare the files of a finished run again
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

from suite import compare, results  # noqa: E402
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
    ap.add_argument("--pairs", type=int, default=20, help="K: pairs of identical BASE/NEW files")
    ap.add_argument("--repeat", type=int, default=5, help="R: runs per file (per side)")
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
    pairs = []
    for base_path in sorted(folder.glob("pair*-base.json")):
        base, new = load(base_path), load(base_path.with_name(base_path.name.replace("-base", "-new")))
        pairs.append({"pair": base_path.name.split("-")[0], "runs_per_side": len(base["runs"]),
                      "one_run": judge(one_run(base, 0), one_run(new, 0), gate),
                      "across_runs": judge(base, new, gate),
                      "one_run_each": [judge(one_run(base, j), one_run(new, j), gate)
                                       for j in range(min(len(base["runs"]), len(new["runs"])))]})
    k = len(pairs)
    summary = {"command": " ".join(["python", "benchmarks/compare_false_alarms.py", *(argv or sys.argv[1:])]),
               "workload": args.workload, "pairs": k, "runs_per_side": pairs[0]["runs_per_side"] if pairs else 0,
               "threshold_pct": args.threshold, "load_average_1min": loads, "folder": str(folder)}
    for mode in ("one_run", "across_runs"):
        differs = sum(p[mode]["verdict"] in (compare.FASTER, compare.SLOWER) for p in pairs)
        failed = sum(p[mode]["gate_failed"] for p in pairs)
        summary[mode] = {"differs": differs, "differs_rate": differs / k if k else None,
                         "differs_wilson95": wilson(differs, k),
                         "gate_failed": failed, "gate_rate": failed / k if k else None,
                         "gate_wilson95": wilson(failed, k)}
    each = [j for p in pairs for j in p["one_run_each"]]  # the j-th run of BASE against NEW's, every j
    summary["one_run_each"] = {"comparisons": len(each),
                               "differs": sum(j["verdict"] in (compare.FASTER, compare.SLOWER) for j in each),
                               "gate_failed": sum(j["gate_failed"] for j in each)}
    (folder / "summary.json").write_text(json.dumps({"summary": summary, "pairs": pairs}, indent=1))
    for p in pairs:
        a, b = p["one_run"], p["across_runs"]
        print(f"{p['pair']}: one run {a['ratio']:.3f} [{a['ci95'][0]:.3f}, {a['ci95'][1]:.3f}] {a['verdict']}"
              f"{' GATE' if a['gate_failed'] else ''} | {p['runs_per_side']} runs {b['ratio']:.3f} "
              f"[{b['ci95'][0]:.3f}, {b['ci95'][1]:.3f}] {b['verdict']}{' GATE' if b['gate_failed'] else ''}")
    for mode, label in (("one_run", "one run per side"), ("across_runs", f"{summary['runs_per_side']} runs per side")):
        s = summary[mode]
        print(f"{label}: differs {s['differs']}/{k} (95% {s['differs_wilson95'][0]:.0%}–{s['differs_wilson95'][1]:.0%}), "
              f"gate at {args.threshold:g}% failed {s['gate_failed']}/{k} "
              f"(95% {s['gate_wilson95'][0]:.0%}–{s['gate_wilson95'][1]:.0%})")
    e = summary["one_run_each"]
    if e["comparisons"]:
        print(f"one run per side, every run of a pair (the j-th of BASE against the j-th of NEW; not independent "
              f"within a pair): differs {e['differs']}/{e['comparisons']} ({e['differs'] / e['comparisons']:.0%}), "
              f"gate failed {e['gate_failed']}/{e['comparisons']} ({e['gate_failed'] / e['comparisons']:.0%})")
    if loads:
        print(f"load average (1 min) before each pair: min {min(loads):.2f}, max {max(loads):.2f}")
    print(f"files and summary.json in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
