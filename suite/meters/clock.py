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
    """Records the duration of every step; ``durations()`` returns them in seconds."""

    def __init__(self, device: torch.device):
        self.device = device
        self._cuda = device.type == "cuda"
        self._marks: list = []  # CPU: durations; CUDA: event pairs not read yet
        self._read: list[float] = []  # CUDA: durations already read from events
        self._begin = None

    def start(self) -> None:
        if self._cuda:
            self._begin = torch.cuda.Event(enable_timing=True)
            self._begin.record()
        else:
            self._begin = time.perf_counter()

    def stop(self) -> None:
        if self._cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self._marks.append((self._begin, end))
        else:
            self._marks.append(time.perf_counter() - self._begin)

    def durations(self) -> list[float]:
        """Step durations in seconds (synchronizes the device once on a GPU).

        CUDA event pairs are read once and then dropped: each call converts only the steps
        recorded since the previous one.
        """
        if not self._cuda:
            return list(self._marks)
        synchronize(self.device)
        self._read.extend(b.elapsed_time(e) / 1000.0 for b, e in self._marks)
        self._marks.clear()
        return list(self._read)
