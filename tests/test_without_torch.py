"""goodbench installed without its train extra (no torch): validate and site work, and a command
that trains says in one line which extra it needs (pyproject.toml, suite/cli.py). .ci/run proves
the same in a fresh virtual environment without torch."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import forging
import pytest

REPO = forging.REPO

pytestmark = pytest.mark.slow  # CLI subprocesses


def _goodbench(*args: str, cwd) -> subprocess.CompletedProcess:
    """``goodbench ARGS`` in a Python where torch cannot be imported
    (benchmarks/gpu_image/sitecustomize.py, told to block torch)."""
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'benchmarks' / 'gpu_image'}{os.pathsep}{REPO}",
           "GOODBENCH_BLOCKED": "torch"}
    return subprocess.run([sys.executable, "-m", "suite", *args], env=env, capture_output=True, text=True,
                          cwd=cwd, timeout=900)


def test_validate_and_site_need_no_torch_and_run_names_the_train_extra(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "run.json").write_text(json.dumps(forging.real("dlrm-small")))
    checked = _goodbench("validate", str(results / "run.json"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    built = _goodbench("site", "--results-dir", str(results), "--out", str(tmp_path / "site"), cwd=tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    trained = _goodbench("run", "-w", "dlrm-small", cwd=tmp_path)
    assert trained.returncode == 1 and "Traceback" not in trained.stderr
    # from a clone, the hint is the clone's editable install (suite/record/dependencies.install_hint)
    assert trained.stderr.strip() == ("goodbench: error: goodbench run needs torch, which is not installed here: "
                                      f'pip install -e "{REPO}[train]" (validate, submit, site and compare need '
                                      "no torch; the MLPerf import needs none either, but MLCommons' mlperf-logging)")
    assert not list(tmp_path.glob("runs/*.json"))


def test_importing_the_library_without_torch_says_what_to_install_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'benchmarks' / 'gpu_image'}{os.pathsep}{REPO}",
           "GOODBENCH_BLOCKED": "torch"}
    imported = subprocess.run([sys.executable, "-c", "import goodbench"], env=env, capture_output=True, text=True,
                              cwd=tmp_path, timeout=300)
    assert imported.returncode == 1
    assert imported.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: goodbench's library measures a PyTorch loop and needs torch, not installed here: "
        f'pip install -e "{REPO}[train]"')
    assert "During handling" not in imported.stderr  # one error, not torch's chained under it
