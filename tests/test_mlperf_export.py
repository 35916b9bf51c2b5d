"""goodbench's event logs for MLCommons' compliance checker, and `goodbench export mlperf`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from suite.mlperf import export, fields, rules
from suite.record import mllog
from workloads import registry

REPO = Path(__file__).resolve().parent.parent
# a shipped file written before the MLPerf keys, named: whatever else results/ holds changes no test
OLD_RESULTS = [p for p in [REPO / "results" / "8e82ba8c459a194248fd0d7d7f25f6b0ee46ac9d3792cec754eec25b31c94dab.json"]
               if p.exists()]


@pytest.mark.parametrize("workload_id", list(registry.WORKLOADS))
def test_the_shipped_rule_files_are_the_workloads_specs(workload_id):
    """A registered workload's rule file is shipped and current (a missing one reads as stale)."""
    try:
        text = rules.shipped(workload_id)
    except FileNotFoundError:
        text = None
    assert text == rules.render(registry.get(workload_id)), (
        f"suite/mlperf/rules/{workload_id}.yaml is {'stale' if text else 'missing'}: python -m suite.mlperf.rules "
        "writes it")


def test_a_missing_rule_file_names_the_command_that_writes_it():
    with pytest.raises(FileNotFoundError, match=r"no-such-workload\.yaml.*python -m suite\.mlperf\.rules"):
        rules.shipped("no-such-workload")


def test_the_rule_files_are_package_data():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"suite.mlperf" = ["rules/*.yaml", "schema/*.json"]' in text


def test_the_header_orders_division_and_scale_before_what_depends_on_them():
    spec = registry.get("lm-char").spec("smoke")
    keys = [k for k, _ in fields.header("lm-char", spec, "smoke", 32, 1, fields.Submission("org", "box"))]
    assert keys.index("submission_division") < keys.index("train_samples")
    assert keys.index("goodbench_scale") < keys.index("train_samples")
    assert "max_steps" not in keys and "goodbench_max_steps" in keys
    header = dict(fields.header("dlrm-small", registry.get("dlrm-small").spec("smoke"), "smoke", 256, 1,
                                fields.Submission("org", "box")))
    assert header["eval_samples"] == 1 << 15 and header["train_samples"] == 400 * 256
    assert fields.submission("box", {"organization": "ACME"}, "cpu x1", "open") == \
        fields.Submission("ACME", "box", "open")
    assert fields.submission(None, None, "cpu x1", "closed").org == "cpu x1"


def test_readers_take_the_old_and_the_new_max_steps_key():
    old = mllog.Event(0.0, mllog.POINT_IN_TIME, "max_steps", 300)
    new = mllog.Event(0.0, mllog.POINT_IN_TIME, "goodbench_max_steps", 300)
    assert fields.max_steps([old]) == fields.max_steps([new]) == 300
    assert mllog.LEGACY_KEYS == {"max_steps": "goodbench_max_steps"}
    assert "max_steps" not in mllog.GOODBENCH_KEYS


def test_step_blocks_log_samples_count_beside_the_step_fields():
    log = mllog.EventLog()
    log.samples_per_step = 8
    blocks = mllog.StepBlocks(log, last_warmup_step=0)
    blocks.open(11)
    for step in range(11, 21):
        blocks.step_done(step, 0.0)
    blocks.close([0.01] * 10)
    start, stop = mllog.parse(log.lines)
    assert start.metadata["first_step"] == 11 and start.metadata["samples_count"] == 80
    assert stop.metadata["last_step"] == 20 and stop.metadata["samples_count"] == 160
    assert stop.metadata["step_count"] == 10


def _old_doc() -> dict:
    if not OLD_RESULTS:
        pytest.skip("no stored results file")
    return json.loads(OLD_RESULTS[0].read_text())


def test_an_old_log_is_brought_up_to_mlperfs_keys_on_the_way_out():
    doc = _old_doc()
    run = doc["runs"][0]
    workload = registry.get(run["workload"]["id"])
    sub = fields.Submission("ACME", doc["system"]["name"])
    lines = export.upgrade(run["event_log"], workload, run["scale"], sub)
    events = mllog.parse(lines)
    keys = [e.key for e in events]
    assert "max_steps" not in keys and keys.count("goodbench_max_steps") == 1
    for key in ("cache_clear", "submission_org", "submission_division", "train_samples", "eval_samples",
                "gradient_accumulation_steps", "goodbench_scale"):
        assert keys.count(key) == 1, key
    assert keys.index("submission_division") < keys.index("init_stop")
    batch = next(e.value for e in events if e.key == "global_batch_size")
    for e in events:
        if e.key in ("block_stop", "eval_accuracy", "run_stop"):
            steps = e.metadata.get("last_step", e.metadata.get("step"))
            assert e.metadata["samples_count"] == steps * batch
    # a log that has them already goes out as it is
    assert export.upgrade(lines, workload, run["scale"], sub) == lines


def test_the_checker_passes_every_run_of_an_old_results_file(tmp_path):
    pytest.importorskip("mlperf_logging")
    written = export.export(OLD_RESULTS[0] if OLD_RESULTS else pytest.skip("no results"), tmp_path / "tree",
                            org="ACME Labs")
    assert written.system == tmp_path / "tree" / "ACME-Labs" / "systems" / f"{written.system.stem}.json"
    desc = json.loads(written.system.read_text())
    assert desc["submitter"] == "ACME Labs" and desc["status"] == export.STATUS
    assert {p.name for p in written.rules} == {f"{w}.yaml" for w in _old_doc()["settings"]["workloads"]}
    for result, rule_file in written.checks:
        assert export.check(result, rule_file) == (True, None), result


def test_the_rule_file_holds_the_pinned_values(tmp_path):
    pytest.importorskip("mlperf_logging")
    written = export.export(OLD_RESULTS[0] if OLD_RESULTS else pytest.skip("no results"), tmp_path / "tree")
    result, rule_file = next((r, f) for r, f in written.checks if "lm-char" in str(r))
    text = result.read_text()
    wrong = tmp_path / "wrong_batch.txt"
    wrong.write_text(text.replace('"key": "global_batch_size", "value": 32', '"key": "global_batch_size", "value": 64'))
    ok, why = export.check(wrong, rule_file)
    assert not ok and "global_batch_size" in why
    other = tmp_path / "other_benchmark.txt"
    other.write_text(text.replace('"value": "lm-char"', '"value": "bert"'))
    ok, why = export.check(other, rule_file)  # refused, not a crash looking for closed_bert.yaml
    assert not ok and "submission_benchmark" in why
    missed = tmp_path / "missed_target.txt"
    missed.write_text("".join(line + "\n" for line in text.splitlines() if '"eval_accuracy"' not in line
                              or '"step": 200' not in line))
    assert export.check(missed, rule_file)[0] is False  # the target reached at the last eval only


def test_export_refuses_an_invalid_file_and_a_used_folder(tmp_path):
    from suite.record.errors import GoodbenchError

    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(GoodbenchError, match="not valid"):
        export.export(bad, tmp_path / "tree")
    if OLD_RESULTS:
        export.export(OLD_RESULTS[0], tmp_path / "tree2")
        with pytest.raises(GoodbenchError, match="already holds files"):
            export.export(OLD_RESULTS[0], tmp_path / "tree2")


def test_a_second_export_into_a_tree_keeps_the_first_ones_system_description(tmp_path, monkeypatch):
    """"AMD EPYC x1" and "AMD EPYC/x1" are one file name: the second export replaced the first's
    system description, its results left under another system's. The same system's other
    workloads join the tree; a description other than the one there is refused, nothing written."""
    from suite.record.errors import GoodbenchError

    valid = REPO / "tests" / "corpus" / "valid"
    first = export.export(valid / "lm-char-smoke.json", tmp_path / "tree")
    assert export.export(valid / "gpt2-smoke-2-ranks.json", tmp_path / "tree").system == first.system  # alike
    second = export.export(valid / "lm-char-smoke.json", tmp_path / "tree2")
    described = second.system.read_text()
    monkeypatch.setattr(export, "system_description", lambda doc, org: {"system_name": "AMD EPYC/x1"})
    with pytest.raises(GoodbenchError, match="AMD-EPYC-x1.json: already there and describes another system"):
        export.export(valid / "gpt2-smoke-2-ranks.json", tmp_path / "tree2")
    assert second.system.read_text() == described
    assert not any(p.name == "gpt2-124m" for p in (tmp_path / "tree2").rglob("*"))
    monkeypatch.undo()
    stale = tmp_path / "tree3" / "AMD-EPYC-x1" / "compliance" / "gpt2-124m.yaml"  # another version's rules
    stale.parent.mkdir(parents=True)
    stale.write_text("# other rules\n")
    with pytest.raises(GoodbenchError, match="gpt2-124m.yaml: already there and holds other rules"):
        export.export(REPO / "tests" / "fixtures" / "reference-smoke.json", tmp_path / "tree3")
    assert sorted(p.name for p in (tmp_path / "tree3").rglob("*") if p.is_file()) == ["gpt2-124m.yaml"]


@pytest.mark.slow
@pytest.mark.long  # a training run, then MLCommons' checker
def test_a_fresh_smoke_run_exports_to_a_tree_mlcommons_checker_passes(tmp_path):
    """A short CPU run (dlrm-small, smoke: synthetic data), exported, then MLCommons' own checker
    as the issue runs it, in a process of its own."""
    pytest.importorskip("mlperf_logging")
    out = tmp_path / "run.json"
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "GOODBENCH_OFFLINE": "1",
           "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-m", "suite", "run", "-w", "dlrm-small", "--scale", "smoke",
                          "--device", "cpu", "--system-name", "CI box", "-o", str(out)],
                         cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    doc = json.loads(out.read_text())
    log = mllog.parse(doc["runs"][0]["event_log"])
    keys = {e.key for e in log}
    assert {"submission_org", "submission_division", "cache_clear", "train_samples", "eval_samples",
            "goodbench_max_steps"} <= keys and "max_steps" not in keys
    assert all("samples_count" in e.metadata for e in log
               if e.key in ("block_start", "block_stop", "eval_start", "eval_stop", "eval_accuracy"))
    assert next(e.value for e in log if e.key == "submission_platform") == "CI box"
    # the run's file stays valid for goodbench's own validator
    check = subprocess.run([sys.executable, "-m", "suite", "validate", str(out)], cwd=REPO,
                           capture_output=True, text=True, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    tree = tmp_path / "tree"
    exported = subprocess.run([sys.executable, "-m", "suite", "export", "mlperf", str(out), "-o", str(tree)],
                              cwd=REPO, capture_output=True, text=True, env=env)
    assert exported.returncode == 0, exported.stderr
    org = tree / "CI-box"
    result = org / "results" / "CI-box" / "dlrm-small" / "result_0.txt"
    assert result.is_file() and (org / "systems" / "CI-box.json").is_file()
    checker = subprocess.run(
        [sys.executable, "-m", "mlperf_logging.compliance_checker", "--usage", "training", "--ruleset", "5.1.0",
         "--config", str(org / "compliance" / "dlrm-small.yaml"), str(result)],
        cwd=tmp_path, capture_output=True, text=True, env=env)
    assert checker.returncode == 0, checker.stdout + checker.stderr
    assert "SUCCESS" in checker.stdout + checker.stderr
    desc = subprocess.run([sys.executable, "-m", "mlperf_logging.system_desc_checker",
                           str(org / "systems" / "CI-box.json"), "training", "5.1.0"],
                          cwd=tmp_path, capture_output=True, text=True, env=env)
    assert "passed" in desc.stdout + desc.stderr


def test_export_check_without_mlperf_logging_writes_nothing_and_the_retry_works(tmp_path, monkeypatch, capsys):
    """The checker missing: one line before any file is written, so the same command works once
    it is installed (a tree left behind would say "already holds files")."""
    from suite.cli import main
    from suite.record import dependencies

    real = dependencies.installed
    monkeypatch.setattr(dependencies, "installed", lambda module: module != "mlperf_logging" and real(module))
    reference = REPO / "tests" / "fixtures" / "reference-smoke.json"
    assert main(["export", "mlperf", str(reference), "-o", str(tmp_path / "tree"), "--check"]) == 1
    assert "needs MLCommons' mlperf-logging" in capsys.readouterr().err
    assert not (tmp_path / "tree").exists()
    monkeypatch.setattr(dependencies, "installed", real)
    assert main(["export", "mlperf", str(reference), "-o", str(tmp_path / "tree")]) == 0
