"""The built site in a real headless Chromium, from file://: navigate, sort, filter, no errors, no network.

Needs Debian's ``chromium`` and the ``playwright`` Python package (its own browser download is
not used); skips cleanly when either is missing. The screenshot lands in tests/artifacts/.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import factories
import numpy as np
import pytest
from phone import PHONE, cards_fit, filter_hides_cards

from suite import site
from suite.record import results

pytestmark = [pytest.mark.slow, pytest.mark.long]  # starts a browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
OWN_FIXTURES = ("own-loaded-short-steps.json", "own-stored-losses.json")  # a free job; one held to lm-char
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    folder = tmp_path_factory.mktemp("results")
    rng = np.random.default_rng(11)
    for i, (name, acc, scale) in enumerate([("synthetic-alpha", 0, "full"), ("synthetic-beta", 2, "full"),
                                            ("synthetic-gamma", 4, "full"), ("synthetic-delta", 3, "smoke")]):
        results.write(folder / f"r{i}.json",
                      factories.synthetic_document(name, rng=rng, accelerator=acc, scale=scale, goodput=True))
    for name in OWN_FIXTURES:  # own code's rows name their code and what it trains: they fit too
        shutil.copyfile(FIXTURES / name, folder / name)
    out = tmp_path_factory.mktemp("site")
    index = site.build(folder, out)
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=ARGS, headless=True,
            viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(180_000)  # a slow shared machine: a full-page screenshot took over 30 s
        errors, requests = [], []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        context.on("request", lambda r: requests.append(r.url))
        yield page, index, errors, requests
        context.close()


def _column(page, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        # the cell's own value: its first node (a link or text), not the small line under it
        f"{table} tbody tr:not([hidden])", f"rows => rows.map(r => r.cells[{index}].firstChild.textContent.trim())")


def test_browse_sort_filter_and_run_page(browser_page):
    page, index, errors, requests = browser_page
    page.goto(index.as_uri())
    assert "Leaderboard" in page.inner_text("h1")
    page.click("#workloads a:text-is('lm-char')")  # the workloads table's link (the latest results name it too)
    page.wait_for_selector("table.sortable th button")
    table = "#" + page.locator("table.sortable").first.get_attribute("id")
    headers = page.eval_on_selector_all(f"{table} thead th", "hs => hs.map(h => h.textContent)")
    col = headers.index("samples/s")
    first = page.locator(table)
    first.locator("thead th button", has_text="samples/s").click()  # ascending
    values = [float(v.replace(",", "")) for v in _column(page, table, col)]
    assert values == sorted(values) and len(values) == 3
    first.locator("thead th button", has_text="samples/s").click()  # descending
    values = [float(v.replace(",", "")) for v in _column(page, table, col)]
    assert values == sorted(values, reverse=True)
    page.locator("input[data-filter-for]").first.fill("beta")
    assert _column(page, table, 1) == ["synthetic-beta"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("input[data-filter-for]").first.fill("")
    page.screenshot(path=str(ARTIFACTS / "workload-page.png"), full_page=True)
    page.locator("table.sortable").first.locator("a", has_text="run").first.click()
    page.wait_for_selector("svg.chart")
    assert "seed" in page.inner_text("h1")
    assert page.locator("svg.chart").count() >= 3
    page.screenshot(path=str(ARTIFACTS / "run-page.png"), full_page=True)
    page.goto(index.as_uri().replace("index.html", "compare.html"))
    page.select_option("#compare-a", "synthetic-gamma")
    assert page.inner_text("#compare-head-a") == "synthetic-gamma"
    assert page.locator("#compare-table tbody tr").count() > 1
    assert errors == []
    assert requests and all(url.startswith("file://") for url in requests), [u for u in requests
                                                                              if not u.startswith("file://")]


@pytest.mark.slow
def test_tables_fit_a_1300_px_window_without_scrolling(browser_page):
    page, index, errors, _ = browser_page
    pages = sorted((index.parent / "workloads").glob("*.html")) + sorted((index.parent / "systems").glob("*.html"))
    page.set_viewport_size({"width": 1300, "height": 900})
    assert any("own code \u201c" in path.read_text() for path in pages)  # own code's rows among them
    try:
        page.goto(pages[0].as_uri())  # a header row names the columns: no "sort by" before it
        page.wait_for_selector("table.sortable th button")
        assert page.eval_on_selector("table.sortable",
                                     "t => getComputedStyle(t.tHead.rows[0], '::before').content") == "none"
        for path in pages:
            page.goto(path.as_uri())
            overflow = page.eval_on_selector_all("div.scroll", "ds => ds.map(d => d.scrollWidth - d.clientWidth)")
            assert overflow and max(overflow) <= 0, (path.name, overflow)
    finally:
        page.set_viewport_size({"width": 1400, "height": 900})
    assert errors == []



def test_tables_become_cards_at_a_phones_width(browser_page):
    page, index, errors, _ = browser_page
    pages = [index, index.parent / "compare.html", *sorted((index.parent / "workloads").glob("*.html"))[:2],
             *sorted((index.parent / "systems").glob("*.html"))[:1], *sorted((index.parent / "runs").glob("*.html"))[:1],
             index.parent / "prices.html"]  # the price table: cards too
    page.set_viewport_size({"width": PHONE, "height": 800})
    try:
        for path in pages:
            cards_fit(page, path)
        filter_hides_cards(page, pages[2])  # a workload page's table
        # the sort buttons above the cards say what they do: no header row names them at this width
        page.goto(pages[2].as_uri())
        page.wait_for_selector("table.sortable th button")
        label = "t => getComputedStyle(t.tHead.rows[0], '::before').content"
        assert page.eval_on_selector("table.sortable", label) == '"sort by"'
    finally:
        page.set_viewport_size({"width": 1400, "height": 900})
    assert errors == []


def test_sorting_keeps_rows_of_older_rules_after_todays(browser_page, tmp_path):
    """The v1 CPU reference of the stored results has the fastest figures of its lm-char table, but
    today's rules find problems in it: sorting by score or samples/s either way keeps it last."""
    page, _, errors, _ = browser_page
    folder = tmp_path / "results"
    folder.mkdir()
    for stored in sorted((Path(__file__).resolve().parent.parent / "results").glob("*.json")):
        shutil.copyfile(stored, folder / stored.name)
    index = site.build(folder, tmp_path / "site")
    page.goto(next((index.parent / "workloads").glob("lm-char-*.html")).as_uri())
    page.wait_for_selector("table.sortable th button")
    table = page.locator("table.sortable").first
    for column in ("score", "samples/s"):
        for _ in range(2):  # ascending, then descending
            table.locator("thead th button", has_text=column).click()
            older = page.eval_on_selector_all("table.sortable tbody tr", "rs => rs.map(r => r.className)")
            assert older[-1] == "older-rules" and "older-rules" not in older[:-1], (column, older)
    assert errors == []
