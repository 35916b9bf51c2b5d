"""The user's path end to end on CPU: run → validate → submit → site, through the real CLI."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest


def goodbench(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``goodbench ARGS`` as a user runs it, in ``cwd``: its exit status and output."""
    return subprocess.run([sys.executable, "-m", "suite", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=1200)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    """One real dlrm-small smoke run on the CPU, shared by the tests of this module: its data is
    generated from the pinned seed (no dataset file) and its smoke target comes within 150 steps,
    so the user's whole path is tested in seconds of training rather than minutes. Its system name
    is typed with odd spaces, as a user may (test_a_system_name_with_odd_spaces_…)."""
    work = tmp_path_factory.mktemp("e2e")
    proc = goodbench("run", "-w", "dlrm-small", "--scale", "smoke", "--device", "cpu", "--system-name", "  Lab  box ",
                     "-o", "out.json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "results written to out.json" in proc.stdout
    return work / "out.json"


@pytest.mark.slow
def test_smoke_run_writes_a_complete_measured_record(smoke_run):
    doc = json.loads(smoke_run.read_text())
    (run,) = doc["runs"]
    assert run["workload"]["id"] == "dlrm-small" and run["status"] == "complete"
    assert run["scale"] == "smoke" and run["device"] == "cpu" and run["precision"] == "fp32"
    assert len(run["step_times_s"]) == run["steps"] > 0
    tput = run["metrics"]["throughput"]
    assert tput["samples_per_s"] > 0 and tput["window"]["first_step"] == 11
    assert tput["step_time_s"]["p50"] <= tput["step_time_s"]["p99"] <= tput["step_time_s"]["max"]
    # CPU: no peak and (here) no energy meter — null with a reason, never a number.
    assert run["metrics"]["mfu"] is None and run["metrics"]["mfu_status"].startswith("not measured")
    assert run["metrics"]["energy_status"] == "ok" or run["metrics"]["energy_to_train_j"] is None
    # The smoke target is reached, and the time to it is that of the first eval that meets it.
    target = run["metrics"]["target"]
    assert target["metric"] == "auc" and target["direction"] == "max"
    hits = [p for p in run["curve"] if p["auc"] >= target["value"]]
    assert hits and run["metrics"]["tta_s"] == hits[0]["time_s"]
    assert all(p["auc"] < target["value"] for p in run["curve"] if p["step"] < hits[0]["step"])
    assert "hostname" not in json.dumps(doc["system"]).lower()


@pytest.mark.slow
def test_validate_submit_site(smoke_run, tmp_path):
    work = smoke_run.parent
    proc = goodbench("validate", str(smoke_run), cwd=work)
    assert proc.returncode == 0 and proc.stdout.split(";")[0].strip().endswith(": ok")  # then its load, where loaded
    results_dir, site_dir = tmp_path / "R", tmp_path / "S"
    proc = goodbench("submit", str(smoke_run), "--results-dir", str(results_dir), cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stored = list(results_dir.glob("*.json"))
    assert len(stored) == 1 and stored[0].read_bytes() == smoke_run.read_bytes()

    before = tree_digest(results_dir)
    proc = goodbench("submit", str(smoke_run), "--results-dir", str(results_dir), cwd=work)
    assert proc.returncode == 1 and "[duplicate]" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert tree_digest(results_dir) == before

    proc = goodbench("site", "--results-dir", str(results_dir), "--out", str(site_dir), cwd=work)
    assert proc.returncode == 0, proc.stderr
    index = Path(proc.stdout.strip().splitlines()[-1])
    html = index.read_text()
    assert index == site_dir / "index.html"
    system_name = json.loads(smoke_run.read_text())["system"]["name"]
    assert "dlrm-small" in html and system_name in html
    assert "http://" not in html and "https://" not in html  # nothing fetched at view time


@pytest.mark.slow
def test_tampered_file_is_refused_and_store_unchanged(smoke_run, tmp_path):
    doc = json.loads(smoke_run.read_text())
    doc["runs"][0]["metrics"]["throughput"]["samples_per_s"] *= 2
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(doc))
    results_dir = tmp_path / "R"
    results_dir.mkdir()
    before = tree_digest(results_dir)
    proc = goodbench("validate", str(bad), cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{bad}: runs[0].metrics.throughput.samples_per_s:" in proc.stdout
    proc = goodbench("submit", str(bad), "--results-dir", str(results_dir), cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("refused:")
    assert tree_digest(results_dir) == before


@pytest.mark.slow
def test_missing_data_is_a_clear_one_line_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = goodbench("run", "-w", "lm-char", "--device", "cpu", "--data-dir", str(empty),
                     "-o", "x.json", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "tinyshakespeare/input.txt" in proc.stderr and "86c4e6aa9db7" in proc.stderr
    assert str(empty) in proc.stderr and "raw.githubusercontent.com" in proc.stderr
    assert "at smoke scale on cpu" not in proc.stderr  # said before the run's first line and its load warning
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("argv, code", [
    (["run", "-w", "no-such-workload"], 2),  # refused before torch is imported
    (["run", "--seeds", "0"], 2),
    (["frobnicate"], 2),
    (["validate", "does-not-exist.json"], 1),
])
def test_exit_codes_without_tracebacks(tmp_path, argv, code):
    proc = goodbench(*argv, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_every_subcommand_has_help(tmp_path):
    for command in ("list", "run", "validate", "submit", "site", "info"):
        proc = goodbench(command, "--help", cwd=tmp_path)
        assert proc.returncode == 0 and "usage: goodbench " + command in proc.stdout


@pytest.mark.slow
def test_run_refuses_to_overwrite(smoke_run):
    before = smoke_run.read_bytes()
    proc = goodbench("run", "-w", "dlrm-small", "--device", "cpu", "-o", smoke_run.name, cwd=smoke_run.parent)
    assert proc.returncode == 1 and "never overwrites" in proc.stderr
    assert smoke_run.read_bytes() == before


@pytest.mark.slow
def test_info_json_describes_the_system(tmp_path):
    proc = goodbench("info", "--json", "--device", "cpu", cwd=tmp_path)
    info = json.loads(proc.stdout)
    assert info["accelerator"]["type"] == "cpu"
    assert info["software"]["torch"] and info["host"]["cpu_logical_cores"] >= 1


@pytest.mark.slow
def test_a_system_name_with_odd_spaces_is_written_as_shown_and_validates(smoke_run):
    """`--system-name "  Lab  box "` (the shared run's): the file and its event log both say "Lab box"
    (rules name-form and log-system), so an honest run is never refused for how its name was typed."""
    doc = json.loads(smoke_run.read_text())
    assert doc["system"]["name"] == "Lab box"
    check = goodbench("validate", smoke_run.name, cwd=smoke_run.parent)
    assert check.returncode == 0, check.stdout + check.stderr
