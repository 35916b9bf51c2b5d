"""Own code's second clock across a kill (docs/own-code.md, "A killed run goes on"): ``goodbench
run-own`` journals each run's stamps in the checkpoint directory as the child goes, and the same
command run again gives each run its stamps from every process — one ``second_clock`` entry per
process, a segment — which the rule ``second-clock`` joins and compares; a run stamped whole is
ranked, a journal that does not fit the file is refused, and a torn journal line is skipped (the
rule's refusals of segments that do not join are tested on the honest job's record in
tests/test_own_clock.py, which has it at hand)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_clock_downtime import held_gaps

from suite import validate as v
from suite.figures import clock_cover
from suite.leaderboard import pipeline, rows
from suite.record import edges
from suite.run import clock_journal, own_segments
from suite.run.edge_reader import EdgeReader, clock

REPO = Path(__file__).resolve().parent.parent
WALL = 1.8e9     # the first launcher's wall clock at its child's start (Unix seconds; any)
SESSION = "ab12"


# ---------------------------------------------------------------- the journal
def test_the_journal_checkpoint_and_kept_edges_read_back_and_a_checkpoint_inside_a_step_is_refused():
    assert edges.parse(edges.journal(SESSION, "/ckpt/dir").rstrip(b"\n"), 1.0) == \
        edges.Edge(edges.JOURNAL, 0, 0.0, 1.0, SESSION, "/ckpt/dir")
    for bad in (b"j ab12 relative/dir", b"j a-b /x", b"j  /x", b"c 3 0.1 extra", b"k -1 0.1"):
        with pytest.raises(edges.BadLine):
            edges.parse(bad, 0.0)
    read_end, write_end = os.pipe()
    reader = EdgeReader(read_end, clock())
    os.write(write_end, b"".join([edges.line(edges.RUN, 1, 0.0, "run1"), edges.line(edges.START, 0, 0.01),
                                  edges.line(edges.BEGIN, 1, 0.02), edges.line(edges.CHECKPOINT, 1, 0.03)]))
    os.close(write_end)
    reader.finish(2.0)
    assert reader.broken is not None and "a checkpoint of step 1 inside a step" in reader.broken


def _launched(folder: Path, script: Path, lines: list[bytes], args: tuple[str, ...] = ("x.json",),
              pid: int = 4242) -> tuple[clock_journal.Journal, EdgeReader]:
    """A launcher's journal of the edge ``lines``, as its reader takes them, written out; and the reader."""
    journal = clock_journal.Journal(str(script), list(args))
    journal.started(pid, WALL)
    read_end, write_end = os.pipe()
    reader = EdgeReader(read_end, clock(), journal)
    os.write(write_end, b"".join([edges.journal(SESSION, str(folder)), *lines]))
    os.close(write_end)
    reader.finish(2.0)
    journal.close()
    assert reader.broken is None, reader.broken
    return journal, reader


def _journal(folder: Path, script: Path, lines: list[bytes], args: tuple[str, ...] = ("x.json",),
             pid: int = 4242) -> clock_journal.Journal:
    return _launched(folder, script, lines, args, pid)[0]


def _run(run_id: str, seed: int, steps: int, checkpoints: tuple[int, ...], kept: bool = False,
         first: int = 1) -> list[bytes]:
    """The edges of a run's steps ``first`` to ``steps`` (its clock started where ``first`` is 1),
    evaluated every 3, saved at ``checkpoints``, its record ``kept`` at the end."""
    out = [edges.line(edges.RUN, seed, 0.0, run_id)] + ([edges.line(edges.START, 0, 0.01)] if first == 1 else [])
    for step in range(first, steps + 1):
        out += [edges.line(edges.BEGIN, step, 0.02 * step), edges.line(edges.END, step, 0.02 * step + 0.01)]
        if step % 3 == 0:
            out += [edges.line(edges.EVAL_START, step, 0.02 * step + 0.011),
                    edges.line(edges.EVAL_STOP, step, 0.02 * step + 0.015)]
        if step in checkpoints:
            out.append(edges.line(edges.CHECKPOINT, step, 0.02 * step + 0.016))
    return out + ([edges.line(edges.KEPT, steps, 0.02 * steps + 0.017)] if kept else [])


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("pass\n")
    return path


def test_the_journal_keeps_each_checkpoints_stamps_and_skips_a_torn_line(tmp_path, script):
    _journal(tmp_path, script, _run("run1", 1, 7, (3, 6)))
    path = tmp_path / clock_journal.NAME
    kept = clock_journal.read(path)
    assert [(line["kind"], line["through"], line["first_step"], len(line["step_s"])) for line in kept] == \
        [("start", 0, 0, 0), ("checkpoint", 3, 1, 3), ("checkpoint", 6, 1, 3)]
    assert [[e["step"] for e in line["evaluations"]] for line in kept] == [[], [3], [6]]
    assert {line["session"] for line in kept} == {SESSION} and kept[0]["run_start_s"] is not None
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines()[-1][:40])  # a write torn by a kill
    assert clock_journal.read(path) == kept
    _journal(tmp_path, script, _run("run2", 2, 3, (3,)))  # the successor's launcher ends the torn line first
    again = clock_journal.read(path)
    assert again[:3] == kept and [line["run_id"] for line in again[3:]] == ["run2", "run2"]
    assert path.read_bytes().count(b"\n") == len(again) + 1


def test_a_successor_joins_the_segment_of_the_checkpoint_it_went_on_from(tmp_path, script):
    journal = _journal(tmp_path, script, _run("run1", 1, 7, (3, 6)) + _run("run2", 2, 4, (4,), kept=True))
    successor = _journal(tmp_path, script, [])
    lines = successor.earlier(SESSION)
    assert len(lines) == 6 and journal.process["process"] != successor.process["process"]
    run = {"run_id": "now1", "seed": 1, "step_times_s": [0.01] * 9}
    for went_on_from in (3, 6):
        own = {"run_start_s": None, "first_step": went_on_from + 1, "step_s": [0.01] * (9 - went_on_from)}
        [segment] = own_segments._chain(run, own, lines, {})
        assert (segment["first_step"], len(segment["step_s"]), segment["pid"]) == (1, went_on_from, 4242)
        assert segment["run_id"] == "now1" and segment["run_start_s"] is not None
    assert own_segments._chain(run, {"run_start_s": None, "first_step": 6, "step_s": [0.01] * 4}, lines, {}) is None
    finished = {"run_id": "run2", "seed": 2, "step_times_s": [0.01] * 4}  # kept by the earlier process
    [segment] = own_segments._chain(finished, None, lines, {})
    assert len(segment["step_s"]) == 4 and [e["step"] for e in segment["evaluations"]] == [3]
    with pytest.raises(clock_journal.Refused, match="its finished run of seed 2 is run2, not the file's other"):
        own_segments._chain({**finished, "run_id": "other"}, None, lines, {})


def test_a_run_killed_twice_joins_a_segment_of_each_process(tmp_path, script):
    first = _journal(tmp_path, script, _run("p1", 1, 15, (10,)))  # killed after step 15
    second = _journal(tmp_path, script, _run("p2", 1, 25, (20,), first=11), pid=4343)  # went on from 10, killed after 25
    lines = _journal(tmp_path, script, []).earlier(SESSION)
    run = {"run_id": "p3", "seed": 1, "step_times_s": [0.01] * 30}
    chain = own_segments._chain(run, {"run_start_s": None, "first_step": 21, "step_s": [0.01] * 10}, lines, {})
    assert [(s["first_step"], len(s["step_s"]), s["started_at_s"]) for s in chain] == [(1, 10, WALL), (11, 10, WALL)]
    assert chain[0]["run_start_s"] is not None and chain[1]["run_start_s"] is None
    assert [s["pid"] for s in chain] == [first.process["pid"], second.process["pid"]]
    at_the_end = {**run, "step_times_s": [0.01] * 20}  # went on from a checkpoint of its last step: no step here
    assert own_segments._chain(at_the_end, None, lines, {}) is None  # not a finished run
    assert [len(s["step_s"]) for s in own_segments._chain(at_the_end, None, lines, {}, began_here=True)] == [10, 10]


def test_the_successors_record_has_a_segment_per_process_unless_the_journal_is_refused(tmp_path, script):
    _journal(tmp_path, script, _run("p1", 1, 7, (3, 6)))  # killed after step 7
    journal, reader = _launched(tmp_path, script, _run("p2", 1, 9, (), first=7), pid=4343)  # went on from 6
    doc = {"runs": [{"run_id": "p2", "seed": 1, "step_times_s": [0.01] * 9,
                     "curve": [{"step": s, "time_s": 0.1 * s} for s in (3, 6, 9)]}],
           "settings": {"session": {"id": SESSION}, "implementation": {"spec": {"warmup_steps": 1}}},
           "system": {"accelerator": {"type": "cpu"}}}
    section = own_segments.record(journal, doc, reader.runs, 4343, {})
    assert [(e["first_step"], len(e["step_s"]), e["pid"]) for e in section["runs"]] == [(1, 6, 4242), (7, 3, 4343)]
    assert all("agree" in e["agreement"] for e in section["runs"]) and journal.notes == []
    other = {**doc, "settings": {**doc["settings"], "session": {"id": "cd34"}}}
    section = own_segments.record(journal, other, reader.runs, 4343, {})
    assert [e["first_step"] for e in section["runs"]] == [7]  # this process's stamps only
    [said] = journal.notes  # one line
    assert said.startswith("the journal is refused: ") and "another session" in said


def test_a_journal_of_another_session_or_command_is_refused(tmp_path, script):
    _journal(tmp_path, script, _run("run1", 1, 3, (3,)))
    with pytest.raises(clock_journal.Refused, match="written for another session"):
        _journal(tmp_path, script, []).earlier("cd34")
    with pytest.raises(clock_journal.Refused, match="another script or other arguments"):
        _journal(tmp_path, script, [], args=("y.json",)).earlier(SESSION)
    script.write_text("pass  # another script\n")
    with pytest.raises(clock_journal.Refused, match="another script or other arguments"):
        _journal(tmp_path, script, []).earlier(SESSION)


# ---------------------------------------------------------------- the command, killed and run again
def _run_own(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``goodbench run-own tests/own_resume_job.py ARGS`` in ``folder``, in a process group of its own
    (the job may kill its whole group)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "suite", "run-own", str(REPO / "tests" / "own_resume_job.py"), *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300, start_new_session=True)


@pytest.mark.slow  # a job killed and run again under run-own, twice: ~1 min
@pytest.mark.parametrize("kill", ["child", "group"])
def test_a_session_killed_and_run_again_under_run_own_is_stamped_in_every_process_and_ranked(tmp_path, kill):
    args = ("own.json", "own.ckpt", "--kill-seed", "2", "--kill-after", "25", *(("--kill-group",) if kill == "group" else ()))
    killed = _run_own(tmp_path, *args)
    if kill == "group":
        assert killed.returncode == -9, killed.stderr  # the launcher went with its child
    else:
        assert killed.returncode == 1 and "the script was ended by signal 9" in killed.stderr, killed.stderr
    # no results: the empty placeholder of the script's reservation, which the same command takes over
    assert (tmp_path / "own.json").stat().st_size == 0 and (tmp_path / "own.ckpt" / clock_journal.NAME).is_file()
    again = _run_own(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    assert "second clock added (2 runs in 3 process segments, the clocks agree), unsigned, valid" in again.stderr
    doc = json.loads((tmp_path / "own.json").read_text())
    assert v.check_document(doc) == []
    one, two = doc["runs"]
    assert [(e["seed"], e["first_step"], len(e["step_s"])) for e in doc["second_clock"]["runs"]] == \
        [(1, 1, 40), (2, 1, 20), (2, 21, 20)]  # seed 1 finished, seed 2 killed after its checkpoint of step 20
    assert len({e["pid"] for e in doc["second_clock"]["runs"]}) == 2
    assert all(clock_cover.stamped(doc, r["run_id"]) for r in (one, two))
    [entry] = pipeline.table([("own.json", doc)]).to_dict(orient="records")
    assert entry["second_clock"] is True and not set(rows.ONE_CLOCK_REASONS) & set(rows.unranked_reasons(entry))
    figures = [f for e in doc["second_clock"]["runs"] for f in e["agreement"]["figures"]]
    later = [f for f in figures if "a later process" in f["what"]]
    assert later  # the successor's evaluations compared from the run's start, across the kill
    for what, among in (("worst", figures), ("worst across the kill", later)):
        f = max(among, key=lambda f: abs(f["own_s"] - f["launcher_s"]))
        print(f"{kill} killed, {what}: {f['what']}: {abs(f['own_s'] - f['launcher_s']):.4f} s of {f['launcher_s']:.4f} s")
    assert len(held_gaps(doc, f"{kill} killed")) == (2 if clock_journal.boot_id() else 0)  # child's, launcher's


@pytest.mark.slow  # a job killed under plain python, then run again under run-own: ~25 s
def test_a_process_run_under_plain_python_leaves_its_part_unstamped_and_the_entry_unranked(tmp_path):
    args = ("own.json", "own.ckpt", "--kill-seed", "2", "--kill-after", "25")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    killed = subprocess.run([sys.executable, str(REPO / "tests" / "own_resume_job.py"), *args], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    again = _run_own(tmp_path, *args)
    assert again.returncode == 0, again.stderr
    notes = [line for line in again.stderr.splitlines() if "has no stamps of the processes before this one" in line]
    assert len(notes) == 2 and "seed 1" in notes[0] and "it is not stamped" in notes[0]
    assert "seed 2" in notes[1] and "stamped from step 21 on only" in notes[1]
    doc = json.loads((tmp_path / "own.json").read_text())
    assert v.check_document(doc) == []
    assert [(e["seed"], e["first_step"]) for e in doc["second_clock"]["runs"]] == [(2, 21)]
    assert not any(clock_cover.stamped(doc, r["run_id"]) for r in doc["runs"])
    [entry] = pipeline.table([("own.json", doc)]).to_dict(orient="records")
    assert entry["second_clock"] is False and rows.UNSTAMPED_REASON in rows.unranked_reasons(entry)
