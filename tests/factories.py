"""Synthetic, *valid* results documents for tests and benchmarks of the site.

Every figure a validator recomputes is computed here with the functions the runner writes it with
and the validator recomputes it with (:mod:`suite.figures.derive`: throughput from the step times, phases,
MFU from the FLOP model and the peak table, time to target from the curve, energy per sample, mean
power, goodput from the event log, the communication share); spec hashes come from the registry.
Documents are marked synthetic in their settings and energy
method, and system names start with "synthetic" unless a test passes its own.
"""
from __future__ import annotations

import copy
import datetime as dt
import math
import uuid

import numpy as np

from suite import __version__
from suite.figures import ceiling_method, derive
from suite.figures import mfu as mfu_meter
from suite.mlperf import fields as mlperf_fields
from suite.record import claims, mllog
from suite.validate.device_rules import flags_on
from suite.validate.shared import version_due
from workloads import registry

# (accelerator name as NVML reports it, type, count); CPU entries have no peak, so no MFU.
ACCELERATORS = (
    ("NVIDIA H100 80GB HBM3", "cuda", 1),
    ("NVIDIA H100 80GB HBM3", "cuda", 8),
    ("NVIDIA A100-SXM4-80GB", "cuda", 1),
    ("NVIDIA L4", "cuda", 1),
    ("NVIDIA GeForce RTX 4090", "cuda", 1),
    ("AMD EPYC 7B13", "cpu", 1),
)
# Synthetic files are written a day or two before it (``days_ago``): after the first rules came
# into force (2026-11-23: a file naming no rules version is v1, rule created-before-rules) and
# before the tests run.
BASE_TIME = dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC)


QUIET_HOST = {"start": {"load_1m": 0.4, "cores": 64, "other_cores": 0.0, "busy": []},
              "end": {"load_1m": 0.9, "cores": 64, "other_cores": 0.0, "busy": []}, "gpu_other_processes_end": None}


def stamp(when: dt.datetime) -> str:
    """A results-format timestamp (UTC, to the second, Z suffix)."""
    return when.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def synthetic_run(workload_id: str, scale: str, seed: int, *, rng: np.random.Generator,
                  accelerator: str, device_type: str, mfu_level: float = 0.3,
                  cpu_step_s: float = 0.5, converge_at_eval: int | None = 1, energy: bool = True,
                  goodput: bool = False, started: dt.datetime = BASE_TIME, world_size: int = 1,
                  nnodes: int = 1, parallel: str = "ddp", session: str = "0" * 32,
                  accelerator_count: int = 1, system_name: str | None = None,
                  ceiling_flops: float | None = None) -> dict:
    """One complete run record; the target (if any) is met at eval number ``converge_at_eval``, or
    with ``converge_at_eval=None`` at the last eval of a run of all the spec's ``max_steps`` steps
    (an eval is added at the last step if the spec's eval period does not end there).

    With ``world_size`` > 1 it is a run over that many processes on ``nnodes`` nodes: the peak
    (hence MFU) is that of all the devices, and the record has a ``distributed`` section.

    The run carries the event log the runner writes (:func:`event_log`), its header naming
    ``session``, the system (``system_name``, default the accelerator × ``accelerator_count``)
    and the run's settings; ``ceiling_flops`` is one device's measured matmul ceiling for its
    precision (default :func:`default_ceiling`)."""
    workload = registry.get(workload_id)
    spec = workload.spec(scale)
    precision = spec.precision if device_type == "cuda" else "fp32"
    flops = workload.flops_per_step(spec)
    peak, peak_source = derive.peak(accelerator, precision, devices=world_size)  # every rank's devices
    ceiling = ceiling_flops if ceiling_flops is not None else default_ceiling(accelerator, precision)
    # without a peak (a CPU) the step takes cpu_step_s, or longer where the ceiling needs it (rules v7)
    # on a GPU at least a launch-bound 200 µs (a small model's step is its kernels' launches; rule step-too-fast)
    mean_step = max(2e-4, flops / (peak * mfu_level)) if peak else \
        max(cpu_step_s, flops / (ceiling * world_size * mfu_level))
    target = spec.target
    full = target is None or converge_at_eval is None
    steps = spec.max_steps if full else min(spec.max_steps, spec.eval_every * converge_at_eval)
    times = rng.lognormal(np.log(mean_step), 0.08, size=steps)
    times[:spec.warmup_steps] *= 3.0  # compilation and warm-up steps are slower
    step_times = [round(float(t), 7) for t in times]
    eval_s = 0.02 * spec.eval_every * mean_step
    if device_type == "cuda":  # a forward of the eval set at the run's own rate (rule eval-too-fast)
        eval_s = max(eval_s, (workload.eval_flops(spec) or 0.0) / flops * mean_step)
    curve, elapsed, t_eval_total = [], 0.0, 0.0
    evals = [s for s in range(spec.eval_every, steps + 1, spec.eval_every)] or [steps]
    if converge_at_eval is None and evals[-1] != steps:
        evals.append(steps)
    for k, step in enumerate(evals, start=1):
        elapsed = sum(step_times[:step]) + k * eval_s
        t_eval_total += eval_s
        loss = 4.0 - (k / len(evals)) * (4.0 - (target.value if target else 2.0)) * 1.01
        # another seed, another curve (a curve shared by two seeds is one run's: rule seed-copy)
        point = {"step": step, "time_s": elapsed, "train_loss": (loss - 0.05) * (1 + 0.01 * seed)}
        if target and step == evals[-1]:  # met here and only here
            point[target.metric] = target.value - 0.01 if target.direction == "min" else target.value + 0.01
        elif target:  # each seed's own too, short of the target (× at most 1.1 for seeds ≤ 10)
            point[target.metric] = (loss if target.direction == "min" else target.value * 0.9 * k / len(evals)) \
                * (1 + 0.01 * seed)
        curve.append(point)
    samples, tokens = workload.samples_per_step(spec), workload.tokens_per_step(spec)
    tput, _ = derive.throughput(step_times, warmup_steps=spec.warmup_steps, samples_per_step=samples,
                                tokens_per_step=tokens)
    time_to_train = elapsed
    wall = 0.5 + 2.0 + time_to_train + 0.1  # data load, init, the run, 0.1 s of other
    phases = derive.phases(step_times, derive.warmup_mask(steps, spec.warmup_steps),
                           {"data_load": 0.5, "init": 2.0, "eval": t_eval_total}, wall)
    method, status, spans = _energy(energy, tput, time_to_train, target is not None, accelerator, world_size)
    metrics = derive.metrics(
        flops_per_step=flops, samples_per_step=samples, tokens_per_step=tokens, step_times_s=step_times,
        warmup_steps=spec.warmup_steps, peak_flops=peak, peak_source=peak_source,
        ceiling=derive.all_devices(ceiling, world_size), target=target,
        tta_s=derive.time_to_target(curve, target), curve=curve, energy_method=method, energy_status=status,
        energy=spans)
    metrics.update(mean_power_w=derive.mean_power(metrics["energy_to_train_j"], time_to_train), max_power_w=None)
    device = "cuda:0" if device_type == "cuda" else "cpu"
    record = {
        "run_id": uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | int(rng.integers(0, 2**63))).hex,
        "workload": {"id": workload.id, "version": workload.version,
                     "spec_hash": workload.spec_hash(scale), "kind": workload.kind},
        "scale": scale, "seed": seed, "device": device, "precision": precision,
        "precision_flags": flags_on(precision, device_type),
        "status": "complete", "error": None, "started_at": stamp(started),
        "wall_s": wall, "time_to_train_s": time_to_train, "phases_s": phases, "steps": steps,
        "step_times_s": step_times, "curve": curve, "metrics": metrics,
        "host_load": QUIET_HOST,  # as today's runner records it: nothing else ran (a file without it is left out of comparisons)
    }
    header = run_header(workload_id, scale, seed, device=device, precision=precision, session=session,
                        accelerator=accelerator, accelerator_count=accelerator_count,
                        system_name=system_name or f"{accelerator} x{accelerator_count}",
                        world_size=world_size, energy_method=method, energy_status=status)
    record["event_log"] = event_log(step_times, evals, spec.warmup_steps, phases, eval_s, started,
                                    curve, target.metric if target else "train_loss", header=header,
                                    log_every=spec.log_every)
    if goodput:  # the goodput the suite recomputes from the log
        record["goodput"] = derive.goodput(record["event_log"], flops, peak)
    if world_size > 1:
        record["distributed"] = distributed_section(
            rng, world_size, nnodes, parallel, workload.samples_per_step(spec), step_times[spec.warmup_steps:],
            phases, device_type, metrics["energy_to_train_j"])
    return record


def distributed_section(rng: np.random.Generator, world_size: int, nnodes: int, parallel: str,
                        global_batch: int, steady: list[float], phases: dict, device_type: str,
                        energy_j: float | None) -> dict:
    """A run record's ``distributed`` section as suite.run.distributed writes it: rank 0's steady step
    times are the run's, other ranks' are jittered copies; energy is split over the ranks."""
    if global_batch % world_size or world_size % nnodes:
        raise ValueError(f"a global batch of {global_batch} does not split over {world_size} ranks "
                         f"on {nnodes} nodes")
    local = world_size // nnodes
    base = np.asarray(steady, dtype=np.float64)
    shares = rng.uniform(0.9, 1.1, size=world_size)
    ranks = []
    for rank in range(world_size):
        times = base if rank == 0 else base * rng.uniform(0.97, 1.08)
        ranks.append({
            "rank": rank, "node_rank": rank // local, "local_rank": rank % local,
            "host": f"synthetic-node{rank // local}",
            "device": f"cuda:{rank % local}" if device_type == "cuda" else "cpu",
            "step_time_s": derive.rank_step_times(times),
            "phases_s": {"data_load": phases["data_load"], "init": phases["init"] * float(shares[rank]),
                         "eval": phases["eval"] * float(shares[rank])},
            "telemetry_status": "not measured: synthetic test data", "telemetry_summary": None,
            "energy_to_train_j": None if energy_j is None else energy_j * float(shares[rank] / shares.sum()),
        })
    means = [r["step_time_s"]["mean"] for r in ranks]
    method = "3 rounds of 2 steps with and 2 without DDP's gradient all-reduce (no_sync), after the run"
    if parallel == "ddp":
        with_sync = float(np.median(base))
        communication = derive.communication(with_sync, with_sync * float(rng.uniform(0.7, 0.95)), method)
    else:
        communication = derive.communication(None, None, method, status="not measured: FSDP's all-gathers "
                                             "cannot be switched off to time the step without communication")
    return {"world_size": world_size, "nnodes": nnodes, "local_world_size": local,
            "backend": "nccl" if device_type == "cuda" else "gloo", "parallel": parallel,
            "global_batch": global_batch, "per_rank_batch": global_batch // world_size,
            "micro_batch": global_batch // world_size, "grad_accumulation_steps": 1, "ranks": ranks,
            "straggler_spread": derive.straggler_spread(means, world_size), "communication": communication}


def default_ceiling(accelerator: str, precision: str) -> float:
    """A synthetic measured matmul ceiling of one device: 80% of the table's peak (the ratio
    measured on an H100, docs/measurement.md's GPU figures), or 2 TFLOP/s for a device the table lacks (the
    synthetic CPU, a 64-core AMD EPYC 7B13: 64 Zen 3 cores × 32 fp32 FLOPs per cycle × 2.45 GHz
    is 5 TFLOP/s at its peak)."""
    peak, _ = derive.peak(accelerator, precision)
    return 0.8 * peak if peak else 2e12


def run_header(workload_id: str, scale: str, seed: int, *, device: str, precision: str, session: str,
               accelerator: str, accelerator_count: int, system_name: str, world_size: int = 1,
               energy_method: str | None = None, energy_status: str = "not measured: synthetic test data",
               division: str = "closed", compile_mode: str = "off") -> list[tuple[str, object, dict]]:
    """The (key, value, metadata) events the runner logs as a run starts: MLPerf's header
    (:func:`suite.mlperf.fields.header`), seed, batch, learning rate and goodbench's claims
    (:func:`suite.record.claims.header_events`), then the precision flags the job was built with."""
    workload = registry.get(workload_id)
    spec = workload.spec(scale)
    batch = workload.samples_per_step(spec)
    sub = mlperf_fields.Submission(org=system_name, platform=system_name, division=division)
    events = [(k, v, {}) for k, v in mlperf_fields.header(workload_id, spec, scale, batch, 1, sub)]
    events += [("seed", seed, {}), ("global_batch_size", batch, {})]
    if getattr(spec, "lr", None) is not None:
        events.append(("opt_base_learning_rate", spec.lr, {}))
    events += claims.header_events(claims.RunClaims(
        spec_hash=workload.spec_hash(scale), workload_version=workload.version, device=device,
        accelerator=accelerator, accelerator_count=accelerator_count, world_size=world_size,
        precision=precision, compile=compile_mode, session=session, energy_method=energy_method,
        energy_status=energy_status))
    events.append((claims.PRECISION_FLAGS, flags_on(precision, device.split(":")[0]), {}))
    return events


def event_log(step_times: list[float], evals: list[int], warmup_steps: int, phases: dict, eval_s: float,
              started: dt.datetime, curve: list[dict] | None = None, metric: str = "train_loss",
              header: list[tuple[str, object, dict]] | None = None, log_every: int | None = None) -> list[str]:
    """``:::MLLOG`` lines of one uninterrupted run as the runner writes them: init with the run's
    ``header`` (:func:`run_header`), warm-up, step blocks between evaluations, the training loss
    every ``log_every`` steps (the curve's ``train_loss`` at the step), each evaluation's
    ``eval_accuracy`` (``metric`` of the ``curve`` point at its step, with every quality value),
    ``run_stop`` with the run's status and last step. The ``other`` phase lies between set-up and
    ``run_start``, so the log's run_stop is the curve's last time after run_start (the validator
    cross-checks the log and the figures: suite/validate/stream_rules.py)."""
    lines, t = [], started.timestamp()
    points = {p["step"]: p for p in curve or []}

    def log(kind: str, key: str, value=None, **meta) -> None:
        lines.append(mllog.format_event(mllog.Event(time_ms=t * 1000.0, event_type=kind, key=key, value=value,
                                                    metadata={"file": "tests/factories.py", "lineno": 0, **meta})))

    log(mllog.INTERVAL_START, "init_start")
    for key, value, meta in header or ():
        log(mllog.POINT_IN_TIME, key, value, **meta)
    t += phases["data_load"] + phases["init"]
    log(mllog.INTERVAL_END, "init_stop")
    t += phases["other"]
    log(mllog.INTERVAL_START, "run_start")
    first = 1
    losses = set(range(log_every, len(step_times) + 1, log_every)) if log_every else set()
    stops = set(evals) | {len(step_times)} | ({warmup_steps} if 0 < warmup_steps < len(step_times) else set())
    stops |= losses
    for stop in sorted(stops):
        kind = "warmup" if stop <= warmup_steps else "block"
        seconds = sum(step_times[first - 1:stop])
        log(mllog.INTERVAL_START, f"{kind}_start", first_step=first)
        t += seconds
        log(mllog.INTERVAL_END, f"{kind}_stop", first_step=first, last_step=stop, step_count=stop - first + 1,
            step_s=seconds, data_wait_s=0.0)
        if stop in losses:
            log(mllog.POINT_IN_TIME, "train_loss", _loss_at(stop, curve or []), step=stop)
        if stop in evals:
            log(mllog.INTERVAL_START, "eval_start", step=stop)
            t += eval_s
            log(mllog.INTERVAL_END, "eval_stop", step=stop)
            if stop in points:
                quality = {k: v for k, v in points[stop].items() if k not in ("step", "time_s", "train_loss")}
                log(mllog.POINT_IN_TIME, "eval_accuracy", points[stop].get(metric), step=stop, metric=metric,
                    quality=quality or {metric: points[stop].get(metric)})
        first = stop + 1
    log(mllog.INTERVAL_END, "run_stop", status="success", step=len(step_times))
    return lines


def _loss_at(step: int, curve: list[dict]) -> float:
    """The training loss the synthetic run logs at ``step``: the next evaluation's ``train_loss``
    (so that each curve point's loss is the last one logged before it)."""
    later = [p for p in curve if p["step"] >= step]
    return float((later[0] if later else curve[-1])["train_loss"]) if curve else 1.0


def _energy(measured: bool, tput: dict | None, time_to_train: float, tta: bool, accelerator: str,
            devices: int = 1) -> tuple[str | None, str, tuple[float | None, float | None, float | None]]:
    """The synthetic energy meter's method, status and spans (to train, to target, window) for
    :func:`suite.figures.derive.energy_figures`: a constant power within the devices' board power."""
    method = "nvml_total_energy" if measured else None  # the meter a GPU run reads
    status = "ok: synthetic test data" if measured else "not measured: synthetic test data"
    if not measured or tput is None:
        return method, status, (None, None, None)
    peak = mfu_meter.find_peak(accelerator)
    power_w = derive.all_devices(0.6 * peak.board_power_w if peak else 100.0, devices)
    return method, status, (power_w * time_to_train, power_w * time_to_train if tta else None,
                            power_w * tput["window"]["seconds"])


def synthetic_document(system_name: str, *, rng: np.random.Generator, accelerator: int = 0,
                       scale: str = "full", seeds: int | None = None, workloads: tuple[str, ...] | None = None,
                       days_ago: float = 1.0, energy: bool = True, goodput: bool = False,
                       mfu_level: float | None = None, world_size: int = 1, nnodes: int = 1,
                       parallel: str = "ddp", interconnect: str | None = None, full_length: bool = False) -> dict:
    """A whole results document for one system: ``seeds`` runs of each workload (default: as many as the rules need).

    Each run meets its target at its first or second eval, or with ``full_length`` trains all its
    ``max_steps`` steps and meets it at the last eval, as a full-scale run does.

    ``world_size``/``nnodes``/``parallel`` make every run a distributed one (see :func:`synthetic_run`);
    ``interconnect`` ("nvswitch", "nvlink", "pcie") adds ``system.interconnect`` with that summary."""
    name, device_type, count = ACCELERATORS[accelerator % len(ACCELERATORS)]
    started = BASE_TIME - dt.timedelta(days=days_ago)  # the suite run's start: its runs follow one another
    session = {"id": uuid.UUID(int=int(rng.integers(0, 2**63))).hex, "started_at": stamp(started)}
    level = mfu_level if mfu_level is not None else float(rng.uniform(0.15, 0.45))
    precision = None
    runs = []
    t = started + dt.timedelta(seconds=1)
    for wid in workloads or tuple(registry.WORKLOADS):
        n = seeds or derive.required_seeds(scale, registry.get(wid).kind)
        for seed in range(1, n + 1):
            run = synthetic_run(
                wid, scale, seed, rng=rng, accelerator=name, device_type=device_type, mfu_level=level,
                cpu_step_s=float(rng.uniform(0.3, 0.9)),
                converge_at_eval=None if full_length else int(rng.integers(1, 3)),
                energy=energy and device_type == "cuda", goodput=goodput,
                started=t, world_size=world_size, nnodes=nnodes, parallel=parallel,
                session=session["id"], accelerator_count=count, system_name=system_name)
            runs.append(run)
            precision = run["precision"]
            t += dt.timedelta(seconds=math.ceil(run["wall_s"]) + 1)
    created = t + dt.timedelta(seconds=1)
    ceilings = {p: {"flops": default_ceiling(name, p), "trials_flops": [default_ceiling(name, p)], "n": 8192,
                    "precision": p, "method": ceiling_method.first(8192, p, 3, 1)}
                for p in sorted({r["precision"] for r in runs} or {precision or "fp32"})}
    doc = {
        "schema_version": 1,
        "suite": {"name": "goodbench", "version": __version__},
        "created_at": stamp(created),
        "rules_version": version_due(created),  # what a goodbench writing then names (rule rules-version-behind)
        "system": {
            "name": system_name,
            "accelerator": {"type": device_type, "name": name, "count": count,
                            "memory_gib": 80.0 if device_type == "cuda" else 256.0,
                            "compute_capability": "9.0" if device_type == "cuda" else None,
                            "multiprocessors": 132 if device_type == "cuda" else None},
            "host": {"cpu_model": "AMD EPYC 7B13", "cpu_cores": 64, "memory_gib": 256.0,
                     "os": "Linux 6.8.0", "arch": "x86_64"},
            "software": {"python": "3.11.7", "torch": "2.13.0", "cuda": "12.8" if device_type == "cuda" else None,
                         "cudnn": None, "driver": "580.65" if device_type == "cuda" else None,
                         "implementation": "cpython"},
        },
        "settings": {"scale": scale, "device": "cuda" if device_type == "cuda" else "cpu",
                     "workloads": list(workloads or registry.WORKLOADS), "seeds_per_workload": seeds,
                     "division": "closed", "compile": "off", "session": session,
                     "peak_tflops_override": None, "skipped": [], "interrupted": False,
                     "command": ["goodbench", "run", "(synthetic test data)"], "matmul_ceiling": ceilings},
        "runs": runs,
    }
    if world_size > 1:
        doc["settings"]["distributed"] = {"world_size": world_size, "nnodes": nnodes,
                                          "backend": runs[0]["distributed"]["backend"], "parallel": parallel,
                                          "micro_batch": None}
    if interconnect is not None:
        doc["system"]["interconnect"] = {"summary": interconnect, "summary_status": "ok",
                                         "gpus_status": "ok", "gpus": [], "gpu_pairs": [], "infiniband": []}
    return doc


RECLOCK = 0.01  # a re-run's blocks take 0.5–1.5 × this share of their time more or less than the run's


def _boundaries(events: list, clock: np.random.Generator) -> dict[int, float]:
    """How far each boundary between two consecutive blocks moves (seconds, by the index of the
    first block's stop): the stop, what was logged after it and the next ``block_start`` together,
    earlier or later in turn by 0.5–1.5 × :data:`RECLOCK` of the shorter block — so the time moves
    from one block to the next, no stamp passes another, and the first start and last stop stay.
    The blocks are the ``block_stop`` ones, and the ``warmup_stop`` too where one ``block_stop`` is
    logged."""
    stops = [k for k, e in enumerate(events) if e.key == "block_stop"]
    if len(stops) == 1:
        stops = [k for k, e in enumerate(events) if e.key in ("block_stop", "warmup_stop")]
    moves: dict[int, float] = {}
    for n, (k, after) in enumerate(zip(stops, stops[1:])):
        start = next((j for j in range(k + 1, after) if events[j].key == "block_start"), None)
        if start is None:
            continue
        shorter = min(events[k].metadata["step_s"], events[after].metadata["step_s"])
        moves[k] = (-1) ** n * RECLOCK * clock.uniform(0.5, 1.5) * shorter
    return moves


def retimed(run: dict, variant: int = 1) -> dict:
    """``run`` (changed in place) with step times of its own, as a re-run measures them: each
    logged block's times shuffled and each given jitter of its own (up to ±10%, a generator seeded
    with ``variant``), then scaled to the block's sum — to the validator another run's record: the
    order of its jitter (its step-time fingerprint, suite/trust/fingerprint.py) and the values of
    each block (suite/trust/shuffles.py) are others, each variant's its own — and a clock of its
    own (suite/trust/log_times.py): each boundary between two blocks moved (:func:`_boundaries`,
    each variant its own; an evaluation logged there, and its curve point's time, with it), each
    block's logged sum with the time it gained or lost, so the first start, the last stop and every
    figure stay as they were and no stamp passes another; the window's step-time statistics
    recomputed."""
    times = run["step_times_s"]
    rng = np.random.default_rng(1000 + variant)
    clock = np.random.default_rng(3000 + variant)  # apart: each block's jitter as before
    events = mllog.parse(run["event_log"])
    moves = _boundaries(events, clock)
    shift, gained, evals = 0.0, 0.0, {}  # the boundary's move now; the block's start's move
    for k, event in enumerate(events):
        metadata = event.metadata
        if event.key in ("block_stop", "warmup_stop"):
            first, last = metadata["first_step"], metadata["last_step"]
            block = np.asarray(times[first - 1:last], dtype=np.float64)
            new = block[rng.permutation(len(block))] * (1 + rng.uniform(-0.1, 0.1, len(block)))
            shift = moves.get(k, 0.0)
            change = shift - gained
            new *= (block.sum() + change) / new.sum()
            times[first - 1:last] = [round(float(t), 7) for t in new]
            if change:
                metadata = {**metadata, "step_s": metadata["step_s"] + change}
        if event.key == "eval_stop" and shift:
            evals[metadata.get("step")] = shift
        if shift or metadata is not event.metadata:
            events[k] = mllog.Event(time_ms=event.time_ms + 1000 * shift, event_type=event.event_type, key=event.key,
                                    value=event.value, metadata=metadata, namespace=event.namespace)
        if event.key in ("block_start", "warmup_start"):
            gained, shift = shift, 0.0  # this block starts moved; what follows its stop moves anew
    for point in run.get("curve") or []:
        point["time_s"] += evals.get(point.get("step"), 0.0)
    run["event_log"] = [mllog.format_event(e) for e in events]
    throughput = (run.get("metrics") or {}).get("throughput")
    if isinstance(throughput, dict) and isinstance(throughput.get("window"), dict):
        window = throughput["window"]
        parts = window.get("segments") or [[window["first_step"], window["last_step"]]]
        steady = np.asarray([t for first, last in parts for t in times[first - 1:last]], dtype=np.float64)
        p50, p90, p99 = np.percentile(steady, [50, 90, 99])
        throughput["step_time_s"] = {"mean": float(steady.mean()), "p50": float(p50), "p90": float(p90),
                                     "p99": float(p99), "max": float(steady.max())}
    return run


def reproduction_of(doc: dict, sha: str, system: str = "auditor-box", variant: int = 1,
                    later_s: float = 60.0) -> dict:
    """A reproduction document (``goodbench reproduce``) of every run of ``doc``, stored as
    ``sha``, trained ``later_s`` seconds after the original was created on ``system``: the same
    records under new run ids, with the step times of their ``variant`` (:func:`retimed`; a re-run
    never repeats the step times to the last digit), their logs moved there and naming the
    system and a session of its own."""
    from suite.figures import reproducibility as tolerance
    from suite.run.reproduce import comparison, inputs, planning, training

    rep = copy.deepcopy(doc)
    rep["system"]["name"] = system
    start = dt.datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00")) + dt.timedelta(seconds=later_s)
    shift = start.timestamp() - log_span(doc)[0]
    session = {"id": uuid.uuid4().hex, "started_at": stamp(start - dt.timedelta(seconds=1))}
    original = inputs.Original("orig.json", sha, doc)
    comparisons = []
    for i, run in enumerate(doc["runs"]):
        record = retimed_copy(run, shift, {"submission_platform": system, claims.SESSION: session["id"]}, variant)
        rep["runs"][i] = record
        target = planning.Target(i, run, run["workload"]["id"], run["seed"], "cpu", run["precision"],
                                 planning.Layout(), None, tolerance.EXACT)
        comparisons.append(comparison.compare_run(target, record, 0.2))
    rep["settings"]["reproduces"] = training.section(original, comparisons, 0.2)
    rep["settings"]["session"] = session
    rep["created_at"] = stamp(dt.datetime.fromtimestamp(log_span(rep)[1] + 2, dt.UTC))
    rep.pop("summary", None)
    return rep


def with_strings(doc: dict, text: str) -> dict:
    """A copy of ``doc`` where every free-text string a submitter controls is ``text`` (also in
    the event logs' header, which names the system and the division).

    Runs keep a valid status; a failed copy of the first run carries ``text`` as its error.
    """
    doc = copy.deepcopy(doc)
    system = doc["system"]
    system["name"] = text
    system["accelerator"]["name"] = text
    system["accelerator"]["compute_capability"] = text
    system["host"] = {key: text for key in system["host"]} | {text: text}
    system["software"] = {key: text for key in system["software"]} | {text: text}
    settings = doc["settings"]
    settings["device"] = text
    settings["command"] = [text]
    settings["skipped"] = [{"workload": text, "reason": text}]
    settings["division"], settings["open_changes"] = "open", [text]
    settings[text] = text
    header = {"submission_platform": text, "submission_org": text, claims.ACCELERATOR: text,
              "submission_division": "open"}
    for run in doc["runs"]:
        metrics = run["metrics"]
        for key in [k for k in metrics if k.endswith("_status")]:
            metrics[key] = f"ok: {text}" if metrics[key] and str(metrics[key]).startswith("ok") else text
        metrics["peak_flops"] = None  # the accelerator name no longer matches the peak table
        metrics["mfu"] = None
        run[text] = text
        lines = relogged(run["event_log"], values=header)
        last = mllog.parse(lines)[-1].time_ms  # a point in time of its own, at the end of the log
        run["event_log"] = [*lines, mllog.format_event(mllog.Event(
            time_ms=last, event_type=mllog.POINT_IN_TIME, key=text, value=text, metadata={text: text}))]
        if run.get("goodput") is not None:  # no peak now: no effective goodput
            run["goodput"] = derive.goodput(run["event_log"], metrics["flops_per_step"], None)
    doc["runs"].append(failed_copy(doc, doc["runs"][0], text))
    return doc


def set_status(run: dict, status: str, error: str | None = None) -> dict:
    """``run`` ended with ``status`` (and ``error``), its log's ``run_stop`` saying so too."""
    run["status"], run["error"] = status, error
    success = status == "complete"
    run["event_log"] = relogged(run["event_log"], metadata={"run_stop": {"status": "success" if success else "aborted"}})
    return run


def relogged(lines: list[str], *, shift_s: float = 0.0, values: dict | None = None,
             metadata: dict | None = None) -> list[str]:
    """A run's log lines with every stamp moved by ``shift_s``, the header events in ``values``
    given those values, and the events keyed in ``metadata`` given those metadata fields."""
    out = []
    for e in mllog.parse(lines):
        value = (values or {}).get(e.key, e.value)
        meta = {**e.metadata, **(metadata or {}).get(e.key, {})}
        out.append(mllog.format_event(mllog.Event(time_ms=e.time_ms + 1000.0 * shift_s, event_type=e.event_type,
                                                  key=e.key, value=value, metadata=meta, namespace=e.namespace)))
    return out


def retimed_copy(run: dict, shift_s: float, values: dict | None = None, variant: int | None = 1) -> dict:
    """``run`` trained again ``shift_s`` seconds later: a new run id, its log moved (its header's
    events keyed in ``values`` given those values), its step times of ``variant``
    (:func:`retimed`: the same figures, another sequence: not the same run; None: the same
    step times, which makes it the same run copied)."""
    copied = copy.deepcopy(run) if variant is None else retimed(copy.deepcopy(run), variant)
    copied["event_log"] = relogged(copied["event_log"], shift_s=shift_s, values=values)
    started = dt.datetime.fromisoformat(run["started_at"].replace("Z", "+00:00")) + dt.timedelta(seconds=shift_s)
    copied.update(run_id=uuid.uuid4().hex, started_at=stamp(started))
    return copied


def log_span(doc: dict) -> tuple[float, float]:
    """(first init_start, last run_stop) of every run's log in ``doc``, seconds since the epoch."""
    events = [e for r in doc["runs"] for e in mllog.parse(r.get("event_log") or [])]
    return (min(e.t for e in events if e.key == "init_start"), max(e.t for e in events if e.key == "run_stop"))


def failed_copy(doc: dict, run: dict, error: str) -> dict:
    """A failed run made of ``run``: the next free seed, trained after every run of ``doc`` (its log
    moved there, ``created_at`` after it), its step times reordered within each step block (the
    same sums, another sequence: not the same run), status failed with ``error``."""
    seed = max(r["seed"] for r in doc["runs"]) + 1
    first = min(e.t for e in mllog.parse(run["event_log"]) if e.key == "init_start")
    shift = math.ceil(log_span(doc)[1] - first) + 1.0
    failed = retimed_copy(run, shift, {"seed": seed})
    failed["event_log"] = relogged(failed["event_log"], metadata={"run_stop": {"status": "aborted"}})
    failed.update(status="failed", error=error, seed=seed)
    # another seed, another curve, as synthetic_run draws it (one curve under two seeds: seed-copy)
    _scale_losses(failed, (1 + 0.01 * seed) / (1 + 0.01 * run["seed"]))
    metrics = failed["metrics"]
    metrics["final_quality"] = derive.final_quality(failed["curve"])
    metrics.update(tta_s=None, energy_to_target_j=None)
    metrics["tta_status"] = derive.tta_status(registry.get(run["workload"]["id"]).spec(run["scale"]).target,
                                              None, failed["curve"], len(failed["step_times_s"]))
    failed.pop("goodput", None)
    end = dt.datetime.fromisoformat(failed["started_at"].replace("Z", "+00:00")) + \
        dt.timedelta(seconds=math.ceil(failed["wall_s"]) + 2)
    created = dt.datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00"))
    doc["created_at"] = stamp(max(created, end))
    return failed


def _scale_losses(run: dict, factor: float) -> None:
    """Every training loss of ``run`` times ``factor``: its curve's, its log's ``train_loss``
    events', and its log's evaluations of the training loss (a workload without a target)."""
    for point in run["curve"]:
        point["train_loss"] *= factor
    events = []
    for e in mllog.parse(run["event_log"]):
        if e.key == "train_loss" or (e.key == "eval_accuracy" and e.metadata.get("metric") == "train_loss"):
            metadata = dict(e.metadata)
            if isinstance(metadata.get("quality"), dict) and "train_loss" in metadata["quality"]:
                metadata["quality"] = {**metadata["quality"], "train_loss": metadata["quality"]["train_loss"] * factor}
            e = mllog.Event(time_ms=e.time_ms, event_type=e.event_type, key=e.key, value=e.value * factor,
                            metadata=metadata, namespace=e.namespace)
        events.append(mllog.format_event(e))
    run["event_log"] = events


def bucket_sum(result: dict) -> float:
    """Productive time plus every badput bucket of a goodput result: its wall time when the
    accounting is whole."""
    return result["productive_s"] + sum(result["badput_s"].values())


def fake_training(monkeypatch, train) -> None:
    """``goodbench run`` with ``train`` in place of ``run_suite`` (suite/run/session.py): it needs
    no data, so the run's look for the named workloads' data (suite/run/arguments.py) is skipped too."""
    monkeypatch.setattr("suite.run.session.run_suite", train)
    monkeypatch.setattr("suite.run.arguments.check_named_data", lambda args: None)
