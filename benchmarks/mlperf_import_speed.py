"""``goodbench import mlperf`` against MLCommons' ``result_summarizer`` on the same trees.

Copies the MLPerf Training sample (``../shared/mlperf-training``: two rounds) into a scratch
folder — ``--copies N`` times each org, as ``<org>``, ``<org>-1`` … , to stand for a larger
round — then, ``--repeat`` times and alternating which goes first, on a fresh copy each time
(result_summarizer rewrites ``scaling.json``):

- result_summarizer, once per round, as the sample's README runs it:
  ``python -m mlperf_logging.result_summarizer "<round>/{*}" training <ruleset>``;
- ``python -m suite import mlperf <tree> --results-dir <scratch> --json``, both rounds at once.

Each is a process of its own; the script reports its wall time, its CPU time (user + system,
its worker processes included) and the peak of the summed resident memory of it and its
children (sampled from /proc every 20 ms). Usage::

    python benchmarks/mlperf_import_speed.py [--copies 1] [--repeat 3] [--sample DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROUNDS = {"v4.0": "4.0.0", "v5.1": "5.1.0"}


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ppid, pages = int(fields[1]), int(fields[21])
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = pages * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def measure(cmd: list[str], cwd: Path) -> dict:
    """Wall s, CPU s (with children) and peak tree RSS of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def sample():
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": peak[0] / 2 ** 20, "stdout": out}


def scratch_tree(sample: Path, dest: Path, copies: int) -> int:
    """``sample``'s rounds with every org ``copies`` times; returns the number of result files."""
    n = 0
    for rnd in ROUNDS:
        for org in sorted(p for p in (sample / rnd).iterdir() if p.is_dir()):
            for k in range(copies):
                target = dest / rnd / (org.name if k == 0 else f"{org.name}-{k}")
                shutil.copytree(org, target)
                n += sum(1 for _ in target.rglob("result_*.txt"))
    for path in dest.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # the sample is read-only; the copies are not
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default=str(REPO.parent / "shared" / "mlperf-training"))
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sample = Path(args.sample)
    if not (sample / "expected-scores.json").is_file():
        raise SystemExit(f"no MLPerf Training sample at {sample}")
    rows: dict[str, list[dict]] = {"result_summarizer": [], "goodbench import": []}
    with tempfile.TemporaryDirectory(prefix="mlperf-speed-") as tmp:
        scratch = Path(tmp)
        files = size = 0
        for i in range(args.repeat):
            order = ["result_summarizer", "goodbench import"]
            if i % 2:
                order.reverse()
            for tool in order:
                tree = scratch / f"tree-{i}-{tool.split()[0]}"
                files = scratch_tree(sample, tree, args.copies)
                size = sum(p.stat().st_size for p in tree.rglob("result_*.txt"))
                if tool == "result_summarizer":
                    runs = [measure([sys.executable, "-m", "mlperf_logging.result_summarizer",
                                     f"{tree / rnd}/{{*}}", "training", ruleset], scratch)
                            for rnd, ruleset in ROUNDS.items()]
                    rows[tool].append({"wall_s": sum(r["wall_s"] for r in runs),
                                       "cpu_s": sum(r["cpu_s"] for r in runs),
                                       "peak_rss_mib": max(r["peak_rss_mib"] for r in runs)})
                else:
                    run = measure([sys.executable, "-m", "suite", "import", "mlperf", str(tree),
                                   "--results-dir", str(scratch / f"imported-{i}"), "--json"], REPO)
                    assert len(json.loads(run["stdout"])) == 5 * args.copies
                    rows[tool].append(run)
                shutil.rmtree(tree)
    print(f"{files} result files ({size / 2 ** 20:.1f} MiB), {args.copies} cop{'y' if args.copies == 1 else 'ies'} "
          f"of the sample's orgs, {args.repeat} repeats, {os.cpu_count()} CPUs")
    print(f"{'tool':<18} {'wall s (median)':>16} {'CPU s (median)':>15} {'peak RSS MiB (max)':>19}")
    med = {}
    for tool, found in rows.items():
        med[tool] = statistics.median(r["wall_s"] for r in found)
        print(f"{tool:<18} {med[tool]:>16.2f} {statistics.median(r['cpu_s'] for r in found):>15.2f} "
              f"{max(r['peak_rss_mib'] for r in found):>19.0f}")
        walls = ", ".join(f"{r['wall_s']:.2f}" for r in found)
        print(f"{'':<18} walls: {walls}")
    print(f"import / result_summarizer wall time: {med['goodbench import'] / med['result_summarizer']:.2f}")


if __name__ == "__main__":
    main()
