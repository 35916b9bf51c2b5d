"""Where ``goodbench.Benchmark`` writes (trial 14b F5, F7, F8): its ``out`` is reserved when it
starts, as ``goodbench run`` reserves ``-o``, so a folder it cannot write fails before any
training; a file the disk refuses at the end is kept elsewhere and the error says where; and a
closing ceiling measurement that runs out of memory costs the file its ``at_end``, never its runs."""
from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
import torch
from quick_ceiling import quick_ceiling

import goodbench
from suite.api import benchmark
from suite.record import results
from suite.record.errors import GoodbenchError


def _bench(out: Path, steps: int = 6) -> goodbench.Benchmark:
    return goodbench.Benchmark("tiny", samples_per_step=4, flops_per_step=1e6, max_steps=steps, warmup_steps=1,
                               eval_every=steps, device="cpu", out=out, sign=False)


def _train(bench: goodbench.Benchmark, steps: int = 6) -> None:
    for run in bench.runs():
        for _ in range(steps):
            with run.step() as s:
                s.loss = torch.tensor(1.0)
        if run.due_for_evaluation():
            run.evaluate(lambda: {"x": 1.0})


def test_out_is_reserved_at_the_start_and_an_unwritable_folder_fails_before_training(tmp_path, monkeypatch):
    """F7: an unwritable ``out`` folder was found only after the whole run, which was then lost."""
    quick_ceiling(monkeypatch)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if os.access(folder, os.W_OK):  # root writes anyway: refuse the placeholder as a read-only disk would
        def read_only(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

        monkeypatch.setattr(results.Reservation, "_reserve", classmethod(lambda cls, path: read_only(path)))
    bench = _bench(folder / "own.json")
    measured: list[str] = []
    monkeypatch.setattr(benchmark, "matmul_ceiling", lambda *a: measured.append("ceiling"))  # never reached
    with pytest.raises(GoodbenchError) as refused:
        bench.start()
    assert str(refused.value) in (f"cannot write the results file {folder / 'own.json'}: Permission denied",
                                  f"cannot write the results file {folder / 'own.json'}: Read-only file system")
    assert measured == []


def test_out_is_held_while_the_benchmark_runs_and_written_into_at_the_end(tmp_path, monkeypatch):
    quick_ceiling(monkeypatch)
    out = tmp_path / "own.json"
    with _bench(out) as bench:
        assert out.is_file() and out.stat().st_size == 0  # the placeholder, held
        with pytest.raises(results.NameTaken, match="reserved by another goodbench run"):
            results.Reservation.take(out)
        _train(bench)
    assert bench.path == out and json.loads(out.read_text())["runs"][0]["status"] == "complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["own.json"]


def test_a_name_another_run_holds_is_told_apart_by_its_error_type_not_its_words(tmp_path, monkeypatch):
    """A live reservation is :class:`results.ReservedElsewhere` (a :class:`results.NameTaken`, as it
    was), which the Benchmark tells apart from a file that exists by its type, saying it in its own
    option's words; a file that exists is a plain NameTaken."""
    quick_ceiling(monkeypatch)
    out = tmp_path / "own.json"
    held = results.Reservation.take(out)
    try:
        with pytest.raises(results.ReservedElsewhere, match="reserved by another goodbench run") as live:
            results.Reservation.take(out)
        assert isinstance(live.value, results.NameTaken)
        with pytest.raises(GoodbenchError) as refused:
            _bench(out).start()
        assert str(refused.value) == (f"{out} is reserved by another goodbench run, which writes it when it ends; "
                                      "give Benchmark another out=")
    finally:
        held.release()
    out.write_text("{}")
    with pytest.raises(results.NameTaken) as exists:
        results.Reservation.take(out)
    assert type(exists.value) is results.NameTaken

    def refused_so(error: results.NameTaken):
        def take(cls, path):
            raise error
        return classmethod(take)

    monkeypatch.setattr(results.Reservation, "take", refused_so(results.NameTaken("held by another goodbench run")))
    with pytest.raises(GoodbenchError, match="exists: a results file is never overwritten"):
        _bench(tmp_path / "other.json").start()
    elsewhere_error = results.ReservedElsewhere(tmp_path / "elsewhere.json")
    elsewhere_error.args = ("held elsewhere",)  # the Benchmark's words come from the error's fields, not its text
    monkeypatch.setattr(results.Reservation, "take", refused_so(elsewhere_error))
    with pytest.raises(GoodbenchError) as elsewhere:
        _bench(tmp_path / "other.json").start()
    assert str(elsewhere.value) == (f"{tmp_path / 'elsewhere.json'} is reserved by another goodbench run, which "
                                    "writes it when it ends; give Benchmark another out=")


def test_a_benchmark_that_records_nothing_frees_its_name(tmp_path, monkeypatch):
    quick_ceiling(monkeypatch)
    out = tmp_path / "own.json"
    with pytest.raises(ValueError, match="before any run"), _bench(out):
        raise ValueError("before any run")
    assert not out.exists()


def test_a_file_the_disk_refuses_is_kept_elsewhere_and_the_error_says_where(tmp_path, monkeypatch, capsys):
    """F5 for the library: the document is kept in goodbench's state folder, in one line's words."""
    quick_ceiling(monkeypatch)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    out = tmp_path / "own.json"

    def disk_full(self, doc):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results.Reservation, "write", disk_full)
    bench = _bench(out)
    with pytest.raises(GoodbenchError) as unsaved, bench:
        _train(bench)
    [kept] = (tmp_path / "state" / "goodbench" / "unsaved").iterdir()
    assert str(unsaved.value) == f"cannot write {out}: No space left on device; the results are kept in {kept}"
    assert bench.path == kept and json.loads(kept.read_text())["runs"][0]["steps"] == 6
    assert not out.exists()


def test_a_closing_ceiling_that_runs_out_of_memory_keeps_the_runs(tmp_path, monkeypatch, capsys):
    """F8: after the loop ran out of memory, measuring the ceiling again ran out too, and the
    runs so far were lost with it. The file is written without ``at_end``, and a line says why."""
    quick_ceiling(monkeypatch)
    out = tmp_path / "own.json"
    bench = _bench(out, steps=20)
    with pytest.raises(RuntimeError, match="loop's own"), bench:
        monkeypatch.setattr(benchmark, "matmul_ceiling", lambda device, precision, n=None: (_ for _ in ()).throw(
            RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 16777216 bytes")))
        run = next(bench.runs())
        for step in range(1, 21):
            with run.step() as s:
                s.loss = torch.tensor(1.0)
                if step == 12:
                    raise RuntimeError("out of memory in the loop's own step")
    doc = json.loads(out.read_text())
    assert doc["runs"][0]["status"] == "failed" and "out of memory in the loop's own step" in doc["runs"][0]["error"]
    assert "at_end" not in doc["settings"]["matmul_ceiling"]["fp32"]
    assert ("the fp32 matmul ceiling was not measured again after the runs (RuntimeError: DefaultCPUAllocator: "
            "can't allocate memory: you tried to allocate 16777216 bytes): the file holds the one measured before "
            "them, and the runs' records") in capsys.readouterr().err


def test_a_benchmark_that_fails_to_start_frees_its_name(tmp_path, monkeypatch):
    """The reservation is let go when starting fails after it (no data for the pinned evaluator, a
    ceiling that cannot be measured): no empty file is left at ``out``."""
    out = tmp_path / "own.json"

    def no_ceiling(device, precision, n=None):
        raise RuntimeError("out of memory before the first step")

    monkeypatch.setattr(benchmark, "matmul_ceiling", no_ceiling)
    with pytest.raises(RuntimeError, match="before the first step"), _bench(out):
        pass
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_run_that_never_entered_its_step_says_so_and_its_record_says_why(tmp_path, monkeypatch, capsys):
    """A new user's loop never entered ``with run.step():``: it exited 0 with a valid file of a
    partial run "stopped after 0 of 60 steps", and the console said nothing. It now says, as a
    warning naming the run, what was missed, and the run's record gives the same reason."""
    from suite.api.run import NO_STEP

    quick_ceiling(monkeypatch)
    bench = _bench(tmp_path / "own.json")
    with bench:
        for _run in bench.runs():
            for _ in range(6):
                pass  # the optimizer step, outside run.step()
    assert f"[tiny seed 1] warning: {NO_STEP}" in capsys.readouterr().err
    [record] = json.loads((tmp_path / "own.json").read_text())["runs"]
    assert record["status"] == "partial" and record["error"] == NO_STEP and bench.problems == []
