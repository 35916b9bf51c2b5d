"""Per-step clocks: CUDA events on a GPU (read after the window, no per-step host sync),
``time.perf_counter`` on the CPU, where each step is synchronous."""
from __future__ import annotations

import time

import torch


def synchronize(device: torch.device) -> None:
    """Wait for all queued work on ``device`` (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class StepClock:
    """Records the duration of every step, and of the batch fetch before it when the runner marks
    one (:meth:`fetch`); ``durations()`` and ``waits()`` return them in seconds, one per step.

    A fetch's time ("data wait") runs from :meth:`fetch` to the step's :meth:`start`. On the CPU
    both are host clock readings. On a GPU both are CUDA events on the current stream: the wait
    is the device time from the point the fetch was called — once the device has finished the
    work queued before it (the previous step) — to the step's start, i.e. the batch work the
    fetch launched on the device (window gathers, augmentation, sampling) plus any time the
    device sat idle while the host prepared the batch. It is neither in the step's time nor lost
    between the two clocks. (The CUDA path is unverified until run on a GPU.)
    """

    def __init__(self, device: torch.device):
        self.device = device
        self._cuda = device.type == "cuda"
        # not read yet: CPU (wait, duration) pairs; CUDA (fetch event or None, begin, end) events
        self._marks: list = []
        self._read: list[float] = []  # durations already read
        self._read_waits: list[float | None] = []  # data waits already read (None: no fetch)
        self._fetch_event: torch.cuda.Event | None = None  # CUDA: the open step's fetch mark
        self._begin_event: torch.cuda.Event | None = None  # CUDA: the open step's start event
        self._fetch_s: float | None = None  # CPU: the open step's fetch mark
        self._begin_s = 0.0  # CPU: the open step's start time

    def fetch(self) -> None:
        """Mark the start of the next step's batch fetch (call it before :meth:`start`)."""
        if self._cuda:
            self._fetch_event = torch.cuda.Event(enable_timing=True)
            self._fetch_event.record()
        else:
            self._fetch_s = time.perf_counter()

    def start(self) -> None:
        if self._cuda:
            self._begin_event = torch.cuda.Event(enable_timing=True)
            self._begin_event.record()
        else:
            self._begin_s = time.perf_counter()

    def stop(self) -> None:
        if self._cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self._marks.append((self._fetch_event, self._begin_event, end))
            self._fetch_event = None
        else:
            wait = None if self._fetch_s is None else self._begin_s - self._fetch_s
            self._marks.append((wait, time.perf_counter() - self._begin_s))
            self._fetch_s = None

    def _read_marks(self) -> None:
        """Convert the marks recorded since the last call (one device synchronization on a GPU).
        CUDA events are read once and then dropped."""
        if self._cuda:
            synchronize(self.device)
            for fetched, begin, end in self._marks:
                self._read.append(begin.elapsed_time(end) / 1000.0)
                self._read_waits.append(None if fetched is None else fetched.elapsed_time(begin) / 1000.0)
        else:
            for wait, duration in self._marks:
                self._read.append(duration)
                self._read_waits.append(wait)
        self._marks.clear()

    def durations(self) -> list[float]:
        """Step durations in seconds, one per step since the clock was made."""
        self._read_marks()
        return list(self._read)

    def waits(self) -> list[float | None]:
        """Data waits in seconds, one per step (None for a step without a :meth:`fetch` mark)."""
        self._read_marks()
        return list(self._read_waits)
