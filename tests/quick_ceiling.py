"""A smaller matmul ceiling for tests whose subject is not the ceiling: ``goodbench.Benchmark``
measures one before its runs and again after them (0.6 s each at the default size on the 2-core
CPU, 0.12 s at 512×512 for 0.1 s); the figures stay a real measurement of this machine. The own
jobs the tests run as scripts measure the same one (tests/own_job_step.py's ``use_quick_ceiling``)."""
from __future__ import annotations

import pytest
from own_job_step import small_ceiling

from suite.api import benchmark


def quick_ceiling(patch: pytest.MonkeyPatch) -> None:
    """Make the Benchmark measure its ceiling with 512×512 products for 0.1 s."""
    patch.setattr(benchmark, "matmul_ceiling", small_ceiling)
