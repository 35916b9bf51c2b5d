"""Every leaderboard row says how far it can be trusted (suite/leaderboard/trust.py): reproduced by a trusted
reviewer, a trusted reproduction that differs, signed or unsigned — "not reproduced" where no
record checks it — in the tables, their CSV and JSON downloads, and a ranking of reproduced
results of their own, shown first."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import factories
import numpy as np
import pandas as pd
import pytest

from suite.leaderboard import rows as leaderboard
from suite.leaderboard import trust
from suite.site.builder import build_site
from suite.site.names import safe_name
from suite.store import files as store
from suite.trust import signing
from suite.trust.reviewers import Reviewers

WORKLOAD = "gpt2-124m"


def _document(name: str, seed: int) -> dict:
    """A valid full-scale gpt2-124m result on an H100 (rankable)."""
    return factories.synthetic_document(name, rng=np.random.default_rng(seed), accelerator=0, scale="full",
                                        workloads=(WORKLOAD,))


def _submit(tmp_path: Path, doc: dict, name: str) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc, indent=1))
    return store.submit(path, tmp_path / "results")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    """Three rankable files — one reproduced by the site's reviewer, one signed by a key no
    reviewer holds, one unsigned — built into a site: (site folder, the workload page)."""
    tmp_path = tmp_path_factory.mktemp("trust")
    reviewer_path, reviewer_fp = signing.keygen(tmp_path / "reviewer")
    reviewer = signing.load_key(reviewer_path.parent)
    lab_path, _ = signing.keygen(tmp_path / "lab")
    lab = signing.load_key(lab_path.parent)
    # lab-one is reproduced, lab-two signed, lab-three unsigned (a system named by its level is refused: name-trust)
    reproduced = _document("lab-one", 11)
    stored = _submit(tmp_path, reproduced, "a")
    _submit(tmp_path, signing.seal(_document("lab-two", 12), lab), "b")
    _submit(tmp_path, _document("lab-three", 13), "c")
    (tmp_path / "results" / "reviewers.toml").write_text(
        f'[[reviewer]]\nname = "Audit team"\nfingerprint = "{reviewer_fp}"\n')
    _submit(tmp_path, signing.seal(factories.reproduction_of(reproduced, stored.stem), reviewer), "rep")
    result = build_site(tmp_path / "results", tmp_path / "site")
    assert result.invalid == []
    return tmp_path / "site", (tmp_path / "site" / "workloads" / f"{safe_name(WORKLOAD)}.html").read_text()


def _row(page: str, system: str) -> str:
    """The first table row of ``page`` naming ``system``."""
    start = page.index(f">{system}</a>")
    return page[page.rindex("<tr>", 0, start):page.index("</tr>", start)]


def test_every_row_says_whether_it_was_reproduced_signed_or_unsigned(built):
    site, page = built
    assert re.search(r"reproduced by a trusted reviewer: (\d+) of \1 runs? \(Audit team\)", _row(page, "lab-one"))
    assert re.search(r"signed by SHA256:[^ ,]{12}…, not reproduced", _row(page, "lab-two"))  # whose key
    assert "unsigned, not reproduced" in _row(page, "lab-three")
    assert "auditor-box" not in page  # the reproduction is evidence, not an entry
    runs = sum(len(d["runs"]) for d in (_document(n, k) for n, k in (("lab-one", 11), ("lab-two", 12), ("lab-three", 13))))
    assert f"· 3 results files · {runs} runs · 1 reproduction ·" in page  # its runs not counted among the results'
    system_page = (site / "systems" / f"{safe_name('lab-three')}.html").read_text()
    signer = system_page[system_page.index('class="text c-signer"'):]
    signer = signer[:signer.index("</td>")]  # the signer cell reads "unsigned": the line under it does not repeat it
    assert ">unsigned<" in signer and "not reproduced" in signer and "unsigned, not reproduced" not in signer


def test_reproduced_results_are_ranked_apart_and_first(built):
    site, page = built
    apart = page.index("Division: closed — reproduced by a trusted reviewer, ranked among themselves")
    assert apart < page.index("Division: closed — ranked")
    section = page[apart:page.index("Division: closed — ranked")]
    assert "lab-one" in section and "lab-two" not in section and "lab-three" not in section
    reproduced = site / "workloads" / f"{safe_name(WORKLOAD)}-{safe_name('closed')}-reproduced.csv"
    rows = list(csv.DictReader(reproduced.open()))
    assert [(r["system"], r["trust"]) for r in rows] == [("lab-one", "reproduced")]


def test_the_downloads_carry_the_trust_level_of_every_row(built):
    site, _ = built
    base = site / "workloads" / f"{safe_name(WORKLOAD)}-{safe_name('closed')}"
    from_csv = {r["system"]: (r["trust"], r["reviewed_by"]) for r in csv.DictReader(base.with_suffix(".csv").open())}
    assert from_csv == {"lab-one": ("reproduced", "Audit team"), "lab-two": ("signed", ""),
                        "lab-three": ("unsigned", "")}
    from_json = {r["system"]: r["trust"] for r in json.loads(base.with_suffix(".json").read_text())}
    assert from_json == {"lab-one": "reproduced", "lab-two": "signed", "lab-three": "unsigned"}


def _entries_and_runs(doc: dict, name: str, reproductions: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    entries = pd.DataFrame(leaderboard.rows(name, doc), columns=leaderboard.ENTRY_COLUMNS)
    runs = pd.DataFrame([row for d, n in [(doc, name)] + [(r, f"r{i}.json") for i, r in enumerate(reproductions)]
                         for row in leaderboard.run_rows(n, d)], columns=leaderboard.RUN_COLUMNS)
    return entries, runs


def test_only_a_trusted_reviewers_reproduction_of_these_very_bytes_counts(tmp_path):
    """An untrusted signer's reproduction, or one naming a file whose bytes are not its name,
    leaves the row "not reproduced"; a trusted one that differs says so."""
    doc = _document("lab", 21)
    path = _submit(tmp_path, doc, "orig")
    sha = path.stem
    key_path, fp = signing.keygen(tmp_path / "k")
    key = signing.load_key(key_path.parent)
    rep = signing.seal(factories.reproduction_of(doc, sha), key)
    rep_fp = signing.signer(rep)
    assert rep_fp == fp
    entries, runs = _entries_and_runs(doc, path.name, [rep])
    results_dir = tmp_path / "results"
    assert list(trust.with_trust(entries, runs, results_dir, Reviewers())["trust"]) == ["unsigned"]
    trusted = Reviewers(names={fp: "Audit"})
    assert list(trust.with_trust(entries, runs, results_dir, trusted)["trust"]) == ["reproduced"]
    elsewhere = tmp_path / "elsewhere"  # a store where that name holds other bytes
    elsewhere.mkdir()
    (elsewhere / path.name).write_bytes(path.read_bytes() + b"\n")
    assert list(trust.with_trust(entries, runs, elsewhere, trusted)["trust"]) == ["unsigned"]
    differs = factories.reproduction_of(doc, sha, variant=2)
    entry = differs["settings"]["reproduces"]["runs"][0]
    entry["curve"].update(agrees=False, first_difference="val_loss at step 40: recorded 3, re-run 2")
    entry["verdict"] = "differs: curve: val_loss at step 40: recorded 3, re-run 2"
    entries, runs = _entries_and_runs(doc, path.name, [rep, signing.seal(differs, key)])
    [row] = trust.with_trust(entries, runs, results_dir, trusted).to_dict(orient="records")
    assert (row["trust"], row["reviewed_by"]) == ("differs", "Audit")
    assert trust.row_text(row) == ("a trusted reviewer's reproduction differs (Audit): throughput 1.000× the recorded; "
                                   "curve differs (val_loss at step 40: recorded 3, re-run 2)")  # what differed


def test_a_reproduction_marks_only_the_runs_it_reproduced_at_their_scale_within_the_rules_tolerance(tmp_path):
    """Finding: one smoke re-run of one run counted as "reproduced" for a full-scale 5-seed file,
    and a reproduction could claim ±1000%. A reproduction of one of five runs says "1 of 5 runs";
    a re-run of another scale, or one claiming a throughput tolerance beyond the rules', counts for
    nothing (and the validator refuses the tolerance)."""
    from suite import validate
    from suite.figures.reproducibility import MAX_THROUGHPUT_TOLERANCE

    doc = factories.synthetic_document("lab", rng=np.random.default_rng(22), accelerator=0, scale="full", seeds=5,
                                       workloads=(WORKLOAD,))
    path = _submit(tmp_path, doc, "orig")
    key_path, fp = signing.keygen(tmp_path / "k")
    key = signing.load_key(key_path.parent)
    trusted, results_dir = Reviewers(names={fp: "Audit"}), tmp_path / "results"

    def one_run(rep: dict) -> dict:  # the reproduction of the first run alone
        rep["runs"] = rep["runs"][:1]
        rep["settings"]["reproduces"]["runs"] = rep["settings"]["reproduces"]["runs"][:1]
        return rep

    assert len(doc["runs"]) == 5 and {r["scale"] for r in doc["runs"]} == {"full"}
    rep = signing.seal(one_run(factories.reproduction_of(doc, path.stem)), key)
    entries, runs = _entries_and_runs(doc, path.name, [rep])
    [row] = trust.with_trust(entries, runs, results_dir, trusted).to_dict(orient="records")
    assert (row["trust"], row["reproduced_runs"]) == ("reproduced", "1 of 5 runs")
    assert trust.row_text(row) == "reproduced by a trusted reviewer: 1 of 5 runs (Audit)"
    smoke = one_run(factories.reproduction_of(doc, path.stem))
    smoke["runs"][0]["scale"] = "smoke"
    entries, runs = _entries_and_runs(doc, path.name, [signing.seal(smoke, key)])
    [row] = trust.with_trust(entries, runs, results_dir, trusted).to_dict(orient="records")
    assert (row["trust"], row["reproduced_runs"]) == ("unsigned", None)  # the original's own level, not reproduced
    reproduction = runs[runs["reproduces"].notna()].to_dict(orient="records")[0]
    original = runs[runs["reproduces"].isna()].to_dict(orient="records")[0]
    assert "a smoke re-run of a full run" in trust.kind(leaderboard.reproductions(runs)[
        (path.stem, reproduction["reproduces_run_id"])][0], original, trusted)[1]
    wide = one_run(factories.reproduction_of(doc, path.stem))
    wide["settings"]["reproduces"]["throughput_tolerance"] = 10.0
    wide["settings"]["reproduces"]["runs"][0]["throughput"]["tolerance"] = 10.0
    assert "reproduces-bounds" in [p.code for p in validate.check_document(wide)]
    entries, runs = _entries_and_runs(doc, path.name, [signing.seal(wide, key)])
    [row] = trust.with_trust(entries, runs, results_dir, trusted).to_dict(orient="records")
    assert (row["trust"], row["reproduced_runs"]) == ("unsigned", None)
    bounded = one_run(factories.reproduction_of(doc, path.stem))
    bounded["settings"]["reproduces"]["runs"][0]["curve"]["rel_tolerance"] = 0.5  # gpt2-124m's bound: 0.0156
    assert [p.line("r") for p in validate.check_document(bounded) if p.code == "reproduces-bounds"] == [
        "r: settings.reproduces.runs[0].curve: claims a curve tolerance of 0.5 relative + 1e-09: at most 0.0156 + "
        "1e-06 for gpt2-124m [reproduces-bounds]"]
    assert MAX_THROUGHPUT_TOLERANCE == 0.5


def test_a_site_build_validates_and_recomputes_each_file_once(tmp_path, monkeypatch):
    """One per-file step (suite/leaderboard/rows.py's read_stored) feeds the tables, the run pages and
    the pages rewritten for a reproduction: each stored file is validated once and its figures
    recomputed once per build, the reproduced original included; and its run pages show the
    recomputed figures, as its table rows do."""
    from collections import Counter

    from suite import validate
    from suite.figures import recompute

    reproduced = _document("lab-one", 11)
    stored = _submit(tmp_path, reproduced, "a")
    _submit(tmp_path, _document("lab-three", 13), "c")
    _submit(tmp_path, factories.reproduction_of(reproduced, stored.stem), "rep")
    validated, recomputed = Counter(), Counter()
    check_stored, recompute_document = validate.check_stored, recompute.recompute_document

    def counted_check(doc, *args, **kw):
        validated[doc["runs"][0]["run_id"]] += 1
        return check_stored(doc, *args, **kw)

    def counted_recompute(doc, *args, **kw):
        recomputed[doc["runs"][0]["run_id"]] += 1
        return recompute_document(doc, *args, **kw)

    monkeypatch.setattr(validate, "check_stored", counted_check)
    monkeypatch.setattr(leaderboard, "recompute_document", counted_recompute)
    result = build_site(tmp_path / "results", tmp_path / "site", workers=1)
    assert result.invalid == [] and len(validated) == 3
    assert set(validated.values()) == {1} and recomputed == validated
    # the original's run page was rewritten ("reproduced … on …") from that one reading
    [run] = [r for r in json.loads(stored.read_text())["runs"]]
    from suite.site.names import run_slug

    page = (tmp_path / "site" / "runs" / f"{run_slug(stored.name, run['run_id'])}.html").read_text()
    assert "reproduced" in page


def test_a_reviewers_file_nested_too_deep_or_too_large_trusts_no_one(tmp_path):
    """tomllib recursing into nested arrays raised RecursionError, a traceback out of ``goodbench
    site``; the whole file was read before its size was checked."""
    from suite.trust import reviewers

    path = tmp_path / reviewers.FILE
    path.write_text("a = " + "[" * 20000 + "]" * 20000 + "\n")
    found = reviewers.load(tmp_path)
    assert found.problem == f"{reviewers.FILE} cannot be read (RecursionError): no reviewer is trusted"
    path.write_text("#" * (reviewers.MAX_BYTES + 1))
    assert "is larger than" in reviewers.load(tmp_path).problem
    path.write_text("")
    assert reviewers.load(tmp_path).problem is None  # empty: it lists no one
