"""Accelerator-hours of a result, from its stored figures only: accelerators × time to train.

- an imported MLPerf Training result: the system's accelerators × its official score (minutes;
  the round's checker's score where only that one exists, as the pages show it) ÷ 60;
- a goodbench time-to-accuracy result: the devices it ran on × its time to target (s) ÷ 3600;
- an imported NanoGPT speedrun record: its GPUs × the mean train_time its logs measured (s) ÷ 3600
  (the time its README claims is not used);
- a goodbench run on the CPU: core-hours, the host's logical cores (vCPUs) × its time (s) ÷ 3600;
- a throughput-only result, which has no time to train: accelerator-seconds per million samples
  or tokens, devices × 10⁶ ÷ the rate.

Nothing is estimated: a result without its count or its time has no accelerator-hours (None).
"""
from __future__ import annotations

import math

SECONDS_PER_HOUR = 3600.0
MINUTES_PER_HOUR = 60.0
PER_MILLION = 1e6


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


def core_hours(system: dict, seconds: float | None) -> float | None:
    """Core-hours of a goodbench result on the CPU: the host's logical cores (the vCPUs a cloud
    prices) × its time (s) ÷ 3600; None when its accelerator is not the CPU or the host's cores
    were not recorded."""
    if (system.get("accelerator") or {}).get("type") != "cpu":
        return None
    cores = (system.get("host") or {}).get("cpu_logical_cores")
    if isinstance(cores, bool) or not isinstance(cores, int):
        return None
    return to_target(cores, seconds)


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
