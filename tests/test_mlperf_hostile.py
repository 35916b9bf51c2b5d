"""``goodbench import mlperf`` on hostile trees: one bad file gives one line naming it, the import
goes on, and nothing from it reaches a document, the terminal or a page unchecked."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_mlperf_import import _amd

pytest.importorskip("mlperf_logging")

from suite.mlperf import commands, documents, files, importer, ingest, logs, systems

REPO = Path(__file__).resolve().parent.parent
LOGS = Path(__file__).resolve().parent / "mlperf_logs"
SYSTEM = "MI300X_EPYC_9575F_pytorch_llama2_70b"
DESC = LOGS / "amd_MI300X_EPYC_9575F_pytorch_llama2_70b.json"


def _tree(root: Path, n: int = 3, org: str = "AMD", system: str = SYSTEM, desc: dict | None = None) -> Path:
    """``root/v5.1/<org>`` with ``n`` runs of the AMD log (each an hour after the one before); returns
    the benchmark folder."""
    bench = root / "v5.1" / org / "results" / system / "llama2_70b_lora"
    bench.mkdir(parents=True)
    (root / "v5.1" / org / "systems").mkdir(parents=True, exist_ok=True)
    target = root / "v5.1" / org / "systems" / f"{system}.json"
    if desc is None:
        shutil.copy(DESC, target)
    else:
        target.write_text(json.dumps(desc), encoding="utf-8")
    for i in range(n):
        (bench / f"result_{i}.txt").write_text(_amd(i) + "\n" * i, encoding="latin-1")  # n runs, not one log
    return bench


def _import(tree: Path, out: Path, **kw) -> importer.Outcome:
    return importer.run_import([tree], out, jobs=1, **kw)


def _only_doc(out: Path) -> dict:
    docs, bad = documents.load_all(out)
    assert not bad and len(docs) == 1, bad
    return docs[0]


def _with_line(line: str, later_h: int = 0) -> str:
    """The AMD log (of a run ``later_h`` hours later) with ``line`` inserted after its first event."""
    lines = _amd(later_h).splitlines()
    return "\n".join([lines[0], line, *lines[1:]]) + "\n"


def _within(seconds: float, fn):
    """``fn()``'s value, failing the test (instead of hanging it) past ``seconds``."""
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("value", fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s"
    return box["value"]


# ---------------------------------------------------------------- files that are not logs
def test_a_line_of_100000_brackets_is_one_failed_line_not_a_traceback(tmp_path):
    bench = _tree(tmp_path / "t")
    (bench / "result_1.txt").write_text(_with_line(":::MLLOG " + "[" * 100_000, 1), encoding="latin-1")
    outcome = _import(tmp_path / "t", tmp_path / "r")
    assert len(outcome.rows) == 1
    [line] = outcome.problems
    assert "result_1.txt" in line and "nested too deeply" in line and "\n" not in line
    run = next(r for r in _only_doc(tmp_path / "r")["runs"] if r["file"] == "result_1.txt")
    assert not run["counted"] and run["parse_errors"] == 1


def test_a_link_to_dev_zero_and_a_fifo_are_named_and_skipped_at_once(tmp_path):
    bench = _tree(tmp_path / "t")
    (bench / "result_1.txt").unlink()
    (bench / "result_1.txt").symlink_to("/dev/zero")
    (bench / "result_2.txt").unlink()
    os.mkfifo(bench / "result_2.txt")  # nobody writes to it: opening it to read would wait forever
    outcome = _within(60, lambda: _import(tmp_path / "t", tmp_path / "r"))
    assert len(outcome.problems) == 2
    assert "result_1.txt: a symbolic link: not followed" in outcome.problems[0]
    assert "result_2.txt: a FIFO, not a regular file" in outcome.problems[1]
    doc = _only_doc(tmp_path / "r")
    assert [r["counted"] for r in doc["runs"]] == [True, False, False]


def test_a_file_over_the_size_limit_is_not_read(tmp_path, monkeypatch):
    bench = _tree(tmp_path / "t")
    with open(bench / "result_2.txt", "ab") as fh:  # a sparse file: 60 MB without writing them
        fh.truncate(60_000_000)
    outcome = _import(tmp_path / "t", tmp_path / "r")
    [line] = outcome.problems
    assert "result_2.txt: 60,000,000 bytes, over the 16,777,216-byte limit" in line


@pytest.mark.slow  # writes and imports a 16 MiB log in a process of its own
def test_memory_stays_bounded_on_the_largest_log_read(tmp_path):
    """A log at the size limit made of nothing but checked lines (the worst case: every line is
    held while the run is checked) stays under 300 MB, where a 60 MB one took 473 MB."""
    bench = _tree(tmp_path / "t", n=1)
    accuracy = next(line for line in _amd().splitlines() if '"eval_accuracy"' in line) + "\n"
    with open(bench / "result_0.txt", "a", encoding="latin-1") as fh:
        fh.write(accuracy * ((files.MAX_LOG_BYTES - len(_amd()) - 1) // len(accuracy)))
    code = ("from suite.mlperf import importer\n"
            f"o = importer.run_import([{str(tmp_path / 't')!r}], {str(tmp_path / 'r')!r}, jobs=1)\n"
            "assert len(o.rows) == 1 and not o.problems, o.problems\n"
            # VmHWM: this process's own peak (ru_maxrss carries the forking parent's peak across exec)
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) < 300 * 1024, out.stdout  # KiB


def test_links_are_not_followed_out_of_the_tree(tmp_path):
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({**json.loads(DESC.read_text()), "system_name": "SECRET FROM OUTSIDE"}))
    bench = _tree(tmp_path / "t")
    description = tmp_path / "t" / "v5.1" / "AMD" / "systems" / f"{SYSTEM}.json"
    description.unlink()
    description.symlink_to(secret)
    # a linked benchmark folder and a linked scaling.json, elsewhere in the tree
    other = _tree(tmp_path / "u", org="Other")
    (bench.parent / "linked_bench").symlink_to(other)
    outside_scaling = tmp_path / "scaling.json"
    outside_scaling.write_text('{"scaling_factor": 1.5}')
    (bench / "scaling.json").symlink_to(outside_scaling)
    outcome = _import(tmp_path / "t", tmp_path / "r")
    assert not outcome.rows  # the only real submission has a linked description: not imported
    text = "\n".join(outcome.problems)
    assert "linked_bench: a symbolic link: not followed" in text
    assert f"systems/{SYSTEM}.json: a symbolic link: not followed" in text
    assert not list((tmp_path / "r").rglob("*.json"))
    # with a real description, the linked scaling.json gives no score (its factor is not read)
    description.unlink()
    shutil.copy(DESC, description)
    outcome = _import(tmp_path / "t", tmp_path / "r")
    doc = _only_doc(tmp_path / "r")
    assert doc["score"]["minutes"] is None and "scaling.json: a symbolic link" in doc["score"]["status"]
    assert "SECRET" not in json.dumps(doc)


# ---------------------------------------------------------------- text that could disguise
ANSI, BIDI = "\x1b[31mRED\x1b[0m\rX", "evil\u202eTXT.exe\u2066"


def test_escapes_in_names_are_written_out_in_the_table_and_in_documents(tmp_path, capsys):
    desc = {**json.loads(DESC.read_text()), "system_name": f"sys {ANSI}", "submitter": f"org {BIDI}",
            "framework": "fw\u200b\x07"}
    _tree(tmp_path / "t", org=f"AMD{ANSI}", desc=desc)
    assert commands.import_command([str(tmp_path / "t")], str(tmp_path / "r"), None, 1, False) == 0
    printed = capsys.readouterr()
    for raw in ("\x1b", "\r", "\u202e", "\u2066", "\u200b", "\x07"):
        assert raw not in printed.out and raw not in printed.err
    assert "\\u001b" in printed.out
    doc = _only_doc(tmp_path / "r")
    assert doc["system"]["name"] == "sys \\u001b[31mRED\\u001b[0m\\u000dX"
    assert doc["submitter"] == "org evil\\u202eTXT.exe\\u2066"
    assert documents.problems(doc) == []
    # a document holding such a character (written by hand) is not shown
    doc["system"]["framework"] = "fw\u202e"
    assert any("control, bidi or zero-width" in p for p in documents.problems(doc))


def test_a_4000_digit_node_count_is_no_count():
    huge = "9" * 4000
    assert systems.count(huge) is None and systems.count(int(huge)) is None
    assert systems.count("-8") is None and systems.memory_bytes("9" * 400 + " GB") is None
    described = systems.describe({"number_of_nodes": huge, "accelerators_per_node": "8"}, "x")
    assert described["nodes"] is None and described["accelerators"] is None


def test_a_node_count_that_is_not_a_plain_whole_number_is_unknown_not_its_leading_digits():
    """Trial 14 F11: "1_000" and "1e9" were read as 1 node (the count that multiplies a cost)."""
    for text in ("1_000", "1e9", "8 nodes", "2x4", "\u0668", "8.5", "NaN", "0x10"):
        assert systems.count(text) is None, text
    assert systems.count(" 128 ") == 128 and systems.count("8.0") == 8 and systems.count(1.0) == 1
    described = systems.describe({"number_of_nodes": "1_000", "accelerators_per_node": "8"}, "x")
    assert described["nodes"] is None and described["accelerators"] is None


# ---------------------------------------------------------------- numbers that are not scores
@pytest.mark.parametrize("text, why", [
    ('{"scaling_factor": NaN}', "not a JSON"),  # the validator's strict reader: NaN is not JSON
    ('{"scaling_factor": 1e308}', "not a number from 1 to 10"),
    ('{"scaling_factor": 0.5}', "not a number from 1 to 10"),
    ('{"scaling_factor": "1.02"}', "not a number from 1 to 10"),
    ('{"scale": 1.02}', "no scaling_factor"),
])
def test_an_rcp_factor_that_is_not_one_gives_no_score_and_a_valid_document(tmp_path, text, why):
    bench = _tree(tmp_path / "t")
    (bench / "scaling.json").write_text(text)
    outcome = _import(tmp_path / "t", tmp_path / "r")
    doc = _only_doc(tmp_path / "r")  # stored, and its schema takes it
    assert doc["score"]["minutes"] is None and doc["score"]["rcp_scaling_factor"] is None
    assert doc["score"]["status"].startswith("no score: scaling.json") and why.lower() in doc["score"]["status"].lower()
    assert outcome.rows[0]["score_status"] == doc["score"]["status"]


def test_a_run_stop_at_1e300_ms_is_not_a_time_to_train(tmp_path):
    bench = _tree(tmp_path / "t")
    lines = _amd().splitlines()
    at = next(i for i, line in enumerate(lines) if '"run_stop"' in line)
    event = json.loads(lines[at].split(":::MLLOG ", 1)[1])
    lines[at] = ":::MLLOG " + json.dumps({**event, "time_ms": 1e300})
    (bench / "result_1.txt").write_text("\n".join(lines) + "\n", encoding="latin-1")
    _import(tmp_path / "t", tmp_path / "r")
    doc = _only_doc(tmp_path / "r")
    far = next(r for r in doc["runs"] if r["file"] == "result_1.txt")
    assert not far["counted"] and "time_to_train_s" not in far and far["unmeasured"]["time_to_train_s"] == "implausible-time"
    assert far["why"] == ingest.UNMEASURED["implausible-time"]
    # the other two runs score as usual: one dropped run stands for the slowest
    assert doc["score"]["minutes"] == pytest.approx(doc["runs"][0]["time_to_train_s"] / 60)


# ---------------------------------------------------------------- a tree posing as another
def test_a_crafted_tree_never_replaces_a_stored_document_unasked(tmp_path, capsys):
    _tree(tmp_path / "real")
    out = tmp_path / "r"
    _import(tmp_path / "real", out)
    genuine = (out / "mlperf").iterdir().__next__().read_bytes()
    # the same round, org, system and benchmark folder names, other logs (one minute faster)
    crafted = _tree(tmp_path / "crafted")
    lines = _amd().splitlines()
    at = next(i for i, line in enumerate(lines) if '"run_stop"' in line)
    event = json.loads(lines[at].split(":::MLLOG ", 1)[1])
    lines[at] = ":::MLLOG " + json.dumps({**event, "time_ms": event["time_ms"] - 60_000})
    for i in range(3):
        (crafted / f"result_{i}.txt").write_text("\n".join(lines) + "\n" * (i + 1), encoding="latin-1")
    assert commands.import_command([str(tmp_path / "crafted")], str(out), None, 1, True) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)[0]["stored"] == "kept"
    assert "imported from other source files (result logs differ)" in printed.err and "replace" in printed.err
    assert next((out / "mlperf").iterdir()).read_bytes() == genuine
    # asked to: replaced, and said so
    assert commands.import_command([str(tmp_path / "crafted")], str(out), None, 1, False, replace=True) == 0
    assert "REPLACED (other source files)" in capsys.readouterr().out
    assert next((out / "mlperf").iterdir()).read_bytes() != genuine
    # the same files again, by another path: unchanged
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "crafted", copy)
    assert _import(copy, out).rows[0]["stored"] == "unchanged"


# ---------------------------------------------------------------- the parser's fast path
@pytest.mark.parametrize("ruleset", sorted(r for r in __import__(
    "mlperf_logging.compliance_checker.mlp_compliance", fromlist=["rule_choices"]).rule_choices() if r != "0.6.0"))
def test_lines_of_unread_keys_fail_exactly_when_mlcommons_parser_fails_them(ruleset):
    """The lines kept, and those failed, are MLCommons' own ``string_to_logline``'s on every line
    of a log and on broken variants of them."""
    import importlib

    module = importlib.import_module(
        f"mlperf_logging.compliance_checker.mlp_parser.ruleset_{ruleset.replace('.', '')}")
    base = [line for line in _amd().splitlines() if line.startswith(":::MLLOG")]
    broken = [base[3][:-7], base[4].replace('"time_ms": ', '"time_ms": "x'), base[5].replace('"metadata"', '"meta"'),
              base[6].replace('"value"', '"val"'), ":::MLLOG []", ":::MLLOG 3", ":::MLLOG {\"time_ms\": 1}",
              base[7].replace('"key"', '"k"'), base[8].replace('"time_ms": ', '"time_ms": [') + "]",
              ":::MLLOG " + "[" * 5000, base[9] + " trailing", "   " + base[10] + "   "]
    lines = base + broken
    keep = {"run_start", "init_start", "submission_org"}
    failed: list = []
    got = list(logs.stream(iter(line + "\n" for line in lines), ruleset, failed, keep))
    expected, expected_failed = [], 0
    for n, line in enumerate(lines):
        try:
            ll = module.string_to_logline(n, line.strip())
        except Exception:  # MLCommons catches ValueError only; any failure is failed here
            expected_failed += 1
            continue
        if ll.key in keep:
            expected.append(ll)
    assert got == expected and len(failed) == expected_failed >= len(broken) - 1


def test_the_workers_import_what_one_process_imports_on_hostile_files(tmp_path):
    """Problems found in worker processes come back as the same lines."""
    bench = _tree(tmp_path / "t", n=10)
    (bench / "result_3.txt").write_text(_with_line(":::MLLOG " + "[" * 100_000, 3), encoding="latin-1")
    (bench / "result_4.txt").unlink()
    (bench / "result_4.txt").symlink_to("/dev/zero")
    one = importer.run_import([tmp_path / "t"], tmp_path / "one", jobs=1)
    two = importer.run_import([tmp_path / "t"], tmp_path / "two", jobs=2)
    assert one.problems == two.problems and len(one.problems) == 2
    assert (tmp_path / "one" / "mlperf").iterdir().__next__().read_bytes() == \
        (tmp_path / "two" / "mlperf").iterdir().__next__().read_bytes()

