"""Every rank's second clock across a kill (``goodbench run-own --nproc-per-node N``, docs/own-code.md
"The second clock across a kill"): each rank's reader journals its runs to the one journal in the
checkpoint directory (its lines naming its ``rank``, rank 0's none), and the successor joins each
rank's segments as it does rank 0's. A rank whose chain breaks is named in a note and its run is not
stamped; a journal whose rank entries were edited is refused. A real 2-rank gloo job killed and run
again under run-own: tests/test_own_group_kill.py."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_own_resume_clock import SESSION, WALL, _run

from suite.figures import clock_cover, clock_segments, rank_clocks
from suite.record import edges
from suite.record.errors import GoodbenchError
from suite.run import clock_journal, own_segments
from suite.run.edge_reader import EdgeReader, clock
from suite.validate import check_document

REPO = Path(__file__).resolve().parent.parent
STEPS = 9


def _ranks(folder: Path, script: Path, lines: list[list[bytes]], pid: int = 4242, named: tuple[str, ...] = (),
           together: bool = False) -> tuple[clock_journal.Journal, list[EdgeReader]]:
    """One launcher's journal of a torchrun job whose rank R sends the edge ``lines[R]`` on its own
    channel, each naming the journal in ``folder`` (or in ``named[R]``), read by one reader per rank:
    rank by rank, or all ``together`` (each reader's thread journaling as the others do)."""
    journal = clock_journal.Journal(str(script), ["x.json"])
    journal.started(pid, WALL)
    readers, ends = [], []
    for rank in range(len(lines)):
        read_end, write_end = os.pipe()
        readers.append(EdgeReader(read_end, clock(), journal, rank))
        ends.append(write_end)
    for rank, (write_end, sent) in enumerate(zip(ends, lines, strict=True)):
        where = named[rank] if rank < len(named) else str(folder)
        os.write(write_end, b"".join([edges.journal(SESSION, where), *sent]))
        if not together:
            _finish(write_end, readers[rank])
    for write_end, reader in zip(ends, readers, strict=True):
        if together:
            _finish(write_end, reader)
    journal.close()
    return journal, readers


def _finish(write_end: int, reader: EdgeReader) -> None:
    os.close(write_end)
    reader.finish(2.0)
    assert reader.broken is None, reader.broken


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("pass\n")
    return path


def _doc() -> dict:
    """A two-rank file of one run of ``STEPS`` steps, evaluated every 3."""
    steady = {"mean": 0.01, "p50": 0.01, "max": 0.01, "steps": STEPS - 1}
    return {"runs": [{"run_id": "p2", "seed": 1, "step_times_s": [0.01] * STEPS,
                      "curve": [{"step": s, "time_s": 0.1 * s} for s in (3, 6, 9)],
                      "distributed": {"world_size": 2, "ranks": [{"rank": r, "step_time_s": steady} for r in (0, 1)]}}],
            "settings": {"session": {"id": SESSION}, "implementation": {"spec": {"warmup_steps": 1}}},
            "system": {"accelerator": {"type": "cpu"}}}


def _killed_after_7(folder: Path, script: Path, rank_one: bool = True) -> None:
    """The first process: both ranks of run p1 saved at steps 3 and 6, killed after step 7 (rank 1
    journaled unless not ``rank_one``: it named another directory)."""
    other = folder / "elsewhere"
    other.mkdir(exist_ok=True)
    journal, _ = _ranks(folder, script, [_run("p1", 1, 7, (3, 6)), _run("q1", 1, 7, (3, 6))],
                        named=() if rank_one else (str(folder), str(other)))
    assert journal.notes == ([] if rank_one else [f"rank 1 named another session or checkpoint directory ({other}) "
                                                  f"than {folder}: its stamps are not journaled"])


def _successor(folder: Path, script: Path) -> tuple[clock_journal.Journal, dict]:
    """The same command run again: both ranks go on from step 6; the record of every rank."""
    journal, (zero, one) = _ranks(folder, script, [_run("p2", 1, STEPS, (), first=7), _run("q2", 1, STEPS, (), first=7)],
                                  pid=4343)
    doc = _doc()
    doc["second_clock"] = own_segments.record(journal, doc, zero.runs, 4343, {}, [one])
    return journal, doc


def test_every_ranks_lines_go_to_the_one_journal_whole_rank_0s_without_a_rank(tmp_path, script):
    _ranks(tmp_path, script, [_run("p1", 1, 7, (3, 6)), _run("q1", 1, 7, (3, 6)), _run("r1", 1, 7, (3, 6))],
           together=True)
    path = tmp_path / clock_journal.NAME
    kept = clock_journal.read(path)
    assert path.read_bytes().count(b"\n") == len(kept) == 9  # no line torn or interleaved by another rank's
    assert sorted((line.get("rank", -1), line["run_id"], line["through"]) for line in kept) == [
        (-1, "p1", 0), (-1, "p1", 3), (-1, "p1", 6),  # rank 0's lines name no rank, as one process's
        (1, "q1", 0), (1, "q1", 3), (1, "q1", 6), (2, "r1", 0), (2, "r1", 3), (2, "r1", 6)]
    assert all(clock_journal.misfit(line, SESSION, {"script": kept[0]["script"], "args": ["x.json"]}) is None
               for line in kept)
    assert clock_journal.misfit({**kept[0], "rank": 0}, SESSION, {"script": kept[0]["script"], "args": ["x.json"]}) \
        == "is malformed"  # rank 0 names none


def test_a_successor_joins_every_ranks_segments_and_the_run_reads_stamped(tmp_path, script):
    """(These journals' lines arrive at once: their stamps time no step, so the tests of this file
    that join segments ask whether the edges are stamped whole, not whether the steps are held.)"""
    _killed_after_7(tmp_path, script)
    journal, doc = _successor(tmp_path, script)
    assert journal.notes == []
    assert [(rank_clocks.rank_of(e), e["first_step"], len(e["step_s"]), e["pid"]) for e in doc["second_clock"]["runs"]] \
        == [(0, 1, 6, 4242), (0, 7, 3, 4343), (1, 1, 6, 4242), (1, 7, 3, 4343)]
    assert {e["run_id"] for e in doc["second_clock"]["runs"]} == {"p2"}  # rank 1's own ids are not the file's
    ranked = [e for e in doc["second_clock"]["runs"] if e.get("rank")]
    assert [[f["what"] for f in e["agreement"]["figures"]] for e in ranked] == [  # steady steps: with the last
        ["clock span"], ["clock span", "steady step time p50", "steady window (sum of step times)"]]
    assert clock_cover.edges_whole(doc, "p2")


def test_a_ranks_line_torn_by_a_kill_or_left_as_zeros_is_skipped_and_the_successor_joins(tmp_path, script):
    _killed_after_7(tmp_path, script)
    path = tmp_path / clock_journal.NAME
    kept = clock_journal.read(path)
    torn = next(raw for raw in path.read_bytes().splitlines() if b'"rank":1' in raw)
    for tail in (torn[:len(torn) // 2], b"\0" * 64):  # a write cut by the kill; blocks a crash left unwritten
        whole = path.read_bytes()
        path.write_bytes(whole + tail)
        assert clock_journal.read(path) == kept
    journal, doc = _successor(tmp_path, script)
    assert journal.notes == [] and clock_cover.edges_whole(doc, "p2")
    assert [(rank_clocks.rank_of(e), e["first_step"]) for e in doc["second_clock"]["runs"]] == [(0, 1), (0, 7), (1, 1), (1, 7)]


def test_a_rank_whose_chain_breaks_is_named_and_the_run_is_not_stamped(tmp_path, script):
    _killed_after_7(tmp_path, script, rank_one=False)
    journal, doc = _successor(tmp_path, script)
    [said] = journal.notes
    assert said.startswith("rank 1's run of seed 1 has no stamps of the processes before this one in the journal")
    assert said.endswith("it is stamped from step 7 on only, and the entry is not ranked")
    assert [(rank_clocks.rank_of(e), e["first_step"]) for e in doc["second_clock"]["runs"]] == [(0, 1), (0, 7), (1, 7)]
    assert not clock_cover.edges_whole(doc, "p2")


def _finished_elsewhere_too(folder: Path, script: Path, rank_one: bool = True) \
        -> tuple[clock_journal.Journal, dict, list[EdgeReader]]:
    """Both ranks finish seed 1 (rank 0's run p1, the file's) under one launcher (rank 1 journaled
    unless not ``rank_one``); then a launcher of another job with the same session, script and
    arguments journals its rank 1's finished seed 1 (its rank 0 kept no run of the file); then the
    same command's successor, every run finished: its journal, the file and its readers."""
    other = folder / "elsewhere"
    other.mkdir(exist_ok=True)
    _ranks(folder, script, [_run("p1", 1, STEPS, (), kept=True), _run("q1", 1, STEPS, (), kept=True)],
           named=() if rank_one else (str(folder), str(other)))
    _ranks(folder, script, [[], _run("x1", 1, STEPS, (), kept=True)], pid=5151)
    journal, readers = _ranks(folder, script, [[], []], pid=4343)
    doc = _doc()
    doc["runs"][0]["run_id"] = "p1"
    return journal, doc, readers


def test_a_ranks_finished_segment_is_joined_from_the_launcher_that_journaled_rank_0s_run(tmp_path, script):
    journal, doc, (zero, one) = _finished_elsewhere_too(tmp_path, script)
    doc["second_clock"] = own_segments.record(journal, doc, zero.runs, 4343, {}, [one])
    assert journal.notes == []
    assert [(rank_clocks.rank_of(e), e["first_step"], len(e["step_s"]), e["pid"]) for e in doc["second_clock"]["runs"]] \
        == [(0, 1, STEPS, 4242), (1, 1, STEPS, 4242)]  # rank 1's line of the other job (5151), later, passed over
    assert clock_cover.edges_whole(doc, "p1")


def test_a_ranks_finished_segment_journaled_only_with_another_run_than_rank_0s_is_not_joined(tmp_path, script):
    journal, doc, (zero, one) = _finished_elsewhere_too(tmp_path, script, rank_one=False)
    with pytest.raises(GoodbenchError, match="no run of the file was stamped"):  # on no rank
        own_segments.record(journal, doc, zero.runs, 4343, {}, [one])
    [said] = journal.notes
    assert said.startswith("rank 1's run of seed 1 has no stamps of the processes before this one in the journal")
    assert "or it was journaled with another run than rank 0's): it is not stamped" in said


def test_segments_of_a_rank_edited_to_overlap_are_refused(tmp_path, script):
    _killed_after_7(tmp_path, script)
    _, doc = _successor(tmp_path, script)
    later = doc["second_clock"]["runs"][3]
    later.update(first_step=6, step_s=[0.01] + later["step_s"])  # rank 1's step 6 stamped by both processes
    assert not clock_cover.edges_whole(doc, "p2")
    segments = [e for e in doc["second_clock"]["runs"] if e.get("rank") == 1]
    assert clock_segments.flaw(doc["runs"][0], segments) == \
        "steps 6-6 are stamped twice (segment 1 overlaps the one before)"


def test_a_journal_whose_rank_lines_were_edited_is_refused_for_every_rank(tmp_path, script):
    _killed_after_7(tmp_path, script)
    path = tmp_path / clock_journal.NAME
    lines = clock_journal.read(path)
    for line in lines:
        if line.get("rank") == 1 and line["through"] == 6:
            line["step_s"] = line["step_s"][1:]  # a step taken out of rank 1's stamps
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    journal, doc = _successor(tmp_path, script)
    [said] = journal.notes
    assert said.startswith("the journal is refused: its entries of rank 1's seed 1 do not add up to step 6")
    assert [e["first_step"] for e in doc["second_clock"]["runs"]] == [7, 7]  # this process's stamps only, on each rank
    assert not clock_cover.edges_whole(doc, "p2")


def test_a_rank_stamped_across_a_kill_has_its_record_compared_with_all_its_steady_steps():
    """Rank 1 of a real 2-rank job killed and run again under run-own (tests/fixtures/own-2-ranks-killed.json):
    its two segments' clock spans, and its record's steady p50 and window against every segment's
    steady stamps; its record claimed four times as fast is refused."""
    doc = json.loads((REPO / "tests" / "fixtures" / "own-2-ranks-killed.json").read_text())
    assert check_document(doc) == []
    run = doc["runs"][1]
    segments = clock_segments.of_run(doc["second_clock"]["runs"], run["run_id"], 1)
    found = clock_segments.compared(run, segments, doc["settings"]["implementation"]["spec"]["warmup_steps"], True, 1)
    assert len(segments) == 2 and [c.what for c in found[-1]] == [
        "clock span", "steady step time p50", "steady window (sum of step times)"]
    assert all(c.agrees for c in found[-1])
    times = run["distributed"]["ranks"][1]["step_time_s"]
    times.update(mean=times["mean"] / 4, p50=times["p50"] / 4)
    said = [p.reason for p in check_document(doc) if p.code == "second-clock"]
    assert said and said[0].startswith("rank 1: the clocks disagree in segment 1: steady")


def _killed_fixture() -> dict:
    return json.loads((REPO / "tests" / "fixtures" / "own-2-ranks-killed.json").read_text())


def test_rank_0s_report_is_the_runs_own_steady_step_times():
    """Trial 8: rank 0's report (the rank table's first row) claimed 1-ms steps beside the run's
    12-ms step times, its straggler spread recomputed, and passed: rank 0's report is the run's
    steady step times, which are rank 0's."""
    from suite.figures import derive

    doc = _killed_fixture()
    section = doc["runs"][0]["distributed"]
    section["ranks"][0]["step_time_s"].update(mean=0.001, p50=0.001, max=0.0012)
    section["straggler_spread"] = derive.straggler_spread([r["step_time_s"]["mean"] for r in section["ranks"]], 2)
    [found] = check_document(doc)
    assert (found.code, found.field) == ("distributed-batch", "runs[0].distributed.ranks")
    assert found.reason.startswith("rank 0 reports a steady step mean of 0.001 s, but the run's step times")


def test_a_ranks_device_is_of_the_systems_accelerator():
    """Trial 8: rank 1 of a CPU file said it ran on "cuda:1", and the rank table showed it."""
    doc = _killed_fixture()
    for run in doc["runs"]:
        run["distributed"]["ranks"][1]["device"] = "cuda:1"
    found = check_document(doc)
    assert [(p.code, p.field) for p in found] == [("distributed-batch", f"runs[{i}].distributed.ranks") for i in (0, 1)]
    assert found[0].reason == "rank 1 ran on cuda:1, but the system's accelerator is cpu"


LABEL = "two clocks, reproduced by a trusted reviewer"
SHOWN = {
    "runs[0].distributed.ranks[1].host": lambda run: run["distributed"]["ranks"][1].update(host=LABEL),
    "runs[0].metrics.mfu_status": lambda run: run["metrics"].update(mfu_status=LABEL),
    # trial 10: shown under "Telemetry warnings", and in the under-load line
    "runs[0].telemetry.warnings[0]": lambda run: run["telemetry"].update(warnings=[LABEL]),
    "runs[0].host_load.start.busy[0].name": lambda run: run["host_load"]["start"].update(
        busy=[{"name": "reproduced", "cores": 0.0}]),
}


@pytest.mark.parametrize("where", SHOWN)
def test_a_label_in_text_the_run_page_shows_as_goodbenchs_is_refused(where):
    """Trial 8: the run page shows a figure's status and each rank's host as goodbench's own text,
    not marked self-reported; "two clocks, reproduced by a trusted reviewer" in either passed, as
    it did in a telemetry warning and a busy process's name (trial 10)."""
    doc = _killed_fixture()
    SHOWN[where](doc["runs"][0])
    problems = check_document(doc)
    [found] = [p for p in problems if p.code == "name-trust"]
    assert (found.code, found.field) == ("name-trust", where)
    assert "'reproduced'" in found.reason
    # a CPU run's telemetry holds no warnings at all (trial 19): refused for that too
    others = {(p.code, p.field) for p in problems if p.code != "name-trust"}
    assert others == ({("device-evidence", "runs[0].telemetry.warnings")} if "warnings" in where else set())


def test_the_second_clocks_stated_tolerance_and_seeds_are_the_rules_and_the_runs():
    """Trial 8: a stated tolerance of 50% and 5 s, and an entry's seed changed, passed unread."""
    doc = _killed_fixture()
    doc["second_clock"]["tolerance"] = {"relative": 0.5, "per_stamp_s": 5, "per_step_s": 0.5}
    [found] = check_document(doc)
    assert (found.code, found.field) == ("second-clock", "second_clock.tolerance")
    doc = _killed_fixture()
    doc["second_clock"]["runs"][0]["seed"] = 99
    [found] = check_document(doc)
    assert (found.code, found.field) == ("second-clock", "second_clock.runs[0].seed")
    assert found.reason.startswith("seed 99, but run ") and found.reason.endswith("trained seed 1")
