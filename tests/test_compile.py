"""torch.compile as a harness setting: same training, recorded mode, compile time as warm-up
badput, checkpoints with the uncompiled model's keys, and the CLI's modes.

The compiled run uses inductor on the CPU (it needs a C++ compiler). A cold inductor cache makes
the first compiled step take ~15 s on 2 cores; a warm one ~1.5 s. On a slow shared machine
the module's two runs took 740 s, so the tests that use them are ``long`` (pyproject.toml: out of
the README's test command; .ci/run runs them after it).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from short_lmchar import SHORT, ShortLmChar
from torch._dynamo.utils import counters

from suite import cli
from suite import validate as v
from suite.record import mllog
from suite.run import checkpoint
from suite.run.runner import RunOptions
from suite.run.session import SuitePlan, run_suite
from suite.validate import facts
from workloads import registry
from workloads.lm.gpt import GPT
from workloads.parallel import unwrap
from workloads.pinned import COMPILE_MODES
from workloads.training import compile_model

CORPUS = Path(__file__).parent / "corpus"
# Inductor fuses and reorders fp32 arithmetic: losses agree to float rounding, not bit for bit.
# Measured over the 40 short steps on the CPU: < 1e-6 relative; the tolerance leaves room.
LOSS_RTOL = 1e-4


@pytest.fixture(scope="module")
def runs(tmp_path_factory, data_dir) -> dict:
    """One results document per mode ("off", "default") of the short lm-char, with its
    checkpoint directory and the Dynamo graphs compiled during it."""
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(registry.WORKLOADS, "lm-char", ShortLmChar())
        mp.setenv("GOODBENCH_OFFLINE", "1")
        for mode in ("off", "default"):
            ckpt = tmp_path_factory.mktemp(f"ckpt-{mode}")
            graphs = counters["stats"]["unique_graphs"]
            doc = run_suite(
                SuitePlan(workload_ids=["lm-char"], scale="smoke", seeds=1, explicit=True),
                RunOptions(device=torch.device("cpu"), data_dir=str(data_dir), checkpoint_every=20,
                           checkpoint_dir=str(ckpt), compile=mode),
                lambda *a, **k: None)
            facts.pinned_values.cache_clear()  # the validator's cached facts must be the short variant's
            problems = v.check_document(json.loads(json.dumps(doc)))
            facts.pinned_values.cache_clear()
            out[mode] = {"doc": doc, "run": doc["runs"][0], "ckpt": ckpt / "lm-char-seed1",
                         "graphs": counters["stats"]["unique_graphs"] - graphs,
                         "problems": problems}
    return out


def train_losses(run: dict) -> dict[int, float]:
    return {int(e.metadata["step"]): e.value for e in mllog.parse(run["event_log"])
            if e.key == "train_loss"}


@pytest.mark.slow
@pytest.mark.long
def test_compiled_run_trains_like_the_eager_one(runs):
    eager, compiled = runs["off"]["run"], runs["default"]["run"]
    assert eager["status"] == compiled["status"] == "complete"
    assert runs["off"]["graphs"] == 0 and runs["default"]["graphs"] >= 1  # it really compiled
    assert eager["steps"] == compiled["steps"] == SHORT.max_steps
    losses, compiled_losses = train_losses(eager), train_losses(compiled)
    assert sorted(losses) == sorted(compiled_losses) == list(range(5, 41, 5))
    for step, loss in losses.items():
        assert compiled_losses[step] == pytest.approx(loss, rel=LOSS_RTOL), step
    for a, b in zip(eager["curve"], compiled["curve"], strict=True):
        assert a["step"] == b["step"] and b["val_loss"] == pytest.approx(a["val_loss"], rel=LOSS_RTOL)


@pytest.mark.slow
@pytest.mark.long
def test_mode_is_recorded_in_settings_and_changes_no_spec_hash(runs):
    assert runs["off"]["doc"]["settings"]["compile"] == "off"
    assert runs["default"]["doc"]["settings"]["compile"] == "default"
    assert runs["default"]["doc"]["settings"]["division"] == "closed"
    assert runs["off"]["run"]["workload"]["spec_hash"] == runs["default"]["run"]["workload"]["spec_hash"]
    assert runs["off"]["problems"] == [] and runs["default"]["problems"] == []


@pytest.mark.slow
@pytest.mark.long
def test_compile_time_is_warmup_badput_outside_the_window(runs):
    run = runs["default"]["run"]
    warm = SHORT.warmup_steps
    times = run["step_times_s"]
    steady = times[warm:]
    assert times[0] > 10 * max(steady)  # the compiling step is the first, a warm-up step
    assert run["metrics"]["throughput"]["window"]["first_step"] == warm + 1
    assert run["phases_s"]["compile_warmup"] == pytest.approx(sum(times[:warm]))
    assert run["goodput"]["badput_s"]["compile_warmup"] > times[0] - 10 * max(steady)
    eager = runs["off"]["run"]
    assert run["phases_s"]["compile_warmup"] > eager["phases_s"]["compile_warmup"]


@pytest.mark.slow
@pytest.mark.long
def test_checkpoints_keep_the_uncompiled_models_keys(runs, data_dir):
    eager_keys = set(GPT(ShortLmChar.model_config(SHORT)).state_dict())
    states = {mode: checkpoint.load_latest(runs[mode]["ckpt"]).state["job"]["model"]
              for mode in ("off", "default")}
    assert set(states["default"]) == set(states["off"]) == eager_keys
    # a compiled run's checkpoint loads into an eager job and the other way round (strict)
    files = {"tinyshakespeare/input.txt": Path(data_dir) / "tinyshakespeare" / "input.txt"}
    for mode, state in (("off", states["default"]), ("default", states["off"])):
        job = ShortLmChar().build(SHORT, device=torch.device("cpu"), seed=1, precision="fp32",
                                  files=files, compile=mode)
        job.load_state_dict({**job.state_dict(), "model": state})
        assert all(torch.equal(job.state_dict()["model"][k], state[k]) for k in state)


@pytest.mark.slow  # torch.compile's first call imports Dynamo: ~4 s of CPU
def test_unwrap_strips_the_compile_wrapper():
    model = torch.nn.Linear(2, 2)
    compiled = compile_model(model, "default")  # lazy: nothing compiles until it is called
    assert compiled is not model and unwrap(compiled) is model
    assert any(k.startswith("_orig_mod.") for k in compiled.state_dict())
    assert list(unwrap(compiled).state_dict()) == list(model.state_dict())
    assert compile_model(model, "off") is model


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown compile mode"):
        compile_model(torch.nn.Linear(2, 2), "turbo")


def test_cli_offers_every_mode_and_refuses_others_with_exit_2(capsys):
    parser = cli.build_parser()
    assert parser.parse_args(["run"]).compile == "off"
    for mode in COMPILE_MODES:
        assert parser.parse_args(["run", "--compile", mode]).compile == mode
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--compile", "turbo"])
    assert exc.value.code == 2
    assert "--compile" in capsys.readouterr().err


def test_every_spec_warms_up_before_its_window():
    for workload in registry.WORKLOADS.values():
        for scale, spec in workload.variants.items():
            assert 1 <= spec.warmup_steps < spec.max_steps, (workload.id, scale)


@pytest.mark.parametrize("compile_mode", [None, "max-autotune", "turbo"])
def test_validator_reads_files_with_and_without_the_mode(compile_mode):
    doc = json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())
    assert doc["settings"].pop("compile") == "off"  # absent in files from before the field: read as off
    if compile_mode is not None:
        doc["settings"]["compile"] = compile_mode
    problems = v.check_document(doc)
    if compile_mode == "turbo":
        assert [(p.code, p.field) for p in problems] == [("schema", "settings.compile")]
    elif compile_mode in (None, "off"):
        assert problems == []
    else:  # the run's event log says it ran eager (rules v6)
        assert [(p.code, p.field) for p in problems] == [("log-compile", "settings.compile")]
