"""What a run's event log says about the run before it trains: the claims the validator checks
the results file against (docs/rules.md, "Claims against their second record").

A results file states, once the run has ended, what was trained and where: the workload's spec
hash, scale and step budget, the seed, the system's name and accelerator, the device, the world
size, the precision and the math it set, the compile mode, the energy meter, the suite run the
run belongs to. The runner also writes each of these into the run's event log as it starts —
line by line, stamped, before the first step — with MLPerf's keys where MLPerf has one
(``submission_platform``, ``seed``, ``global_batch_size``, …: :mod:`suite.mlperf.fields`) and
goodbench's own keys (:data:`KEYS`) otherwise. :func:`header_events` is what the runner logs;
:func:`read` is how the validator reads a log's header back, attempt by attempt (a resumed
run's later workers log their own header, which must say the same). Torch-free.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from suite.record.mllog import Event

SPEC_HASH = "goodbench_spec_hash"
WORKLOAD_VERSION = "goodbench_workload_version"
DEVICE = "goodbench_device"
ACCELERATOR = "goodbench_accelerator"
ACCELERATOR_COUNT = "goodbench_accelerator_count"
WORLD_SIZE = "goodbench_world_size"
PRECISION = "goodbench_precision"
PRECISION_FLAGS = "goodbench_precision_flags"
COMPILE = "goodbench_compile"
SESSION = "goodbench_session"
ENERGY_METER = "goodbench_energy_meter"

KEYS = (SPEC_HASH, WORKLOAD_VERSION, DEVICE, ACCELERATOR, ACCELERATOR_COUNT, WORLD_SIZE, PRECISION,
        PRECISION_FLAGS, COMPILE, SESSION, ENERGY_METER)
"""goodbench's own header keys (besides MLPerf's, :func:`suite.mlperf.fields.header`)."""

REQUIRED = (SPEC_HASH, WORKLOAD_VERSION, DEVICE, ACCELERATOR, ACCELERATOR_COUNT, WORLD_SIZE, PRECISION,
            COMPILE, SESSION, ENERGY_METER, "submission_benchmark", "submission_platform",
            "submission_division", "goodbench_scale", "goodbench_max_steps", "train_samples", "seed",
            "global_batch_size")
"""What every attempt of a run logs before ``init_stop`` (the precision flags follow the job's
build, before ``init_stop`` too; a worker killed while building its job may lack them)."""


@dataclass(frozen=True)
class RunClaims:
    """The header values the runner logs for one run (:func:`header_events`)."""

    spec_hash: str
    workload_version: int
    device: str
    accelerator: str
    accelerator_count: int
    world_size: int
    precision: str
    compile: str
    session: str
    energy_method: str | None
    energy_status: str


def header_events(claims: RunClaims) -> list[tuple[str, Any, dict]]:
    """The (key, value, metadata) events of goodbench's own header, in the order logged."""
    return [
        (SPEC_HASH, claims.spec_hash, {}),
        (WORKLOAD_VERSION, claims.workload_version, {}),
        (DEVICE, claims.device, {}),
        (ACCELERATOR, claims.accelerator, {}),
        (ACCELERATOR_COUNT, claims.accelerator_count, {}),
        (WORLD_SIZE, claims.world_size, {}),
        (PRECISION, claims.precision, {}),
        (COMPILE, claims.compile, {}),
        (SESSION, claims.session, {}),
        (ENERGY_METER, claims.energy_method, {"status": claims.energy_status}),
    ]


@dataclass(frozen=True)
class Header:
    """One attempt's header as logged: key → the event (the first of that key before the
    attempt's ``init_stop``, or before its end when it has none)."""

    events: Mapping[str, Event]

    def value(self, key: str, default: Any = None) -> Any:
        event = self.events.get(key)
        return default if event is None else event.value

    def missing(self) -> list[str]:
        """The required keys this header lacks (:data:`REQUIRED`)."""
        return [k for k in REQUIRED if k not in self.events and not (
            k == "goodbench_max_steps" and "max_steps" in self.events)]


def read(attempts: Iterable[Iterable[Event]]) -> list[Header]:
    """Each attempt's header (its events from ``init_start`` up to ``init_stop``)."""
    headers = []
    for events in attempts:
        found: dict[str, Event] = {}
        for e in events:
            if e.key == "init_stop":
                break
            found.setdefault(e.key, e)
        if "max_steps" in found and "goodbench_max_steps" not in found:  # a log of before the rename
            found["goodbench_max_steps"] = found["max_steps"]
        headers.append(Header(found))
    return headers


def quality(event: Event) -> Mapping[str, Any]:
    """Every quality metric an ``eval_accuracy`` event logged (its ``quality`` metadata; the
    target's metric alone, as its value, in logs written before it was kept)."""
    logged = event.metadata.get("quality")
    if isinstance(logged, dict):
        return logged
    metric = event.metadata.get("metric")
    return {metric: event.value} if isinstance(metric, str) else {}
