"""Goodput and badput from the event log: a log with known times, and real CPU runs."""
from __future__ import annotations

import pytest
from factories import bucket_sum
from short_lmchar import ShortLmChar, run_short

from suite.figures import goodput
from suite.record import mllog

T0 = 1_700_000_000.0


def _block(log, key, start, stop, first, last, step_s, wait):
    log.start(f"{key}_start", metadata={"first_step": first}, time_s=T0 + start)
    log.end(f"{key}_stop", metadata={"first_step": first, "last_step": last, "step_s": step_s,
                                     "data_wait_s": wait}, time_s=T0 + stop)


def _interval(log, key, start, stop, step):
    log.start(f"{key}_start", metadata={"step": step}, time_s=T0 + start)
    log.end(f"{key}_stop", metadata={"step": step}, time_s=T0 + stop)


@pytest.fixture
def failed_once_log():
    """Warm-up, a checkpoint at step 6, a kill at step 11, a resume from step 6, an eval."""
    log = mllog.EventLog()
    log.start("init_start", time_s=T0)
    log.end("init_stop", time_s=T0 + 1)
    log.start("run_start", time_s=T0 + 1)
    _block(log, "warmup", 1.0, 2.0, 1, 2, 0.9, 0.05)
    _block(log, "block", 2.0, 4.0, 3, 6, 1.6, 0.2)
    _interval(log, "checkpoint", 4.0, 4.5, 6)
    _block(log, "block", 4.5, 6.5, 7, 10, 1.6, 0.2)
    log.event("failure", "SIGKILL", {"step": 11}, time_s=T0 + 7.0)
    log.event("restart", 1, time_s=T0 + 7.1)
    log.start("init_start", time_s=T0 + 8)
    log.end("init_stop", time_s=T0 + 9)
    _interval(log, "checkpoint_load", 9.0, 9.5, 6)
    _block(log, "block", 10.0, 12.0, 7, 10, 1.6, 0.2)
    _interval(log, "eval", 12.0, 12.5, 10)
    log.end("run_stop", metadata={"status": "success"}, time_s=T0 + 13)
    return log.lines


def test_buckets_of_a_log_with_known_times(failed_once_log):
    g = goodput.from_event_log(failed_once_log, 1e9, 1e12)
    expected = {"init": 1.0, "compile_warmup": 0.1, "data_wait": 0.45, "eval": 0.5,
                "checkpoint_save": 0.5, "restart_recovery": 3.0, "lost_work": 2.5, "other": 0.95}
    assert g["badput_s"] == pytest.approx(expected, abs=1e-5)
    assert g["wall_s"] == pytest.approx(13.0, abs=1e-5)
    assert g["productive_s"] == pytest.approx(4.0, abs=1e-5)  # 8 steps + 2 warm-up at 0.4 s
    assert g["goodput"] == pytest.approx(4.0 / 13.0, rel=1e-5)
    assert g["effective_goodput"] == pytest.approx(10 * 1e9 / (1e12 * 13.0), rel=1e-5)
    assert (g["steps_kept"], g["lost_steps"], g["failures"], g["restarts"]) == (10, 5, 1, 1)
    assert g["recovery_s"] == pytest.approx([3.0], abs=1e-5)
    assert bucket_sum(g) == pytest.approx(g["wall_s"], rel=1e-9)


def test_a_worker_killed_in_its_set_up_changes_nothing_of_what_the_next_resumed(failed_once_log):
    """The same run with a second kill in the restarted worker's set-up (a random failure rate can
    land there), and a third worker resuming from step 6: the first worker's steps 1–6 are kept
    as before. They were all lost work (the killed worker resumed "from 0"), goodput halved and
    its recovery split in two; now its 0.6 s count as restart recovery, and the one restart
    measured whole (a worker that reached its first step) is the projection's restart time."""
    lines = list(failed_once_log)
    cut = next(i for i, line in enumerate(lines) if '"init_start"' in line and i > 0)
    log = mllog.EventLog()
    log.start("init_start", time_s=T0 + 7.5)
    log.event("failure", "SIGKILL", {"step": 6}, time_s=T0 + 7.6)
    log.event("restart", 2, time_s=T0 + 7.7)
    g = goodput.from_event_log(lines[:cut] + log.lines + lines[cut:], 1e9, 1e12)
    once = goodput.from_event_log(failed_once_log, 1e9, 1e12)
    assert (g["steps_kept"], g["lost_steps"], g["failures"], g["restarts"]) == (10, 5, 2, 2)
    assert g["productive_s"] == pytest.approx(once["productive_s"], abs=1e-5)
    assert g["badput_s"] == pytest.approx(once["badput_s"], abs=1e-5)  # the 0.6 s set-up: recovery
    assert g["recovery_s"] == pytest.approx([10.0 - 7.6], abs=1e-5)  # the second kill to the first step
    assert bucket_sum(g) == pytest.approx(g["wall_s"], rel=1e-9)


def test_a_resume_from_an_earlier_checkpoint_loses_each_step_once():
    """Worker 1 reaches step 11 (checkpoint at 8), worker 2 resumes from 8 and reaches 13, worker 3
    resumes from 4 (the newer checkpoints bad): steps 5–11 of the first and 9–13 of the second are
    lost, 12 steps; the second's 9–13 were counted as if it had run from step 4 (16)."""
    log = mllog.EventLog()
    for start, blocks, resumed in ((0.0, [(1, 4), (5, 8), (9, 11)], None), (20.0, [(9, 13)], 8),
                                   (40.0, [(5, 20)], 4)):
        log.start("init_start", time_s=T0 + start)
        log.end("init_stop", time_s=T0 + start + 1)
        if resumed is None:
            log.start("run_start", time_s=T0 + start + 1)
        else:
            _interval(log, "checkpoint_load", start + 1, start + 1.5, resumed)
        at = start + 2  # blocks end where checkpoints are saved, as the runner's do: 1 s a step
        for first, last in blocks:
            _block(log, "block", at, at + last - first + 1, first, last, last - first + 1, 0.0)
            at += last - first + 1
        if blocks[-1][1] != 20:
            log.event("failure", "SIGKILL", {"step": blocks[-1][1]}, time_s=T0 + start + 15)
    log.end("run_stop", metadata={"status": "success"}, time_s=T0 + 60)
    g = goodput.from_event_log(log.lines, None, None)
    assert (g["steps_kept"], g["lost_steps"], g["restarts"]) == (20, 12, 2)
    assert bucket_sum(g) == pytest.approx(g["wall_s"], rel=1e-9)


def test_effective_goodput_needs_a_peak(failed_once_log):
    g = goodput.from_event_log(failed_once_log, 1e9, None)
    assert g["effective_goodput"] is None and "no peak" in g["effective_goodput_status"]


def test_unmeasured_data_wait_is_said(failed_once_log):
    lines = [line.replace('"data_wait_s": 0.2', '"data_wait_s": null') for line in failed_once_log]
    g = goodput.from_event_log(lines, None, None)
    assert g["data_wait_status"].startswith("not measured")
    assert bucket_sum(g) == pytest.approx(13.0, abs=1e-5)


@pytest.fixture
def checkpointed_run(checkpointed_short_run):
    return checkpointed_short_run  # tests/conftest.py: one run, shared


@pytest.mark.slow
def test_a_real_run_sums_to_wall_within_one_percent(checkpointed_run):
    g = checkpointed_run["goodput"]
    assert abs(bucket_sum(g) - g["wall_s"]) <= 0.01 * g["wall_s"]
    assert g["wall_s"] == pytest.approx(checkpointed_run["wall_s"], rel=0.01)
    assert g["badput_s"]["checkpoint_save"] > 0 and g["badput_s"]["init"] > 0
    assert g["badput_s"]["eval"] > 0 and g["badput_s"]["data_wait"] > 0
    assert g["badput_s"]["restart_recovery"] == g["badput_s"]["lost_work"] == 0
    assert g["steps_kept"] == checkpointed_run["steps"] == 40
    assert g["productive_s"] <= sum(checkpointed_run["step_times_s"]) + 1e-6
    assert g["effective_goodput"] is None  # CPU: no peak
    assert g["checkpoint"]["saves"] == 4


@pytest.mark.slow
def test_reported_goodput_is_recomputed_from_the_log(checkpointed_run):
    spec = ShortLmChar().spec("smoke")
    again = goodput.from_event_log(checkpointed_run["event_log"],
                                   ShortLmChar().flops_per_step(spec), None)
    assert again == checkpointed_run["goodput"]


@pytest.mark.slow
def test_a_run_without_checkpoints_keeps_its_log_in_memory(data_dir):
    run = run_short(data_dir)
    g = run["goodput"]
    assert run["event_log"][0].startswith(mllog.TOKEN) and g["checkpoint"]["saves"] == 0
    assert abs(bucket_sum(g) - g["wall_s"]) <= 0.01 * g["wall_s"]


def test_the_windows_batch_waits_are_the_steady_blocks_own_never_below_zero():
    """Rules v10's rates count the steady steps' batch waits (suite.figures.goodput.steady_batch_waits):
    a warm-up block's are not the window's; a distributed block's are this rank's own
    (``data_wait_ranks_s[0]``), held between 0 and the slowest rank's (``data_wait_s``): a negative
    one written into the log would raise the rates."""
    import json

    def event(t_ms, type_, key, meta):
        return ":::MLLOG " + json.dumps({"namespace": "", "time_ms": t_ms, "event_type": type_, "key": key,
                                         "value": None, "metadata": meta})

    def log(own):
        steady = {"first_step": 3, "last_step": 12, "step_count": 10, "step_s": 0.5, "data_wait_s": 0.2,
                  **({} if own is None else {"data_wait_ranks_s": [own, 0.2]})}
        return [event(0.0, "INTERVAL_START", "init_start", {}), event(1.0, "INTERVAL_START", "run_start", {}),
                event(2.0, "INTERVAL_START", "warmup_start", {"first_step": 1}),
                event(900.0, "INTERVAL_END", "warmup_stop", {"first_step": 1, "last_step": 2, "step_count": 2,
                                                             "step_s": 0.8, "data_wait_s": 0.05}),
                event(901.0, "INTERVAL_START", "block_start", {"first_step": 3}),
                event(1700.0, "INTERVAL_END", "block_stop", steady)]

    assert goodput.steady_batch_waits(log(None)) == 0.2  # one process: the block's, not the warm-up's
    assert goodput.steady_batch_waits(log(0.1)) == 0.1  # rank 0's own wait
    assert goodput.steady_batch_waits(log(-5.0)) == 0.0 and goodput.steady_batch_waits(log(9.0)) == 0.2
