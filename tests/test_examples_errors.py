"""The examples end as goodbench's commands end: a missing dataset is one line, never a traceback."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from suite.api.script import one_line_errors
from suite.record.errors import GoodbenchError

REPO = Path(__file__).resolve().parent.parent


def test_one_line_errors_turns_a_refusal_into_one_line_and_status_1(capsys):
    def refused():
        raise GoodbenchError("lm-char's data: not found")

    assert one_line_errors(refused) == 1
    assert capsys.readouterr().err == "error: lm-char's data: not found\n"
    assert one_line_errors(lambda: None) == 0


def test_one_line_errors_leaves_a_bug_a_traceback():
    def bug():
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        one_line_errors(bug)


def test_a_loss_gone_nan_is_one_line_and_its_error_is_public(tmp_path, monkeypatch, capsys):
    """A new user's NaN loss ended in a traceback through goodbench's internals, its error class
    not public: one_line_errors now says it in one line (status 1), and ``goodbench.LossNotFinite``
    names it for code that catches it; the run is kept as failed all the same."""
    import json

    import torch
    from quick_ceiling import quick_ceiling

    import goodbench

    quick_ceiling(monkeypatch)
    out = tmp_path / "nan.json"

    def main() -> None:
        bench = goodbench.Benchmark("nan", samples_per_step=4, flops_per_step=1e6, max_steps=20, warmup_steps=1,
                                    log_every=5, device="cpu", out=out, sign=False)
        with bench:
            for run in bench.runs():
                for _ in range(20):
                    with run.step() as s:
                        s.loss = torch.tensor(float("nan"))

    assert "LossNotFinite" in goodbench.__all__
    assert one_line_errors(main) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == "error: training loss is nan at step 5"
    [run] = json.loads(out.read_text())["runs"]
    assert run["status"] == "failed" and "training loss is nan at step 5" in run["error"]
    out = tmp_path / "again.json"  # main reads it when called
    with pytest.raises(goodbench.LossNotFinite):  # the public name is the class raised
        main()


@pytest.mark.slow  # two scripts, each importing torch
def test_a_refused_benchmark_argument_is_one_line_without_the_wrapper(tmp_path):
    """Walk 5: a script not wrapped in one_line_errors printed a traceback for a refused argument
    (full scale with seeds=1), though the docs promise one line. Building a Benchmark chains a hook
    that shortens goodbench's refusals only: a bug after it keeps its traceback."""
    script = tmp_path / "train.py"
    script.write_text("import sys\nimport goodbench\n"
                      "if sys.argv[1] == 'bug':\n"
                      "    goodbench.Benchmark('x', samples_per_step=4, max_steps=10, sign=False)\n"
                      "    raise ZeroDivisionError('a bug of the script')\n"
                      "goodbench.Benchmark('x', samples_per_step=4, max_steps=10, against='lm-char', scale='full',\n"
                      "                    seeds=1, sign=False)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    refused = subprocess.run([sys.executable, str(script), "refused"], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=300)
    assert refused.returncode == 1 and refused.stderr.startswith("error: ") and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1 and "seeds=5" in refused.stderr
    bug = subprocess.run([sys.executable, str(script), "bug"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert bug.returncode == 1 and "Traceback" in bug.stderr and "ZeroDivisionError: a bug of the script" in bug.stderr


def test_the_one_line_hook_shortens_only_goodbenchs_refusals_and_chains_to_the_hook_before(monkeypatch, capsys):
    """A refusal (a model refused too) is one line and not handed to the hook before, as
    docs/own-code.md says; any other exception is handed to it."""
    from suite.api import script
    from workloads.evaluation import ModelRefused

    handed = []
    monkeypatch.setattr(sys, "excepthook", lambda *args: handed.append(args))
    script.refusals_in_one_line()
    script.refusals_in_one_line()  # once: not chained to itself
    hook = sys.excepthook
    refusal, bug = GoodbenchError("seeds must be 5"), ZeroDivisionError("bug")
    hook(GoodbenchError, refusal, None)
    assert capsys.readouterr().err == "error: seeds must be 5\n" and handed == []
    hook(ModelRefused, ModelRefused("reads its answer"), None)
    assert capsys.readouterr().err == "error: reads its answer\n" and handed == []
    hook(ZeroDivisionError, bug, None)
    assert handed == [(ZeroDivisionError, bug, None)] and capsys.readouterr().err == ""


@pytest.mark.slow  # a script importing torch; the one-line hook itself: the tests above
def test_the_plain_loop_without_its_dataset_says_so_in_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GOODBENCH_DATA_DIR"}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), GOODBENCH_OFFLINE="1",
               PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
    empty = tmp_path / "data"
    empty.mkdir()
    done = subprocess.run([sys.executable, str(REPO / "examples" / "plain_loop.py"), "--steps", "2", "--device", "cpu",
                           "--data-dir", str(empty), "--out", str(tmp_path / "out.json")],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "tinyshakespeare/input.txt" in lines[0] and "not found" in lines[0]
    assert not (tmp_path / "out.json").exists()


@pytest.mark.slow  # the example's process, which imports torch: 4 s (the fast loop stays under 3 minutes)
def test_the_plain_loops_help_gives_its_whole_description():
    """--help shows the example's docstring whole (its first line alone stopped mid-sentence),
    with the command that runs it."""
    done = subprocess.run([sys.executable, str(REPO / "examples" / "plain_loop.py"), "--help"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stderr
    assert "held to lm-char's smoke target" in done.stdout
    assert "python examples/plain_loop.py --out own-plain.json" in done.stdout
