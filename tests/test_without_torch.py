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
                                      f'pip install torch==2.13.0 && pip install -e "{REPO}[train]" (on a GPU '
                                      "machine, your CUDA build of torch instead of torch==2.13.0) (validate, "
                                      "submit, site and compare need "
                                      "no torch; the MLPerf import needs none either, but MLCommons' mlperf-logging)")
    assert not list(tmp_path.glob("runs/*.json"))
    # run-own too, before the script starts: not the script's traceback of `import torch`
    owned = _goodbench("run-own", str(REPO / "examples" / "plain_loop.py"), "--out", "own.json", cwd=tmp_path)
    assert owned.returncode == 1 and "Traceback" not in owned.stderr
    assert owned.stderr.strip() == trained.stderr.strip().replace("goodbench run needs", "goodbench run-own needs")
    assert not (tmp_path / "own.json").exists()
    # check: the one line alone, no header first; info: what this Python lacks (it needs no torch), then the line
    checked = _goodbench("check", cwd=tmp_path)
    assert checked.returncode == 1 and checked.stdout == ""
    assert checked.stderr.strip() == trained.stderr.strip().replace("goodbench run needs", "goodbench check needs")
    described = _goodbench("info", cwd=tmp_path)
    assert described.returncode == 1 and described.stdout.startswith("# this Python and the packages")
    assert "torch: MISSING" in described.stdout and "jsonschema" in described.stdout
    assert described.stderr.strip() == trained.stderr.strip().replace("goodbench run needs", "goodbench info needs")
    assert _goodbench("info", "--json", cwd=tmp_path).stdout == ""  # JSON alone, or nothing


def test_importing_the_library_without_torch_works_and_a_torch_name_says_what_to_install_in_one_line(tmp_path):
    """``import goodbench`` needs no torch (its names are imported on first use); the first name
    that needs torch says in one line which extra brings it."""
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'benchmarks' / 'gpu_image'}{os.pathsep}{REPO}",
           "GOODBENCH_BLOCKED": "torch"}
    imported = subprocess.run([sys.executable, "-c", "import goodbench, sys; print(goodbench.__version__, "
                               "'torch' in sys.modules)"], env=env, capture_output=True, text=True, cwd=tmp_path,
                              timeout=300)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.split()[1] == "False"
    for use in ("goodbench.Benchmark", "goodbench.Run", "goodbench.ModelRefused"):
        used = subprocess.run([sys.executable, "-c", f"import goodbench; {use}"], env=env, capture_output=True,
                              text=True, cwd=tmp_path, timeout=300)
        assert used.returncode == 1
        assert used.stderr.strip().splitlines()[-1] == (
            "ModuleNotFoundError: goodbench's library measures a PyTorch loop and needs torch, not installed here: "
            f'pip install torch==2.13.0 && pip install -e "{REPO}[train]" (on a GPU machine, your CUDA build of torch '
            "instead of torch==2.13.0)")
        assert "During handling" not in used.stderr  # one error, not torch's chained under it


def test_importing_the_library_with_torch_poisoned_works_until_a_torch_name_is_used():
    """The same with ``sys.modules['torch'] = None`` (no sitecustomize): ``from goodbench import
    Benchmark`` fails on torch alone, with the one line."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "import goodbench\n"
            "assert 'suite.api.benchmark' not in sys.modules\n"
            "try:\n"
            "    from goodbench import Benchmark\n"
            "except ModuleNotFoundError as exc:\n"
            "    print(exc.name, '|', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    name, said = done.stdout.strip().split(" | ")
    assert name == "torch" and said.startswith("goodbench's library measures a PyTorch loop and needs torch")
    assert f'pip install torch==2.13.0 && pip install -e "{REPO}[train]"' in said
