"""``goodbench run`` before it trains: the results file's name is reserved at the start (two runs
never race for one name), and what the validator would refuse in the system and settings fails
the run before any training."""
from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import factories
import numpy as np
import pytest

from suite import cli
from suite.figures.summary import summarize
from suite.record import results
from suite.record.limits import MAX_FILE_BYTES
from suite.record.results import NameTaken, Reservation
from suite.run import driver
from suite.run import output as run_output
from suite.validate import check_document

RUN = ["run", "-w", "lm-char", "--scale", "smoke", "--device", "cpu"]


def _document() -> dict:
    doc = factories.synthetic_document("reserved", rng=np.random.default_rng(3), scale="smoke",
                                       workloads=("lm-char",))
    doc["settings"]["aborted"] = None
    doc["summary"] = summarize(doc["runs"])
    return doc


@pytest.fixture
def no_training(monkeypatch):
    """``run_suite`` must not be reached; SIGTERM of the test process is left alone."""
    def train(*_args, **_kwargs):
        raise AssertionError("the run trained")

    factories.fake_training(monkeypatch, train)
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)


@pytest.fixture
def fake_training(monkeypatch):
    """``run_suite`` returns a synthetic document at once; ``seen`` records the output file as it
    was during "training"."""
    seen: dict = {}

    def train(plan, options, progress):
        seen["out"] = [p for p in Path.cwd().rglob("*.json")]
        seen["sizes"] = [p.stat().st_size for p in seen["out"]]
        seen["doc"] = _document()
        return seen["doc"]

    factories.fake_training(monkeypatch, train)
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)
    return seen


def test_a_reservation_is_exclusive_and_replaced_by_the_results_file(tmp_path):
    out = tmp_path / "sub" / "out.json"
    held = Reservation.take(out)
    assert out.is_file() and out.stat().st_size == 0  # the placeholder
    with pytest.raises(NameTaken, match="reserved by another goodbench run"):
        Reservation.take(out)
    doc = _document()
    assert held.write(doc) == out
    assert out.read_text() == results.dumps(doc)
    assert not [p for p in out.parent.iterdir() if p.name != "out.json"]  # no temp file left
    with pytest.raises(NameTaken, match="never overwrites"):
        Reservation.take(out)
    assert out.read_text() == results.dumps(doc)


def test_an_unwritten_reservation_is_removed_and_a_stale_one_taken_over(tmp_path):
    out = tmp_path / "out.json"
    Reservation.take(out).release()
    assert not out.exists()
    out.touch()  # the empty placeholder of a run that was killed: nobody holds it
    taken = Reservation.take(out)
    with pytest.raises(NameTaken):
        Reservation.take(out)
    taken.release()
    assert not out.exists()
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    for name in ("real.json", "link.json"):
        with pytest.raises(NameTaken, match="exists"):
            Reservation.take(tmp_path / name)
    assert (tmp_path / "real.json").read_text() == "{}"


def test_a_second_run_with_the_same_output_fails_at_once(tmp_path, monkeypatch, capsys, no_training):
    monkeypatch.chdir(tmp_path)
    first = Reservation.take(tmp_path / "same.json")  # a run writing same.json is under way
    started = time.monotonic()
    assert cli.main([*RUN, "-o", "same.json"]) == 1
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["goodbench: error: same.json is reserved by another goodbench run, which writes it "
                   "when it ends; give another -o"]
    doc = _document()
    first.write(doc)  # the first run's results are not lost
    assert json.loads((tmp_path / "same.json").read_text()) == doc


def test_a_run_writes_its_results_into_its_reservation(tmp_path, monkeypatch, capsys, fake_training):
    monkeypatch.chdir(tmp_path)
    assert cli.main([*RUN, "-o", "out.json"]) == 0
    assert fake_training["out"] == [tmp_path / "out.json"] and fake_training["sizes"] == [0]  # held while training
    out = capsys.readouterr().out
    assert "results written to out.json" in out
    assert json.loads((tmp_path / "out.json").read_text())["system"]["name"] == "reserved"
    # validated after writing, as the library's files are, without changing the file's bytes
    assert (tmp_path / "out.json").read_text() == results.dumps(fake_training["doc"])
    [said] = [line for line in out.splitlines() if line.startswith("validated: ")]
    assert said == driver.validated_line("out.json", check_document(json.loads(results.dumps(fake_training["doc"]))))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_run_that_writes_nothing_frees_its_name(tmp_path, monkeypatch, capsys):
    from suite.record.errors import GoodbenchError

    def fail(*_args, **_kwargs):
        raise GoodbenchError("no workload could run: data missing")

    factories.fake_training(monkeypatch, fail)
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)
    monkeypatch.chdir(tmp_path)
    assert cli.main([*RUN, "-o", "out.json"]) == 1
    assert "no workload could run" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
    assert list(tmp_path.iterdir()) == []


def test_default_names_in_the_same_second_fall_back_to_a_free_name(tmp_path, monkeypatch, capsys,
                                                                    fake_training):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_output, "output_path", lambda args, scale: Path(args.output or "runs/20250101T000000Z-smoke.json"))
    other = Reservation.take(tmp_path / "runs" / "20250101T000000Z-smoke.json")  # started this second
    assert cli.main(RUN) == 0
    captured = capsys.readouterr()
    assert "runs/20250101T000000Z-smoke.json is taken (another run started in the same second): " \
           "writing runs/20250101T000000Z-smoke-2.json" in captured.err
    assert "results written to runs/20250101T000000Z-smoke-2.json" in captured.out
    assert json.loads((tmp_path / "runs" / "20250101T000000Z-smoke-2.json").read_text())["runs"]
    other.release()


def _refused_before_training(tmp_path, monkeypatch, capsys, argv: list[str]) -> str:
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    assert cli.main([*RUN, *argv, "-o", "out.json"]) == 1
    assert time.monotonic() - started < 10  # no training: seconds, whatever the workload
    preparing, *err = capsys.readouterr().err.strip().splitlines()
    assert preparing == "preparing the run: loading torch and the workloads"  # said at once, before torch loads
    assert len(err) == 1 and err[0].startswith("goodbench: error: the results file would be refused, not training")
    assert not (tmp_path / "out.json").exists()  # nothing reserved, nothing left behind
    return err[0]


def test_a_system_name_the_validator_refuses_fails_before_training(tmp_path, monkeypatch, capsys, no_training):
    line = _refused_before_training(tmp_path, monkeypatch, capsys, ["--system-name", "x" * 3000])
    assert "system.name: a string of 3000 characters, over 2000 [too-long-string]" in line
    line = _refused_before_training(tmp_path, monkeypatch, capsys, ["--system-name", "y" * 300])
    assert "system.name:" in line and "[schema]" in line  # the schema's 200 characters
    line = _refused_before_training(tmp_path, monkeypatch, capsys,
                                    ["--system-name", "NVIDIA H100 x8 - reproduced by a trusted reviewer (MLCommons)"])
    assert "--system-name:" in line and "a word of the site's trust labels" in line  # rule name-trust


def test_system_overrides_the_validator_refuses_fail_before_training(tmp_path, monkeypatch, capsys, no_training):
    overrides = tmp_path / "overrides.json"
    overrides.write_text(json.dumps({"host": {"os": "Linux\u0007\u202e"}}))
    line = _refused_before_training(tmp_path, monkeypatch, capsys, ["--system-overrides", str(overrides)])
    assert "system.host.os: a string holds a control or invisible character [control-char]" in line
    overrides.write_text(json.dumps({"accelerator": {"count": "eight"}}))
    line = _refused_before_training(tmp_path, monkeypatch, capsys, ["--system-overrides", str(overrides)])
    assert "system.accelerator.count:" in line and "[schema]" in line


def test_acceptable_inputs_pass_the_preflight(tmp_path, monkeypatch, capsys, fake_training):
    overrides = tmp_path / "overrides.json"
    overrides.write_text(json.dumps({"host": {"cloud": "rack 7"}}))
    monkeypatch.chdir(tmp_path)
    assert cli.main([*RUN, "--system-name", "lab box", "--system-overrides", str(overrides), "-o", "ok.json"]) == 0
    assert (tmp_path / "ok.json").stat().st_size > 0


def test_a_run_whose_file_breaks_the_rules_exits_1_and_says_what_to_do(tmp_path, monkeypatch, capsys):
    """Walkthrough 4: a run whose file the validator refused ("validated: 1 problem … [above-ceiling]")
    exited 0, and compare and submit then refused the file; the runs were faster than the matmul
    ceiling measured under load. The file is still written: its runs are real."""
    doc = _document()
    entry = doc["settings"]["matmul_ceiling"]["fp32"]
    entry["trials_flops"] = [t / 50 for t in entry["trials_flops"]]
    entry["flops"] = max(entry["trials_flops"])

    factories.fake_training(monkeypatch, lambda *_a, **_k: doc)
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)
    monkeypatch.chdir(tmp_path)
    assert "above-ceiling" in {p.code for p in check_document(json.loads(results.dumps(doc)))}
    assert cli.main([*RUN, "-o", "out.json"]) == 1
    captured = capsys.readouterr()
    assert "\nvalidated: " in captured.out and "problems (`goodbench validate out.json` lists them)" in captured.out
    (said,) = [line for line in captured.err.splitlines() if line.startswith("this results file breaks the rules")]
    assert "above-ceiling" in said and "submit and compare refuse it" in said and "--wait-quiet" in said
    assert json.loads((tmp_path / "out.json").read_text()) == json.loads(results.dumps(doc))


def _disk_full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_results_file_the_disk_refuses_is_kept_elsewhere_and_the_run_says_where(tmp_path, monkeypatch, capsys,
                                                                                 fake_training):
    """Trial 14b F5: a finished run whose results file hit a full disk printed a bare "No space
    left on device" and lost everything. The document is kept in goodbench's state folder, the
    summary is printed, one line names both places, and the run fails; the placeholder is freed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(Reservation, "write", _disk_full)  # the disk is full where the file goes
    assert cli.main([*RUN, "-o", "out.json"]) == 1
    captured = capsys.readouterr()
    [kept] = (tmp_path / "state" / "goodbench" / "unsaved").iterdir()
    assert kept.name.startswith("out.") and kept.read_text() == results.dumps(fake_training["doc"])
    assert captured.err.strip().splitlines()[-1] == \
        f"goodbench: error: cannot write out.json: No space left on device; the results are kept in {kept}"
    assert "workload  seed  status" in captured.out and "validated: ok" in captured.out  # the summary, the file judged
    assert not (tmp_path / "out.json").exists()  # the empty placeholder is not left behind


def test_a_results_file_no_folder_takes_is_printed(tmp_path, monkeypatch, capsys, fake_training):
    """When the fallback folders refuse it too, the document goes to stdout: nothing is lost."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(results, "write_synced", _disk_full)
    assert cli.main([*RUN, "-o", "out.json"]) == 1
    captured = capsys.readouterr()
    assert results.dumps(fake_training["doc"]) in captured.out
    assert captured.err.strip().splitlines()[-1].startswith(
        "goodbench: error: cannot write out.json: No space left on device; no other folder took them either (")


def test_a_run_taking_over_a_killed_runs_placeholder_says_so(tmp_path, monkeypatch, capsys, fake_training):
    """Trial 14b F10: the empty file a killed run left at ``-o`` was taken over without a word,
    so the user never learned that the earlier run died."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.json").touch()  # a killed run's placeholder: empty, nobody holds it
    assert cli.main([*RUN, "-o", "out.json"]) == 0
    assert "out.json was left empty by a run that was killed; taking it over" in capsys.readouterr().err.splitlines()
    assert json.loads((tmp_path / "out.json").read_text())["system"]["name"] == "reserved"
    assert cli.main([*RUN, "-o", "fresh.json"]) == 0
    assert "killed" not in capsys.readouterr().err


def test_runs_that_is_a_file_is_said_to_be_one(tmp_path, monkeypatch, capsys, no_training):
    """Trial 14b F13: with a file named ``runs`` the default name failed with mkdir's "File exists"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").write_text("not a folder")
    assert cli.main(RUN) == 1
    [line] = capsys.readouterr().err.strip().splitlines()[-1:]
    assert line.startswith("goodbench: error: cannot write the results file runs/") and \
        line.endswith(": runs exists and is not a folder")


def test_a_written_file_over_the_size_limit_is_refused_by_its_writer_as_by_validate(tmp_path):
    """Trial 15 #6: a file over 5 MiB was "validated: ok" (exit 0, ``problems == []``) by the
    writer, then refused by validate and submit (``file-too-large``, checked before reading).
    The writer's validation now applies the same rule (:func:`suite.record.reading.too_large`)."""
    from suite.validate import validate_file

    doc = _document()
    path = tmp_path / "out.json"

    def write(d: dict) -> Path:
        path.write_text(results.dumps(d))
        return path
    _, _, problems, _ = driver.write_validated(doc, write, path)
    assert "file-too-large" not in {p.code for p in problems}
    doc["runs"] = [{**doc["runs"][0], "padding": "x" * MAX_FILE_BYTES}]  # one more field, 5 MiB of it
    _, _, problems, _ = driver.write_validated(doc, write, path)
    assert problems[0].code == "file-too-large" and problems[0].reason == \
        f"{path.stat().st_size} bytes is over the {MAX_FILE_BYTES}-byte limit"
    assert [(p.code, p.reason) for p in validate_file(path)] == [(problems[0].code, problems[0].reason)]
    assert driver.validated_line(str(path), problems).startswith("validated: ")
    assert "file-too-large" in driver.refused_advice(problems)


def test_an_output_that_is_a_folder_is_named_a_folder(tmp_path):
    """A new user's review: `run -o DIR` said "DIR exists; goodbench never overwrites a results
    file", of a folder."""
    from suite.record.errors import GoodbenchError
    from suite.run.output import refuse_taken_output

    with pytest.raises(GoodbenchError, match=f"^{tmp_path} is a folder: -o names the results file to write"):
        refuse_taken_output(tmp_path)
    assert tmp_path.is_dir()


@pytest.mark.parametrize("make, says", [("fifo", "not a regular file"), ("deep", "maximum recursion depth"),
                                        ("empty", "an empty file"), ("large", "-byte limit")])
def test_an_overrides_file_that_cannot_be_read_is_one_error(make, says, tmp_path):
    """A FIFO was opened and waited on for ever, /dev/zero read without bound."""
    from suite.record.errors import GoodbenchError
    from suite.run.overrides import MAX_BYTES, load_overrides

    path = tmp_path / "overrides.json"
    if make == "fifo":
        os.mkfifo(path)
    else:
        path.write_text({"deep": "[" * 20000 + "]" * 20000, "empty": "", "large": " " * (MAX_BYTES + 1)}[make])
    with pytest.raises(GoodbenchError, match=f"cannot read system overrides {path}: .*{says}"):
        load_overrides(str(path))


def test_an_overrides_file_given_through_a_link_is_read(tmp_path):
    from suite.run.overrides import load_overrides

    (tmp_path / "overrides.json").write_text(json.dumps({"host": {"cloud": "rack 7"}}))
    os.symlink(tmp_path / "overrides.json", tmp_path / "link.json")
    assert load_overrides(str(tmp_path / "link.json")) == {"host": {"cloud": "rack 7"}}


def test_a_skipped_workloads_folders_are_named_on_the_terminal_not_in_the_file(tmp_path, monkeypatch, capsys):
    """A new user's default run said "not found in 1 folder" and named none: the reasons carry no
    path (the file is published), so the terminal names the folders once, after them."""
    doc = _document()
    reason = "fashion-mnist/train.gz not found in 2 folders, not downloaded: GOODBENCH_OFFLINE=1"
    doc["settings"]["skipped"] = [{"workload": "fashion-cnn", "reason": reason}]
    factories.fake_training(monkeypatch, lambda plan, options, progress: doc)
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GOODBENCH_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    cli.main([*RUN, "-o", "out.json", "--data-dir", "data"])
    out = capsys.readouterr().out.splitlines()
    at = out.index(f"skipped fashion-cnn: {reason}")
    assert out[at + 1] == f"dataset folders looked in: data, {tmp_path / 'cache' / 'goodbench'} (goodbench data where)"
    assert str(tmp_path) not in (tmp_path / "out.json").read_text()
