"""What own code's file is said to be, everywhere it is shown: ``goodbench run-own``'s last line says
the board's verdict where its clocks agree but the board still counts it as one clock (a CPU's steps
shorter than the second clock holds), from the board's own decision; submit, compare and the run page
give the reason that applies to the file, not "A or B"; a free job reads as one."""
from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from suite.cli import main
from suite.compare import report
from suite.figures import clock_cover
from suite.leaderboard import pipeline, rows
from suite.run import own_outcome
from suite.site import columns, labels, run_page

FIXTURE = Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json"  # a CPU free job, run-own stamped


def _doc() -> dict:
    return json.loads(FIXTURE.read_text())


def _shortened(doc: dict, factor: float = 0.1) -> dict:
    """``doc`` with its steps claimed ``factor`` times as long: under the 5 ms the clock holds."""
    for run in doc["runs"]:
        run["step_times_s"] = [t * factor for t in run["step_times_s"]]
        run["metrics"]["throughput"]["step_time_s"]["p50"] *= factor
    return doc


def _entry(doc: dict) -> dict:
    [entry] = pipeline.table([("own.json", doc)]).to_dict(orient="records")
    return entry


def test_run_own_says_nothing_more_of_a_file_the_board_counts_as_two_clocks():
    doc = _doc()
    assert _entry(doc)["second_clock"] is True
    assert own_outcome.one_clock_why(doc) is None


def test_run_own_says_why_the_board_counts_short_steps_as_one_clock():
    doc = _shortened(_doc())
    assert _entry(doc)["second_clock"] is False  # the board's verdict, which the line must say
    p50s = [run["metrics"]["throughput"]["step_time_s"]["p50"] for run in doc["runs"]]
    why = own_outcome.one_clock_why(doc)
    assert why is not None and why.startswith("the median steps of seed 1, seed 2 (")
    assert f"({1000 * p50s[0]:.1f} ms, {1000 * p50s[1]:.1f} ms) are under the 5 ms the second clock holds on a CPU" in why
    assert why.endswith("so the board counts it as one clock (self-timed), never ranked: its times are its own "
                        "process's word")
    assert "not stamped whole" not in why  # only the reason that applies


def test_run_own_says_why_steps_each_claimed_a_few_milliseconds_short_are_one_clock():
    """Trial 16, finding E: rank 0's steps (about 12 ms) each claimed 5.5 ms shorter than stamped,
    within the per-step allowance (5 ms + 5%) and their median still over 5 ms: their sum is not
    held, and the line says so."""
    doc = _doc()
    for run in doc["runs"]:
        run["step_times_s"] = [t - 0.0055 for t in run["step_times_s"]]
        run["metrics"]["throughput"]["step_time_s"]["p50"] -= 0.0055
    assert all(clock_cover.claimed_p50(run) >= 0.005 for run in doc["runs"])
    entry = _entry(doc)
    assert entry["second_clock"] is False and entry["steps_sum"] is True and entry["short_steps"] is False
    why = own_outcome.one_clock_why(doc)
    assert why is not None and why.startswith("the steady steps of seed 1, seed 2 add up to ")
    assert "further apart than the 5% + 75 ms the second clock holds a run's steps to" in why
    # its own words wherever it is shown, not those of steps too short for the clock (found by reason, not text)
    assert {clock_cover.steps_flaw(doc, r) for r in doc["runs"]} == {clock_cover.SUM_OFF}
    assert rows.unranked_reasons(entry)[-1] == rows.STEPS_SUM_REASON
    assert labels.STEPS_SUM in columns._own_text(entry) and labels.SHORT_STEPS not in columns._own_text(entry)
    badges = [b["words"] for c in columns.cell("system", entry, "", None)["caveats"] for b in c.get("badges") or []]
    assert "steps' sum disagrees, never ranked" in badges and "steps too short, never ranked" not in badges
    page = run_page.run_context("own.json", doc, doc["runs"][0])
    assert page["own_timing"] == labels.STEPS_SUM and page["own_steps_sum"] and not page["own_short_steps"]
    assert report._identity(doc).endswith(report.CLOCK_GAPS["steps' sum disagrees"])
    rerun = labels.own_timing(False, False, reproduction=True, steps_sum=True)
    assert rerun == labels.REPRODUCTION_STEPS_SUM and "one clock: its steps' sum and the launcher's disagree" in rerun
    assert "median step" not in why and "not stamped whole" not in why


def test_run_own_says_which_run_its_clock_did_not_stamp_whole():
    doc = _doc()
    first = doc["runs"][0]["run_id"]
    doc["second_clock"]["runs"] = [e for e in doc["second_clock"]["runs"] if e["run_id"] != first]
    assert not clock_cover.stamped(doc, first) and _entry(doc)["second_clock"] is False
    why = own_outcome.one_clock_why(doc)
    assert why is not None and why.startswith(f"seed {doc['runs'][0]['seed']} was not stamped whole")
    assert "median step" not in why


def test_submit_gives_the_one_reason_that_applies():
    short, unstamped = _entry(_shortened(_doc())), _entry({k: v for k, v in _doc().items() if k != "second_clock"})
    assert short["short_steps"] is True and short["clock_gaps"] is False
    assert unstamped["clock_gaps"] is True and not unstamped["short_steps"]
    short_reasons, unstamped_reasons = rows.unranked_reasons(short), rows.unranked_reasons(unstamped)
    assert rows.SHORT_STEPS_REASON in short_reasons and rows.UNSTAMPED_REASON not in short_reasons
    assert rows.UNSTAMPED_REASON in unstamped_reasons and rows.SHORT_STEPS_REASON not in unstamped_reasons
    assert rows.ONE_CLOCK_REASON not in short_reasons + unstamped_reasons  # the text of "A or B"
    assert ", or on a CPU" in rows.ONE_CLOCK_REASON and ", or " not in rows.SHORT_STEPS_REASON + rows.UNSTAMPED_REASON
    unknown = {**short, "short_steps": None, "clock_gaps": None}  # a row that does not say why: both kept
    assert rows.ONE_CLOCK_REASON in rows.unranked_reasons(unknown)


def test_submit_names_a_free_job_as_one(tmp_path, capsys):
    path = tmp_path / "own.json"
    path.write_text(FIXTURE.read_text())
    assert main(["submit", str(path), "--results-dir", str(tmp_path / "results")]) == 0
    said = capsys.readouterr().out
    assert "(own code, a free job with no quality target, smoke)" in said and "held to own" not in said


def test_an_own_entry_measured_on_a_cpu_is_never_ranked_whatever_else_it_does_right():
    """docs/own-code.md says it early and plainly (walk 5 learned it from submit alone): a CPU has no
    known peak, so an own entry held to a target, at full scale, stamped by two clocks with steps
    the clock holds, is still not ranked; its one reason is the peak, never the CPU's clock rules."""
    import pandas as pd

    doc = _doc()
    assert {run["device"].split(":")[0] for run in doc["runs"]} == {"cpu"}
    entry = {**_entry(doc), "scale": "full", "workload": "lm-char", "kind": "tta", "tta_valid": True,
             "second_clock": True, "short_steps": False, "clock_gaps": False}
    assert entry["known_peak"] is False
    assert rows.unranked_reasons(entry) == ["no known peak for its device (goodbench peaks): its MFU cannot be bounded"]
    assert not rows.rankable(pd.DataFrame([entry])).any()


def test_compare_gives_the_one_reason_that_applies():
    short, unstamped = _shortened(_doc()), {k: v for k, v in _doc().items() if k != "second_clock"}
    assert report._identity(short).endswith(report.CLOCK_GAPS["short steps"])
    assert report._identity(unstamped).endswith(report.CLOCK_GAPS["unstamped"])
    assert report.OWN_CLOCKS[2] in report._identity(_doc())


@pytest.mark.parametrize("factor", [1.0, 0.1])
def test_the_run_page_shows_the_median_step_beside_the_mean(factor):
    doc = _shortened(_doc(), factor)
    run = doc["runs"][0]
    fields = run_page.goodput_fields(run, run["goodput"])
    keys = [key for key, _ in fields]
    at = keys.index("goodput.steady_step_s")
    assert keys[at + 1] == "metrics.throughput.step_time_s.p50"
    assert fields[at + 1][1] == run["metrics"]["throughput"]["step_time_s"]["p50"]
    html = str(run_page.run_context("own.json", doc, run)["goodput"])
    assert "steady-state step time, mean" in html and "step time p50 (median)" in html


@pytest.mark.parametrize("flags, reason", [
    ([{"short_steps": True}, {"short_steps": True}], rows.SHORT_STEPS_REASON),
    ([{"clock_gaps": True}, {"clock_gaps": True}], rows.UNSTAMPED_REASON),
    ([{"short_steps": True}, {"clock_gaps": True}], rows.ONE_CLOCK_REASON),  # each its own: the group names both
])
def test_the_workload_page_heads_its_one_clock_group_with_the_reason_its_entries_share(flags, reason, tmp_path):
    import factories
    import numpy as np
    import pandas as pd

    from suite.site import pages
    from suite.site.names import safe_name

    doc = factories.synthetic_document("clock-box", rng=np.random.default_rng(44), accelerator=0,
                                       workloads=("lm-char",))
    [entry] = pipeline.table([("a.json", doc)]).to_dict(orient="records")
    own = {"division": "own", "implementation": "mine", "second_clock": False, "short_steps": False,
           "clock_gaps": False}
    frame = rows.with_ranking(pd.DataFrame([{**entry, **own, **flag, "file": f"{i}.json"}
                                            for i, flag in enumerate(flags)]))
    built = {"built_at": "2026-11-29T00:00:00Z", "n_results": 2, "n_runs": 10}
    pages.workload_pages(tmp_path, "lm-char", frame.assign(trust="unsigned"), built)
    page = html.unescape((tmp_path / "workloads" / f"{safe_name('lm-char')}.html").read_text())
    assert f"Own code, not ranked: {reason}</h3>" in page
    assert not any(f"Own code, not ranked: {r}" in page for r in rows.ONE_CLOCK_REASONS if r != reason)


def test_run_own_says_a_run_that_timed_no_step_has_none_for_the_clock_to_hold():
    """A script that failed in its first step: its run is sealed with no step, which no clock holds."""
    doc = _doc()
    first = doc["runs"][0]
    first["step_times_s"], first["metrics"]["throughput"] = [], None
    why = own_outcome.one_clock_why(doc)
    assert why is not None and why.startswith(f"seed {first['seed']} timed no step for the second clock to hold, so ")
    assert "median" not in why
