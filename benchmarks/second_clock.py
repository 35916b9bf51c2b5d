"""``goodbench run-own``'s second clock, measured: (1) what writing the edges costs a step — the
library's edge call with run-own's socket (and a pipe) drained by a reader thread, against the same call with no
channel, alternating; (2) how far the two clocks of honest runs disagree on this machine — a small own job
(tests/own_clock_job.py: steps of an MLP and a 20 ms sleep) run ``--runs`` times under
``goodbench run-own``, each figure's difference on the two clocks, the worst kept, as a share of the
launcher's figure and of the tolerance (suite/figures/clocks.py). (1b) the same side by side around a
step of about a millisecond of matrix products: the ratio of the median step times. The host's load is printed: the
honest difference grows with it.

    python benchmarks/second_clock.py [--runs 5] [--edges 100000] [--script tests/own_clock_job.py]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from suite.api.edges import EdgePipe
from suite.figures import clocks
from suite.record import edge_channel, edges

ROOT = Path(__file__).resolve().parent.parent


def _drained_pipe(kind: str = "socket") -> EdgePipe:
    """An edge channel (run-own's socket, or a pipe) whose lines a thread reads and drops, as the
    launcher's reader would."""
    read_end, write_end = edge_channel.pair() if kind == "socket" else os.pipe()
    threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(read_end, 1 << 16), b"")], daemon=True).start()
    return EdgePipe(write_end)


def edge_cost(count: int, repeats: int = 5) -> dict:
    """Seconds per edge with the socket, with a pipe and with neither, medians over alternating repetitions."""
    channels = {"socket": _drained_pipe("socket"), "pipe": _drained_pipe("pipe"), "none": EdgePipe(None)}
    sides: dict[str, list[float]] = {name: [] for name in channels}
    for _ in range(repeats):
        for name, pipe in channels.items():
            began = time.perf_counter()
            for i in range(count):
                pipe.edge(edges.BEGIN, i)
            sides[name].append((time.perf_counter() - began) / count)
    for pipe in channels.values():
        pipe.close()
    return {name: statistics.median(values) for name, values in sides.items()}


def step_ratio(steps: int = 300, repeats: int = 5) -> dict:
    """A 1-ms step of matrix products with its two edges written to a drained socket (run-own's channel), against the same
    step with no channel, repetitions alternating: each side's median seconds per step, and their ratio."""
    import torch

    torch.set_num_threads(1)
    a = torch.randn(160, 160)
    piped, none = _drained_pipe(), EdgePipe(None)
    sides: dict[str, list[float]] = {"pipe": [], "none": []}
    for _ in range(repeats):
        for name, pipe in (("pipe", piped), ("none", none)):
            began = time.perf_counter()
            for i in range(steps):
                pipe.edge(edges.BEGIN, i)
                for _ in range(4):
                    a @ a
                pipe.edge(edges.END, i)
            sides[name].append((time.perf_counter() - began) / steps)
    piped.close()
    found = {name: statistics.median(values) for name, values in sides.items()}
    return {**found, "ratio": found["pipe"] / found["none"],
            "spread": {name: (min(v), max(v)) for name, v in sides.items()}}


def honest_runs(runs: int, script: Path) -> list[dict]:
    """Each run's comparisons: (what, own, launcher, |difference|, share of the tolerance)."""
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            out = Path(tmp) / f"run{i}.json"
            load = os.getloadavg()[0]
            subprocess.run([sys.executable, "-m", "suite", "run-own", str(script), str(out), "--steps", "60"],
                           cwd=script.parent, check=True, capture_output=True)
            doc = json.loads(out.read_text())
            run, entry = doc["runs"][0], doc["second_clock"]["runs"][0]
            for c in clocks.comparisons(run, entry, doc["settings"]["implementation"]["spec"]["warmup_steps"], True):
                allowed = c.allowance_s + clocks.RELATIVE * abs(c.launcher)
                found.append({"run": i, "load_1m": load, "what": c.what.split(" (")[0], "own_s": c.own,
                              "launcher_s": c.launcher, "difference_s": abs(c.own - c.launcher),
                              "relative": abs(c.own - c.launcher) / c.launcher, "share_of_tolerance": abs(c.own - c.launcher) / allowed})
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--script", type=Path, default=ROOT / "tests" / "own_clock_job.py")
    args = parser.parse_args()
    cost = edge_cost(args.edges)
    print(f"edge write: {cost['socket'] * 1e6:.2f} µs with run-own's socket, {cost['pipe'] * 1e6:.2f} µs with a pipe, "
          f"{cost['none'] * 1e6:.3f} µs without (two edges per step: {2 * (cost['socket'] - cost['none']) * 1e6:.1f} µs "
          "per step with the socket)")
    ratio = step_ratio()
    print(f"a step of matrix products: {ratio['pipe'] * 1e3:.3f} ms with its edges written, {ratio['none'] * 1e3:.3f} ms "
          f"without; ratio of medians {ratio['ratio']:.4f} (spread over repetitions: with "
          f"{ratio['spread']['pipe'][0] * 1e3:.3f}-{ratio['spread']['pipe'][1] * 1e3:.3f} ms, without "
          f"{ratio['spread']['none'][0] * 1e3:.3f}-{ratio['spread']['none'][1] * 1e3:.3f} ms)")
    rows = honest_runs(args.runs, args.script.resolve())
    for row in rows:
        print(f"run {row['run']} load {row['load_1m']:.1f}  {row['what']:<34} own {row['own_s']:.6f}  launcher "
              f"{row['launcher_s']:.6f}  |diff| {row['difference_s'] * 1e3:7.2f} ms  {row['relative']:6.2%}  "
              f"{row['share_of_tolerance']:5.2f} of the tolerance")
    for what in dict.fromkeys(r["what"] for r in rows):
        worst = max((r for r in rows if r["what"] == what), key=lambda r: r["share_of_tolerance"])
        print(f"worst {what}: |diff| {worst['difference_s'] * 1e3:.2f} ms ({worst['relative']:.2%}), "
              f"{worst['share_of_tolerance']:.2f} of the tolerance")


if __name__ == "__main__":
    main()
