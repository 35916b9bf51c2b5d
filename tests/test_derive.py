"""suite/figures/derive.py: every derived figure from the raw records, in one place — the figures of the
stored real results recomputed from their raw records, the formulas on known numbers, and the
goodput path's answer to hostile metadata in a real event log (a verdict, never an internal error).
No test here trains a model."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import forging
import numpy as np
import pytest

from suite import validate as v
from suite.figures import derive, goodput
from suite.record import mllog
from suite.validate.tolerance import same
from workloads import registry
from workloads.base import Target

REPO = Path(__file__).resolve().parent.parent
HONEST = forging.HONEST  # the reference smoke result and the valid corpus, never what results/ holds
REAL = forging.STORED_CURRENT  # real results written under the current rules
STREAM = {c for c in v.CODES if c.startswith("stream-")}
CLAIMS = {c for c in v.CODES if v.SINCE[c] >= 6}  # the claims against their second record (rules v6)


def _runs():
    for path in HONEST:
        doc = json.loads(path.read_text())
        for i, run in enumerate(doc["runs"]):
            yield pytest.param(doc, run, id=f"{path.name[:16]}-{i}-{run['workload']['id']}")


# ---------------------------------------------------------------- the stored figures, recomputed
@pytest.mark.parametrize(("doc", "run"), list(_runs()))
def test_the_runners_figures_are_derive_of_the_raw_records(doc, run):
    """What the runner wrote is what derive gives from the raw records kept beside it."""
    spec = registry.get(run["workload"]["id"]).spec(run["scale"])
    m, times = run["metrics"], run["step_times_s"]
    resumed = derive.resume_steps(run.get("event_log") or [], len(times))
    devices = derive.world_size(run)
    ceiling = ((doc["settings"].get("matmul_ceiling") or {}).get(run["precision"]) or {}).get("flops")
    spans = (m["energy_to_train_j"], m["energy_to_target_j"], m["energy_window_j"])
    want = derive.metrics(
        flops_per_step=m["flops_per_step"], samples_per_step=m["samples_per_step"],
        tokens_per_step=m["tokens_per_step"], step_times_s=times, warmup_steps=spec.warmup_steps,
        resumed_at=resumed, peak_flops=m["peak_flops"], peak_source=m["mfu_status"].removeprefix("ok: against "),
        ceiling=derive.all_devices(ceiling, devices), target=spec.target,
        tta_s=derive.time_to_target(run["curve"], spec.target), curve=run["curve"],
        energy_method=m["energy_method"], energy_status=m["energy_status"], energy=spans,
        batch_waits_s=derive.batch_waits(run.get("event_log"), doc.get("rules_version")))
    if want["throughput"] and "segments" not in m["throughput"]["window"]:
        del want["throughput"]["window"]["segments"]  # a file written before windows had segments
    for key, value in want.items():
        if key != "mfu_status":
            assert same(m.get(key), value), key  # older files lack some: derive gives None
    assert m.get("mean_power_w") == derive.mean_power(m["energy_to_train_j"], run["time_to_train_s"])
    warm = derive.warmup_mask(len(times), spec.warmup_steps, resumed)
    phases = derive.phases(times, warm, {k: run["phases_s"][k] for k in derive.MEASURED_PHASES}, run["wall_s"])
    assert list(phases) == list(derive.PHASES) == list(run["phases_s"])
    for key in derive.PHASES:
        assert run["phases_s"][key] == pytest.approx(phases[key], abs=1e-6), key
    if run.get("event_log"):
        assert same(run["goodput"], derive.goodput(run["event_log"], m["flops_per_step"], m["peak_flops"]))
    comm = (run.get("distributed") or {}).get("communication")
    if comm:
        assert comm["exposed_share"] == derive.exposed_share(comm["step_s_with_sync"], comm["step_s_without_sync"])


@pytest.mark.parametrize("path", HONEST, ids=lambda p: p.name[:24])
def test_the_summary_is_derive_of_the_runs(path):
    doc = json.loads(path.read_text())
    if "summary" in doc:
        assert same(doc["summary"], derive.summary(doc["runs"]))


# ---------------------------------------------------------------- the formulas on known numbers
def test_peak_and_ceiling_of_all_devices():
    one, source = derive.peak("NVIDIA H100 80GB HBM3", "bf16")
    eight, source8 = derive.peak("NVIDIA H100 80GB HBM3", "bf16", devices=8)
    assert one == pytest.approx(989.4e12) and eight == 8 * one
    assert source8 == f"{source} × 8 devices"
    none, why = derive.peak("cpu", "fp32", devices=4)
    assert none is None and why == derive.peak("cpu", "fp32")[1]  # a reason, not a source times 4
    assert "× 4 devices" not in why
    assert derive.peak("cpu", "fp32", override_tflops=2.0, devices=2)[0] == 4e12
    assert derive.all_devices(None, 8) is None and derive.all_devices(700.0, 2) == 1400.0


def test_mfu_and_share_of_ceiling_need_a_window_and_a_peak():
    """MFU is over the window's rate, its batch waits counted (rules v10); the FLOP/s the physics rules
    bound, and the ceiling's share, over its step time alone: what the device did while it stepped."""
    tput = {"steps_per_s": 2.0, "window": {"steps": 40, "seconds": 16.0, "batch_wait_s": 4.0}}
    assert derive.flop_rate(1e12, tput) == 2.5e12 and derive.flop_rate(1e12, None) is None
    assert derive.mfu(1e12, tput, 4e12) == 0.5 and derive.mfu(1e12, tput, None) is None
    assert derive.mfu(1e12, None, 4e12) is None
    assert derive.share_of_ceiling(1e12, tput, 10e12) == 0.25 and derive.share_of_ceiling(1e12, tput, 0.0) is None
    assert derive.mfu_status(0.5, tput, "H100") == "ok: against H100"
    assert derive.mfu_status(None, None, "H100").endswith("no steady-state throughput")
    assert derive.mfu_status(None, tput, "no peak") == "not measured: no peak"


def test_phases_from_the_step_times_and_the_wall():
    times = [3.0, 2.0, 1.0, 1.0]
    warm = derive.warmup_mask(len(times), 2)
    phases = derive.phases(times, warm, {"data_load": 1.0, "init": 2.0, "eval": 0.5}, wall_s=12.0)
    assert phases == {"data_load": 1.0, "init": 2.0, "compile_warmup": 5.0, "train": 2.0, "eval": 0.5,
                      "other": 1.5}
    assert derive.other_phase({**phases, "other": 99.0}, 10.0) == 0.0  # never below 0


def test_target_and_time_to_target():
    target = Target("val_loss", "min", 2.0)
    curve = [{"step": 10, "time_s": 5.0, "val_loss": 2.5, "train_loss": 2.6},
             {"step": 20, "time_s": 9.0, "val_loss": 1.9, "train_loss": 2.0},
             {"step": 30, "time_s": 13.0, "val_loss": 1.8, "train_loss": 1.9}]
    assert derive.target_record(target) == {"metric": "val_loss", "direction": "min", "value": 2.0}
    assert derive.target_record(None) is None
    assert derive.first_hit(curve, target) is curve[1] and derive.time_to_target(curve, target) == 9.0
    assert derive.time_to_target(curve[:1], target) is None and derive.time_to_target(curve, None) is None
    assert derive.tta_status(target, 9.0, curve[:2], 20) == "reached val_loss <= 2 at step 20"
    assert derive.tta_status(target, None, curve[:1], 10) == "not reached: val_loss <= 2 not met within 10 steps"
    assert derive.final_quality(curve) == {"val_loss": 1.8, "train_loss": 1.9}
    assert derive.final_quality([]) is None


def test_the_window_energys_error_bound_holds_for_a_counter_that_advances_in_steps():
    """A counter that advances every 0.1 s (NVML's, docs/measurement.md's GPU figures), read at a window's edges and at
    both edges of 20 evaluation pauses, training at up to 700 W and evaluating near idle: the
    window energy it gives is off from the true one by at most (1 + pauses) × 0.1 s × 700 W. The
    error is one-sided here (each pause's start reading misses the training power before it), so
    the bound is not loose: the worst of 100 windows comes within half of it."""
    rng = np.random.default_rng(0)
    update_s, most_w, pauses = 0.1, 700.0, 20
    bound = derive.energy_window_error_j(1.0, pauses, 1, update_s, most_w)
    assert bound == 21 * 0.1 * 700.0
    grid = np.arange(0, 60.0, 0.001)
    worst = 0.0
    for _ in range(100):
        edges = np.sort(rng.uniform(1.0, 59.0, 2 * pauses + 2))
        start, end, inner = edges[0], edges[-1], edges[1:-1].reshape(pauses, 2)
        pausing = np.zeros(len(grid), bool)
        for a, b in inner:
            pausing |= (grid >= a) & (grid < b)
        power = np.where(pausing, rng.uniform(50, 80, len(grid)), rng.uniform(600, most_w, len(grid)))
        energy = np.concatenate([[0.0], np.cumsum(power[:-1] * 0.001)])  # true joules at each ms

        def true(t, energy=energy):
            return float(np.interp(t, grid, energy))

        def counter(t, true=true):  # the last value the counter published: at a multiple of its period
            return true(np.floor(t / update_s) * update_s)
        measured = counter(end) - counter(start) - sum(counter(b) - counter(a) for a, b in inner)
        truth = true(end) - true(start) - sum(true(b) - true(a) for a, b in inner)
        worst = max(worst, abs(measured - truth))
    assert bound / 2 < worst <= bound, (worst, bound)
    # per device, pauses summed over the devices; unknown where a part is unknown
    assert derive.energy_window_error_j(1.0, 6, 2, 0.1, 700.0) == 8 * 0.1 * 700.0
    assert derive.energy_window_error_j(None, 6, 2, 0.1, 700.0) is None
    assert derive.energy_window_error_j(1.0, 6, 2, None, 700.0) is None
    assert derive.energy_window_error_j(1.0, 6, 2, 0.1, None) is None


def test_each_pause_inside_the_window_is_counted_for_the_energys_error_bound():
    import torch

    from suite.meters.energy import EnergyMeter
    from suite.run.state import LoopState, window_pause

    class Ticking(EnergyMeter):
        method, update_s, joules = "test", 0.1, 0.0

        def read(self):
            self.joules += 5.0
            return self.joules

    state, meter = LoopState(init_start=0.0), Ticking()
    with window_pause(state, meter, torch.device("cpu")):  # before the window: not a pause of it
        pass
    state.energy["window_start"] = meter.read()
    for _ in range(3):
        with window_pause(state, meter, torch.device("cpu")):
            pass
    assert state.energy["window_pause_count"] == 3 and state.energy["window_pauses"] == 15.0


def test_energy_from_the_readings():
    readings = {"run_start": 100.0, "window_start": 300.0, "target": 800.0, "end": 1000.0, "window_pauses": 50.0}
    assert derive.energy_spans(readings) == (900.0, 700.0, 650.0)
    assert derive.energy_spans({**readings, "end": None}) == (None, None, None)
    assert derive.energy_spans({**readings, "target": None, "window_start": None}) == (900.0, None, None)
    # a resumed run's window has two segments: its energy is the last worker's, over its steps
    window = {"first_step": 3, "last_step": 20, "steps": 14, "seconds": 7.0, "segments": [[3, 10], [15, 20]]}
    assert derive.window_steps(window) == 6
    assert derive.energy_per(600.0, window, 10) == 10.0 and derive.energy_per(600.0, window, None) is None
    figures = derive.energy_figures("rapl", "ok", (900.0, None, 600.0), {"window": window}, 10, 100)
    assert figures["energy_per_sample_j"] == 10.0 and figures["energy_per_token_j"] == 1.0
    assert derive.energy_figures("rapl", "ok", (900.0, None, 600.0), None, 10, 100)["energy_window_j"] is None
    assert list(figures) == ["energy_method", "energy_status", *derive.ENERGY_KEYS]
    assert derive.mean_power(900.0, 3.0) == 300.0 and derive.mean_power(None, 3.0) is None
    assert derive.mean_power(900.0, 0.0) is None


def test_communication_share_and_rank_figures():
    assert derive.exposed_share(0.2, 0.15) == pytest.approx(0.25)
    assert derive.exposed_share(0.2, 0.3) == 0.0  # never below 0
    assert derive.exposed_share(0.0, 0.1) is None and derive.exposed_share(None, 0.1) is None
    section = derive.communication(0.2, 0.15, "probe")
    assert section["exposed_share"] == pytest.approx(0.25) and section["status"] == "ok"
    assert derive.communication(None, None, "probe", status="not measured: x")["exposed_share"] is None
    assert derive.rank_step_times([1.0, 3.0, 2.0]) == {"mean": 2.0, "p50": 2.0, "max": 3.0, "steps": 3}
    assert derive.rank_step_times([]) is None
    assert derive.straggler_spread([1.0, 1.0, 1.5], 3) == 1.5
    assert derive.straggler_spread([1.0, 1.5], 3) is None  # a rank without steady steps


def test_seeds_the_rules_require():
    assert derive.required_seeds("full", "tta") == 5
    assert derive.required_seeds("smoke", "tta") == derive.required_seeds("full", "throughput") == 1


def test_derive_imports_no_torch():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import sys, suite.figures.derive; "
                          "print(any(m == 'torch' or m.startswith('torch.') for m in sys.modules))"],
                         cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- resume steps, guarded
def _log_with_resume(step) -> list[str]:
    events = [mllog.Event(1000.0, mllog.INTERVAL_START, "init_start"),
              mllog.Event(2000.0, mllog.INTERVAL_START, "init_start"),
              mllog.Event(3000.0, mllog.INTERVAL_START, "checkpoint_load_start"),
              mllog.Event(4000.0, mllog.INTERVAL_END, "checkpoint_load_stop", metadata={"step": step})]
    return [mllog.format_event(e) for e in events]


def test_resume_steps_are_read_once_and_checked():
    assert derive.resume_steps(_log_with_resume(40), 100) == [40]
    assert derive.resume_steps(_log_with_resume(0), 100) == [0]  # no good checkpoint: started over
    attempt = goodput.split_attempts(mllog.parse(_log_with_resume(40)))[1]
    assert goodput.resume_step(attempt) == 40
    for hostile in (None, "40", 40.0, True, -1, 10 ** 30, [40], {"s": 40}):
        with pytest.raises(ValueError):
            derive.resume_steps(_log_with_resume(hostile), 100)
    with pytest.raises(ValueError):
        derive.resume_steps(_log_with_resume(101), 100)  # beyond the run's steps


# ---------------------------------------------------------------- hostile metadata in a real log
ODD = {"null": None, "infinity": math.inf, "negative": -1, "fraction": 1.5, "text": "7", "true": True,
       "object": {"a": 1}, "list": [1], "huge": 10 ** 30}
READ = ("first_step", "last_step", "step", "step_count", "step_s", "data_wait_s")  # what goodput reads


def _real_run() -> dict:
    for path in REAL:
        doc = json.loads(path.read_text())
        run = next((r for r in doc["runs"] if r["workload"]["id"] == "lm-char" and r.get("event_log")), None)
        if run is not None:
            doc["runs"], doc["settings"]["workloads"] = [run], ["lm-char"]
            doc["summary"] = derive.summary(doc["runs"])
            return doc
    raise AssertionError("results/ holds no lm-char run with its event log")


REAL_DOC = _real_run() if REAL else None


def _mutations():
    if REAL_DOC is None:
        return []
    seen: dict[tuple[str, str], int] = {}
    for i, e in enumerate(mllog.parse(REAL_DOC["runs"][0]["event_log"])):
        for key in e.metadata:
            seen.setdefault((e.key, key), i)
    return [pytest.param(line, key, name, id=f"{event}.{key}={name}")
            for (event, key), line in sorted(seen.items()) if key in READ for name in ODD]


@pytest.mark.skipif(REAL_DOC is None, reason="no real result in results/")
@pytest.mark.parametrize(("line", "key", "name"), _mutations())
def test_odd_metadata_in_a_real_log_gets_a_verdict(line, key, name):
    """Every metadata field the goodput recomputation reads, of every event of a real log, given
    an odd type or value: the file is refused with goodput-mismatch or a cross-check's code, or
    (where the value is still a step or a duration) accepted — never an internal error."""
    doc = copy.deepcopy(REAL_DOC)
    run = doc["runs"][0]
    body = json.loads(run["event_log"][line].split(mllog.TOKEN, 1)[1])
    body["metadata"][key] = ODD[name]
    run["event_log"][line] = mllog.TOKEN + json.dumps(body)  # Infinity as Python's json writes it
    codes = {p.code for p in v.check_document(doc)}
    assert "internal-error" not in codes
    try:
        derive.goodput(run["event_log"], run["metrics"]["flops_per_step"], run["metrics"]["peak_flops"])
    except ValueError as exc:  # the goodput path refuses the log: the validator says so
        assert isinstance(exc, goodput.BadLog)
        assert "goodput-mismatch" in codes, codes
    assert codes <= STREAM | CLAIMS | {"goodput-mismatch", "throughput-mismatch", "phases-mismatch"}, codes


@pytest.mark.skipif(REAL_DOC is None, reason="no real result in results/")
@pytest.mark.parametrize("shape", ["metadata a list", "metadata text", "key a number", "event_type null",
                                   "time Infinity"])
def test_odd_event_shapes_in_a_real_log_are_unreadable_not_internal_errors(shape):
    doc = copy.deepcopy(REAL_DOC)
    run = doc["runs"][0]
    body = json.loads(run["event_log"][12].split(mllog.TOKEN, 1)[1])
    field, value = {"metadata a list": ("metadata", [1]), "metadata text": ("metadata", "x"),
                    "key a number": ("key", 7), "event_type null": ("event_type", None),
                    "time Infinity": ("time_ms", math.inf)}[shape]
    body[field] = value
    run["event_log"][12] = mllog.TOKEN + json.dumps(body)
    problems = v.check_document(doc)
    assert problems and {p.code for p in problems} <= STREAM | CLAIMS | {"goodput-mismatch"}, problems
    with pytest.raises(ValueError):
        derive.goodput(run["event_log"], run["metrics"]["flops_per_step"], None)


def test_hostile_goodput_metadata_raises_badlog_not_type_errors():
    lines = [mllog.format_event(e) for e in (
        mllog.Event(0.0, mllog.INTERVAL_START, "init_start"),
        mllog.Event(1.0, mllog.INTERVAL_START, "run_start"),
        mllog.Event(2.0, mllog.INTERVAL_START, "block_start", metadata={"first_step": 1}),
        mllog.Event(3.0, mllog.INTERVAL_END, "block_stop",
                    metadata={"first_step": 1, "last_step": 2, "step_s": 0.001, "data_wait_s": 0.0}))]
    assert derive.goodput(lines, 1.0, None)["steps_kept"] == 2
    for key, value in (("last_step", None), ("first_step", 3), ("step_s", "x"), ("step_s", -1.0),
                       ("data_wait_s", [0.1]), ("last_step", float("inf"))):
        body = json.loads(lines[3].split(mllog.TOKEN, 1)[1])
        body["metadata"][key] = value
        with pytest.raises(goodput.BadLog):
            derive.goodput([*lines[:3], mllog.TOKEN + json.dumps(body)], 1.0, None)
    assert np.isfinite(derive.goodput(lines, 1.0, 1.0)["effective_goodput"])
