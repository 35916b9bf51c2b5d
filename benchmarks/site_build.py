"""Scale benchmark of ``goodbench site``: N synthetic valid results files, then time the build.

    python benchmarks/site_build.py [--files 10000] [--workdir /tmp/goodbench-site-bench]

The mix: one workload per file, in turn; 1 in 10 files is a full-scale submission (5 seeds for
a TTA workload), the rest smoke runs (1 seed); 200 system names, the accelerators of
tests/factories.py.
Prints the generation time, the build time of `goodbench site` (a subprocess, cold: a fresh
output folder, the previous one deleted and synced to disk before the clock starts), the CPU
seconds it used (user and system, all its processes), the load average before and after (other
jobs share the CPU) and the size of the output.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import factories  # noqa: E402

from suite.record import results  # noqa: E402
from workloads import registry  # noqa: E402


def generate(folder: Path, n: int, seed: int = 0) -> None:
    """Write ``n`` valid synthetic results files into ``folder``."""
    rng = np.random.default_rng(seed)
    workload_ids = list(registry.WORKLOADS)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        full = i % 10 == 0
        doc = factories.synthetic_document(
            f"synthetic-{i % 200:03d}", rng=rng, accelerator=int(rng.integers(0, len(factories.ACCELERATORS))),
            scale="full" if full else "smoke", days_ago=float(rng.uniform(1, 300)), goodput=bool(i % 2),
            workloads=(workload_ids[i % len(workload_ids)],))
        results.write(folder / f"{i:05d}.json", doc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--workdir", default="/tmp/goodbench-site-bench")
    parser.add_argument("--keep", action="store_true", help="reuse generated files of an earlier run")
    args = parser.parse_args()
    work = Path(args.workdir)
    res, out = work / "results", work / "site"
    if not (args.keep and res.is_dir() and len(list(res.glob("*.json"))) == args.files):
        shutil.rmtree(work, ignore_errors=True)
        t = time.perf_counter()
        generate(res, args.files)
        print(f"generated {args.files} files in {time.perf_counter() - t:.1f} s")
    shutil.rmtree(out, ignore_errors=True)
    os.sync()  # the deletion's disk work is not the build's
    load_before = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "suite", "site", "--results-dir", str(res), "--out", str(out)],
                   check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = os.getloadavg()
    files = [p for p in out.rglob("*") if p.is_file()]
    html = [p for p in files if p.suffix == ".html"]
    largest = max(html, key=lambda p: p.stat().st_size)
    summary = {"files": args.files, "build_s": round(seconds, 2),
               "cpu_user_s": round(after.ru_utime - before.ru_utime, 1),
               "cpu_system_s": round(after.ru_stime - before.ru_stime, 1), "cpus": os.cpu_count(),
               "load_1min_before": round(load_before[0], 2), "load_1min_after": round(load_after[0], 2),
               "output_files": len(files),
               "html_pages": len(html), "output_mb": round(sum(p.stat().st_size for p in files) / 2**20, 1),
               "largest_page_kb": round(largest.stat().st_size / 1024, 1), "largest_page": largest.name}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
