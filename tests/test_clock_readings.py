"""The ninth trial's cuts of a killed run's downtime (docs/rules.md, "The downtime on the machine's
monotonic clock"; suite/figures/clock_segments.py ``readings_flaw`` and ``ranks_flaw``), each made on
tests/fixtures/own-2-ranks-killed-boot.json, a real 2-rank job killed after step 25 of seed 2 and
run again: seed 2's later attempt (its log, curve, time to train and wall time) moved D s earlier,
with one edit of the second clock's entries from step 21 (rank 0's only, or every rank's)."""
from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from suite.figures import clock_segments
from suite.figures.recompute import recompute_document
from suite.record import mllog
from suite.validate import check_document, check_stored

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BOOT = "own-2-ranks-killed-boot.json"

Edit = Callable[[dict, dict, float], None]  # (the file, an entry of seed 2 from step 21, D)


def _load(name: str = BOOT) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _inside(entry: dict, cut: float) -> None:  # its steps' span and its evaluations, not its first and last edges
    entry["span_s"] = [round(t - cut, 7) for t in entry["span_s"]]
    for e in entry["evaluations"]:
        e["start_s"], e["stop_s"] = round(e["start_s"] - cut, 7), round(e["stop_s"] - cut, 7)


def _stamps(entry: dict, cut: float) -> None:
    _inside(entry, cut)
    entry["stamps_s"] = [round(t - cut, 7) for t in entry["stamps_s"]]


def _stamps_child(doc: dict, entry: dict, cut: float) -> None:
    _stamps(entry, cut)
    entry["child_clock_s"] = [round(t - cut, 7) for t in entry["child_clock_s"]]


def _no_child(doc: dict, entry: dict, cut: float) -> None:
    _stamps(entry, cut)
    entry["child_clock_s"] = []


def _one_child(doc: dict, entry: dict, cut: float) -> None:
    _stamps(entry, cut)
    entry["child_clock_s"] = [round(entry["child_clock_s"][1] - cut, 7)]


def _started_mono(doc: dict, entry: dict, cut: float) -> None:
    entry["started_at_s"] -= cut
    entry["launcher_clock_s"] -= cut
    entry["child_clock_s"] = [round(t - cut, 7) for t in entry["child_clock_s"]]


def _before_stamps(doc: dict, entry: dict, cut: float) -> None:
    for before in doc["second_clock"]["runs"]:
        if before["run_id"] == entry["run_id"] and before["first_step"] == 1 and before.get("rank") == entry.get("rank"):
            before["stamps_s"], before["child_clock_s"] = [], []
    entry["started_at_s"] -= cut
    entry["launcher_clock_s"] -= cut


def cut(edit: Edit, by: float, ranks: tuple[int, ...] = (0,), name: str = BOOT) -> dict:
    """The fixture with ``by`` s of seed 2's downtime cut: its later attempt's log, curve, time to train
    and wall time moved, and ``edit`` made to the entries of ``ranks`` from step 21; recomputed."""
    doc = copy.deepcopy(_load(name))
    run = doc["runs"][1]
    events = mllog.parse(run["event_log"])
    later = [i for i, e in enumerate(events) if e.key == "init_start"][1]
    run["event_log"] = [mllog.format_event(mllog.Event(
        time_ms=round(e.time_ms - by * 1000, 3) if i >= later else e.time_ms, event_type=e.event_type, key=e.key,
        value=e.value, metadata=e.metadata, namespace=e.namespace)) for i, e in enumerate(events)]
    for point in run["curve"]:
        if point["step"] > 25:
            point["time_s"] -= by
    for entry in doc["second_clock"]["runs"]:
        if entry["run_id"] == run["run_id"] and entry["first_step"] == 21 and entry.get("rank", 0) in ranks:
            edit(doc, entry, by)
    run["time_to_train_s"] = round(run["time_to_train_s"] - by, 4)
    run["wall_s"] = round(run["wall_s"] - by, 4)
    return json.loads(json.dumps(recompute_document(doc), allow_nan=False))


def _reasons(doc: dict) -> list[tuple[str, str, str]]:
    return [(p.code, p.field, p.reason) for p in check_document(doc)]


def test_the_honest_fixtures_pass_and_their_slack_is_far_inside_the_bounds():
    for name in (BOOT, "own-2-ranks-killed.json"):
        doc = _load(name)
        assert check_document(doc) == [] and check_stored(doc) == ([], [])
        entries = doc["second_clock"]["runs"]
        for entry in entries:
            assert clock_segments.readings_flaw(entry) is None
            first = clock_segments.rank_zero(entries, entry)
            if first is not None:
                assert clock_segments.ranks_flaw(entry, first) is None
                stops = {e["step"]: e["stop_s"] for e in first["evaluations"]}
                assert all(abs(e["stop_s"] - stops[e["step"]]) < 3e-3 for e in entry["evaluations"])  # measured 2.5 ms
            if entry.get("launcher_clock_s") is not None:  # measured: 1.7 ms at most, the child's reading first
                assert all(-2e-3 < c - (entry["launcher_clock_s"] + s) <= 0
                           for c, s in zip(entry["child_clock_s"], entry["stamps_s"], strict=True))


@pytest.mark.parametrize("by", [24.0, 9.0])
def test_a_later_segments_span_and_evaluations_moved_on_rank_0_alone_are_refused(by):
    found = _reasons(cut(lambda doc, entry, d: _inside(entry, d), by))
    assert found, "trial 9's evals-r0 cut passed"
    assert all(code == "second-clock" for code, _, _ in found)
    assert any(field == "second_clock.runs[5]" and reason.startswith("rank 1: run ") and
               f"ends its evaluation at step 30 at 28.808 s on the launcher's clock, rank 0 at {28.806 - by:.3f} s"
               in reason and "(every rank's evaluation ends with a barrier)" in reason for _, field, reason in found), found
    if by > 9.311:  # before the later process's first edge (its first step came 9.311 s after it)
        assert any(field == "second_clock.runs[2]" and "outside its first and last edges' stamps (19.262-29.635 s)"
                   in reason for _, field, reason in found), found


def test_a_later_segments_span_and_evaluations_moved_past_its_first_edge_on_every_rank_are_refused():
    found = _reasons(cut(lambda doc, entry, d: _inside(entry, d), 24.0, ranks=(0, 1)))
    assert [field for _, field, _ in found] == ["second_clock.runs[2]", "second_clock.runs[5]"]
    assert "stamps an edge at 4.573 s, outside its first and last edges' stamps" in found[0][2]


@pytest.mark.parametrize(("edit", "ranks", "lengths"), [(_no_child, (0,), "2 launcher stamps and 0 child readings"),
                                                        (_one_child, (0, 1), "2 launcher stamps and 1 child readings")])
def test_a_later_segments_child_readings_dropped_or_one_are_refused(edit, ranks, lengths):
    found = _reasons(cut(edit, 15.0, ranks))
    assert found[0][:2] == ("second-clock", "second_clock.runs[2]")
    assert found[0][2].endswith(f"entry from step 21 stamps steps with {lengths}, but the launcher records 2 of each "
                                "(its first and its last edge)"), found


def test_an_earlier_segments_stamps_emptied_are_refused():
    found = _reasons(cut(_before_stamps, 5.0))
    assert found[0][:2] == ("second-clock", "second_clock.runs[1]")
    assert "entry from step 1 stamps steps with 0 launcher stamps and 0 child readings" in found[0][2]


def test_rank_0s_stamps_and_child_readings_moved_alone_are_refused_by_rank_1s():
    found = _reasons(cut(_stamps_child, 15.0))
    assert [field for _, field, _ in found] == ["second_clock.runs[5]"]
    assert "ends its evaluation at step 30 at 28.808 s on the launcher's clock, rank 0 at 13.806 s: 15.002 s apart, " \
           "beyond the 0.250 s allowed" in found[0][2]


def test_rank_0s_start_and_monotonic_readings_moved_alone_name_another_launcher():
    found = _reasons(cut(_started_mono, 5.0))
    assert [field for _, field, _ in found] == ["second_clock.runs[5]"]
    assert "names another launcher process than rank 0's entry from step 21 (started_at_s 1795962841.83192, rank 0's " \
           "1795962836.83192), though one launcher stamps every rank" in found[0][2]


def test_a_child_reading_is_the_launchers_stamp_within_the_bound_on_one_boot():
    entry = copy.deepcopy(_load()["second_clock"]["runs"][2])
    entry["child_clock_s"][1] += clock_segments.READING_S * 0.9
    assert clock_segments.readings_flaw(entry) is None
    entry["child_clock_s"][1] += clock_segments.READING_S * 0.2
    assert "reads its last edge at" in (clock_segments.readings_flaw(entry) or "")
    entry["boot_id"] = None  # no boot id: not compared (a machine without one)
    assert clock_segments.readings_flaw(entry) is None


def test_every_monotonic_reading_moved_alike_on_every_rank_stays_self_reported():
    """What docs/rules.md says stays the submitter's: the stamps and the child's readings moved together on
    every rank (trial 9's stamps+child, every rank) pass, as every monotonic reading edited alike."""
    assert check_document(cut(_stamps_child, 15.0, ranks=(0, 1))) == []


def test_an_entry_without_steps_holds_a_child_reading_with_each_stamp():
    entry = copy.deepcopy(_load()["second_clock"]["runs"][1])
    entry.update(step_s=[], span_s=[], evaluations=[], first_step=0)
    assert "stamps the run's start with 2 launcher stamps and 1 child readings" in (
        clock_segments.readings_flaw({**entry, "child_clock_s": entry["child_clock_s"][:1]}) or "")
    entry["run_start_s"] = None
    assert clock_segments.readings_flaw({**entry, "stamps_s": entry["stamps_s"][:1], "child_clock_s": entry["child_clock_s"][:1]}) is None
    assert "holds 1 launcher stamps and 0 child readings" in (
        clock_segments.readings_flaw({**entry, "stamps_s": entry["stamps_s"][:1], "child_clock_s": []}) or "")


def test_an_evaluation_moved_off_its_place_between_the_steps_is_refused():
    """An evaluation lies between its step's end and the next step's begin: the span's start plus the
    steps up to it, the span's end less the steps after it (an evaluation at the segment's last step
    after the span's end). Moving the evaluations alone earlier, not the span, is refused."""
    entries = _load()["second_clock"]["runs"]
    honest = min(e["evaluations"][0]["start_s"] - e["span_s"][0] - sum(e["step_s"][:e["evaluations"][0]["step"]
                                                                                   - e["first_step"] + 1])
                 for e in entries)
    assert honest > 0.06  # measured: 64.8 ms at least before the earliest evaluation could begin
    entry = copy.deepcopy(entries[2])
    for e in entry["evaluations"]:
        e["start_s"], e["stop_s"] = e["start_s"] - 1.0, e["stop_s"] - 1.0
    assert (clock_segments.readings_flaw(entry) or "").startswith(
        "stamps its evaluation at step 30 at 27.798-27.806 s, not between step 30's end (at 28.7"), entry
    last = copy.deepcopy(entries[2])
    last["evaluations"][-1]["start_s"] = last["span_s"][1] - 0.01
    assert "evaluation at step 40" in (clock_segments.readings_flaw(last) or "")
