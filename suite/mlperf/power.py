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
from suite.record import gitcheck

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


def _events(path: Path, ruleset: str, blobs: dict[str, str | None], name: str) -> list[tuple[float, str, object]]:
    """(timestamp, key, value) of the power keys in one log, in file order; lines MLCommons'
    parser refuses are left out, as result_summarizer leaves them out. The log's git blob id,
    computed from the bytes read, goes to ``blobs[name]`` (None until it is read to its end)."""
    blobs[name] = None
    raw, declared = files.open_regular(path, MAX_POWER_BYTES)
    blob = gitcheck.BlobHasher(declared)
    with io.TextIOWrapper(io.BufferedReader(files.HashingReader(raw, MAX_POWER_BYTES, blob)), encoding="latin-1",
                          newline=None) as handle:
        found = [(ll.timestamp, ll.key, ll.value.get("value") if isinstance(ll.value, dict) else None)
                 for ll in logs.stream(handle, ruleset, None, _KEYS)]
        handle.read()  # the rest (nothing after the last line) for the blob id
    blobs[name] = blob.hexdigest()
    return found


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


def result_name(result_file: str) -> str:
    """result_summarizer's result name of a result log (``result_0.txt`` → ``result_0``): its
    power logs are under ``power/<result name>/``."""
    return os.path.basename(result_file).split(".")[0]


def run_energy(result_file: str, time_to_train_ms: float, ruleset: str) -> dict:
    """``{"value": joules or None, "status": one line, "power_logs": {path: git blob id}}`` for the
    run logged in ``result_file`` of a benchmark folder that has a ``power`` folder; ``power_logs``
    names every power log of the run found (``power/<result name>/…``), its blob id where it was
    read to its end, else None (what the import checks against MLCommons' commit); ``unread``, where
    a power log could not be read (a link, not a regular file, over its limit): its path → why."""
    folder = Path(result_file).parent
    name = result_name(result_file)
    power = folder / "power" / name
    nodes, switches = _logs(power, "node_*.txt"), _logs(power, "sw_*.txt")
    # every power log of the run found (path under the benchmark folder) → its git blob id where read
    blobs: dict[str, str | None] = {f"power/{name}/{path.name}": None for path in nodes + switches}
    if not nodes:
        return {"value": None, "status": f"not measured: no power/{name}/node_*.txt for this run "
                                         "(result_summarizer stops on an AssertionError there)", "power_logs": blobs}
    total = 0.0
    try:
        for path in nodes:
            where = f"power/{name}/{path.name}"
            total += _node(_events(path, ruleset, blobs, where), time_to_train_ms, where)
        for path in switches:
            where = f"power/{name}/{path.name}"
            total += _switch(_events(path, ruleset, blobs, where), time_to_train_ms, where)
    except NotMeasured as exc:
        return {"value": None, "status": logs.one_line(f"not measured: {exc}"), "power_logs": blobs}
    except files.Unreadable as exc:
        return {"value": None, "status": logs.one_line(f"not measured: a power log: {exc}"), "power_logs": blobs,
                "unread": {where: logs.one_line(str(exc))}}
    if not math.isfinite(total) or total < 0:
        return {"value": None, "status": "not measured: the power logs give no finite, non-negative energy",
                "power_logs": blobs}
    return {"value": total, "status": "measured: result_summarizer's power score of this run (J)", "power_logs": blobs}
