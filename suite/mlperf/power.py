"""The energy of one run from its power logs, as MLCommons' result_summarizer computes its power
score, or why it is not measured.

A submission measured for power has ``<benchmark>/power/<result name>/node_*.txt`` (one power
log per node) and optionally ``sw_*.txt`` (interconnect switches) per run. result_summarizer
(``_compute_total_power``) sums over the node logs ``conversion_eff × Σ reading × Δt ×
time_to_train / (power_measurement_stop − power_measurement_start) / 1000`` — readings in watts,
times in milliseconds: joules over the run's time to train — and over the switch logs
``conversion_eff × interconnect_power_est × time_to_train / 1000``. The same arithmetic in the
same order is done here while streaming each log once, keeping only the four keys it reads.

Where result_summarizer stops with an exception (no node log for the run: ``AssertionError``; no
``power_measurement_start``: ``ValueError``; a log whose stop equals its start:
``ZeroDivisionError``; a reading that is not a number: ``TypeError``), the run's energy is "not
measured" with that reason; so is a log that cannot be read safely (:mod:`suite.mlperf.files`).
"""
from __future__ import annotations

import fnmatch
import io
import math
import os
from pathlib import Path

from suite.mlperf import files, logs

MAX_POWER_BYTES = 16 * 2 ** 20  # one node's power log (the largest published: 0.3 MB)
_KEYS = {"power_measurement_start", "power_reading", "power_measurement_stop", "conversion_eff",
         "interconnect_power_est"}


class NotMeasured(Exception):
    """Why a run's energy is not measured (one line)."""


def has_power(bench_dir: str | os.PathLike) -> bool:
    """result_summarizer's ``_has_power``: the benchmark folder has a ``power`` folder."""
    return os.path.isdir(os.path.join(bench_dir, "power")) and not os.path.islink(os.path.join(bench_dir, "power"))


def _logs(folder: Path, pattern: str) -> list[Path]:
    try:
        names = [e.name for e in files.entries(folder) if fnmatch.fnmatchcase(e.name, pattern)]
    except OSError:
        return []
    return [folder / n for n in sorted(names)]


def _events(path: Path, ruleset: str) -> list[tuple[float, str, object]]:
    """(timestamp, key, value) of the power keys in one log, in file order; lines MLCommons'
    parser refuses are left out, as result_summarizer leaves them out."""
    raw, _ = files.open_regular(path, MAX_POWER_BYTES)
    with io.TextIOWrapper(io.BufferedReader(raw), encoding="latin-1", newline=None) as handle:
        return [(ll.timestamp, ll.key, ll.value.get("value") if isinstance(ll.value, dict) else None)
                for ll in logs.stream(handle, ruleset, None, _KEYS)]


def _node(events: list[tuple[float, str, object]], time_to_train_ms: float, name: str) -> float:
    """result_summarizer's ``_compute_power_node`` over the kept events (a stable sort by time,
    as its ``loglines.sort``)."""
    prev = last = start = stop = 0.0
    total, efficiency = 0.0, 1.0
    started = stopped = False
    for t, key, value in sorted(events, key=lambda e: e[0]):
        if key == "power_measurement_start":
            start = prev = t
            started = True
        if key == "power_reading" and not stopped and started:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise NotMeasured(f"{name}: a power_reading that is not a number (result_summarizer stops "
                                  "on a TypeError there)")
            total += value * (t - prev)
            prev = t
            last = max(last, t)
        if key == "power_measurement_stop":
            stop, stopped = t, True
        if key == "conversion_eff":
            efficiency = value  # type: ignore[assignment]
    if not started:
        raise NotMeasured(f"{name}: no power_measurement_start (result_summarizer stops on a ValueError there)")
    if not stopped:
        stop = last
    if stop - start == 0:
        raise NotMeasured(f"{name}: a power log of zero duration (its stop is its start: result_summarizer "
                          "divides by zero there)")
    if isinstance(efficiency, bool) or not isinstance(efficiency, (int, float)):
        raise NotMeasured(f"{name}: a conversion_eff that is not a number")
    return efficiency * total * time_to_train_ms / (stop - start) / 1000


def _switch(events: list[tuple[float, str, object]], time_to_train_ms: float, name: str) -> float:
    """result_summarizer's ``_compute_power_sw``: the first ``interconnect_power_est`` (and the
    ``conversion_eff`` logged before it) over the run's time."""
    total: object = 0
    efficiency: object = 1.0
    for _, key, value in events:
        if key == "conversion_eff":
            efficiency = value
        if key == "interconnect_power_est":
            total = value
            break
    for value in (total, efficiency):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise NotMeasured(f"{name}: an interconnect_power_est or conversion_eff that is not a number")
    return efficiency * total * time_to_train_ms / 1000  # type: ignore[operator]


def run_energy(result_file: str, time_to_train_ms: float, ruleset: str) -> dict:
    """``{"value": joules or None, "status": one line}`` for the run logged in ``result_file``
    of a benchmark folder that has a ``power`` folder."""
    folder = Path(result_file).parent
    name = os.path.basename(result_file).split(".")[0]  # result_summarizer's result name
    power = folder / "power" / name
    nodes, switches = _logs(power, "node_*.txt"), _logs(power, "sw_*.txt")
    if not nodes:
        return {"value": None, "status": f"not measured: no power/{name}/node_*.txt for this run "
                                         "(result_summarizer stops on an AssertionError there)"}
    total = 0.0
    try:
        for path in nodes:
            total += _node(_events(path, ruleset), time_to_train_ms, f"power/{name}/{path.name}")
        for path in switches:
            total += _switch(_events(path, ruleset), time_to_train_ms, f"power/{name}/{path.name}")
    except NotMeasured as exc:
        return {"value": None, "status": logs.one_line(f"not measured: {exc}")}
    except files.Unreadable as exc:
        return {"value": None, "status": logs.one_line(f"not measured: a power log: {exc}")}
    if not math.isfinite(total) or total < 0:
        return {"value": None, "status": "not measured: the power logs give no finite, non-negative energy"}
    return {"value": total, "status": "measured: result_summarizer's power score of this run (J)"}
