"""``goodbench show FILE`` prints the summary ``goodbench run`` ends with — the runs table, goodput,
scores and why its rates are not the progress lines' — for any results file; a file it cannot read
or summarize gets one line, never a traceback, and a string holding a control character is printed
escaped."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from suite.cli import main
from suite.commands import show
from suite.figures import naming, report
from suite.record import results
from workloads import own

FIXTURE = Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json"


def test_show_prints_the_summary_run_ends_with(capsys):
    assert main(["show", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    doc = results.load(FIXTURE)
    assert out == report.file_summary(doc) + "\n" + show.VALID + "\n"  # the validator's word last
    header, *rows = out.splitlines()[:1 + len(doc["runs"])]
    assert header.split()[:3] == ["workload", "seed", "status"] and "samples/s" in header and "p50" in header
    for row, run in zip(rows, doc["runs"]):
        assert f"{round(results.samples_per_s(run), 2):.2f}" in row
        assert f"{round(1000 * results.step_time_s(run, 'p50'), 2)}" in row
    assert out.rstrip("\n").removesuffix(show.VALID).rstrip("\n").endswith(report.STEADY_STATE_NOTE)
    assert "warm-up" in report.STEADY_STATE_NOTE and "progress lines" in report.STEADY_STATE_NOTE


def test_show_takes_several_files_each_under_its_name_and_goes_on_past_one_it_cannot_read(tmp_path, capsys):
    """``goodbench show results/*.json``: each summary under a line naming its file, in the order
    given; a file it cannot read is said on stderr, the others are still shown, and the status is 1."""
    assert main(["show", str(FIXTURE)]) == 0
    alone = capsys.readouterr().out
    missing = tmp_path / "gone.json"
    assert main(["show", str(FIXTURE), str(missing), str(FIXTURE)]) == 1
    said = capsys.readouterr()
    assert said.out == f"# {FIXTURE}\n{alone}\n# {missing}\n\n# {FIXTURE}\n{alone}"
    assert said.err.strip() == f"goodbench show: {missing}: cannot read the file (No such file or directory) [unreadable]"
    assert main(["show", str(FIXTURE), str(FIXTURE)]) == 0


def test_show_and_run_end_with_the_same_warning_where_runs_were_measured_under_load(capsys):
    """A new user's `run` ended with "warning: 1 of 1 runs measured under load …" and `show` of the
    same file said nothing of it; both now end with it (as run-own does)."""
    loaded = Path(__file__).parent / "fixtures" / "own-loaded-short-steps.json"
    assert main(["show", str(loaded)]) == 0
    *_, last, checked = capsys.readouterr().out.rstrip("\n").splitlines()
    assert checked.startswith("validator: ")
    doc = results.load(loaded)
    assert last == report.load_warning(doc["runs"], own.implementation_name(doc))  # own code named: "own: mlp seed 1"
    assert "first own: mlp seed 1:" in last
    assert last.startswith("warning: 1 of 1 runs measured under load (self-reported)")
    assert report.load_warning(results.load(FIXTURE)["runs"]) is None  # a quiet file: no such line


def _hostile() -> list[tuple[str, bytes]]:
    doc = json.loads(FIXTURE.read_text())
    no_metrics = json.loads(FIXTURE.read_text())
    del no_metrics["runs"][0]["metrics"]
    text_wall = json.loads(FIXTURE.read_text())
    text_wall["runs"][0]["wall_s"] = "long"
    return [("not JSON", b"{\"runs\": ["), ("a list", b"[1, 2]"), ("no runs", b"{}"),
            ("runs not a list", json.dumps({**doc, "runs": 3}).encode()),
            ("a run not an object", json.dumps({**doc, "runs": [7]}).encode()),
            ("a run without metrics", json.dumps(no_metrics).encode()),
            ("a wall time as text", json.dumps(text_wall).encode()),
            ("nested too deep", b"[" * 5000 + b"]" * 5000)]


@pytest.mark.parametrize("name, raw", _hostile(), ids=[name for name, _ in _hostile()])
def test_a_file_show_cannot_summarize_gets_one_line(name, raw, tmp_path, capsys):
    path = tmp_path / "hostile.json"
    path.write_bytes(raw)
    assert main(["show", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"goodbench: error: {path}") and "Traceback" not in captured.err


def test_show_of_a_folder_or_a_missing_file_is_one_line(tmp_path, capsys):
    for path in (tmp_path, tmp_path / "absent.json"):
        assert main(["show", str(path)]) == 1
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_control_character_in_the_file_is_printed_escaped(tmp_path, capsys):
    doc = json.loads(FIXTURE.read_text())
    doc["runs"][0]["status"] = "complete\x1b[2J"  # an escape sequence that would clear the terminal
    path = tmp_path / "escape.json"
    path.write_text(json.dumps(doc))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "complete\\u001b[2J" in out


def test_own_code_is_named_by_its_implementation_in_both_tables(capsys):
    """Own code's runs read "own: NAME" (the name its file records), not the workload id "own";
    held to a goodbench workload's target, they say which."""
    assert main(["show", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    runs, goodput = out.split(f"\n{report.GOODPUT_HEADING}\n")
    for table in (runs, goodput):
        rows = table.splitlines()[1:3]
        assert [row.split("  ")[0].rstrip() for row in rows] == ["own: resume-mlp"] * 2
    assert main(["show", str(FIXTURE.parent / "own-stored-losses.json")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("own: plain-loop-char-gpt (held to lm-char)  ")
    assert main(["show", str(FIXTURE.parent / "reference-smoke.json")]) == 0  # goodbench's workloads: their ids
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:3]] == ["lm-char", "gpt2-124m"]


def test_an_own_codes_name_is_shown_printable_and_bounded(tmp_path, capsys):
    doc = json.loads(FIXTURE.read_text())
    doc["settings"]["implementation"]["name"] = "mlp\x1b[2J\u202e" + "x" * 150  # clears the screen, reverses text
    path = tmp_path / "named.json"
    path.write_text(json.dumps(doc))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    label = out.splitlines()[1].split("  ")[0]
    assert label == "own: " + ("mlp\\u001b[2J\\u202e" + "x" * 150)[:naming.OWN_NAME_CHARS] + "…"
    # the table run-own prints is the same, from the document as the script wrote it (nothing escaped before)
    text = report.file_summary(doc)
    assert "\x1b" not in text and "\u202e" not in text and text.splitlines()[1].startswith(label)


@pytest.mark.parametrize("long", ["W" * 800_000, "\u0301" * 400_000])  # trial 12, A4b: 9.6 MB and 8.8 MB printed
def test_every_string_the_file_supplies_is_printed_bounded(long, tmp_path, capsys):
    """A string of any length (800,000 letters, 400,000 combining marks: one cell stacking them
    all) is printed as its first show.MAX_CHARS characters, a combining mark counted as one, then "…"."""
    from suite.commands import show

    doc = json.loads((FIXTURE.parent / "reference-smoke.json").read_text())
    for run in doc["runs"]:
        run["workload"]["id"] = long
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")  # 4.1 MB: under the read limit
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    shown = long[:show.MAX_CHARS] + "…"
    assert out.count(shown) == 2 * len(doc["runs"]) and long[:show.MAX_CHARS + 1] not in out  # runs, goodput
    assert len(out) < 10_000 and max(map(len, out.splitlines())) < 2 * show.MAX_CHARS


def test_a_file_of_many_runs_and_scores_shows_the_first_and_counts_the_others(tmp_path, capsys):
    from suite.commands import show

    doc = json.loads((FIXTURE.parent / "reference-smoke.json").read_text())
    run = {**doc["runs"][0], "event_log": []}  # small: 250 runs under the read limit
    doc["runs"] = [{**run, "seed": i} for i in range(show.MAX_RUNS + 150)]
    entry = next(iter(doc["summary"].values()))
    doc["summary"] = {f"w{i}@smoke": entry for i in range(show.MAX_SCORES + 7)}
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc))
    assert main(["show", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines[1:show.MAX_RUNS + 2]] == [*map(str, range(show.MAX_RUNS)), "—:"]
    assert f"150 more runs not shown (the first {show.MAX_RUNS} of {show.MAX_RUNS + 150} are)" in lines
    assert not any(line.split()[:2] == [run["workload"]["id"], str(show.MAX_RUNS)] for line in lines)
    assert f"7 more time-to-target scores not shown (the first {show.MAX_SCORES} of {show.MAX_SCORES + 7} are)" in lines


def test_cut_writes_escapes_whole_counts_marks_and_reads_no_further_than_it_shows():
    from suite.record.text import cut

    class Counted(str):
        """A string that counts the characters read from it (work, not time: a loaded machine reads slowly)."""
        read = 0

        def __iter__(self):
            for char in str.__iter__(self):
                Counted.read += 1
                yield char

    assert cut("abc", 3) == "abc" and cut("abcd", 3) == "abc…" and cut("", 3) == ""
    assert cut("a\x1bb", 8) == "a\\u001bb"
    assert cut("a\x1bb", 6) == "a…"  # the escape is never cut in two
    assert cut("e" + "\u0301" * 10, 4) == "e\u0301\u0301\u0301…"
    assert cut(Counted("x" * 10_000_000), 80) == "x" * 80 + "…"
    assert Counted.read == 81  # the 80 shown and the one that says more follows, of ten million
    Counted.read = 0
    assert cut(Counted("\x1b" * 1_000_000), 12) == "\\u001b\\u001b…" and Counted.read == 3


def _measure(path, capsys) -> tuple[str, int]:
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    return out, max(map(len, out.splitlines()))


def test_the_load_warning_is_built_from_the_bounded_file_and_cut(tmp_path, capsys):
    """Trial 13, 3 (/tmp/trial13/show_unbounded.py): 400 busy processes of 5,000-letter names at one
    run's start printed one 2 MB line; the warning now names the first five, each cut, and counts
    the others."""
    from suite.commands import show
    from suite.figures import load

    doc = json.loads((FIXTURE.parent / "reference-smoke.json").read_text())
    doc["runs"][0]["host_load"]["start"] = {"load_1m": 3.0, "cores": 2, "other_cores": 1.5,
                                            "busy": [{"name": "N" * 5000 + str(i), "cores": 0.1} for i in range(400)]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    assert path.stat().st_size > 2_000_000
    out, longest = _measure(path, capsys)
    *_, warning, checked = out.splitlines()
    assert checked.startswith("validator: NOT VALID (") and "[too-long-string] at runs[0].host_load.start.busy" in checked
    assert warning.startswith("warning: 1 of 5 runs measured under load (self-reported); first lm-char seed 1: "
                              "other processes used 1.5 of 2 cores at its start (")
    assert warning.count("N" * load.NAME_CHARS + "…") == load.NAMED and "and 395 more)" in warning
    assert longest == len(warning) <= show.MAX_WARNING and len(out) < 5_000  # 2,004,176 characters before


def test_the_goodput_table_shows_a_runs_first_kinds_of_badput_and_counts_the_others(tmp_path, capsys):
    """Trial 13, 3: one run's badput_s of 30,000 kinds printed a 229,000-character line, a column each."""
    from suite.commands import show

    doc = json.loads((FIXTURE.parent / "reference-smoke.json").read_text())
    doc["runs"][0]["goodput"]["badput_s"].update({f"k{i}": 0.0 for i in range(30_000)})
    path = tmp_path / "badput.json"
    path.write_text(json.dumps(doc))
    out, longest = _measure(path, capsys)
    header = out.split(f"{report.GOODPUT_HEADING}\n")[1].splitlines()[0].split()
    kinds = header[header.index("k0"):header.index("goodput")]
    assert kinds == [f"k{i}" for i in range(12)] and header[header.index("k0") - 1] == "other"  # 8 goodbench writes
    assert out.splitlines()[-2] == f"29988 more kinds of badput not shown (the first {show.MAX_BADPUT} of 30008 are)"
    assert longest < 400 and len(out) < 5_000  # 1,615,445 characters, one line of 289,058, before


def test_a_cell_holding_a_list_is_cut(tmp_path, capsys):
    """A seed of 100,000 numbers printed one cell of 689,000 characters."""
    doc = json.loads((FIXTURE.parent / "reference-smoke.json").read_text())
    doc["runs"][0]["seed"] = list(range(100_000))
    path = tmp_path / "seeds.json"
    path.write_text(json.dumps(doc))
    out, longest = _measure(path, capsys)
    assert out.count("[0, 1, 2, 3, ") == 2  # the runs table and the goodput table
    assert longest < 2 * report.CELL_CHARS and len(out) < 10_000


def test_show_of_a_reproduction_says_first_what_it_reproduces_whose_key_signed_it_and_each_verdict(capsys):
    """Walkthrough 5, L11: `show` of a reviewer's reproduction read as any run's file, with no word
    that it was one, of which file, or what it found."""
    from suite.trust import signing

    rerun = Path(__file__).parent / "fixtures" / "own-stored-losses-rerun.json"
    doc = results.load(rerun)
    assert main(["show", str(rerun)]) == 0
    first, second, *rest = capsys.readouterr().out.splitlines()
    section = doc["settings"]["reproduces"]
    assert first.startswith(f"a reproduction (goodbench reproduce) of the results file {section['sha256']}.json, "
                            f"signed by {signing.signer(doc)} (the site counts it only where")
    [entry] = section["runs"]
    assert second == f"  run {entry['run_id']} reproduces run {entry['original_run_id']}: {entry['verdict']}"
    assert "\n".join(rest).startswith(report.file_summary(doc).splitlines()[0])


def test_a_reproductions_verdict_is_shown_whole_escaped_and_bounded(tmp_path, capsys):
    from suite.commands import show

    doc = results.load(Path(__file__).parent / "fixtures" / "own-stored-losses-rerun.json")
    doc.pop("signature")
    doc["settings"]["reproduces"]["runs"][0]["verdict"] = "differs: \x1b[2J" + "x" * 3000
    lines = show.reproduction_lines(doc)
    assert "unsigned" in lines[0] and "\x1b" not in lines[1] and "\\u001b" in lines[1]
    assert lines[1].endswith("…") and len(lines[1].split(": ", 1)[1]) <= show.MAX_VERDICT + 1
    long = "differs: " + "y" * 1500  # a verdict as long as goodbench writes: whole
    doc["settings"]["reproduces"]["runs"][0]["verdict"] = long
    assert show.reproduction_lines(doc)[1].endswith(long)
    assert show.reproduction_lines(results.load(FIXTURE)) == []


def test_show_ends_with_the_validators_word_so_an_edited_figure_is_never_shown_as_checked(tmp_path, capsys):
    """A new user's find: an energy figure written into a file whose meter measured none was shown
    as "energy 50 J" with no word, while `validate` refused the file. The summary shows what the
    file states; its last line now says whether the validator accepts it, naming the first
    problem's rule and place (never its reason, which may quote the file)."""
    doc = json.loads(FIXTURE.read_text())
    doc["runs"][0]["metrics"]["energy_to_train_j"] = 50.0
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    assert main(["show", str(edited)]) == 0  # shown: show reads, validate judges
    last = capsys.readouterr().out.rstrip("\n").splitlines()[-1]
    assert last.startswith("validator: NOT VALID (") and "[energy-mismatch] at runs[0].metrics.energy_to_train_j" in last
    assert last.endswith("the figures above are the file's own, unchecked (goodbench validate FILE says why)")
    assert main(["show", str(FIXTURE)]) == 0
    assert capsys.readouterr().out.rstrip("\n").splitlines()[-1] == show.VALID
