"""Accelerator-hours of a result, from its stored figures only: accelerators × time to train.

- an imported MLPerf Training result: the system's accelerators × its official score (minutes;
  the round's checker's score where only that one exists, as the pages show it) ÷ 60;
- a goodbench time-to-accuracy result: the devices it ran on × its time to target (s) ÷ 3600;
- an imported NanoGPT speedrun record: its GPUs × the mean train_time its logs measured (s) ÷ 3600
  (the time its README claims is not used);
- a goodbench run on the CPU: core-hours, the cores it could use (vCPUs: :func:`billed_cores`) × its
  time (s) ÷ 3600;
- a throughput-only result, which has no time to train: accelerator-seconds per million samples
  or tokens, devices × 10⁶ ÷ the rate.

Nothing is estimated: a result without its count or its time has no accelerator-hours (None).
"""
from __future__ import annotations

import math

from suite.figures.mfu import CPU_SOCKET_MOST_CORES
from suite.record import results

SECONDS_PER_HOUR = 3600.0
MINUTES_PER_HOUR = 60.0
PER_MILLION = 1e6
MOST_THREADS_PER_CORE = 2  # hardware threads per core (x86's SMT): a host's logical cores are at most twice its cores
SELF_REPORTED = "; self-reported: no other record in the file counts them"
AFFINITY = "the cores the run could use (its CPU affinity, as its host-load snapshots counted them)" + SELF_REPORTED
SNAPSHOT_HOST = "the host's cores as its host-load snapshots counted them (written before the run's own were)" + SELF_REPORTED
RECORDED_FEWER = "the host's logical cores as the file records them, fewer than its host-load snapshots counted" + SELF_REPORTED
RECORDED = "the host's logical cores as the file records them (no host-load snapshot counted the run's)" + SELF_REPORTED
CAPPED = (f"the most logical cores its recorded sockets can have ({MOST_THREADS_PER_CORE} per core of "
          f"{CPU_SOCKET_MOST_CORES}-core sockets), fewer than the file records (no host-load snapshot counted the run's)"
          + SELF_REPORTED)


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def mlperf_minutes(doc: dict) -> float | None:
    """The score an imported MLPerf document is shown with, in minutes: the official one, else
    the round's checker's (``score.at_round``), else None."""
    score = doc.get("score") or {}
    minutes = _number(score.get("minutes"))
    if minutes is None:
        minutes = _number((score.get("at_round") or {}).get("minutes"))
    return minutes


def mlperf(doc: dict) -> float | None:
    """Accelerator-hours of an imported MLPerf Training document: accelerators × score ÷ 60;
    None without a score, or without a count of accelerators above 0 (a CPU-only system)."""
    count = (doc.get("system") or {}).get("accelerators")
    minutes = mlperf_minutes(doc)
    if minutes is None or isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        return None
    return count * minutes / MINUTES_PER_HOUR


def speedrun(record: dict) -> float | None:
    """Accelerator-hours (GPU-hours) of an imported speedrun record: its GPUs × its measured time
    (``measured_s``, the mean final train_time of its logs) ÷ 3600; None without either."""
    count = record.get("accelerators")
    if isinstance(count, bool) or not isinstance(count, int):
        return None
    return to_target(count, record.get("measured_s"))


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}


def billed_cores(doc: dict) -> tuple[int, str] | None:
    """The vCPUs a goodbench result on the CPU is priced for, and what the count is: the cores its
    runs could use, as their host-load snapshots counted them (``runs[*].host_load.*.cores``, the
    process's CPU affinity: a run pinned to 2 cores of a 64-core host is billed 2; the most any
    snapshot counted), held to the host's recorded logical cores where those are fewer (the
    physics check holds the recorded cores to the snapshots' in the same way); in a file without
    snapshots, the host's recorded logical cores (``system.host.cpu_logical_cores``, which nothing
    measured), at most :data:`MOST_THREADS_PER_CORE` per core of its recorded sockets (:data:`CAPPED`
    says so only where that lowered the count). None off the CPU, or with no count."""
    system = _table(doc.get("system"))
    if (system.get("accelerator") or {}).get("type") != "cpu":
        return None
    host = _table(system.get("host"))
    recorded = results.count(host.get("cpu_logical_cores"))
    snaps = [snap for run in (doc.get("runs") or []) if isinstance(run, dict) and isinstance(run.get("host_load"), dict)
             for snap in run["host_load"].values() if isinstance(snap, dict) and results.count(snap.get("cores"))]
    if snaps:
        cores = max(snap["cores"] for snap in snaps)
        if recorded is not None and recorded < cores:
            return recorded, RECORDED_FEWER
        # files written before host_cores was recorded counted the host's cores as cores
        return cores, AFFINITY if all("host_cores" in snap for snap in snaps) else SNAPSHOT_HOST
    if recorded is None:
        return None
    most = (results.count(host.get("cpu_sockets")) or 1) * CPU_SOCKET_MOST_CORES * MOST_THREADS_PER_CORE
    return (recorded, RECORDED) if recorded <= most else (most, CAPPED)


def core_hours(doc: dict, seconds: float | None) -> float | None:
    """Core-hours of a goodbench result on the CPU: the cores it is billed for (the vCPUs a cloud
    prices: :func:`billed_cores`) × its time (s) ÷ 3600; None when its accelerator is not the CPU
    or no count of its cores was recorded."""
    billed = billed_cores(doc)
    return None if billed is None else to_target(billed[0], seconds)


def to_target(devices: int | None, seconds: float | None) -> float | None:
    """Accelerator-hours of a time-to-target result: devices × time to target (s) ÷ 3600."""
    seconds = _number(seconds)
    if seconds is None or seconds < 0 or not devices or devices <= 0:
        return None
    return devices * seconds / SECONDS_PER_HOUR


def seconds_per_million(devices: int | None, per_second: float | None) -> float | None:
    """Accelerator-seconds per million samples (or tokens) of a throughput result: devices × 10⁶
    ÷ the rate; None without a rate above 0."""
    rate = _number(per_second)
    if rate is None or rate <= 0 or not devices or devices <= 0:
        return None
    return devices * PER_MILLION / rate


def cost(accelerator_hours: float | None, usd_per_hour: float | None) -> float | None:
    """Cost to train in USD: accelerator-hours × the price per accelerator-hour (None: either missing)."""
    if accelerator_hours is None or usd_per_hour is None:
        return None
    return accelerator_hours * usd_per_hour
