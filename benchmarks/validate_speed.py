"""How long ``goodbench validate`` takes over many typical full-scale results files.

Generates ``--files`` synthetic results files shaped like a full-scale TTA submission with
tests/factories.py (default: lm-char at full scale, 5 seeds × 5,000 step times each, an eval
every 250 steps, energy figures, 40% MFU against one H100 80GB HBM3, each run with its event log
and the goodput recomputed from it), checks that the first one is valid, then times
``suite.validate.validate_file`` over all of them (read, parse, walk, schema, every rule).
The files are synthetic — consistent by construction, not measurements — and serve only to
time the validator. Usage::

    python benchmarks/validate_speed.py [--files 1000] [--workload lm-char] [--dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import factories

H100 = 0  # factories.ACCELERATORS[0]: one NVIDIA H100 80GB HBM3


def synthetic_document(workload_id: str = "lm-char", scale: str = "full", seeds: int | None = None,
                       rng: np.random.Generator | None = None) -> dict:
    """A results document of ``seeds`` synthetic runs of one workload (default: 5 for TTA at full
    scale, else 1), each training all its steps on an H100 at 40% MFU, with its event log."""
    return factories.synthetic_document(
        "synthetic H100 system", rng=rng or np.random.default_rng(0), accelerator=H100, scale=scale,
        seeds=seeds, workloads=(workload_id,), goodput=True, mfu_level=0.4, full_length=True)


def write_files(directory: Path, count: int, workload_id: str, scale: str) -> list[Path]:
    """``count`` distinct synthetic results files in ``directory``."""
    rng = np.random.default_rng(12345)
    paths = []
    for i in range(count):
        path = directory / f"result-{i:05d}.json"
        path.write_text(json.dumps(synthetic_document(workload_id, scale, rng=rng), indent=1) + "\n")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--workload", default="lm-char")
    parser.add_argument("--scale", default="full", choices=["smoke", "full"])
    parser.add_argument("--dir", help="where to write the files (default: a temp dir, removed after)")
    args = parser.parse_args(argv)

    from suite.validate import validate_file, validate_files

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(args.dir or tmp)
        directory.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        paths = write_files(directory, args.files, args.workload, args.scale)
        generated = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in paths)
        first = validate_file(paths[0])  # warms the caches (schema validator, pinned specs)
        if first:
            print("\n".join(p.line(paths[0].name) for p in first), file=sys.stderr)
            print("the synthetic files are not valid: nothing to time", file=sys.stderr)
            return 1
        t0, c0 = time.perf_counter(), time.process_time()
        invalid = sum(bool(validate_file(p)) for p in paths)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        invalid_parallel = sum(bool(problems) for problems in validate_files(paths))
        parallel = time.perf_counter() - t0
    print(f"device: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"files: {args.files} × {args.workload} {args.scale} ({size / args.files / 1024:.0f} KiB each, "
          f"generated in {generated:.1f} s)")
    print(f"validated {args.files} files in {elapsed:.2f} s ({1000 * elapsed / args.files:.2f} ms per file); "
          f"invalid: {invalid}")
    print(f"goodbench validate's way (validate_files, {os.cpu_count()} worker processes): "
          f"{parallel:.2f} s; invalid: {invalid_parallel}")
    print(f"CPU time of this process: {cpu:.2f} s; load average now {os.getloadavg()[0]:.1f} "
          "(wall time above CPU time means other processes shared the cores)")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
