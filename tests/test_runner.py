"""The runner keeps what it measured when a run ends early."""
from __future__ import annotations

import pytest
from short_lmchar import ShortLmChar, run_short

from suite.figures import goodput


def _interrupted_in_step(step: int, data_dir, monkeypatch, before=lambda: None) -> dict:
    """The partial record of a short lm-char run interrupted (KeyboardInterrupt) inside ``step``,
    after ``before()``."""
    from workloads.lm.job import LanguageModelJob

    real_step = LanguageModelJob.train_step

    def interrupt(self, batch=None):
        if self.step == step - 1:
            before()
            raise KeyboardInterrupt
        return real_step(self, batch)

    monkeypatch.setattr(LanguageModelJob, "train_step", interrupt)
    with pytest.raises(KeyboardInterrupt) as stopped:
        run_short(data_dir)
    return stopped.value.record


def test_interrupted_run_keeps_one_step_time_per_finished_step(data_dir, monkeypatch):
    record = _interrupted_in_step(8, data_dir, monkeypatch)  # between log points (every 5 steps)
    assert record["status"] == "partial" and record["steps"] == 7
    assert len(record["step_times_s"]) == 7
    # the event log accounts for the same steps, and still sums to the wall time
    result = goodput.from_event_log(record["event_log"], ShortLmChar().flops_per_step(ShortLmChar.variants["smoke"]), None)
    assert result["productive_s"] + sum(result["badput_s"].values()) == pytest.approx(result["wall_s"], rel=0.01)


@pytest.mark.slow
def test_a_sigterm_while_the_record_is_put_together_ends_the_suite_after_keeping_it(
        data_dir, monkeypatch):
    """torchrun's SIGTERM can come after training ended but before the record is kept: it is
    held until then, and the finished record rides on the Terminated that follows."""
    import os
    import signal

    from suite.run import driver
    from suite.run import signals as run_signals

    real_finish = driver.finish

    def finish_then_sigterm(*args, **kwargs):
        real_finish(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # delivered here: would raise without the hold

    previous = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(driver, "finish", finish_then_sigterm)
    try:
        run_signals.stop_on_sigterm()
        with pytest.raises(run_signals.Terminated) as stopped:
            run_short(data_dir)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert stopped.value.record["status"] == "complete" and stopped.value.record["steps"] == 40
    assert not run_signals._Sigterm.pending and run_signals._Sigterm.armed


@pytest.mark.slow
def test_a_second_ctrl_c_while_the_record_is_put_together_keeps_the_record(data_dir, monkeypatch):
    """Two quick Ctrl-C: the second one, while the run's record is put together, is held until the
    record is kept, and the record rides on the interrupt that follows (it was dropped, and goodbench
    said no run was recorded)."""
    import os
    import signal

    from suite.run import driver
    from suite.run import signals as run_signals

    real_finish = driver.finish

    def finish_then_sigint(*args, **kwargs):
        real_finish(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # delivered here: would raise without the hold

    monkeypatch.setattr(driver, "finish", finish_then_sigint)
    previous = run_signals.stop_on_sigterm()
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            run_short(data_dir)
    finally:
        run_signals.restore(previous)
    assert type(stopped.value) is KeyboardInterrupt
    assert stopped.value.record["status"] == "complete" and stopped.value.record["steps"] == 40
    assert not run_signals._Sigterm.interrupted and run_signals._Sigterm.armed


@pytest.mark.slow
def test_the_window_energy_leaves_out_evaluations(data_dir, monkeypatch):
    """A stand-in counter of 100 W on the wall clock and evaluations made 0.3 s slower: the
    window's energy covers its steps (and the loop around them), not the two evaluations
    inside the window (steps 20 and 40), whose counter readings are taken at their edges."""
    import time

    from suite.meters import energy
    from suite.run import instruments
    from suite.run.instruments import Instruments
    from workloads.lm.job import LanguageModelJob

    class WallClockWatts(energy.EnergyMeter):
        method = "nvml_total_energy"

        def read(self):
            return 100.0 * time.perf_counter()

    real_evaluate = LanguageModelJob.evaluate

    def slow_evaluate(self):
        time.sleep(0.3)
        return real_evaluate(self)

    monkeypatch.setattr(instruments, "open_instruments", lambda device: Instruments(energy=WallClockWatts()))
    monkeypatch.setattr(LanguageModelJob, "evaluate", slow_evaluate)
    record = run_short(data_dir)
    m = record["metrics"]
    window_s = m["throughput"]["window"]["seconds"]
    assert [p["step"] for p in record["curve"]] == [20, 40]
    assert 100.0 * window_s <= m["energy_window_j"] < 100.0 * (window_s + 0.3)
    assert m["energy_to_train_j"] > m["energy_window_j"] + 100.0 * 0.6  # the evals count there
    assert m["energy_per_sample_j"] == pytest.approx(
        m["energy_window_j"] / (m["throughput"]["window"]["steps"] * m["samples_per_step"]))


def test_a_run_interrupted_inside_a_step_ends_its_block_where_its_last_finished_step_did(data_dir, monkeypatch):
    """A new user's Ctrl-C 0.3 s into step 2 stamped the warm-up block of one 0.11-s step 0.27 s
    long, and the file failed its own validation [stream-step-times]: the block now ends where its
    last finished step did, the unfinished step out of it."""
    import time

    from suite.record import mllog

    entered = []

    def under_way():
        entered.append(time.time())
        time.sleep(0.3)  # the step was under way when the interrupt came

    record = _interrupted_in_step(2, data_dir, monkeypatch, under_way)
    assert record["status"] == "partial" and record["steps"] == 1
    events = mllog.parse(record["event_log"])
    start = next(e for e in events if e.key == "warmup_start")
    stop = next(e for e in events if e.key == "warmup_stop")
    assert (stop.metadata["first_step"], stop.metadata["last_step"], stop.metadata["step_count"]) == (1, 1, 1)
    assert stop.t <= entered[0]  # step 1's end, before step 2 began its work
    assert stop.t - start.t <= 1.5 * (stop.metadata["step_s"] + (stop.metadata["data_wait_s"] or 0)) + 0.01


def test_own_code_interrupted_inside_a_step_ends_its_block_where_its_last_finished_step_did(tmp_path, monkeypatch):
    """The same for own code: Ctrl-C 0.3 s into the second of 1-ms steps, and the file it writes is
    valid [stream-step-times]."""
    import json
    import time

    import torch
    from quick_ceiling import quick_ceiling

    import goodbench
    from suite.record import mllog
    from suite.validate import check_document

    quick_ceiling(monkeypatch)
    out = tmp_path / "own.json"
    bench = goodbench.Benchmark("tiny", samples_per_step=4, flops_per_step=1e6, max_steps=6, warmup_steps=3,
                                eval_every=6, device="cpu", out=out, sign=False)
    entered = []
    with pytest.raises(KeyboardInterrupt), bench:
        for run in bench.runs():
            for step in (1, 2):
                with run.step() as s:
                    time.sleep(0.001)
                    if step == 2:
                        entered.append(time.time())
                        time.sleep(0.3)
                        raise KeyboardInterrupt
                    s.loss = torch.tensor(1.0)
    doc = json.loads(out.read_text())
    [run] = doc["runs"]
    assert run["status"] == "partial" and run["steps"] == 1
    stop = next(e for e in mllog.parse(run["event_log"]) if e.key == "warmup_stop")
    assert stop.metadata["step_count"] == 1 and stop.t <= entered[0]
    assert not [p for p in check_document(doc) if p.code == "stream-step-times"]
