"""The site at a phone's width, checked in a real browser (tests/test_site_browser.py,
tests/test_mlperf_browser.py): tables become cards, each cell labelled with its column."""
from __future__ import annotations

from pathlib import Path

PHONE = 390  # an iPhone 12–15's CSS width


def cards_fit(page, path: Path) -> None:
    """At a phone's width the page does not scroll sideways, and every cell of every table shows
    its column's name (the card layout of sortable and .cards tables: style.css, max-width 640 px)."""
    page.goto(path.as_uri())
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE, path.name
    mismatched = page.evaluate("""() => [...document.querySelectorAll('table.sortable, table.cards')].flatMap(t => {
        const names = [...t.tHead.rows[0].cells].map(th => th.textContent.trim());
        return [...t.tBodies[0].rows].flatMap(r => [...r.cells].filter((td, i) =>
            getComputedStyle(td, '::before').content !== JSON.stringify(names[i])).map(td => td.textContent));
    })""")
    assert mismatched == [], (path.name, mismatched[:3])
    boxes = page.eval_on_selector_all("table td", "tds => tds.map(td => td.getBoundingClientRect())"
                                                  ".map(b => [b.right, b.width])")
    assert boxes and max(right for right, _ in boxes) <= PHONE, path.name
    assert min(width for _, width in boxes) >= 100, path.name  # no column squeezed to a letter per line


def filter_hides_cards(page, path: Path) -> None:
    """At a phone's width the table filter still hides the rows it filters out (cards too)."""
    page.goto(path.as_uri())
    box = page.locator("input[data-filter-for]").first
    table = box.get_attribute("data-filter-for")
    assert page.eval_on_selector_all(f"#{table} tbody tr", "rows => rows.length") > 0
    box.fill("no-such-system-anywhere")
    shown = page.eval_on_selector_all(f"#{table} tbody tr",
                                      "rows => rows.filter(r => getComputedStyle(r).display !== 'none').length")
    assert shown == 0, (path.name, shown)
