"""The downtime of a run killed and run again under ``goodbench run-own``, held against the machine's
monotonic clocks (docs/rules.md, "A second clock"; suite/figures/clock_segments.py): consecutive
segments of one boot id may not have their gap shorter on the launchers' wall clocks than on the
children's or launchers' ``perf_counter`` (CLOCK_MONOTONIC on Linux, machine-wide).

tests/fixtures/own-2-ranks-killed-boot.json is a real 2-rank job of tests/own_resume_job.py killed
after step 25 of seed 2 and run again (``goodbench run-own --nproc-per-node 2 tests/own_resume_job.py
own.json own.ckpt --kill-seed 2 --kill-after 25``, twice), written by a goodbench recording boot ids;
tests/fixtures/own-2-ranks-killed.json is the same job written before (no boot ids: an older file)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from suite.figures import clock_segments
from suite.figures.recompute import recompute_document
from suite.record import mllog
from suite.run import clock_journal
from suite.validate import check_document, check_stored

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _pairs(doc: dict) -> list[tuple[dict, dict]]:
    entries = doc["second_clock"]["runs"]
    return [(a, b) for i, a in enumerate(entries) for b in entries[i + 1:]
            if a["run_id"] == b["run_id"] and a.get("rank", 0) == b.get("rank", 0)]


def held_gaps(doc: dict, label: str) -> list[float]:
    """Every gap between consecutive segments of ``doc`` on a monotonic clock less the wall clocks'
    (seconds), printed; each segment of this machine names its boot id (where it has one)."""
    assert all(e.get("boot_id") == clock_journal.boot_id() for e in doc["second_clock"]["runs"])
    found = []
    for before, after in _pairs(doc):
        got = clock_segments.gaps(before, after)
        if got is None:
            continue
        wall, monotonic = got
        found += [wall - gap for gap in monotonic.values()]
        print(f"{label}: rank {after.get('rank', 0)}, seed {after['seed']}: a gap of {wall:.3f} s on the wall clocks, "
              + ", ".join(f"{(wall - gap) * 1e3:+.3f} ms on the {which}'s" for which, gap in monotonic.items()))
    assert all(abs(d) < clock_segments.GAP_S for d in found)
    held_readings(doc, label)
    return found


def held_readings(doc: dict, label: str) -> None:
    """Each entry's child readings less its launcher's stamps on the monotonic clock, and each rank's
    evaluation stops less rank 0's (trial 9: clock_segments.readings_flaw, ranks_flaw), printed."""
    entries = doc["second_clock"]["runs"]
    readings, ranks = [], []
    for entry in entries:
        assert clock_segments.readings_flaw(entry) is None
        if entry.get("launcher_clock_s") is not None:
            readings += [c - entry["launcher_clock_s"] - s for c, s in zip(entry["child_clock_s"], entry["stamps_s"],
                                                                           strict=True)]
        first = clock_segments.rank_zero(entries, entry)
        if first is not None:
            assert clock_segments.ranks_flaw(entry, first) is None
            stops = {e["step"]: e["stop_s"] for e in first["evaluations"]}
            ranks += [e["stop_s"] - stops[e["step"]] for e in entry["evaluations"] if e["step"] in stops]
    print(f"{label}: child readings less the launcher's stamps {min(readings, default=0) * 1e3:+.3f} to "
          f"{max(readings, default=0) * 1e3:+.3f} ms; ranks' evaluation stops less rank 0's "
          f"{max((abs(r) for r in ranks), default=0) * 1e3:.3f} ms at most")


def _cut_downtime(doc: dict, wall: float = 2.0, stamps: float = 6.3, child: float = 0.0, launcher: float = 0.0) -> dict:
    """Trial 8's t9 forgery: seed 2's second process moved ``wall`` s earlier on its launcher's wall
    clock and its stamps ``stamps`` s earlier, its log, curve and times shifted to match (on every
    rank); optionally its child's and launcher's monotonic readings moved too."""
    doc = copy.deepcopy(doc)
    run = doc["runs"][1]
    events = mllog.parse(run["event_log"])
    k = next(i for i, e in enumerate(events) if i > 0 and e.key == "init_start")
    cut = wall + stamps
    run["event_log"] = [mllog.format_event(mllog.Event(
        time_ms=e.time_ms - cut * 1000 if i >= k else e.time_ms, event_type=e.event_type, key=e.key, value=e.value,
        metadata=e.metadata, namespace=e.namespace)) for i, e in enumerate(events)]
    for e in doc["second_clock"]["runs"]:
        if e["run_id"] == run["run_id"] and e["first_step"] == 21:
            e["started_at_s"] -= wall
            e["span_s"] = [t - stamps for t in e["span_s"]]
            e["stamps_s"] = [t - stamps for t in e["stamps_s"]]
            for ev in e["evaluations"]:
                ev["start_s"] -= stamps
                ev["stop_s"] -= stamps
            e["child_clock_s"] = [t - child for t in e["child_clock_s"]]
            if e.get("launcher_clock_s") is not None:
                e["launcher_clock_s"] -= launcher
    for point in run["curve"]:
        if point["step"] > 25:
            point["time_s"] -= cut
    run["time_to_train_s"] -= cut
    run["wall_s"] -= cut
    run["phases_s"]["other"] -= cut
    return json.loads(json.dumps(recompute_document(doc), allow_nan=False))


def test_an_honest_killed_job_records_its_boot_and_its_gaps_agree_within_a_millisecond():
    doc = _load("own-2-ranks-killed-boot.json")
    assert check_document(doc) == []
    entries = doc["second_clock"]["runs"]
    assert len({e["boot_id"] for e in entries}) == 1 and all(isinstance(e["launcher_clock_s"], float) for e in entries)
    pairs = _pairs(doc)
    assert len(pairs) == 2  # seed 2 on ranks 0 and 1
    for before, after in pairs:
        found = clock_segments.gaps(before, after)
        assert found is not None
        wall, monotonic = found
        assert wall > 10 and set(monotonic) == {"child", "launcher"}
        assert all(abs(wall - gap) < 1e-3 for gap in monotonic.values()), (wall, monotonic)  # measured: 0.26 ms at most


def test_an_older_file_without_boot_ids_passes_as_before_and_is_not_compared():
    doc = _load("own-2-ranks-killed.json")
    assert not any("boot_id" in e for e in doc["second_clock"]["runs"])
    assert check_document(doc) == [] and check_stored(doc) == ([], [])
    assert all(clock_segments.gaps(a, b) is None for a, b in _pairs(doc))
    assert check_document(_cut_downtime(doc)) == []  # the hole stays open for files written before boot ids


def test_the_downtime_cut_out_of_a_killed_run_is_refused_on_every_rank():
    doc = _cut_downtime(_load("own-2-ranks-killed-boot.json"))
    run_id = doc["runs"][1]["run_id"]
    problems = check_document(doc)
    assert [(p.code, p.field) for p in problems] == [("second-clock", "second_clock.runs[1]"),
                                                     ("second-clock", "second_clock.runs[4]"),
                                                     ("second-clock", "second_clock.runs[2]"),
                                                     ("second-clock", "second_clock.runs[5]")]
    # and each later entry's stamps, moved without its child's readings (trial 9: clock_segments.readings_flaw)
    assert all("reads its first edge at" in p.reason and "6.300 s apart" in p.reason for p in problems[2:])
    assert problems[0].reason.startswith(
        f"run {run_id}'s segments across processes: segments 0 and 1 ran on one boot, but the launchers' wall "
        "clocks put 16.481 s between them and the child's monotonic clock 24.781 s: downtime cut by 8.300 s, "
        "beyond the 0.262 s allowed"), problems[0].reason
    assert problems[1].reason.startswith(f"rank 1: run {run_id}'s segments across processes: segments 0 and 1 ran "
                                         "on one boot"), problems[1].reason
    assert "\n" not in problems[0].reason


def test_a_cut_that_moves_the_childs_clock_too_is_refused_by_the_launchers():
    doc = _cut_downtime(_load("own-2-ranks-killed-boot.json"), child=8.3)
    reasons = [p.reason for p in check_document(doc)]
    assert len(reasons) == 4 and all("and the launcher's monotonic clock 18.4" in r and "downtime cut by 2.000 s" in r
                                     for r in reasons[:2]), reasons  # its launcher's wall clock at its start moved 2 s
    assert all("2.000 s apart" in r for r in reasons[2:]), reasons  # the child's readings, not the launcher's stamps
    consistent = _cut_downtime(_load("own-2-ranks-killed-boot.json"), child=8.3, launcher=2.0)
    assert check_document(consistent) == []  # every monotonic record edited alike: self-reported (docs/rules.md)


def test_segments_of_other_boots_or_none_are_not_compared():
    for boots in (("a", "b"), (None, None)):
        doc = copy.deepcopy(_load("own-2-ranks-killed-boot.json"))
        for e in doc["second_clock"]["runs"]:
            e["boot_id"] = boots[e["first_step"] == 21]
        # within one process the child's readings are the launcher's stamps on one clock, whatever the boot
        # (trial 9): the cut must move them too, and then segments of other boots are not compared
        found = check_document(_cut_downtime(doc))
        assert (found == []) == (boots[1] is None) and all("6.300 s apart" in p.reason for p in found)
        assert check_document(_cut_downtime(doc, child=6.3)) == []


def _segment(at: float, started: float, stamps: list[float], boot: str | None = "b") -> dict:
    return {"boot_id": boot, "started_at_s": started, "stamps_s": stamps,
            "child_clock_s": [at + s for s in stamps], "launcher_clock_s": at}


@pytest.mark.parametrize(("wall_cut", "refused"), [(0.0, False), (0.2, False), (0.3, True)])
def test_the_gap_may_be_shorter_on_the_wall_clock_by_the_stated_bound_only(wall_cut, refused):
    before, after = _segment(100.0, 1000.0, [1.0, 5.0]), _segment(200.0, 1100.0 - wall_cut, [2.0, 3.0])
    assert (clock_segments.gap_flaw(before, after) is not None) == refused


def test_the_bound_grows_with_the_gap_and_a_longer_wall_clock_gap_is_let_be():
    day = 86_400.0
    before, after = _segment(100.0, 1000.0, [1.0]), _segment(100.0 + day, 1000.0 + day - 40.0, [1.0])
    assert clock_segments.gap_flaw(before, after) is None  # 40 s < 0.25 s + 500 ppm of a day (43.45 s)
    after["started_at_s"] -= 5.0
    assert "downtime cut by 45.000 s, beyond the 43.450 s allowed" in clock_segments.gap_flaw(before, after)
    suspended = _segment(200.0, 1000.0 + 3600.0, [1.0])  # the machine asleep for an hour between them
    assert clock_segments.gap_flaw(before, suspended) is None


def test_the_journal_records_the_boot_and_the_launchers_monotonic_clock(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    journal = clock_journal.Journal(str(script), [])
    journal.started(7, 1_800_000_000.0, 1234.5)
    assert journal.process["launcher_clock_s"] == 1234.5
    assert journal.process["boot_id"] == clock_journal.boot_id()
    if Path(clock_journal.BOOT_ID).is_file():
        assert journal.process["boot_id"] == Path(clock_journal.BOOT_ID).read_text().strip()
    line = {"journal": 1, "session": "s", "script": journal.binding["script"], "args": [], **journal.process,
            "run_id": "r", "seed": 1, "kind": "start", "through": 0, "first_step": 0, "run_start_s": 1.0,
            "step_s": [], "span_s": [], "evaluations": [], "child_clock_s": [1.0], "stamps_s": [1.0]}
    assert clock_journal.misfit(line, "s", journal.binding) is None
    older = {k: v for k, v in line.items() if k not in ("boot_id", "launcher_clock_s")}
    assert clock_journal.misfit(older, "s", journal.binding) is None
    for bad in ({"boot_id": 5}, {"boot_id": ""}, {"launcher_clock_s": "x"}):
        assert clock_journal.misfit({**line, **bad}, "s", journal.binding) == "is malformed"
