"""A suite whose file would pass the readers' size limit says so after its first run, not after
its last (finding 6 of the fifteenth trial: a file of many runs was "validated: ok" to its writer
and refused by validate and submit)."""
from __future__ import annotations

import torch
from short_lmchar import ShortLmChar

from suite.record import results, size_ahead
from suite.run import session
from suite.run.progress import ProgressPrinter
from suite.run.runner import RunOptions
from workloads import registry

CPU = torch.device("cpu")


def test_the_projection_is_the_mean_run_times_the_runs_planned():
    runs = [{"step_times_s": [0.1] * 100}, {"step_times_s": [0.1] * 300}]
    so_far = len(results.dumps({"runs": runs}).encode())
    assert size_ahead.projected_bytes(runs, 10) == size_ahead.HEAD_BYTES + so_far * 5
    assert size_ahead.projected_bytes([], 10) == size_ahead.HEAD_BYTES


def test_a_projection_over_the_limit_is_one_line_naming_the_size_and_the_remedy():
    runs = [{"step_times_s": [0.123456] * 1000}]
    per_run = len(results.dumps({"runs": runs}).encode())
    assert size_ahead.warning(runs, 2) is None
    line = size_ahead.warning(runs, 20, limit=10 * per_run)
    assert line is not None and "\n" not in line
    assert "after its 20 runs" in line and "--seeds or --repeat" in line and "refuse" in line


def test_the_suite_warns_once_after_the_run_that_shows_the_file_will_be_too_large(data_dir, monkeypatch, capsys):
    events: list[tuple[str, dict]] = []
    printer = ProgressPrinter()

    def progress(kind, **fields):
        events.append((kind, fields))
        printer(kind, **fields)

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(session, "matmul_ceiling", lambda device, precision, n=None: {"flops": 1e15})
    monkeypatch.setattr(size_ahead.warning, "__defaults__", (size_ahead.HEAD_BYTES + 1,))  # any run is too many
    plan = session.SuitePlan(["lm-char"], "smoke", 2, explicit=True)
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), progress)
    said = [fields["line"] for kind, fields in events if kind == "size_ahead"]
    assert len(said) == 1 and "after its 2 runs" in said[0]
    kinds = [kind for kind, _ in events]
    assert kinds.index("size_ahead") < max(i for i, k in enumerate(kinds) if k == "run_start")  # before the 2nd run
    assert len(doc["runs"]) == 2  # the suite goes on: the warning stops nothing
    assert "warning: at the size of its first 1 run(s)" in capsys.readouterr().err


def test_a_suite_within_the_limit_says_nothing_of_its_size(data_dir, monkeypatch):
    events: list[str] = []
    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(session, "matmul_ceiling", lambda device, precision, n=None: {"flops": 1e15})
    plan = session.SuitePlan(["lm-char"], "smoke", 1, explicit=True)
    session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), lambda kind, **f: events.append(kind))
    assert "size_ahead" not in events and "run_start" in events
