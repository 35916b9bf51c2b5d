"""The site's methodology and how-to-submit pages (suite/site/about_pages.py): read from the
validator's registry, linked from every page."""
from __future__ import annotations

import html
import re

from suite.site import about_pages
from suite.validate import registry
from suite.validate.provenance import CHECKED

BUILT = {"built_at": "2026-11-27T00:00:00Z", "n_results": 0, "n_runs": 0}


def test_the_methodology_page_lists_every_rule_and_every_checked_field(tmp_path):
    about_pages.write(tmp_path, BUILT)
    page = html.unescape((tmp_path / "methodology.html").read_text())
    shown = set(re.findall(r"<code title=\"[^\"]*\">([a-z0-9-]+)</code>", page))
    ruled = {c for scope, _ in about_pages.SCOPES for rule in registry.rules(scope) for c in rule.codes}
    assert ruled and shown == ruled
    for scope, _ in about_pages.SCOPES:
        for rule in registry.rules(scope):
            assert rule.description.replace("``", "") in page
    assert all(f"<code>{field}</code>" in page for field in CHECKED)
    assert "self-reported" in page and "``" not in page


def test_both_pages_are_linked_from_the_navigation(tmp_path):
    about_pages.write(tmp_path, BUILT)
    for name in ("methodology.html", "submitting.html"):
        page = (tmp_path / name).read_text()
        assert 'href="methodology.html">methodology</a>' in page
        assert 'href="submitting.html">how to submit</a>' in page
    assert "python -m suite.site.publish pr" in (tmp_path / "submitting.html").read_text()


def test_the_methodology_page_explains_no_known_peak_in_the_badges_words(tmp_path):
    """"no known peak" was explained only in docs/rules.md: the site says what its badge means."""
    from suite.site.columns import PEAK_TEXT

    about_pages.write(tmp_path, BUILT)
    page = html.unescape((tmp_path / "methodology.html").read_text())
    term = page[page.index('<dt id="no-known-peak">No known peak</dt>'):]
    term = term[:term.index("</dd>")]
    assert f"\u201c{PEAK_TEXT}\u201d" in term or f'"{PEAK_TEXT}"' in term
    assert "a CPU has none" in term and "has no MFU" in term and "never ranked" in term
    assert "<code>goodbench peaks</code>" in term
