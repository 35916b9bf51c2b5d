"""Own code timed by one clock is shown, never ranked (issue 44, audit gap 1): an own entry with a run
``goodbench run-own`` did not stamp has its own process's word for its times — code that
replaced its clocks once ranked #1 at 11,359 samples/s against 335 honest — so its ranking group
is ``one-clock`` with the reason in ``ranking_reason``, on the site's workload page and in
``goodbench submit``'s "not ranked" line; an entry whose every run the second clock stamped ranks."""
from __future__ import annotations

import json

import factories
import numpy as np
import pandas as pd
import pytest
from test_own_clock import honest  # noqa: F401 - the module's fixture: one job, stamped on two clocks

from suite.cli import main
from suite.leaderboard import pipeline, rows
from suite.site import pages
from suite.site.names import safe_name


@pytest.fixture(scope="module")
def entries() -> pd.DataFrame:
    """A full-scale lm-char entry on a device the peak table bounds (ranked as a closed result),
    as own code three ways: one clock, two clocks, and goodbench's own code."""
    doc = factories.synthetic_document("clock-box", rng=np.random.default_rng(44), accelerator=0,
                                       workloads=("lm-char",))
    [entry] = pipeline.table([("a.json", doc)]).to_dict(orient="records")
    assert entry["ranking"] == "ranked"  # the same entry, closed
    own = {"division": "own", "implementation": "mine"}
    frame = pd.DataFrame([{**entry, **own, "file": "one.json", "second_clock": False},
                          {**entry, **own, "file": "two.json", "second_clock": True},
                          {**entry, **own, "file": "none.json", "second_clock": None}])
    return rows.with_ranking(frame)


def test_own_code_without_a_second_clock_is_listed_unranked_with_the_reason(entries):
    by_file = entries.set_index("file")
    assert by_file.loc["two.json", "ranking"] == "ranked" and pd.isna(by_file.loc["two.json", "ranking_reason"])
    for name in ("one.json", "none.json"):
        assert by_file.loc[name, "ranking"] == "one-clock"
        assert by_file.loc[name, "ranking_reason"] == rows.ONE_CLOCK_REASON
    assert list(rows.rankable(entries)) == [False, True, False]
    assert "goodbench run-own" in rows.ONE_CLOCK_REASON and "one clock" in rows.ONE_CLOCK_REASON


def test_submit_says_why_a_one_clock_own_entry_will_not_rank(entries):
    one, two, _ = entries.to_dict(orient="records")
    assert rows.unranked_reasons(one) == [rows.ONE_CLOCK_REASON]
    assert rows.unranked_reasons(two) == []
    closed = {**two, "division": "closed", "implementation": None, "second_clock": None}
    assert rows.unranked_reasons(closed) == []  # goodbench's own code needs no second clock


def test_the_workload_page_lists_one_clock_entries_apart(entries, tmp_path):
    built = {"built_at": "2026-11-29T00:00:00Z", "n_results": 3, "n_runs": 15}
    info = pages.workload_pages(tmp_path, "lm-char", entries.assign(trust="unsigned"), built)
    slug = safe_name("lm-char")
    page = (tmp_path / "workloads" / f"{slug}.html").read_text()
    assert "Own code, not ranked: own code timed by one clock (self-timed)" in page
    assert info["n_entries"] == 3 and [lead["division"] for lead in info["leaders"]] == ["own"]
    listed = pd.read_csv(tmp_path / "workloads" / f"{slug}-one-clock.csv")
    assert sorted(listed["file"]) == ["none.json", "one.json"]


def test_a_real_own_file_says_so_when_stored_and_not_with_its_second_clock(honest, tmp_path, capsys):  # noqa: F811
    """``goodbench submit`` of the job as plain python wrote it names the missing second clock; of
    the same job with run-own's record, it does not."""
    _, sealed = honest.sealed(tmp_path)
    said = {}
    for name, doc in (("one", json.loads(honest.written)), ("two", sealed)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        assert main(["submit", str(path), "--results-dir", str(tmp_path / f"results-{name}")]) == 0
        said[name] = capsys.readouterr().out
    assert "not ranked: " in said["one"] and "(own code, " in said["one"] and rows.UNSTAMPED_REASON in said["one"]
    assert not any(reason in said["one"] for reason in (rows.ONE_CLOCK_REASON, rows.SHORT_STEPS_REASON))
    assert "not ranked: " in said["two"] and not any(reason in said["two"] for reason in rows.ONE_CLOCK_REASONS)  # a free job still


def test_a_cpu_run_of_steps_shorter_than_the_second_clock_can_hold_is_not_ranked_as_two_clocks():
    """Trial 7: a real 2-rank job's 1-ms steps claimed a thousand times shorter, the time moved to
    the batch waits, passed the second clock, whose per-step tolerance (5 ms) exceeds such steps,
    and ranked the own free job at 12 million samples/s under "two clocks". A CPU run whose median
    step is claimed under that tolerance is not held by the clock: shown, never ranked."""
    from pathlib import Path

    from suite.figures import clock_cover, clocks

    doc = json.loads((Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json").read_text())
    assert all(clock_cover.stamped(doc, run["run_id"]) for run in doc["runs"])
    run = doc["runs"][0]
    assert run["metrics"]["throughput"]["step_time_s"]["p50"] >= clocks.PER_STEP_S
    run["step_times_s"] = [t * 0.3 for t in run["step_times_s"]]  # the file's own figures follow its step times
    run["metrics"]["throughput"]["step_time_s"]["p50"] *= 0.3
    assert not clock_cover.steps_held(doc, run) and not clock_cover.stamped(doc, run["run_id"])
    [entry] = pipeline.table([("own.json", doc)]).to_dict(orient="records")
    assert entry["second_clock"] is False and rows.unranked_reasons(entry)[-1] == rows.SHORT_STEPS_REASON
    doc["system"]["accelerator"]["type"] = "cuda"  # a GPU's steps are not compared one by one: not judged here
    assert clock_cover.steps_held(doc, run)


def test_a_stamped_run_of_steps_too_short_says_so_on_its_row_and_run_page():
    """Not "one clock": run-own did stamp it; its steps are too short for that clock to hold."""
    from pathlib import Path

    from suite.site import columns, labels, run_page

    doc = json.loads((Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json").read_text())
    for run in doc["runs"]:
        run["step_times_s"] = [t * 0.3 for t in run["step_times_s"]]
        run["metrics"]["throughput"]["step_time_s"]["p50"] *= 0.3
    [entry] = pipeline.table([("own.json", doc)]).to_dict(orient="records")
    assert entry["short_steps"] is True and entry["second_clock"] is False
    assert labels.SHORT_STEPS in columns._own_text(entry)
    page = run_page.run_context("own.json", doc, doc["runs"][0])
    assert page["own_short_steps"] is True and page["own_two_clocks"] is False
    assert page["own_timing"] == labels.SHORT_STEPS
