"""The NanoGPT speedrun pages and downloads of the built site, from a small imported checkout
(tests/test_speedrun_import.py builds it) and from the shipped documents."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_speedrun_import import SHIPPED, checkout  # noqa: F401  (checkout: a fixture)

from suite.cost import prices
from suite.site import speedrun_charts, speedrun_pages
from suite.speedrun import documents, importer, records

RECORDS_CSV = "track,record,date,claimed_s,measured_s,runs,mean_val_loss,p_value,verdict,accelerator,accelerators,flags"
RUNS_CSV = "track,record,log,log_sha256,final_step,val_loss,train_time_s,step_avg_ms,accelerator,accelerators,torch,flags"


def _write(results: Path, out: Path) -> list[dict]:
    return speedrun_pages.write(out, results, {"built_at": "2026-11-28T00:00:00Z", "n_results": 0, "n_runs": 0})


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """The pages of the shipped history at the shipped prices, built once for the tests that only
    read them (2.4 s a build)."""
    if not (SHIPPED / "speedrun").is_dir():
        pytest.skip("no imported documents under results/speedrun")
    out = tmp_path_factory.mktemp("shipped-speedrun")
    _write(SHIPPED, out)
    return out


def test_pages_and_the_two_csvs_from_an_import(checkout: Path, tmp_path: Path):  # noqa: F811
    results, out = tmp_path / "results", tmp_path / "site"
    importer.write_documents(importer.build_documents(checkout, jobs=1), results)
    lines = _write(results, out)
    assert [line["href"] for line in lines] == ["speedrun/track-1.html", "speedrun/track-2.html"]
    records = (out / "speedrun" / "records.csv").read_text().splitlines()
    assert records[0] == RECORDS_CSV and len(records) == 1 + 7  # a line per README row
    row = next(csv.DictReader(records))
    assert row["record"] == "1" and row["claimed_s"] == "2700.0" and row["measured_s"] == ""
    assert "no time in the log (llm.c format)" in row["flags"]
    fp8 = [r for r in csv.DictReader(records) if r["track"] == "1" and r["record"] == "3"][0]
    assert (fp8["claimed_s"], fp8["measured_s"], fp8["runs"], fp8["accelerators"]) == ("73.8", "79.5", "3", "8")
    runs = (out / "speedrun" / "runs.csv").read_text().splitlines()
    assert runs[0] == RUNS_CSV and len(runs) == 1 + 7  # a line per log
    a = [r for r in csv.DictReader(runs) if r["log"].endswith("this_pr/a.txt")][0]
    assert (a["val_loss"], a["train_time_s"], a["final_step"], a["torch"]) == ("3.277", "79.0", "20", "2.10.0+cu128")
    assert json.loads((out / "speedrun" / "records.json").read_text())[2]["record"] == 3
    track = (out / "speedrun" / "track-1.html").read_text()
    assert "never enter goodbench&#39;s rankings" in track and 'href="track-1/3.html"' in track
    assert "<svg" in track and "broken link" in track
    page = (out / "speedrun" / "track-1" / "3.html").read_text()
    assert "sr-curve" in page and "pull/342" in page and "79.5" in page and "speed-up 1.75 s" in page


def test_the_build_says_it_writes_the_pages_only_where_there_are_documents(checkout: Path, tmp_path: Path):  # noqa: F811
    said: list[str] = []
    built = {"built_at": "2026-11-28T00:00:00Z", "n_results": 0, "n_runs": 0}
    assert speedrun_pages.write(tmp_path / "empty-site", tmp_path / "empty", built, progress=said.append) == []
    assert said == []  # no documents: nothing written, nothing said
    results = tmp_path / "results"
    importer.write_documents(importer.build_documents(checkout, jobs=1), results)
    assert speedrun_pages.write(tmp_path / "site", results, built, progress=said.append)
    assert said == ["writing the imported NanoGPT speedrun pages"]


def test_a_number_with_several_rows_gets_a_page_each():
    assert speedrun_pages.record_keys([{"record": 20}, {"record": 21}, {"record": 21}, {"record": 22}]) == [
        "20", "21", "21-2", "22"]


def test_history_marks_another_gpu_and_fewer_gpus():
    recs = [{"record": 1, "date": "2025-01-01", "claimed_s": 100.0, "measured_s": 101.0, "runs": 3,
             "accelerator": "NVIDIA H100 80GB HBM3", "accelerators": 8},
            {"record": 2, "date": "2025-06-01", "claimed_s": 90.0, "measured_s": 95.0, "runs": 3,
             "accelerator": "NVIDIA H200", "accelerators": 8},
            {"record": 3, "date": "2025-09-01", "claimed_s": 80.0, "measured_s": 600.0, "runs": 1,
             "accelerator": "NVIDIA H100 80GB HBM3", "accelerators": 1}]
    svg = str(speedrun_charts.history(recs, "t"))
    assert svg.count('class="sr-claimed"') == 3 and svg.count("<circle class=\"sr-measured\"") == 1
    assert "<rect class=\"sr-measured\"" in svg and "<path class=\"sr-measured\"" in svg
    assert speedrun_charts.history([{"record": 1, "date": None, "claimed_s": 1.0}], "t") is None


def test_a_baseline_far_above_the_records_is_off_the_chart_not_its_axis():
    """Track 2's llm.c baseline (20,880 s) beside records of 1,000-1,800 s: the axis spans the
    records (linear, under 2,000 s), the baseline is drawn above it with its time, and the caption
    names it; a history without such a gap keeps every time on its log axis."""
    recs = [{"record": 1, "date": "2024-05-28", "claimed_s": 20880.0, "measured_s": None, "runs": 1}]
    recs += [{"record": k, "date": f"2025-0{k}-01", "claimed_s": 1800.0 - 100 * k, "measured_s": 1790.0 - 100 * k,
              "runs": 1, "accelerator": "NVIDIA H100 80GB HBM3", "accelerators": 8} for k in range(2, 9)]
    assert speedrun_charts.chart_top([20880.0, 1700.0, 1000.0]) == 1700.0
    svg = str(speedrun_charts.history(recs, "t"))
    ticks = [t for t in re.findall(r'text-anchor="end">([\d,]+)</text>', svg)]
    assert int(ticks[-1].replace(",", "")) < 2000 and "(log)" not in svg  # the axis ends near the records, not at 100,000
    assert "20,880 s ↑ off the chart" in svg
    assert "Off the chart, drawn above its top with its time: record 1&#39;s claim, 20,880 s" in svg
    times = [2700.0, 1884.0, 912.0, 300.0, 150.0, 79.7]  # track 1: 45 minutes down to 80 s, no gap over 5x
    track1 = [{"record": k, "date": f"2025-0{k}-01", "claimed_s": t, "runs": 1} for k, t in enumerate(times, start=1)]
    svg = str(speedrun_charts.history(track1, "t"))
    assert speedrun_charts.chart_top(times) == 2700.0
    assert "(log)" in svg and "off the chart" not in svg


def test_shipped_history_in_the_csvs(shipped: Path):
    rows = list(csv.DictReader((shipped / "speedrun" / "records.csv").read_text().splitlines()))
    assert len(rows) == 91 + 18
    r89 = [r for r in rows if (r["track"], r["record"]) == ("1", "89")][0]
    assert (r89["runs"], r89["measured_s"], r89["mean_val_loss"], r89["p_value"]) == ("13", "79.685", "3.27837", "0.0006691")
    runs = list(csv.DictReader((shipped / "speedrun" / "runs.csv").read_text().splitlines()))
    assert len(runs) == 1129 and len({r["log"] for r in runs}) == 1129


def test_mfu_is_on_the_pages_and_in_the_json_downloads_not_in_the_csvs(shipped: Path):
    """Records 4–11 of track 1 have an MFU estimate (2024's model shape); the record page labels
    it an estimate with its peak, a later record's says "not in the log"; the CSVs keep their
    columns and the JSONs add the estimates."""
    site = shipped / "speedrun"
    assert (site / "records.csv").read_text().splitlines()[0] == RECORDS_CSV
    assert (site / "runs.csv").read_text().splitlines()[0] == RUNS_CSV
    rows = json.loads((site / "records.json").read_text())
    estimated = {r["record"] for r in rows if r["track"] == 1 and r["mfu_estimate"] is not None}
    assert estimated == set(range(4, 12))
    r7 = [r for r in rows if (r["track"], r["record"]) == (1, 7)][0]
    assert 0.2 < r7["mfu_estimate"] < 0.6 and r7["mfu_peak"] == "H100 SXM5 dense bf16 989.4 TFLOP/s"
    runs = json.loads((site / "runs.json").read_text())
    assert {"flops_per_token", "mfu_estimate", "mfu_peak", "tokens_per_step"} <= set(runs[0])
    page = " ".join((site / "track-1" / "7.html").read_text().split())
    assert f"MFU, an estimate</dt><dd>{100 * r7['mfu_estimate']:.1f}% of the H100 SXM5 dense bf16 989.4 TFLOP/s" in page
    later = " ".join((site / "track-1" / "89.html").read_text().split())
    assert "MFU, an estimate</dt><dd>not in the log" in later
    track = (site / "track-1.html").read_text()
    assert track.count('data-label="MFU, est."') == 91 and f"{100 * r7['mfu_estimate']:.1f}%" in track


def test_record_88s_page_says_its_8_gpu_baseline_is_left_out(shipped: Path):
    """Record 88 links 1-GPU runs; of its three baseline folders, the 8-GPU one gives no speed-up
    and its page says why (it gave −516 s, ±0.5 s, beside 1-GPU runs)."""
    page = " ".join((shipped / "speedrun" / "track-1" / "88.html").read_text().split())
    assert ("<code>records/track_1_short/2026-07-13_PrefixTokenPrediction/baseline-1390-8x</code>: 10 logs "
            "(10 not on the record's GPU count, or with none in the log: left out): none on the record's GPU "
            "count, so no speed-up.") in page
    assert page.count("measured speed-up") == 2


def test_a_mean_above_the_target_reads_not_met_and_not_shown_is_defined(shipped: Path):
    """A record whose t-test fails because its mean is above the target says so, not the milder
    "not shown", which stays for a mean below the target the test cannot tell from chance; the
    track page and a record page say what each means."""
    target = 3.28
    above = {"verdict": speedrun_pages.NOT_SHOWN, "mean_val_loss": 3.29799, "p_value": 0.98}
    below = {"verdict": speedrun_pages.NOT_SHOWN, "mean_val_loss": 3.2791, "p_value": 0.345}
    assert speedrun_pages.verdict_words(above, target) == "not met: mean above target (p ≥ 0.01)"
    assert speedrun_pages.verdict_words(below, target) == "not shown (p ≥ 0.01)"
    assert speedrun_pages.verdict_words({"verdict": "met (p < 0.01)", "mean_val_loss": 3.27}, target) == "met (p < 0.01)"
    track = " ".join((shipped / "speedrun" / "track-1.html").read_text().split())
    assert '<td data-label="verdict">not met: mean above target (p ≥ 0.01)</td>' in track
    assert '<td data-label="verdict">not shown (p ≥ 0.01)</td>' in track  # record 21: mean 3.2791, p 0.345
    assert "Verdicts: &#34;not shown (p ≥ 0.01)&#34;: the mean is at or below the target" in track
    page = " ".join((shipped / "speedrun" / "track-1" / "9.html").read_text().split())
    assert ": not met: mean above target (p ≥ 0.01)<br><small>&#34;not shown" in page


def test_the_records_never_enter_goodbenchs_own_ranking_and_the_pages_say_so(tmp_path: Path):
    """A results folder holding only the speedrun documents builds a site whose goodbench tables
    (runs, compare, the gpt2-124m page) have no entry, while the index and every speedrun page say
    that these records are another workload, gpt2-124m's ranking included."""
    import shutil

    from suite.site.builder import build_site

    if not (SHIPPED / "speedrun").is_dir():
        pytest.skip("no imported documents under results/speedrun")
    results = tmp_path / "results"
    shutil.copytree(SHIPPED / "speedrun", results / "speedrun")
    site = build_site(results, tmp_path / "site", workers=1).index.parent
    assert json.loads((site / "runs.json").read_text()) == []
    assert len((site / "compare.csv").read_text().splitlines()) == 1  # the header alone
    gpt2 = next((site / "workloads").glob("gpt2-124m-*.html")).read_text()
    assert "modded-nanogpt" not in gpt2 and "speedrun" not in gpt2.lower()
    index = " ".join((site / "index.html").read_text().split())
    assert "never ranked against the workloads above, gpt2-124m's included" in index
    pages = [site / "speedrun" / "track-1.html", site / "speedrun" / "track-2.html",
             *sorted((site / "speedrun").glob("track-*/*.html"))]
    assert len(pages) == 2 + 91 + 18
    for page in pages:
        assert "never enter goodbench&#39;s rankings, gpt2-124m&#39;s included" in page.read_text(), page


H200_ONLY = b"""
[[entry]]
class = "NVIDIA H200 SXM"
provider = "P"
offering = "H200, on-demand, per GPU"
price_usd_per_hour = 3.0
source = "S"
address = "https://example.org/p"
date = "2026-01-02"
read = "2026-11-28"
"""


def test_shipped_records_cost_gpus_times_measured_time(shipped: Path):
    """costs.csv: every record's GPU-hours are its GPUs × its measured time ÷ 3600 exactly, its
    cost those hours × its class's price; no measured time, no GPU-hours; records.csv unchanged."""
    table = prices.load()  # the shipped table the pages were built with
    costs = json.loads((shipped / "speedrun" / "costs.json").read_text())
    docs = {(d["track"], r["record"], r["date"]): r for d in
            (json.loads(p.read_text()) for p in sorted((SHIPPED / "speedrun").glob("track_*.json")))
            for r in d["records"]}
    assert len(costs) == len(docs) == 91 + 18
    priced = 0
    for c in costs:
        r = docs[(c["track"], c["record"], c["date"])]
        if r["measured_s"] is None or r["accelerators"] is None:
            assert c["accelerator_hours"] is None and c["cost_usd"] is None
            continue
        assert c["accelerator_hours"] == pytest.approx(r["accelerators"] * r["measured_s"] / 3600, rel=1e-13)  # JSON: 15 digits
        price = table.price_of(r["accelerator"])
        assert c["cost_usd"] == pytest.approx(c["accelerator_hours"] * price.usd_per_hour, rel=1e-13)
        assert c["price_source"].startswith(price.cls.name) and c["price_date"] == price.date
        priced += 1
    assert priced > 80
    assert (shipped / "speedrun" / "records.csv").read_text().splitlines()[0] == RECORDS_CSV
    track = (shipped / "speedrun" / "track-1.html").read_text()
    assert "cost (USD)" in track and "not what the record's author paid" in track and "GPU-h" in track


def test_a_class_without_a_price_reads_no_price(tmp_path: Path):
    if not (SHIPPED / "speedrun").is_dir():
        pytest.skip("no imported documents under results/speedrun")
    table = prices.parse(H200_ONLY, "h200.toml")
    speedrun_pages.write(tmp_path, SHIPPED, {"built_at": "x", "n_results": 0, "n_runs": 0}, table)
    costs = json.loads((tmp_path / "speedrun" / "costs.json").read_text())
    h100 = [c for c in costs if c["accelerator"] == "NVIDIA H100 80GB HBM3" and c["accelerator_hours"]]
    h200 = [c for c in costs if c["accelerator"] == "NVIDIA H200" and c["accelerator_hours"]]
    assert h100 and all(c["cost_usd"] is None and c["price_source"] == "no price" for c in h100)
    assert h200 and all(c["cost_usd"] == pytest.approx(c["accelerator_hours"] * 3.0, rel=1e-13) for c in h200)
    assert "no price" in (tmp_path / "speedrun" / "track-1.html").read_text()


def test_a_link_that_is_not_githubs_is_never_a_link(tmp_path: Path):
    """Trial 11: a README row's PR link ``javascript:alert(…)`` was read as the record's PR and
    written as ``<a href="javascript:…">`` on its page. Neither the importer nor the page keeps a
    link off GitHub, whichever wrote the document."""
    from suite.speedrun import readme

    row = readme._row(99, " 1.00 minutes | faster | 01/01/26 | [log](records/x.txt) "
                          "[PR](javascript:alert%28document.domain%29) | someone |")
    assert row["pr"] is None
    if not (SHIPPED / "speedrun").is_dir():
        pytest.skip("no imported documents under results/speedrun")
    results = tmp_path / "results"
    (results / "speedrun").mkdir(parents=True)
    doc = json.loads((SHIPPED / "speedrun" / "track_1.json").read_text())
    honest = next(r["pr"] for r in doc["records"][1:] if r["pr"])
    assert honest.startswith("https://github.com/")
    doc["records"][0]["pr"] = "javascript:alert(document.domain)"  # a stored document edited by hand
    (results / "speedrun" / "track_1.json").write_text(json.dumps(doc))
    _write(results, tmp_path / "site")
    pages = sorted((tmp_path / "site" / "speedrun" / "track-1").glob("*.html"))
    text = "".join(p.read_text() for p in pages)
    assert "javascript:" not in text and f'href="{honest}"' in text


def _stored(checkout: Path, results: Path) -> dict:  # noqa: F811
    importer.write_documents(importer.build_documents(checkout, jobs=1), results)
    return json.loads((results / "speedrun" / "track_1.json").read_text())


def _edit(path: Any, value: Any):
    def apply(doc: dict) -> None:
        *parents, last = path
        target = doc
        for key in parents:
            target = target[key]
        target[last] = value
    return apply


EDITS = {
    "track a path": _edit(["track"], "1/../../../pwned_by_track"),
    "record a path": _edit(["records", 2, "record"], "../../../pwned_by_record"),
    "track of the other file": _edit(["track"], 2),
    "a run without fields": _edit(["runs", 0], {}),
    "flags null": _edit(["records", 0, "flags"], None),
    "claimed_s a word": _edit(["records", 2, "claimed_s"], "fast"),
    "a step above 2^63": _edit(["runs", 1, "final_step"], 10 ** 23),
    "a log outside records/": _edit(["runs", 1, "log"], "../../etc/passwd"),
    "measured_s not its runs'": _edit(["records", 2, "measured_s"], 1.0),
    "claimed_s moved with it": lambda doc: doc["records"][2].update(claimed_s=1.0, measured_over_claimed=79.5),
    "a flag removed": _edit(["records", 2, "flags"], []),
    "an upstream not pinned": _edit(["upstream"], "1" * 40),
    "an upstream without a commit": _edit(["upstream"], "f411b3d346aa52d3504324ca93c230fd84c6c07f"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_stored_document_edited_by_hand_is_refused_in_one_line_and_nothing_leaves_out(
        checkout: Path, tmp_path: Path, edit: str):  # noqa: F811
    """Trial 14 (F1): ``track`` and ``record`` of a stored document went into page paths unchecked
    (files written outside ``--out``), a malformed field crashed the whole build, and the stored
    figures were used as stored (record 89's measured time set to 1 s made it the cheapest). Every
    field is now checked and every record's figures derived again from the document's runs: a
    document that fails is not read, one line says why; the other track is built as before."""
    results, out = tmp_path / "results" / "deep", tmp_path / "site" / "out"
    doc = _stored(checkout, results)
    EDITS[edit](doc)
    (results / "speedrun" / "track_1.json").write_text(json.dumps(doc))
    lines = _write(results, out)
    assert [line["href"] for line in lines] == ["speedrun/track-2.html", "speedrun/records.csv"]
    assert lines[1]["title"] == "track_1.json (not read)" and "\n" not in lines[1]["detail"]
    assert not (out / "speedrun" / "track-1.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["modded-nanogpt", "results", "site"]
    assert sorted(p.name for p in (tmp_path / "site").iterdir()) == ["out"]


def test_the_shipped_documents_read_back_through_every_check(tmp_path: Path):
    from suite.speedrun import documents

    if not (SHIPPED / "speedrun").is_dir():
        pytest.skip("no imported documents under results/speedrun")
    for track in (1, 2):
        doc = json.loads((SHIPPED / "speedrun" / f"track_{track}.json").read_text())
        assert documents.check(doc, f"track_{track}.json") is None
        assert documents.check(doc, f"track_{3 - track}.json") == f"its track {track} is not that of its file name"


def test_a_record_without_a_measured_time_says_why_in_costs_csv(checkout: Path, tmp_path: Path):  # noqa: F811
    """Trial 14 (F12): costs.csv said "no price" where the page says "—" (no measured time)."""
    results = tmp_path / "results"
    _stored(checkout, results)
    _write(results, tmp_path / "site")
    costs = {(r["track"], r["record"]): r for r in csv.DictReader(
        (tmp_path / "site" / "speedrun" / "costs.csv").read_text().splitlines())}
    assert costs[("1", "2")]["price_source"] == "no measured time in its logs"  # no log
    assert costs[("1", "1")]["price_source"] == "no measured time in its logs"  # llm.c: no time
    assert costs[("1", "3")]["price_source"].startswith("NVIDIA H100")


def test_a_zero_time_costs_nothing_shown_not_0_dollars():
    from suite.site import speedrun_costs

    cell = speedrun_costs.priced({"track": 1, "record": 4, "measured_s": 0.0, "accelerators": 8,
                                  "accelerator": "NVIDIA H100 80GB HBM3", "flags": []}, prices.load(), [])
    assert (cell["text"], cell["cost_usd"], cell["price_source"]) == ("—", None, "a measured time of 0 s")
    cell = speedrun_costs.priced({"track": 1, "record": 4, "measured_s": None, "accelerators": None,
                                  "flags": ["3 of 3 run(s) flagged implausible, counted only where (…)"]}, prices.load(),
                                 [records.IMPLAUSIBLE])
    assert cell["text"] == "—" and cell["price_source"] == "no measured time: its runs are implausible, left out"


def test_a_records_cost_reads_its_flags_codes_never_their_words():
    """Whether runs flagged implausible were left out of a record's time is its flags' code
    (records.IMPLAUSIBLE): a link's or a claim's words may say "implausible" of anything."""
    from suite.site import speedrun_costs

    timed = {"track": 1, "record": 4, "measured_s": 180.0, "accelerators": 8, "accelerator": "NVIDIA H100 80GB HBM3"}
    link = records.Flag(records.BROKEN_LINK, "broken link: records/implausible.txt is not in the repository")
    cell = speedrun_costs.priced({**timed, "flags": [link.text]}, prices.load(), [link.code])
    assert cell["value"] is not None and "implausible" not in cell["title"]
    cell = speedrun_costs.priced({**timed, "flags": ["1 of 3 run(s) (…)"]}, prices.load(), [records.IMPLAUSIBLE])
    assert cell["title"].endswith("its time the slower of with and without its runs flagged implausible (see its flags)")
    untimed = {**timed, "measured_s": None, "flags": [link.text]}
    assert speedrun_costs.priced(untimed, prices.load(), [link.code])["price_source"] == "no measured time in its logs"


def test_forged_runs_are_flagged_on_the_pages_and_in_runs_csv(checkout: Path, tmp_path: Path):  # noqa: F811
    """Trial 14 (F6): the forged record shows its flags on the track table and its page, its runs
    are flagged in runs.csv, its cost is "—"; and without a verified commit the pages say "local
    files, not verified" (F15)."""
    from test_speedrun_import import _forged

    _forged(checkout, "2026-08-02_Forged", lambda data: data.replace(b"train_time:79000ms", b"train_time:55000ms")
            .replace(b"train_time:79500ms", b"train_time:55500ms").replace(b"train_time:80000ms", b"train_time:56000ms"))
    results, out = tmp_path / "results", tmp_path / "site"
    _stored(checkout, results)
    _write(results, out)
    runs = [r for r in csv.DictReader((out / "speedrun" / "runs.csv").read_text().splitlines())
            if "Forged" in r["log"]]
    assert len(runs) == 3 and all("a copy" in r["flags"] and "final_step × step_avg" in r["flags"] for r in runs)
    track = (out / "speedrun" / "track-1.html").read_text()
    assert "flagged implausible, counted only where" in track and "local files, not verified" in track
    page = (out / "speedrun" / "track-1" / "6.html").read_text()
    assert page.count('<tr class="flagged">') == 3 and "not verified" in page
    cost = [r for r in csv.DictReader((out / "speedrun" / "costs.csv").read_text().splitlines())
            if r["record"] == "6"][0]
    assert cost["cost_usd"] == "" and "implausible" in cost["price_source"]
    doc = json.loads((results / "speedrun" / "track_1.json").read_text())
    codes = documents.flag_codes(doc)  # the codes of the stored words, derived again from the runs
    assert [len(c) for c in codes] == [len(r["flags"]) for r in doc["records"]]
    assert [records.IMPLAUSIBLE in c for c in codes] == [r["record"] == 6 for r in doc["records"]]


def test_a_claimed_s_edited_with_every_figure_it_moves_is_still_refused(checkout: Path, tmp_path: Path):  # noqa: F811
    """Review 14 (#11): a stored document could set ``claimed_s`` to its measured time, with the
    figures and flags that gives, and the "slower than claimed" flag was gone while the page still
    showed the README's claim. ``claimed_s`` is derived again from ``claimed`` on load."""
    from suite.speedrun import documents, plausible, records

    doc = _stored(checkout, tmp_path / "results")
    rec = doc["records"][2]
    assert rec["claimed"] == "1.23 minutes" and any("slower than claimed" in f for f in rec["flags"])
    runs = {r["log"]: r for r in doc["runs"]}
    chosen = [runs[p] for p in rec["run_logs"]]
    copied = plausible.copies([(r["record"], [runs[p] for p in r["run_logs"]]) for r in doc["records"]])
    found, flags = records.figures(1, rec["measured_s"], chosen, runs.get(rec["log_link"]), copied)
    rec.update({k: found[k] for k in records.FIGURES}, claimed_s=rec["measured_s"],
               flags=[f for f in rec["flags"] if "claimed" not in f])
    assert not any("claimed" in f for f in flags)
    assert documents.check(json.loads(json.dumps(doc)), "track_1.json") == (
        "record 3's claimed_s (79.5) is not what its claim '1.23 minutes' states: import the checkout again")


def _pages_of(checkout: Path, tmp_path: Path, **fields: Any) -> tuple[str, str]:  # noqa: F811
    results, out = tmp_path / "results", tmp_path / "site"
    doc = _stored(checkout, results)
    doc.update(fields)
    (results / "speedrun" / "track_1.json").write_text(json.dumps(doc))
    _write(results, out)
    return (out / "speedrun" / "track-1.html").read_text(), (out / "speedrun" / "track-1" / "3.html").read_text()


def test_the_pages_say_a_local_commit_is_not_upstreams_and_a_checked_one_is_the_importers_word(
        checkout: Path, tmp_path: Path, monkeypatch):  # noqa: F811
    """Review 14 (#2, #3): the pages said "imported from KellerJordan/modded-nanogpt at X (every
    file read is that commit's, checked by its git blob id)" for any local commit, and as if the
    site had checked it. A local commit is said to be one, with no link to KellerJordan's tree;
    an upstream one is linked, and the check is said to be the importer's, self-reported."""
    local = "2" * 40
    track, record = _pages_of(checkout, tmp_path / "a", commit=local, upstream=None)
    for page in (track, record):
        assert f"at local commit {local[:7]} (not known to be upstream&#39;s)" in page
        assert "modded-nanogpt/tree/" not in page and f"blob/{local}" not in page
        assert "self-reported" in page and "every file read is that commit" not in page
    pinned = "f411b3d346aa52d3504324ca93c230fd84c6c07f"
    from suite.speedrun import manifest  # the small checkout's logs are not the pinned commit's manifest

    monkeypatch.setattr(manifest, "load", lambda commit: None)
    track, record = _pages_of(checkout, tmp_path / "b", commit=pinned, upstream=pinned)
    for page in (track, record):
        assert f'href="https://github.com/KellerJordan/modded-nanogpt/tree/{pinned}"' in page
        assert "by the importer when imported; self-reported" in page
        assert "this site cannot re-check them" in page
    assert f"blob/{pinned}/records/" in record


def test_each_documents_run_flags_are_derived_once_for_its_pages_and_downloads(checkout: Path, tmp_path: Path,  # noqa: F811
                                                                              monkeypatch):
    """The pages, the CSVs and the JSON downloads show the flags of one derivation per document."""
    results = tmp_path / "results"
    importer.write_documents(importer.build_documents(checkout, jobs=1), results)
    plain = tmp_path / "plain"
    _write(results, plain)
    derived: list[int] = []
    real = speedrun_pages.run_flags
    monkeypatch.setattr(speedrun_pages, "run_flags", lambda doc: derived.append(doc["track"]) or real(doc))
    out = tmp_path / "site"
    _write(results, out)
    assert derived == [1, 2]
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert written and written == sorted(p.relative_to(plain) for p in plain.rglob("*") if p.is_file())
    assert all((out / p).read_bytes() == (plain / p).read_bytes() for p in written)
    docs = [json.loads((results / "speedrun" / f"track_{t}.json").read_text()) for t in (1, 2)]
    for estimates in (False, True):
        given = speedrun_pages.tables(docs, estimates, flags=[real(d) for d in docs])
        assert all(a.equals(b) for a, b in zip(given, speedrun_pages.tables(docs, estimates)))
