"""A run of the suite (suite/run/session.py): what runs, what is skipped, the saved matmul ceilings,
and an interrupted suite. Fast: no run here trains past step 7, and no ceiling is measured."""
from __future__ import annotations

import json

import pytest
import torch
from short_lmchar import ShortLmChar

from suite.record.errors import GoodbenchError
from suite.run import session
from suite.run.runner import RunOptions
from suite.run.signals import Terminated
from workloads import registry
from workloads.lm.job import LanguageModelJob

CPU = torch.device("cpu")


def recorder(calls: list) -> session.Progress:
    return lambda kind, **fields: calls.append((kind, fields))


def test_a_named_workload_without_its_data_stops_the_suite_before_anything_runs(tmp_path):
    plan = session.SuitePlan(["gpt2-124m", "lm-char"], "smoke", 1, explicit=True)
    calls = []
    with pytest.raises(GoodbenchError, match="tinyshakespeare/input.txt"):
        session.run_suite(plan, RunOptions(device=CPU, data_dir=str(tmp_path)), recorder(calls))
    assert calls == []  # not even the ceiling was measured


def test_unnamed_workloads_without_data_are_skipped_with_their_reasons(tmp_path):
    plan = session.SuitePlan(["lm-char", "fashion-cnn"], "smoke", 1, explicit=False)
    calls = []
    with pytest.raises(GoodbenchError, match="^no workload could run: ") as err:
        session.run_suite(plan, RunOptions(device=CPU, data_dir=str(tmp_path)), recorder(calls))
    assert [(kind, fields["workload"]) for kind, fields in calls] == [
        ("skip", "lm-char"), ("skip", "fashion-cnn")]
    assert "tinyshakespeare/input.txt" in str(err.value) and "fashion-mnist/" in str(err.value)


def test_a_changed_global_batch_is_open_division_and_names_each_change():
    plan = session.SuitePlan(["gpt2-124m", "lm-char"], "smoke", 1, explicit=True, global_batch=32)
    (gpt2, lm_char), changes = plan.workloads()
    assert changes == ["gpt2-124m: global batch 32 (pinned 16); every other value as pinned"]
    assert gpt2.spec("smoke").batch_size == 32
    assert gpt2.spec_hash("smoke") != registry.get("gpt2-124m").spec_hash("smoke")
    assert lm_char is registry.get("lm-char")  # its pinned batch already is 32: unchanged
    assert session.default_seeds("full", "tta") == 5
    assert session.default_seeds("smoke", "tta") == session.default_seeds("full", "throughput") == 1


def test_the_ceilings_a_suite_saved_are_reused_on_the_same_device_model(tmp_path, monkeypatch):
    measured = []
    monkeypatch.setattr(session, "matmul_ceiling",
                        lambda device, precision, n=None: measured.append(precision) or {"flops": 2e9})
    saved = tmp_path / session.CEILINGS
    saved.write_text(json.dumps({"device_name": "cpu", "ceilings": {"fp32": {"flops": 1e9}}}))
    options = RunOptions(device=CPU, checkpoint_dir=str(tmp_path))
    calls = []
    assert session.matmul_ceilings(["fp32"], options, recorder(calls)) == {"fp32": {"flops": 1e9}}
    assert measured == [] and calls == []
    ceilings = session.matmul_ceilings(["bf16", "fp32"], options, recorder(calls))
    assert ceilings == {"bf16": {"flops": 2e9}, "fp32": {"flops": 1e9}} and measured == ["bf16"]
    assert calls == [("ceiling", {"precision": "bf16"})]
    assert json.loads(saved.read_text())["ceilings"] == ceilings  # kept for the next restart
    saved.write_text(json.dumps({"device_name": "NVIDIA H100 80GB HBM3",
                                 "ceilings": {"fp32": {"flops": 1e15}}}))
    assert session.matmul_ceilings(["fp32"], options, recorder(calls)) == {"fp32": {"flops": 2e9}}
    saved.write_text("{torn")
    assert session.matmul_ceilings(["fp32"], options, recorder(calls)) == {"fp32": {"flops": 2e9}}
    assert json.loads(saved.read_text()) == {"device_name": "cpu", "ceilings": {"fp32": {"flops": 2e9}}}


def test_an_interrupted_suite_keeps_the_partial_run_and_runs_nothing_after_it(data_dir, monkeypatch):
    """Ctrl-C at step 8 of the first workload: the document holds that run as partial, says
    it was interrupted, and the second workload never started."""
    real_step = LanguageModelJob.train_step

    def interrupt_at_step_8(self, batch=None):
        if self.step == 7:
            raise KeyboardInterrupt
        return real_step(self, batch)

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(LanguageModelJob, "train_step", interrupt_at_step_8)
    monkeypatch.setattr(session, "matmul_ceiling", lambda device, precision, n=None: {"flops": 1e9})
    plan = session.SuitePlan(["lm-char", "gpt2-124m"], "smoke", 0, explicit=True)
    calls = []
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder(calls))
    (run,) = doc["runs"]
    assert run["workload"]["id"] == "lm-char" and run["status"] == "partial" and run["steps"] == 7
    settings = doc["settings"]
    assert settings["interrupted"] is True and settings["aborted"] is None
    assert settings["workloads"] == ["lm-char", "gpt2-124m"] and settings["skipped"] == []
    assert settings["division"] == "closed" and settings["matmul_ceiling"] == {"fp32": {"flops": 1e9}}
    assert [fields["workload"] for kind, fields in calls if kind == "run_start"] == ["lm-char"]
    assert doc["system"]["accelerator"]["type"] == "cpu"
    assert list(doc["summary"]) == ["lm-char@smoke"]


@pytest.mark.parametrize("first_flops, stop", [(1.0, KeyboardInterrupt), (1e18, KeyboardInterrupt),
                                               (1.0, Terminated)])
def test_a_stopped_suite_measures_the_ceiling_again_once_where_a_run_stood_above_it(data_dir, monkeypatch,
                                                                                   first_flops, stop):
    """A walk's Ctrl-C: the ceiling measured before the runs under load stood below the run, and
    a stopped suite skipped measuring it again, so its file failed ``above-ceiling``. Stopped by
    Ctrl-C, it is measured once more where a run stood above it (and said why), and only there;
    stopped by SIGTERM (``docker stop`` kills 10 s later), the file comes first: never."""
    real_step = LanguageModelJob.train_step
    measured = []

    def stop_at_step_30(self, batch=None):
        if self.step == 29:
            raise stop
        return real_step(self, batch)

    def ceiling(device, precision, n=None):
        measured.append(precision)
        return {"flops": first_flops if len(measured) == 1 else 2.0}  # measured again: still below the run

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(LanguageModelJob, "train_step", stop_at_step_30)
    monkeypatch.setattr(session, "matmul_ceiling", ceiling)
    calls: list = []
    doc = session.run_suite(session.SuitePlan(["lm-char"], "smoke", 0, explicit=True),
                            RunOptions(device=CPU, data_dir=str(data_dir)), recorder(calls))
    (run,) = doc["runs"]
    assert run["status"] == "partial" and run["metrics"]["throughput"] is not None
    assert doc["settings"]["interrupted"] is True
    again = [f for kind, f in calls if kind == "ceiling" and f.get("again")]
    if first_flops == 1.0 and stop is KeyboardInterrupt:  # the run stood above it: once more, not measured on
        assert measured == ["fp32", "fp32"] and doc["settings"]["matmul_ceiling"]["fp32"]["at_end"]["flops"] == 2.0
        assert again == [{"precision": "fp32", "again": True, "most_s": session.MOST_SECONDS_AGAIN, "stopped": True}]
    else:
        assert measured == ["fp32"] and again == [] and "at_end" not in doc["settings"]["matmul_ceiling"]["fp32"]


def test_ctrl_c_while_the_ceiling_is_measured_again_keeps_every_run(data_dir, monkeypatch):
    """The runs are over and the ceiling is being measured again (its at_end): an interrupt
    then loses nothing: the document holds every run whole, without the second measurement,
    and says it was interrupted (the GPU slot's rehearsal stopped a run there and got no file)."""
    measured = []

    def ceiling(device, precision, n=None):
        measured.append(precision)
        if len(measured) > 1:
            raise KeyboardInterrupt
        return {"flops": 1e9}

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(session, "matmul_ceiling", ceiling)
    plan = session.SuitePlan(["lm-char"], "smoke", 0, explicit=True)
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder([]))
    (run,) = doc["runs"]
    assert run["status"] == "complete" and measured == ["fp32", "fp32"]
    assert doc["settings"]["interrupted"] is True and doc["settings"]["matmul_ceiling"] == {"fp32": {"flops": 1e9}}


def test_a_ceiling_that_runs_out_of_memory_when_measured_again_keeps_every_run(data_dir, monkeypatch):
    """Trial 14b F8: measuring the ceiling again after the runs is best-effort. Out of memory there
    (a CUDA OOM, a CPU allocator's RuntimeError, MemoryError), the document keeps every run and the
    first ceiling, without ``at_end``, not interrupted, and one progress event says why."""
    measured = []

    def ceiling(device, precision, n=None):
        measured.append(precision)
        if len(measured) > 1:
            raise MemoryError("can't allocate 16777216 bytes")
        return {"flops": 1e9}

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(session, "matmul_ceiling", ceiling)
    plan = session.SuitePlan(["lm-char"], "smoke", 0, explicit=True)
    calls: list = []
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder(calls))
    (run,) = doc["runs"]
    assert run["status"] == "complete" and measured == ["fp32", "fp32"]
    assert doc["settings"]["interrupted"] is False and doc["settings"]["matmul_ceiling"] == {"fp32": {"flops": 1e9}}
    assert [f for kind, f in calls if kind == "ceiling_not_again"] == [
        {"precision": "fp32", "why": "MemoryError: can't allocate 16777216 bytes"}]


def test_a_signal_whose_interrupt_was_lost_stops_the_run_at_the_next_step(data_dir, monkeypatch):
    """SIGTERM's exception raised inside a callback (torch.compile runs many) is printed and lost;
    the step loop raises it again after the step, so the run still ends partial and is kept."""
    from suite.run import signals as run_signals

    real_step = LanguageModelJob.train_step

    def signal_lost_at_step_8(self, batch=None):
        if self.step == 7:
            run_signals._Undelivered.interrupt = run_signals.Terminated  # what the handler sets before raising
        return real_step(self, batch)

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(LanguageModelJob, "train_step", signal_lost_at_step_8)
    monkeypatch.setattr(session, "matmul_ceiling", lambda device, precision, n=None: {"flops": 1e9})
    plan = session.SuitePlan(["lm-char", "gpt2-124m"], "smoke", 0, explicit=True)
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder([]))
    (run,) = doc["runs"]
    assert run["status"] == "partial" and run["steps"] == 8 and "SIGTERM" in run["error"]
    assert doc["settings"]["interrupted"] is True
    assert run_signals._Undelivered.interrupt is None  # caught: a later run in this process is not stopped


def test_an_error_in_one_seed_fails_that_run_alone_and_the_suite_goes_on(data_dir, monkeypatch):
    """A CUDA-like error at step 5 of seed 2 (and an init error of seed 3's build): each run is
    kept as failed with the error and what it had done; seeds 1 and 4 complete; nothing is lost."""
    real_step, real_build = LanguageModelJob.train_step, ShortLmChar.build
    built = []

    def fail_in_seed_2(self, batch=None):
        if built[-1] == 2 and self.step == 4:
            raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore lines")
        return real_step(self, batch)

    def build(self, spec, **kwargs):
        built.append(kwargs["seed"])
        if kwargs["seed"] == 3:
            raise ValueError("inductor: compile failed")
        return real_build(self, spec, **kwargs)

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(LanguageModelJob, "train_step", fail_in_seed_2)
    monkeypatch.setattr(ShortLmChar, "build", build)
    monkeypatch.setattr(session, "matmul_ceiling", lambda device, precision, n=None: {"flops": 1e15})  # above any run
    plan = session.SuitePlan(["lm-char"], "smoke", 4, explicit=True)
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder([]))
    assert [(r["seed"], r["status"]) for r in doc["runs"]] == [
        (1, "complete"), (2, "failed"), (3, "failed"), (4, "complete")]
    two, three = doc["runs"][1], doc["runs"][2]
    assert two["error"] == ("RuntimeError after 4 of at most 40 steps: CUDA error: an illegal memory "
                            "access was encountered")
    assert two["steps"] == 4 and len(two["step_times_s"]) == 4
    assert three["error"] == "ValueError before training (in data load or init): inductor: compile failed"
    assert doc["settings"]["interrupted"] is False and doc["settings"]["aborted"] is None
    # the ceiling measured again after the runs, kept beside the first (suite.meters.ceiling.with_end)
    assert doc["settings"]["matmul_ceiling"] == {"fp32": {"flops": 1e15, "at_end": {"flops": 1e15}}}
    summary = doc["summary"]["lm-char@smoke"]
    assert summary["seeds"] == [1, 2, 3, 4] and summary["complete"] == 2
    assert summary["tta"]["converged"] <= 2 and not summary["tta"]["valid"]  # MLPerf: a failed seed did not converge


def test_an_error_escaping_a_runs_own_handling_keeps_the_runs_before_it(data_dir, monkeypatch):
    from suite.run import driver

    real_finish, calls = driver.finish, []

    def finish_fails_on_the_second_run(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk gone")
        return real_finish(*args, **kwargs)

    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(driver, "finish", finish_fails_on_the_second_run)
    monkeypatch.setattr(session, "matmul_ceiling", lambda device, precision, n=None: {"flops": 1e9})
    plan = session.SuitePlan(["lm-char"], "smoke", 3, explicit=True)
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder([]))
    assert [r["seed"] for r in doc["runs"]] == [1]
    assert doc["settings"]["aborted"].startswith("lm-char seed 2: OSError: disk gone")


@pytest.mark.slow
def test_a_file_with_a_failed_seed_is_valid_and_keeps_the_other_seeds(tmp_path, monkeypatch):
    """dlrm-small at smoke scale, three seeds, seed 2 stopped by an error at its third step (as a
    CUDA error would): the document validates, seeds 1 and 3 are complete and scored as MLPerf
    scores a run that did not converge beside them."""
    from suite import validate
    from workloads.dlrm_small.job import DlrmJob

    real_init, real_step = DlrmJob.__init__, DlrmJob.train_step

    def init(self, spec, **kwargs):
        real_init(self, spec, **kwargs)
        self.seed_for_test, self.steps_for_test = kwargs["seed"], 0

    def step(self, batch=None):
        self.steps_for_test += 1
        if self.seed_for_test == 2 and self.steps_for_test == 3:
            raise RuntimeError("CUDA error: unspecified launch failure")
        return real_step(self, batch)

    monkeypatch.setattr(DlrmJob, "__init__", init)
    monkeypatch.setattr(DlrmJob, "train_step", step)
    plan = session.SuitePlan(["dlrm-small"], "smoke", 3, explicit=True)
    doc = json.loads(json.dumps(session.run_suite(plan, RunOptions(device=CPU), recorder([]))))
    assert [(r["seed"], r["status"]) for r in doc["runs"]] == [(1, "complete"), (2, "failed"), (3, "complete")]
    assert doc["runs"][1]["error"].startswith("RuntimeError after 2 of at most ")
    # every run, the failed one too, keeps what else the host was doing at its start and end
    assert all(r["host_load"]["start"]["cores"] == r["host_load"]["end"]["cores"] >= 1 for r in doc["runs"])
    assert validate.check_document(doc) == []  # the schema's host_load included
    score = doc["summary"]["dlrm-small@smoke"]["tta"]
    assert (score["seeds"], score["converged"], score["valid"]) == (3, 2, True)


def test_ctrl_c_while_the_library_measures_the_ceiling_again_writes_its_runs_then_stops(tmp_path, monkeypatch):
    """The library's end (``Benchmark.end``): an interrupt while the ceiling is measured again
    writes the runs whole, the file saying it was interrupted, and then stops the program."""
    import goodbench
    from suite.api import benchmark

    measured = []

    def ceiling(device, precision, n=None):
        measured.append(precision)
        if len(measured) > 1:
            raise KeyboardInterrupt
        return {"flops": 1e9, "trials_flops": [1e9], "n": 8, "precision": precision, "method": "fake"}

    monkeypatch.setattr(benchmark, "matmul_ceiling", ceiling)
    bench = goodbench.Benchmark("tiny", trains="nothing", samples_per_step=1, max_steps=3, warmup_steps=1,
                                log_every=1, device="cpu", flops_per_step=1e3, code=[__file__],
                                out=tmp_path / "own.json", sign=False, progress=lambda *a, **k: None)
    with pytest.raises(KeyboardInterrupt), bench:
        for run in bench.runs():
            for _ in range(bench.max_steps):
                with run.step() as s:
                    s.loss = 1.0
    doc = json.loads((tmp_path / "own.json").read_text())
    assert doc["settings"]["interrupted"] is True and [r["status"] for r in doc["runs"]] == ["complete"]
    assert "at_end" not in doc["settings"]["matmul_ceiling"]["fp32"] and len(measured) == 2


def _ceilings_slow_then_fast(measured: list, slow: int):
    """A stand-in ceiling: 1 kFLOP/s for the first ``slow`` measurements (a loaded machine), then
    1 PFLOP/s (quiet), each with its one batch."""
    def ceiling(device, precision, n=None):
        measured.append(precision)
        flops = 1e3 if len(measured) <= slow else 1e15
        return {"flops": flops, "trials_flops": [flops], "n": 8, "precision": precision, "method": "fake"}
    return ceiling


def test_the_suite_measures_the_ceiling_on_while_its_runs_stood_above_it(data_dir, monkeypatch):
    """The runner hands its runs' fastest rate to ceiling.measured_again: with both the first
    ceiling and the next two measured slow (below any run), it measures on until a fast one, keeps
    that, and its method says so."""
    measured: list = []
    monkeypatch.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
    monkeypatch.setattr(session, "matmul_ceiling", _ceilings_slow_then_fast(measured, slow=3))
    plan = session.SuitePlan(["lm-char"], "smoke", 1, explicit=True)
    doc = session.run_suite(plan, RunOptions(device=CPU, data_dir=str(data_dir)), recorder([]))
    entry = doc["settings"]["matmul_ceiling"]["fp32"]
    assert entry["flops"] == 1e3 and entry["at_end"]["flops"] == 1e15 and len(measured) == 4
    assert "the fastest of 3 such measurements" in entry["at_end"]["method"]


def test_the_library_measures_the_ceiling_on_while_its_runs_stood_above_it(tmp_path, monkeypatch):
    """``Benchmark.end`` hands its records' fastest rate to ceiling.measured_again likewise."""
    import goodbench
    from suite.api import benchmark

    measured: list = []
    monkeypatch.setattr(benchmark, "matmul_ceiling", _ceilings_slow_then_fast(measured, slow=2))
    bench = goodbench.Benchmark("tiny", trains="nothing", samples_per_step=1, max_steps=24, warmup_steps=2,
                                log_every=1, device="cpu", flops_per_step=1e6, code=[__file__],
                                out=tmp_path / "own.json", sign=False, progress=lambda *a, **k: None)
    with bench:
        for run in bench.runs():
            for _ in range(bench.max_steps):
                with run.step() as s:
                    s.loss = 1.0
    entry = json.loads((tmp_path / "own.json").read_text())["settings"]["matmul_ceiling"]["fp32"]
    assert entry["at_end"]["flops"] == 1e15 and "the fastest of 2 such measurements" in entry["at_end"]["method"]
