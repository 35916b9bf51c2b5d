"""How late the launcher's stamps of a step's edges are on a busy machine, by channel: a socket
whose messages the kernel stamps as they are sent (suite/record/edge_channel.py, what run-own uses)
against a pipe whose lines are stamped as the launcher reads them (what it used before), runs
alternating, beside ``--busy`` processes that spin. A child process writes each step's two edges
through the library (suite/api/edges.py) around a step that spins ``--step-ms`` on its clock;
goodbench's reader (suite/run/edge_reader.py) stamps them. Per step, the launcher's time less the
child's (the edges' own readings) is the stamping error: its median and its worst, and how many
steps are off by more than the 5 ms a step's median is allowed (suite/figures/clocks.py).

    python benchmarks/loaded_stamps.py [--busy 4] [--steps 200] [--step-ms 10] [--repeats 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from suite.figures import clocks
from suite.record import edge_channel, edges
from suite.run.edge_reader import EdgeReader, clock

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import sys, time
from suite.api.edges import EdgePipe
steps, spin = int(sys.argv[1]), float(sys.argv[2])
pipe = EdgePipe.from_env()
pipe.edge("r", 1, "a" * 32)
pipe.edge("s", 0)
for n in range(1, steps + 1):
    pipe.edge("b", n)
    began = time.perf_counter()
    while time.perf_counter() - began < spin:
        pass
    pipe.edge("e", n)
pipe.close()
"""


class Readings(EdgeReader):
    """goodbench's reader, keeping each step edge's reading on the child's clock as well."""

    def __init__(self, fd: int, origin: float):
        self.readings: dict[tuple[str, int], float] = {}
        super().__init__(fd, origin)

    def _edge(self, found):  # type: ignore[no-untyped-def]
        if isinstance(found, edges.Edge) and found.kind in (edges.BEGIN, edges.END):
            self.readings[(found.kind, found.number)] = found.reading
        super()._edge(found)


def one_run(kind: str, steps: int, spin_s: float) -> list[float]:
    """Each step's launcher duration less the child's, in seconds, over the channel ``kind``."""
    read_end, write_end = edge_channel.pair() if kind == "socket" else os.pipe()
    origin = clock()
    env = {**os.environ, edges.ENV: str(write_end), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(steps), str(spin_s)], pass_fds=(write_end,), env=env)
    os.close(write_end)
    reader = Readings(read_end, origin)
    child.wait()
    reader.finish(5.0)
    if reader.broken or not reader.runs:
        raise SystemExit(f"{kind}: the edges were not believed ({reader.broken})")
    run = reader.runs[0]
    own = [reader.readings[(edges.END, n)] - reader.readings[(edges.BEGIN, n)] for n in range(1, steps + 1)]
    return [launcher - mine for launcher, mine in zip(run.entry()["step_s"], own)]


def spinners(count: int) -> list[subprocess.Popen]:
    """``count`` processes that spin until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--busy", type=int, default=4)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--step-ms", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    busy = spinners(args.busy)
    found: dict[str, list[float]] = {"socket": [], "pipe": []}
    try:
        time.sleep(1.0)
        print(f"{os.cpu_count()} cores, {args.busy} busy processes, load {os.getloadavg()[0]:.1f}; "
              f"{args.repeats} × {args.steps} steps of {args.step_ms:g} ms per channel, alternating")
        for _ in range(args.repeats):
            for kind in found:
                found[kind] += one_run(kind, args.steps, args.step_ms / 1000)
    finally:
        for process in busy:
            process.kill()
    for kind, errors in found.items():
        off = [abs(e) for e in errors]
        print(f"{kind:6}  step stamped off by: median {1e3 * statistics.median(off):6.3f} ms, 99th percentile "
              f"{1e3 * statistics.quantiles(off, n=100)[98]:6.2f} ms, worst {1e3 * max(errors, key=abs):+7.2f} ms; "
              f"steps off by more than {1e3 * clocks.PER_STEP_S:g} ms: {sum(o > clocks.PER_STEP_S for o in off)} "
              f"of {len(off)}; sum over each run's steps off by up to "
              f"{1e3 * _worst_sum(errors, args.steps):+.1f} ms")


def _worst_sum(errors: list[float], steps: int) -> float:
    """The largest (in size) sum of one run's step errors: a run's window against the launcher's."""
    sums = [sum(errors[i:i + steps]) for i in range(0, len(errors), steps)]
    return max(sums, key=abs)


if __name__ == "__main__":
    main()
