"""Every helper thread goodbench starts where stop signals are handled leaves them to the main
thread (suite.record.threads): the telemetry sampler and the reader watch of a training process,
run-own's pipe readers and its journal's writer. Taken by a helper thread, a group SIGTERM the main
thread held back was handled at once (the host-load watch's, test_host_load)."""
from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest
from waiting import until

from suite.api.edges import ReaderWatch
from suite.meters import telemetry
from suite.record import edges, threads
from suite.run import clock_journal
from suite.run.edge_reader import EdgeReader, clock

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/task/TID/status")

HELD = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _mask(thread: threading.Thread) -> int:
    """The signals ``thread`` blocks now (its ``SigBlk``)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:")), 16)


def _leaves_stops_to_the_main_thread(thread: threading.Thread | None) -> None:
    """``thread``, a live daemon, blocks the stop signals (once it has set them: up to 10 s); the
    main thread does not."""
    assert thread is not None and thread.daemon and thread.is_alive() and thread.native_id is not None
    mask = until(lambda: _mask(thread), 10, 0.01)
    for signum in HELD:
        assert mask & (1 << (signum - 1)), signum
    assert not _mask(threading.main_thread()) & (1 << (signal.SIGTERM - 1))


def test_a_helper_thread_blocks_the_stop_signals_and_runs_its_target():
    ran, release = threading.Event(), threading.Event()

    def target() -> None:
        ran.set()
        release.wait(10)

    thread = threads.daemon(target, "goodbench-test")
    assert not thread.is_alive() and thread.name == "goodbench-test"
    thread.start()
    try:
        assert ran.wait(10)
        _leaves_stops_to_the_main_thread(thread)
        assert set(HELD) <= threads.STOP_SIGNALS
    finally:
        release.set()
        thread.join()


class _Gpu:
    """A device that reads the same every time."""

    def clocks_mhz(self) -> dict:
        return {"sm": 1000, "mem": 2000}

    def power_w(self) -> float:
        return 100.0

    def temperature_c(self) -> float:
        return 40.0

    def throttle_reasons(self) -> list:
        return []


def test_the_telemetry_sampler_leaves_the_stop_signals_to_the_main_thread():
    sampler = telemetry.Sampler(_Gpu(), hz=100).start()  # type: ignore[arg-type]
    try:
        _leaves_stops_to_the_main_thread(sampler._thread)
    finally:
        sampler.stop()
    assert len(sampler.samples) >= 2


def test_the_reader_watch_leaves_the_stop_signals_to_the_main_thread():
    read_end, write_end = os.pipe()
    watch = ReaderWatch(write_end, lambda: None)
    try:
        _leaves_stops_to_the_main_thread(watch._thread)
    finally:
        watch.stop()
        os.close(read_end)
        os.close(write_end)
    assert not watch._thread.is_alive()


def test_run_owns_reader_and_journal_leave_the_stop_signals_to_the_main_thread(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    journal = clock_journal.Journal(str(script), [])
    read_end, write_end = os.pipe()
    reader = EdgeReader(read_end, clock(), journal)
    try:
        _leaves_stops_to_the_main_thread(reader._thread)
        os.write(write_end, edges.journal("s1", str(tmp_path)))
        until(lambda: journal._thread is not None and journal._thread.is_alive(), 10, 0.01)
        _leaves_stops_to_the_main_thread(journal._thread)
    finally:
        os.close(write_end)
        reader.finish(2.0)
        journal.close()
    assert reader.broken is None and journal.path == tmp_path / clock_journal.NAME


def test_every_helper_thread_goodbench_starts_goes_through_threads_daemon():
    """A thread started directly takes process-wide stop signals the main thread holds back (the
    host-load watch did, and a group SIGTERM lost its partial record); the sandbox's /tmp watch was
    the last one started so (review D, L4)."""
    root = Path(__file__).parents[1] / "suite"
    direct = [str(path.relative_to(root)) for path in root.rglob("*.py")
              if path.name != "threads.py" and "threading.Thread(" in path.read_text()]
    assert direct == []
