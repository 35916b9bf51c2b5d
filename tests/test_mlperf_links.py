"""The MLPerf pages link a result only to GitHub: a stored document's ``source.repository`` is
anyone's text (trial 12, A5c: a ``javascript:`` one reached the pages as a link). A document
whose repository is not an address on GitHub is refused on import and not read by the site; and
were one shown, its repository would be plain, escaped text, never a link. One function says
what an address on GitHub is, for the MLPerf and the speedrun pages. Needs no mlperf_logging:
the documents are the store's own."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from suite.mlperf import documents, importer
from suite.record import text
from suite.site import mlperf_pages
from suite.speedrun import readme

REPO = Path(__file__).resolve().parent.parent
BUILT = {"built_at": "2026-11-29T00:00:00Z", "n_results": 0, "n_runs": 0}
HOSTILE = "javascript:alert(document.domain)//<b>x</b>"


def _stored() -> Path:
    return sorted((REPO / "results" / "mlperf").glob("*.json"))[0]


def _results(folder: Path, repository: str) -> Path:
    """A results folder holding one stored document, its ``source.repository`` set."""
    doc = documents.read(_stored())
    doc["source"]["repository"] = repository
    path = documents.path_of(doc, folder)
    path.parent.mkdir(parents=True)
    path.write_bytes(documents.encode(doc))
    return folder


def _pages(out: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(out.rglob("*.html")))


def test_every_stored_document_names_a_repository_on_github():
    found = {json.loads(p.read_bytes())["source"]["repository"] for p in (REPO / "results" / "mlperf").glob("*.json")}
    assert found and all(text.github_address(r) == r for r in found), sorted(found)


def test_one_function_says_what_an_address_on_github_is():
    assert readme.github_address is text.github_address and importer.github_address is text.github_address
    assert text.github_address("https://github.com/mlcommons/training_results_v5.1") is not None
    for other in ("javascript:alert(1)//https://github.com/", "http://github.com/x", "https://github.com.evil/x",
                  "https://gitlab.com/x", " https://github.com/x", "", None, 3):
        assert text.github_address(other) is None, other


def test_a_repository_not_on_github_is_refused_on_import_and_not_read_by_the_site(tmp_path):
    doc = documents.read(_stored())
    doc["source"]["repository"] = HOSTILE
    why = f"source/repository: {HOSTILE} is not an address on GitHub (https://github.com/…)"
    assert documents.problems(doc) and documents.problems(doc)[0].startswith(why)
    with pytest.raises(documents.InvalidDocument, match="not an address on GitHub"):
        documents.store(doc, tmp_path / "store")
    results = _results(tmp_path / "results", HOSTILE)
    docs, bad = documents.load_all(results)
    assert docs == [] and len(bad) == 1 and "not an address on GitHub" in bad[0][1]
    mlperf_pages.write(tmp_path / "out", results, BUILT)
    pages = _pages(tmp_path / "out")
    assert 'href="javascript:' not in pages and "<b>x</b>" not in pages and "/tree/main/" not in pages
    assert "javascript:alert(document.domain)//&lt;b&gt;x&lt;/b&gt; is not an address on GitHub" in pages  # why, as text


@pytest.mark.parametrize("repository", [HOSTILE, "https://gitlab.com/mlcommons/training_results_v4.1"])
def test_a_repository_not_on_github_shown_anyway_is_escaped_text_never_a_link(tmp_path, monkeypatch, repository):
    """Were such a document read (a reader that skipped the check), the pages would still link
    nothing but GitHub: its repository is the cell's text, escaped."""
    monkeypatch.setattr(documents, "problems", lambda doc: [])
    results = _results(tmp_path / "results", repository)
    assert importer.source_url(documents.read(next((results / "mlperf").glob("*.json")))) is None
    mlperf_pages.write(tmp_path / "out", results, BUILT)
    pages = _pages(tmp_path / "out")
    assert 'href="javascript:' not in pages and "gitlab.com/mlcommons/training_results_v4.1/" not in pages
    assert "/tree/main/" not in pages and "/blob/main/" not in pages  # neither the logs nor the system linked
    shown = repository.replace("<", "&lt;").replace(">", "&gt;")
    assert f'title="not linked: not an address on GitHub">{shown}</td>' in pages
    assert "<b>x</b>" not in pages


def test_a_repository_on_github_is_linked(tmp_path):
    results = _results(tmp_path / "results", "https://github.com/mlcommons/training_results_v4.1")
    mlperf_pages.write(tmp_path / "out", results, BUILT)
    pages = _pages(tmp_path / "out")
    assert '<a href="https://github.com/mlcommons/training_results_v4.1/tree/main/' in pages
    assert '<a href="https://github.com/mlcommons/training_results_v4.1/blob/main/' in pages
    assert "not linked" not in pages


def test_a_site_whose_only_document_is_not_read_is_built_and_says_so(tmp_path):
    """The index page once failed (a template error, a traceback) where every stored document was
    refused: the MLPerf line had no leaders to show."""
    from suite.site.builder import build_site

    results = _results(tmp_path / "results", HOSTILE)
    built = build_site(results, tmp_path / "out", workers=1)
    index = built.index.read_text(encoding="utf-8")
    assert "no document shown (1 not read)" in index and 'href="javascript:' not in _pages(tmp_path / "out")
