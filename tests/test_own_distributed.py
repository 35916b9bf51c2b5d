"""One's own loop under torchrun (suite/api/benchmark.py): every rank makes the Benchmark, rank 0
writes one file with every rank's step times, the FLOPs counted on each rank's share are summed,
and the curve is the one-process job's up to fp32 rounding. Two real gloo processes on the CPU."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from suite.validate import check_document

pytestmark = pytest.mark.dist  # rank processes: the dist group (python -m pytest -m dist)
JOB = Path(__file__).resolve().parent / "own_ddp_job.py"
RTOL = 1e-5  # 2 ranks' half-batch gradients averaged by the all-reduce: another summation order


def _launch(out: Path, nproc: int, *extra: str) -> subprocess.CompletedProcess:
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
    return subprocess.run([*(launcher if nproc > 1 else [sys.executable]), str(JOB), str(out), *extra],
                          capture_output=True, text=True, timeout=240, cwd=JOB.parent.parent)


def _run(out: Path, nproc: int) -> dict:
    proc = _launch(out, nproc)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("results written") == 1  # rank 0 alone writes
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def one_and_two(tmp_path_factory) -> tuple[dict, dict]:
    root = tmp_path_factory.mktemp("own-ddp")
    return _run(root / "one.json", 1), _run(root / "two.json", 2)


def test_an_own_torchrun_job_writes_one_valid_file_with_every_ranks_times(one_and_two):
    one, two = one_and_two
    assert check_document(two) == [] and check_document(one) == []
    run = two["runs"][0]
    assert two["settings"]["distributed"]["world_size"] == 2
    assert two["settings"]["implementation"]["command"][:3] == ["torchrun", "--nproc-per-node=2",
                                                                "tests/own_ddp_job.py"]  # how to run it again
    assert one["settings"]["implementation"]["command"][:2] == ["python", "tests/own_ddp_job.py"]
    section = run["distributed"]
    assert (section["world_size"], section["global_batch"], section["per_rank_batch"]) == (2, 16, 8)
    assert [r["rank"] for r in section["ranks"]] == [0, 1]
    assert all(r["step_time_s"]["steps"] == 27 for r in section["ranks"])  # 30 steps, 3 of warm-up
    assert run["metrics"]["energy_status"].startswith("not measured")  # CPU ranks share a package


def test_the_ranks_shares_add_up_to_the_one_process_step(one_and_two):
    one, two = one_and_two
    assert two["runs"][0]["metrics"]["flops_per_step"] == one["runs"][0]["metrics"]["flops_per_step"]
    assert two["settings"]["implementation"]["spec"]["flops_source"] == "counted"
    for key in ("val_mse", "train_loss"):
        np.testing.assert_allclose([p[key] for p in two["runs"][0]["curve"]],
                                   [p[key] for p in one["runs"][0]["curve"]], rtol=RTOL)
