"""A resumed run's energy: each rank goes on from its own readings on its own counter, or the run's
energy is "not measured" — never one rank's counter subtracted from another's, never a null
figure beside an "ok" status (suite/run/files.py)."""
from __future__ import annotations

import dataclasses
import time

import pytest
import torch

from suite.figures import derive
from suite.meters import energy
from suite.record import mllog
from suite.run import checkpoint, distributed, files
from suite.run.state import LoopState
from workloads.placement import Parallel

MJ = 1e6


class FakeGpu:
    """What NvmlCounter asks of a GPU: its UUID and its counter, in joules."""

    def __init__(self, uuid: str, joules: float):
        self._uuid, self.joules = uuid, joules

    def uuid(self) -> str:
        return self._uuid

    def total_energy_j(self) -> float:
        return self.joules


def _rank(rank: int, world: int = 2) -> Parallel:
    return Parallel(rank=rank, world_size=world, local_rank=rank, node_rank=0, local_world_size=world,
                    backend="gloo", mode="ddp")


def _saved(readings_by_rank: list[dict], counters: list[str | None] | None) -> dict:
    """A checkpoint's state as :func:`files.save_checkpoint` writes it (rank 0's harness)."""
    harness = dataclasses.asdict(LoopState(init_start=0.0))
    harness["energy"] = dict(readings_by_rank[0])
    saved = {"harness": harness}
    if counters is not None:
        saved["rank_energy"] = [{"readings": r, "counter": c} for r, c in zip(readings_by_rank, counters)]
    return saved


def _readings(run_start: float) -> dict:
    return {"run_start": run_start, "window_start": run_start + 1e3, "target": None, "end": None,
            "window_pauses": 0.0, "window_pause_count": 0}


def test_each_rank_of_a_resumed_job_goes_on_from_its_own_counters_reading():
    """Two GPUs whose counters stood at 5 and 8 MJ, each using 50 kJ: the job used 100 kJ. Rank 1
    took rank 0's start reading before, and the job "used" 3.1 MJ (a lower counter: negative)."""
    saved = _saved([_readings(5.0 * MJ), _readings(8.0 * MJ)], ["GPU-a", "GPU-b"])
    reports = []
    for rank, (uuid, now) in enumerate([("GPU-a", 5.0 * MJ + 25e3), ("GPU-b", 8.0 * MJ + 25e3)]):
        gpu = FakeGpu(uuid, now)
        meter = energy.NvmlCounter(gpu)
        readings = files.own_energy(saved, meter, _rank(rank))
        assert meter.status == "ok" and readings["run_start"] == [5.0, 8.0][rank] * MJ
        gpu.joules += 25e3  # the rest of the run after the resume
        reports.append({"energy": {**readings, "end": meter.read()}})
    assert derive.energy_spans(distributed.summed_energy(reports))[0] == pytest.approx(100e3)


@pytest.mark.parametrize(("counters", "uuid", "now", "why"), [
    (["GPU-a", "GPU-b"], "GPU-c", 9.0 * MJ, "resumed on another device than the one whose counter read its start "
                                            "(GPU-b, now GPU-c)"),
    (["GPU-a", "GPU-b"], "GPU-b", 1.0 * MJ, "reads less than the earlier process read"),
    (None, "GPU-b", 9.0 * MJ, "the checkpoint does not keep this rank's energy readings"),
], ids=["another-gpu", "driver-reloaded", "older-checkpoint"])
def test_readings_that_cannot_be_continued_make_the_energy_not_measured(counters, uuid, now, why):
    saved = _saved([_readings(5.0 * MJ), _readings(8.0 * MJ)], counters)
    meter = energy.NvmlCounter(FakeGpu(uuid, now))
    files.own_energy(saved, meter, _rank(1))
    assert meter.status.startswith("not measured: ") and why in meter.status, meter.status
    assert meter.read() is None


def test_an_earlier_processs_giving_up_is_kept_across_the_resume():
    """A counter that went backwards in the first process, then passed its old readings again:
    the checkpoint keeps the status, and the resumed run does not read "ok" across the reset."""
    saved = _saved([_readings(5.0 * MJ)], ["GPU-a"])
    saved["rank_energy"][0]["status"] = "not measured: NVML's energy counter went backwards during the run"
    meter = energy.NvmlCounter(FakeGpu("GPU-a", 9.0 * MJ))
    files.own_energy(saved, meter, Parallel())
    assert meter.status == "not measured: NVML's energy counter went backwards during the run"


def test_one_process_resuming_a_two_rank_checkpoint_does_not_take_rank_0s_readings_for_its_own():
    saved = _saved([_readings(5.0 * MJ), _readings(8.0 * MJ)], ["GPU-a", "GPU-b"])
    meter = energy.NvmlCounter(FakeGpu("GPU-a", 5.1 * MJ))
    files.own_energy(saved, meter, Parallel())
    assert meter.status == "not measured: the checkpoint does not keep this rank's energy readings"


def test_every_rank_gives_up_where_one_did(monkeypatch):
    """Rank 1 resumed on another GPU: its spans are None, so the summed energy is; rank 0's status,
    the run's, said "ok" beside it (a review)."""
    meter = energy.NvmlCounter(FakeGpu("GPU-a", 5.1 * MJ))
    monkeypatch.setattr(distributed, "gather", lambda value, parallel: [value, "not measured: it moved"])
    files.agree_on_energy(meter, _rank(0))
    assert meter.status == "not measured: on rank 1, it moved" and meter.read() is None


def test_a_single_process_checkpoint_of_before_goes_on_from_its_harness():
    """A one-process checkpoint written before each rank's readings were kept holds its own."""
    saved = _saved([_readings(5.0 * MJ)], None)
    meter = energy.NvmlCounter(FakeGpu("GPU-a", 5.1 * MJ))
    assert files.own_energy(saved, meter, Parallel())["run_start"] == 5.0 * MJ
    assert meter.status == "ok"


def test_a_checkpoint_keeps_each_ranks_readings_and_counter(tmp_path):
    """What :func:`files.save_checkpoint` writes, read back by :func:`files.resume` (one process)."""

    class Job:
        def state_dict(self) -> dict:
            return {"w": torch.zeros(2)}

        def load_state_dict(self, state: dict) -> None:
            assert torch.equal(state["w"], torch.zeros(2))

    class Spec:
        def spec_hash(self, scale: str) -> str:
            return "h"

    gpu = FakeGpu("GPU-a", 5.0 * MJ)
    meter = energy.NvmlCounter(gpu)
    state = LoopState(init_start=time.time(), run_start=time.time(), step=10)
    state.energy["run_start"] = meter.read()
    files.save_checkpoint(Job(), 10, state, mllog.EventLog(), tmp_path, "h", meter, torch.device("cpu"))
    assert checkpoint.load_latest(tmp_path).state["rank_energy"] == [
        {"readings": state.energy, "counter": "GPU-a", "status": "ok"}]
    gpu.joules += 1e3
    again = energy.NvmlCounter(gpu)  # the new process's meter, on the same GPU
    resumed = files.resume(Job(), Spec(), "smoke", mllog.EventLog(), [], LoopState(init_start=time.time()),
                           tmp_path, meter=again)
    assert resumed.step == 10 and resumed.energy["run_start"] == 5.0 * MJ and again.status == "ok"


def test_a_restart_from_step_0_after_the_clock_started_has_no_energy_not_a_null_beside_ok(tmp_path):
    """No usable checkpoint: the run keeps the first worker's run_start, whose energy reading is
    gone. Its energy was null with the status "ok"; now it says why it is not measured."""
    first = mllog.EventLog()
    first.start("init_start")
    first.start("run_start")
    meter = energy.NvmlCounter(FakeGpu("GPU-a", 5.0 * MJ))
    state = files.resume(None, None, "smoke", mllog.EventLog(), mllog.parse(first.all_lines()),
                         LoopState(init_start=time.time()), tmp_path, meter=meter)
    assert state.step == 0 and state.run_start == mllog.parse(first.all_lines())[1].t
    assert meter.status.startswith("not measured: the run restarted from step 0") and meter.read() is None


def test_a_restart_before_the_clock_started_reads_the_counter_where_it_starts_it(tmp_path):
    """The first worker died in its set-up: the clock starts in this one, and so does the energy."""
    first = mllog.EventLog()
    first.start("init_start")
    meter = energy.NvmlCounter(FakeGpu("GPU-a", 5.0 * MJ))
    state = files.resume(None, None, "smoke", mllog.EventLog(), mllog.parse(first.all_lines()),
                         LoopState(init_start=time.time()), tmp_path, meter=meter)
    assert state.energy["run_start"] == 5.0 * MJ and meter.status == "ok"
