"""What the command line says: usage errors in the subcommand's words, checks of a CPU run,
`info`'s values, kills and resumes on the console, and what happens to the checkpoints."""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from suite.cli import main
from suite.commands import info
from suite.commands.common import say
from suite.record.errors import GoodbenchError, Usage
from suite.record.text import count
from suite.run import check
from suite.run import output as run_output
from suite.run.progress import ProgressPrinter
from workloads import registry
from workloads.pinned import SEEDS

CORPUS_FILE = Path(__file__).parent / "corpus" / "valid" / "lm-char-smoke.json"


def _usage_error(argv: list[str], capsys) -> list[str]:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.splitlines()


def test_errors_found_after_parsing_are_one_line_in_the_subcommands_name(capsys):
    """Walkthrough 4, L2: `goodbench run -w resnet50` printed 13 lines of usage before the one line
    that said what was wrong; a usage error found after parsing names what to give, in one line."""
    assert _usage_error(["run", "--seeds", "0"], capsys) == [
        f"goodbench run: error: --seeds must be between 1 and {len(SEEDS)}"]
    assert _usage_error(["run", "-w", "resnet50"], capsys) == [
        "goodbench run: error: unknown workload resnet50; known: " + ", ".join(registry.WORKLOADS)]


def test_the_parser_s_own_errors_are_one_line_naming_where_the_usage_is(capsys):
    """A new user's review: `goodbench run --seed 2` printed the 14-line usage before its error,
    where README says a usage error is one line; argparse's own errors are one line too, and name
    the --help that has the usage (of the command, of a command's command, or of goodbench)."""
    assert _usage_error(["run", "--seeds", "x"], capsys) == [
        "goodbench run: error: argument --seeds: invalid int value: 'x'; see goodbench run --help"]
    assert _usage_error(["data", "fetch", "-w"], capsys) == [
        "goodbench data fetch: error: argument -w/--workload: expected one argument; see goodbench data fetch --help"]
    assert _usage_error(["run", "--bogus"], capsys) == [
        "goodbench run: error: unrecognized arguments: --bogus; see goodbench run --help"]
    [line] = _usage_error(["--debug"], capsys)
    assert line == "goodbench: error: the following arguments are required: COMMAND; see goodbench --help"


@pytest.mark.parametrize("command", [["run"], ["reproduce", "f.json"], ["project", "f.json", "--mtbf-hours", "1"],
                                     ["sign", "f.json"], ["export", "mlperf", "f.json"]])
def test_an_empty_output_name_is_a_usage_error(command, capsys):
    """A new user's review: `goodbench run -o ''` (an unset $OUT) trained and wrote the default name."""
    assert _usage_error([*command, "-o", ""], capsys) == [
        f"goodbench {command[0]}: error: argument -o/--output: an empty name (is the variable that should hold "
        f"it unset?); see goodbench {command[0]} --help"]


def test_goodbench_alone_lists_its_commands(capsys):
    from suite import cli

    assert cli.main([]) == 2
    said = capsys.readouterr().err
    assert said.startswith("usage: goodbench") and "run-own" in said and "submit" in said
    [line] = _usage_error(["run", "--seed", "2"], capsys)
    assert "(goodbench run takes its options in full, not abbreviated: --seed for --seeds?)" in line
    [line] = _usage_error(["run", "--seeds", "1\x1b[2J"], capsys)  # what it quotes cannot act on the terminal
    assert "\x1b" not in line and line.endswith("; see goodbench run --help")


def test_run_own_without_torch_says_so_in_one_line_and_starts_nothing(tmp_path, monkeypatch, capsys):
    """A new user's review: without torch, `goodbench run-own SCRIPT` showed the script's
    `import torch` traceback, then "the script failed"; `run` and `check` say in one line which
    extra brings torch, and so does run-own, before the script starts."""
    import importlib.util

    from suite.run import own_launch

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    monkeypatch.setattr(own_launch, "launch", lambda *a, **k: pytest.fail("the script started"))
    script = tmp_path / "train.py"
    script.write_text("import torch\n")
    assert main(["run-own", str(script)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("goodbench: error: goodbench run-own needs torch, which is not installed here: pip install")
    assert "[train]" in line


@pytest.mark.parametrize("where", ["--data-dir", "GOODBENCH_DATA_DIR"])
def test_a_data_folder_that_does_not_exist_is_said_first(where, tmp_path, monkeypatch, capsys):
    """Walkthrough 4, L1: `goodbench run --data-dir /tmp/does-not-exist` listed each file as
    "absent" there and advised putting it under --data-dir; the folder itself is named as missing,
    before torch loads or anything trains (and in the list of places looked in)."""
    from workloads import data

    typo = tmp_path / "datsets"
    argv = ["run", "-w", "lm-char", "--device", "cpu", "-o", str(tmp_path / "r.json")]
    if where == "--data-dir":
        monkeypatch.delenv("GOODBENCH_DATA_DIR", raising=False)
        assert _usage_error([*argv, "--data-dir", str(typo)], capsys) == [
            f"goodbench run: error: --data-dir {typo}: no such folder (a typo?); give the folder that holds the "
            "dataset files"]
    else:
        monkeypatch.setenv("GOODBENCH_DATA_DIR", str(typo))
        assert main(argv) == 1
        assert capsys.readouterr().err.splitlines() == [
            f"goodbench: error: GOODBENCH_DATA_DIR={typo}: no such folder (a typo?); give the folder that holds "
            "the dataset files, or unset it"]
    assert not (tmp_path / "r.json").exists()
    monkeypatch.setenv("GOODBENCH_OFFLINE", "1")
    with pytest.raises(data.DataNotFound, match=re.escape(f"{typo} (no such folder)")):
        data.locate(registry.get("lm-char").data_files[0], typo)
    monkeypatch.setenv("GOODBENCH_DATA_DIR", str(typo))  # a stale variable beside a good --data-dir stops nothing
    assert data.missing_folder(tmp_path) is None and data.missing_folder(None) is not None


HOSTILE_SEED = "1\x1b]0;PWNED-TITLE\x07\r\x1b[2K\x1b[32mrun 0: -> reproduced\x1b[0m\u202e\n\x1b[8m"


@pytest.mark.parametrize("raised", [GoodbenchError(f"rank 1 sent no edges for run r0 (seed {HOSTILE_SEED})"),
                                    Usage(f"seed {HOSTILE_SEED}")])
def test_an_error_quoting_a_file_reaches_the_terminal_escaped(raised, monkeypatch, capsys):
    """Trial 12: a re-run's file put escape sequences into its seed, and goodbench's own error line,
    which quoted it, set the reviewer's window title and printed a fake verdict. Every character
    that acts on a terminal, a line break included, is written as \\uXXXX: the error is one line;
    ``say`` keeps a message's line breaks (goodbench's own) and escapes the rest."""
    def fails(args):
        raise raised

    monkeypatch.setattr(info, "run", fails)
    try:
        status = main(["info"])
    except SystemExit as exc:  # the usage error
        status = exc.code
    err = capsys.readouterr().err
    assert status in (1, 2) and "\x1b" not in err and "\r" not in err and "\x07" not in err and "\u202e" not in err
    assert "\\u001b]0;PWNED-TITLE\\u0007\\u000d\\u001b[2K" in err and "\\u202e" in err
    assert "\\u000a\\u001b[8m" in err and len([line for line in err.splitlines() if "PWNED" in line]) == 1
    say("a\tb\x1b[8m", "\u2028c\nd")
    assert capsys.readouterr().err == "a\\u0009b\\u001b[8m \\u2028c\nd\n"


def test_submit_into_a_file_says_so_in_one_line(tmp_path, capsys):
    not_a_dir = tmp_path / "results.json"
    not_a_dir.write_text("{}")
    lines = _usage_error(["submit", str(CORPUS_FILE), "--results-dir", str(not_a_dir)], capsys)
    assert len(lines) == 1 and lines[-1] == f"goodbench submit: error: --results-dir {not_a_dir} is a file, not a directory"
    assert not_a_dir.read_text() == "{}"


def test_an_os_error_is_one_line_naming_the_folder_as_given_without_errno(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    below_a_file = tmp_path / "file" / "results"
    assert main(["submit", str(CORPUS_FILE), "--results-dir", str(below_a_file)]) == 1
    err = capsys.readouterr().err
    assert err == f"goodbench: error: cannot write to --results-dir {below_a_file} (Not a directory)\n"


@pytest.mark.parametrize("host_verdict, status, verdict_line", [
    ("ok", 0, "fit for a CPU run"), ("fail", 1, "not fit for a CPU run: fix the failed checks")])
def test_check_of_a_cpu_run_skips_the_gpu_and_the_host_decides(host_verdict, status, verdict_line,
                                                               monkeypatch, capsys):
    monkeypatch.setattr(check, "_host_checks", lambda: [check.Check("disk", host_verdict, "test")])
    assert main(["check", "--device", "cpu"]) == status
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# whether this machine is fit to benchmark now (device cpu)"  # said before torch loads
    assert lines[1].startswith("skip  gpu               a CPU run (--device cpu, or auto where torch sees no GPU)")
    assert lines[-1] == verdict_line


def test_check_and_run_agree_on_the_default_device(monkeypatch, capsys):
    """No GPU: `run` (auto) trains on the CPU, so `check` (auto) checks for a CPU run, not a GPU's."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(check, "_host_checks", lambda: [check.Check("disk", "ok", "test")])
    assert main(["check"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "fit for a CPU run"


def test_info_prints_words_not_python_values(capsys):
    assert main(["info", "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    values = [line.split(": ", 1)[1] for line in lines if not line.startswith("# ")]
    assert not {"None", "True", "False", "[]", "{}"} & set(values)
    assert "interconnect.gpus_status: none: a CPU run uses one device, so there is no interconnect to report" in lines
    assert not any("not queried" in line for line in lines)
    assert "software.cuda: —" in lines and "overridden: —" in lines
    assert not any("the run" in line for line in lines)
    assert info._shown(True) == "yes" and info._shown(False) == "no" and info._shown([1, 2]) == "[1, 2]"


def test_info_names_each_missing_package_and_what_it_turns_off(capsys, monkeypatch):
    """As on the GPU image: no jsonschema, fastjsonschema or cryptography. Python and numpy get a
    line each against their floors."""
    from suite.record import dependencies

    lacking = {"jsonschema", "fastjsonschema", "cryptography.hazmat.primitives.asymmetric.ed25519"}
    real = dependencies.installed
    monkeypatch.setattr(dependencies, "installed", lambda module: module not in lacking and real(module))
    assert main(["info", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    packages = out.split("# this Python and the packages goodbench can run without", 1)[1].splitlines()[1:]
    assert packages[0].startswith("python 3.") and packages[0].endswith(": ok (goodbench needs ≥ 3.11)")
    assert packages[1].startswith("numpy 2.") and packages[1].endswith(": ok (goodbench needs ≥ 2)")
    missing = {line.split(":")[0]: line for line in packages if "MISSING" in line}
    assert sorted(missing) == ["cryptography", "fastjsonschema", "jsonschema"]
    assert "signing" in missing["cryptography"] and "schema-unchecked" in missing["jsonschema"]
    assert dependencies.missing() == ["jsonschema", "fastjsonschema", "cryptography"]


def test_counts_are_pluralised():
    assert [count(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]


def test_site_header_counts_one_result_and_one_run(tmp_path):
    from suite.site.render import render

    render("base.html", tmp_path / "p.html", title="t", root="", built_at="now", n_results=1, n_runs=1)
    assert "· 1 results file · 1 run ·" in (tmp_path / "p.html").read_text()
    render("base.html", tmp_path / "p.html", title="t", root="", built_at="now", n_results=2, n_runs=5)
    assert "· 2 results files · 5 runs ·" in (tmp_path / "p.html").read_text()
    # a new user's 8 files and 6 reproductions read "8 results files · 25 runs": the runs counted the
    # reproductions' runs, the files did not count them
    render("base.html", tmp_path / "p.html", title="t", root="", built_at="now", n_results=8, n_runs=11,
           n_reproductions=6)
    assert "· 8 results files · 11 runs · 6 reproductions ·" in (tmp_path / "p.html").read_text()


def test_kills_and_resumes_are_printed(capsys):
    progress = ProgressPrinter()
    progress("killed", workload="lm-char", seed=1, step=45, cause="injected at step 45")
    progress("resumed", workload="lm-char", seed=1, step=40)
    progress("killed", workload="lm-char", seed=1, step=12, cause="random failure (rate)")
    progress("resumed", workload="lm-char", seed=1, step=0)
    assert capsys.readouterr().err.splitlines() == [
        "[lm-char seed 1] killed (SIGKILL) at step 45: injected failure; restarting the worker",
        "[lm-char seed 1] resumed from the checkpoint of step 40",
        "[lm-char seed 1] killed (SIGKILL) at step 12: random failure (rate); restarting the worker",
        "[lm-char seed 1] restarted from step 0: no checkpoint to resume from"]


def test_the_ceiling_measured_again_says_it_goes_on_only_where_a_run_stood_above_it(capsys):
    """Said after every suite: the line must not read as though a run stood above the ceiling."""
    progress = ProgressPrinter()
    progress("ceiling", precision="fp32")
    progress("ceiling", precision="fp32", again=True, most_s=15.0, stopped=False)
    assert capsys.readouterr().err.splitlines() == [
        "measuring the fp32 matmul ceiling of this device",
        "measuring the fp32 matmul ceiling of this device again after the runs (and on, for at most 15 s, only if "
        "a run stood above both measurements)"]


def test_a_worker_killed_after_an_interrupt_is_said(capsys):
    progress = ProgressPrinter()
    progress("unstopped", workload="lm-char", seed=1, waited_s=120.0, kept=False)
    progress("unstopped", workload="lm-char", seed=2, waited_s=120.0, kept=True)
    assert capsys.readouterr().err.splitlines() == [
        "[lm-char seed 1] the training worker had not ended 120 s after the interrupt: killed (SIGKILL); it wrote "
        "no record (goodbench run ... --resume DIR goes on from the newest checkpoint)",
        "[lm-char seed 2] the training worker had not ended 120 s after the interrupt: killed (SIGKILL); its "
        "partial record, written before, is kept"]


def _suite_end(statuses: list[str], interrupted: bool = False) -> dict:
    return {"settings": {"interrupted": interrupted, "aborted": None},
            "runs": [{"status": s} for s in statuses]}


@pytest.mark.parametrize("statuses, interrupted, resume, removed, says", [
    (["complete", "complete"], False, False, True, "checkpoints removed (ROOT): every run completed"),
    (["complete", "partial"], True, False, False, "checkpoints kept in ROOT: not every run completed; "
                                                  "`goodbench run … --resume ROOT -o NEW.json`"),
    (["complete", "failed"], False, False, False, "checkpoints kept in ROOT: not every run completed"),
    (["complete"], False, True, False, "checkpoints kept in ROOT (a --resume directory is not removed)"),
])
def test_the_checkpoint_directory_is_removed_only_after_every_run_completed(
        statuses, interrupted, resume, removed, says, tmp_path, capsys):
    out = tmp_path / "out.json"
    root = tmp_path / "out.ckpt"
    (root / "lm-char-seed1").mkdir(parents=True)
    (root / "lm-char-seed1" / "events.log").write_text("")
    args = argparse.Namespace(resume=str(root) if resume else None)
    run_output.checkpoints_after(args, str(root), out, _suite_end(statuses, interrupted))
    assert root.exists() is not removed
    assert capsys.readouterr().err.startswith(says.replace("ROOT", str(root)))


@pytest.mark.slow
@pytest.mark.dist  # the supervisor's worker subprocesses
def test_an_injected_kill_is_on_the_console_and_the_checkpoints_go_after_success(tmp_path):
    """README's flow: a run with checkpoints and an injected kill says where it was killed and
    where it resumed, removes out.ckpt/ once complete, and `goodbench project` reads the file."""
    def goodbench(*args):
        return subprocess.run([sys.executable, "-m", "suite", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)

    proc = goodbench("run", "-w", "dlrm-small", "--scale", "smoke", "--device", "cpu",
                     "--checkpoint-every", "50", "--inject-failure", "60", "-o", "ft.json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    killed = re.search(r"^\[dlrm-small seed 1\] killed \(SIGKILL\) at step (\d+): injected failure; "
                       r"restarting the worker$", proc.stderr, re.M)
    assert killed and int(killed.group(1)) >= 60, proc.stderr[-3000:]
    assert "\n[dlrm-small seed 1] resumed from the checkpoint of step 50\n" in proc.stderr
    assert "checkpoints removed (ft.ckpt): every run completed, and ft.json holds their event logs" \
        in proc.stderr
    assert not (tmp_path / "ft.ckpt").exists()
    run = json.loads((tmp_path / "ft.json").read_text())["runs"][0]
    assert run["status"] == "complete" and run["goodput"]["failures"] == 1
    assert goodbench("validate", "ft.json").returncode == 0
    projected = goodbench("project", "ft.json", "--gpus", "16384", "--mtbf-hours", "50000")
    assert projected.returncode == 0, projected.stderr
    assert "(1 measured restart)" in projected.stdout and "\n 16384 " in projected.stdout


@pytest.mark.parametrize("pct", ["1000", "50.5"])
def test_reproduce_refuses_a_tolerance_above_the_rules_bound_in_one_line(pct, tmp_path, capsys):
    """`goodbench reproduce --tolerance` above the rules' ±50% (issue 44, finding 8: a reproduction
    claimed ±1000%) is a usage error, one line, before the file is read or anything trains."""
    out = tmp_path / "rep.json"
    lines = _usage_error(["reproduce", str(CORPUS_FILE), "--tolerance", pct, "-o", str(out)], capsys)
    assert len(lines) == 1
    assert lines[-1] == (f"goodbench reproduce: error: --tolerance {float(pct):g}: a percentage above 0 and at most "
                         "50 (the rules' bound, docs/rules.md)")
    assert [line for line in lines if "error" in line] == [lines[-1]] and not out.exists()


def test_validate_says_when_a_file_is_valid_under_the_older_rules_it_records(tmp_path, capsys):
    """A stored file that only later rules refuse: today's problems, then one line saying the
    leaderboard and compare hold it to the rules it was written under (exit 1 all the same)."""
    import factories
    import numpy as np

    from suite.record import results
    from suite.record.rules_version import RULES_VERSION

    doc = factories.synthetic_document("synthetic-old", rng=np.random.default_rng(5), accelerator=2)
    doc["rules_version"] = 5
    for run in doc["runs"]:
        del run["event_log"]  # required from rules v6 on
    old = tmp_path / "old.json"
    results.write(old, doc)
    assert main(["validate", str(old)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("[event-log-missing]")
    assert lines[-1].startswith(f"{old}: valid under rules v5, those it was written under: ")
    # compare reads it as the leaderboard does, and says so before its table
    main(["compare", str(old), str(old)])
    assert f"note: {old}: stored under rules v5; today's rules (v" in capsys.readouterr().err
    # a file refused by its own rules gets no such line
    doc["rules_version"] = RULES_VERSION
    results.write(tmp_path / "new.json", doc)
    assert main(["validate", str(tmp_path / "new.json")]) == 1
    assert "valid under rules" not in capsys.readouterr().out


def test_validate_does_not_say_a_file_that_states_no_rules_version_was_written_under_v1(capsys):
    """The stored file that states no rules version (the CPU reference of the first rules) is
    valid under v1, the rules a file without one is held to; it records no rules it was written
    under, and the note and compare's say so."""
    results = sorted((Path(__file__).parent.parent / "results").glob("*.json"))
    path = str(next(p for p in results if "rules_version" not in json.loads(p.read_text())))
    assert main(["validate", path]) == 1
    note = capsys.readouterr().out.splitlines()[-1]
    assert note.startswith(f"{path}: valid under rules v1, those a file that states no rules version is held to: ")
    main(["compare", path, path])
    assert f"note: {path}: states no rules version (held to v1); today's rules (v" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "validate", "compare"])
def test_an_empty_file_is_said_to_be_empty_and_a_held_placeholder_to_be_a_run_still_going(command, tmp_path, capsys):
    """Walkthrough 4, L3: a SIGKILLed run leaves its results file's name reserved by a 0-byte
    file, which show read as "not valid JSON: Expecting value at line 1 column 1"."""
    from suite.record.results import Reservation

    left = tmp_path / "killed.json"
    left.write_bytes(b"")
    argv = [command, str(left)] + ([str(CORPUS_FILE)] if command == "compare" else [])
    assert main(argv) == 1
    said = capsys.readouterr()
    line = next(x for x in (said.out + said.err).splitlines() if str(left) in x)
    assert "empty (0 bytes)" in line and "killed?" in line and "takes it over" in line and "Expecting" not in line
    held = Reservation.take(tmp_path / "running.json")  # a run's reservation, held while it trains
    try:
        assert main([command, str(held.path)] + ([str(CORPUS_FILE)] if command == "compare" else [])) == 1
        said = capsys.readouterr()
        assert "a goodbench run still going holds this name" in said.out + said.err
    finally:
        held.release()


def test_a_hangup_taken_as_sigterm_is_said_so_with_sigterms_status(monkeypatch, capsys, sighup_at_default):
    """SIGHUP under the supervisor (the terminal closed) is a SIGTERM to what follows: status 143, and
    the last line says it came as SIGHUP."""
    import os
    import signal
    import time

    from suite.commands import validate
    from suite.run import signals

    def hung_up(args) -> int:
        with signals.hangup_as_sigterm():
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(30)  # the handler raises here
        return 0

    monkeypatch.setattr(validate, "run", hung_up)
    previous = signals.stop_on_sigterm()
    try:
        assert main(["validate", str(CORPUS_FILE)]) == 143
    finally:
        signals.restore(previous)
    assert "goodbench: stopped by SIGHUP, as by SIGTERM" in capsys.readouterr().err
