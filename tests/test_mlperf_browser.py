"""The MLPerf Training history as shipped (results/mlperf/), built into a site and opened in a real
headless Chromium from file://: the index, a history page and an accelerator page fit a 1300 px
window, sort and filter, load nothing from the network and log no error. Screenshots land in
tests/artifacts/ (mlperf-index.png, mlperf-history.png, mlperf-accelerator.png).

Needs Debian's ``chromium`` and the ``playwright`` Python package; skips cleanly when either is
missing, and when the repository holds no imported documents.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from phone import PHONE, cards_fit

from suite.mlperf import documents
from suite.site import mlperf_pages
from suite.site.builder import build_site

pytestmark = [pytest.mark.slow, pytest.mark.long]  # builds the whole history and starts a browser

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
WIDTH = 1300


@pytest.fixture(scope="module")
def history_site(tmp_path_factory) -> Path:
    if not any((REPO / "results" / documents.SUBFOLDER).glob("*.json")):
        pytest.skip("no imported MLPerf documents under results/mlperf")
    return build_site(REPO / "results", tmp_path_factory.mktemp("site") / "out").index.parent


@pytest.fixture(scope="module")
def browser(history_site, tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, args=ARGS, headless=True,
            viewport={"width": WIDTH, "height": 900})
        page = context.new_page()
        errors, requests = [], []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        context.on("request", lambda r: requests.append(r.url))
        yield page, errors, requests
        context.close()


def _fits(page) -> None:
    width = page.evaluate("document.scrollingElement.scrollWidth")
    overflow = page.eval_on_selector_all("div.scroll", "ds => ds.map(d => d.scrollWidth - d.clientWidth)")
    assert width <= WIDTH and all(o <= 0 for o in overflow), (page.url, width, overflow)


def _column(page, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"{table} tbody tr:not([hidden])", f"rows => rows.map(r => r.cells[{index}].textContent.trim())")


def test_no_page_of_the_history_is_over_1_mb_and_each_says_derived(history_site):
    pages = [history_site / "mlperf.html", *(history_site / "mlperf").glob("*.html")]
    assert len(pages) > 100
    for path in pages:
        raw = path.read_bytes()
        assert len(raw) <= 1_000_000, (path.name, len(raw))
        assert b"derived from MLPerf Training results, not an MLPerf result" in raw, path.name


def test_index_history_and_accelerator_pages_in_a_browser(history_site, browser):
    page, errors, requests = browser
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto((history_site / "index.html").as_uri())
    assert "What is here" in page.inner_text("main")
    page.click("#mlperf a")
    assert page.url.endswith("mlperf.html")
    _fits(page)
    page.screenshot(path=str(ARTIFACTS / "mlperf-index.png"), full_page=True)
    # the accelerators: sort by results (descending), filter to one family
    table = "#accelerators-table"
    button = page.locator(f"{table} thead th button", has_text="results")
    button.click()
    button.click()
    counts = [int(v.replace(",", "")) for v in _column(page, table, 1)]
    assert counts == sorted(counts, reverse=True) and len(counts) > 10
    page.locator("input[data-filter-for='accelerators-table']").fill("H100")
    assert all("H100" in name for name in _column(page, table, 0))
    # a benchmark's history: the chart names the accelerator at every point
    page.goto((history_site / "mlperf" / mlperf_pages.history_page("resnet")).as_uri())
    assert page.locator("svg.chart circle").count() >= 10
    titles = page.eval_on_selector_all("svg.chart circle title", "ts => ts.map(t => t.textContent)")
    assert all(" × " in t and " min — " in t for t in titles)
    _fits(page)
    page.screenshot(path=str(ARTIFACTS / "mlperf-history.png"), full_page=True)
    # an accelerator across submitters, sizes and rounds
    page.goto((history_site / "mlperf" / mlperf_pages.accelerator_page("NVIDIA H100 SXM")).as_uri())
    assert "NVIDIA H100 SXM in MLPerf Training" in page.inner_text("h1")
    assert page.locator("#results-table tbody tr").count() > 100
    _fits(page)
    page.screenshot(path=str(ARTIFACTS / "mlperf-accelerator.png"), full_page=False)
    page.locator("input[data-filter-for='results-table']").fill("v5.1 llama2_70b_lora")
    shown = _column(page, "#results-table", 1)
    assert shown and set(shown) == {"llama2_70b_lora"}
    assert errors == []
    assert requests and all(url.startswith("file://") for url in requests)


def test_every_round_page_fits_1300_px(history_site, browser):
    page, errors, _ = browser
    rounds = sorted((history_site / "mlperf").glob("v*.html"))
    assert len(rounds) > 50
    widest = rounds[:: max(1, len(rounds) // 25)]  # a sample across the rounds, and the largest pages
    widest += sorted(rounds, key=lambda p: p.stat().st_size)[-5:]
    for path in widest:
        page.goto(path.as_uri())
        _fits(page)
    assert errors == []


def test_the_history_pages_tables_become_cards_at_a_phones_width(history_site, browser):
    """Index, a round, a history and an accelerator page at 390 px: no sideways scroll, each
    cell labelled with its column (tests/test_site_browser.py's check)."""
    page, errors, _ = browser
    folder = history_site / "mlperf"
    pages = [history_site / "mlperf.html", next(folder.glob("v4.1-gpt3-*.html")),
             next(folder.glob("history-bert-*[0-9a-f].html")), next(folder.glob("acc-NVIDIA-H100-SXM-*.html"))]
    page.set_viewport_size({"width": PHONE, "height": 800})
    try:
        for path in pages:
            cards_fit(page, path)
    finally:
        page.set_viewport_size({"width": WIDTH, "height": 900})
    assert errors == []
