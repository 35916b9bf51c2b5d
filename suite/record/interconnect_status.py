"""The words of a recorded interconnect status that a CPU run writes and that pages and
``goodbench info`` show (the meter, suite/meters/interconnect.py, writes them; readers of results
never import a meter)."""
from __future__ import annotations

from typing import Any

# what a CPU run records as both statuses: one device, so no link between devices to describe
CPU_STATUS = "none: a CPU run uses one device, so there is no interconnect to report"
# what CPU runs recorded before (a file keeps it; pages and `goodbench info` show CPU_STATUS instead)
EARLIER_CPU_STATUSES = ("not queried: the device is the CPU", "unknown: not queried: the device is the CPU")


def plain_status(text: Any) -> Any:
    """A recorded interconnect status as pages and ``goodbench info`` show it: a CPU run's, in the
    words it was recorded with before (``not queried: the device is the CPU``), as
    :data:`CPU_STATUS`; any other value as it is."""
    return CPU_STATUS if isinstance(text, str) and text in EARLIER_CPU_STATUSES else text
