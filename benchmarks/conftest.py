"""Benchmark options: scale (smoke on CPU, full on GPU by default), torch.compile mode, data directory."""
from __future__ import annotations

import os

import pytest
import torch

from workloads.pinned import COMPILE_MODES


def pytest_addoption(parser):
    parser.addoption("--scale", choices=["smoke", "full"], default=None,
                     help="workload variant (default: full on a GPU, smoke on the CPU)")
    parser.addoption("--compile-mode", choices=COMPILE_MODES, default="off",
                     help="torch.compile mode of the trained module, as `goodbench run --compile` "
                          "(compilation happens in the untimed warm-up rounds)")
    parser.addoption("--data-dir", default=os.environ.get("GOODBENCH_DATA_DIR"),
                     help="directory holding the dataset files")


@pytest.fixture(scope="session")
def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.fixture(scope="session")
def scale(request, device) -> str:
    return request.config.getoption("--scale") or ("full" if device.type == "cuda" else "smoke")


@pytest.fixture(scope="session")
def compile_mode(request) -> str:
    return request.config.getoption("--compile-mode")


@pytest.fixture(scope="session")
def data_dir(request) -> str | None:
    return request.config.getoption("--data-dir")
