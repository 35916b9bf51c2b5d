"""What a reproduction of own code proves (suite/leaderboard/trust.py, docs/own-code.md): running the
submitter's code again reproduces whatever that code does, so a trusted reviewer's re-run reads
"re-run by a trusted reviewer … the submitter's code gave the same figures again" on its row, its
run page and in the downloads, and reads "reproduced" only with the reviewer's signed attestation
of reading the code at the recorded commit (``settings.reproduces.code_read``, ``goodbench
reproduce --run-recorded-command --attest-code-read COMMIT``), naming the commit and the reviewer.

The fixtures are a pair of real files: ``own-stored-losses.json``, written by ``goodbench run-own``
for a copy of examples/plain_loop.py whose steps only sleep and report the losses of an earlier
honest run, loading that run's stored weights at each evaluation (valid, two clocks agreeing), and
``own-stored-losses-rerun.json``, its reproduction by a second key with ``--run-recorded-command``
in the sandbox: curve bit-identical, throughput ratio 0.999, verdict "reproduced"."""
from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path

import factories
import numpy as np
import pandas as pd
import pytest

from suite import validate
from suite.leaderboard import rows as leaderboard
from suite.leaderboard import trust
from suite.record.errors import Usage
from suite.run.reproduce import attestation
from suite.site import labels as site_labels
from suite.site import pages, run_page
from suite.site.builder import build_site
from suite.site.names import run_slug, safe_name
from suite.store import files as store
from suite.trust import labels, signing
from suite.trust.reviewers import Reviewers

FIXTURES = Path(__file__).parent / "fixtures"
ORIGINAL = FIXTURES / "own-stored-losses.json"
RERUN = FIXTURES / "own-stored-losses-rerun.json"
COMMIT = "16b0df863cf5e29dc300e041bc838cf514feb663"  # the commit both fixtures recorded
RERUN_LINE = ("re-run by a trusted reviewer: 1 of 1 run (Audit team): the submitter's code gave the same figures "
              "again; what it does between its step edges is its own (the reviewer did not attest to reading it)")
ATTESTED_LINE = ("reproduced by a trusted reviewer: 1 of 1 run (Audit team); attested reading its code at commit "
                 "16b0df863cf5 (Audit team)")


def _attested(key, commit: str = COMMIT) -> dict:
    """The fixture's reproduction with the reviewer's attestation of reading ``commit``, signed by ``key``."""
    doc = json.loads(RERUN.read_text())
    doc.pop("signature")
    doc["settings"]["reproduces"]["code_read"] = {"commit": commit}
    return signing.seal(doc, key)


def _site(tmp_path: Path, reproduction: dict, reviewer_fp: str) -> tuple[Path, str]:
    """The original and ``reproduction`` stored, ``reviewer_fp`` trusted as "Audit team", built into a
    site: (site folder, the stored original's name)."""
    results = tmp_path / "results"
    stored = store.submit(ORIGINAL, results)
    (results / "reviewers.toml").write_text(f'[[reviewer]]\nname = "Audit team"\nfingerprint = "{reviewer_fp}"\n')
    path = tmp_path / "reproduction.json"
    path.write_text(json.dumps(reproduction, indent=1))
    store.submit(path, results)
    built = build_site(results, tmp_path / "site")
    assert built.invalid == []
    return tmp_path / "site", stored.name


def _labels_shown(site: Path) -> list[str]:
    """Every trust label of a reproduction on the site's pages but the methodology's list of them."""
    import re

    found = []
    for page in site.rglob("*.html"):
        if page.name != "methodology.html":
            text = page.read_text().replace("&#39;", "'")
            found += re.findall(r"(?:reproduced|re-run) by a trusted reviewer[^<]*", text)
    return found


def _download_rows(site: Path) -> list[dict]:
    return [row for path in (site / "workloads").glob("*.csv") for row in csv.DictReader(path.open())
            if row.get("implementation") == "plain-loop-char-gpt"]


@pytest.fixture(scope="module")
def rerun_site(tmp_path_factory) -> tuple[Path, str]:
    """The fixtures stored, the re-run's signer trusted."""
    tmp_path = tmp_path_factory.mktemp("rerun")
    return _site(tmp_path, json.loads(RERUN.read_text()), signing.signer(json.loads(RERUN.read_text())))


@pytest.fixture(scope="module")
def attested_site(tmp_path_factory) -> tuple[Path, str]:
    """The original and its reproduction with the attestation, signed by a trusted reviewer's key."""
    tmp_path = tmp_path_factory.mktemp("attested")
    key_path, fp = signing.keygen(tmp_path / "reviewer")
    return _site(tmp_path, _attested(signing.load_key(key_path.parent)), fp)


def _run_page(site: Path, stored: str) -> str:
    run_id = json.loads(ORIGINAL.read_text())["runs"][0]["run_id"]
    return (site / "runs" / f"{run_slug(stored, run_id)}.html").read_text().replace("&#39;", "'")


def test_the_fixtures_are_valid_and_the_rerun_reproduced_bit_for_bit():
    original, rerun = json.loads(ORIGINAL.read_text()), json.loads(RERUN.read_text())
    assert validate.check_document(original) == [] and validate.check_document(rerun) == []
    [entry] = rerun["settings"]["reproduces"]["runs"]
    assert entry["verdict"] == "reproduced" and entry["curve"]["identical"]
    assert original["settings"]["implementation"]["code"]["git_commit"] == COMMIT
    assert "code_read" not in rerun["settings"]["reproduces"]


def test_a_trusted_re_run_of_own_code_reads_re_run_on_every_page(rerun_site):
    """Before: "reproduced 1 time on AMD EPYC x1 (reviewed by …)" on the run page and "reproduced by a
    trusted reviewer: 1 of 1 run (…)" on the rows, for a script that trained nothing."""
    site, stored = rerun_site
    shown = _labels_shown(site)
    assert shown and all(label.startswith("re-run by a trusted reviewer") for label in shown), shown
    assert any(label.startswith(RERUN_LINE) for label in shown)
    page = _run_page(site, stored)
    assert ('<strong class="status-partial">re-run 1 time on AMD EPYC x1 (reviewed by Audit team): '
            f"{labels.OWN_RERUN_TEXT}</strong>") in page
    assert "this run's recorded command run again in a sandbox" in page and "this run trained again" not in page
    assert "reproduced 1 time" not in page


def test_the_run_page_shows_each_reproductions_reason_as_text_under_its_numbered_link(rerun_site):
    """Before: the reason lived only in the link's title, out of sight in a screenshot or on a touch screen."""
    site, stored = rerun_site
    page = _run_page(site, stored)
    link = page.split('<ul class="task reproduction-reasons" id="reproduction-reasons"><li><a href="', 1)[1]
    assert link.split('">[1]</a> ', 1)[1].startswith("reproduced</li>")


def _reproduction_page(site: Path) -> str:
    """The run page of the site's one reproduction (the only page that says it is one)."""
    [page] = [text for p in (site / "runs").glob("*.html") if 'id="reproduction"' in (text := p.read_text())]
    return page.replace("&#39;", "'")


def test_a_reproductions_page_says_at_its_top_what_it_reproduced_by_whom_and_its_verdict(rerun_site):
    """Walkthrough 5, H3: a reviewer's re-run read as the submitter's original — titled as it, no word of
    whose run it was, its edges "stamped by goodbench run-own's process … on the submitter's machine" and
    its host load "self-reported", where goodbench stamped and measured both outside the sandbox on the
    reviewer's machine (docs/own-code.md)."""
    site, stored = rerun_site
    page = _reproduction_page(site)
    original_id = json.loads(ORIGINAL.read_text())["runs"][0]["run_id"]
    head = page.split('id="reproduction"', 1)[1].split("</p>", 1)[0]
    assert "<title>reproduction: " in page and '<small class="status-partial">reproduction</small>' in page
    assert f'<a href="{run_slug(stored, original_id)}.html">run <code>{original_id}</code></a>' in head
    assert f"<code>{stored}</code>" in head
    assert "Audit team, a trusted reviewer" in head and "re-run" in head  # as the original's page reads it
    entry = json.loads(RERUN.read_text())["settings"]["reproduces"]["runs"][0]
    assert f"its verdict, whole, as the reproduction recorded it: {entry['verdict']}</p>" in page
    assert site_labels.REPRODUCTION_TWO_CLOCKS in page and "ran on the submitter's machine" not in page
    host = page.split('id="host-load"', 1)[1].split("</p>", 1)[0]
    assert "(self-reported)" not in host and "outside the sandbox on the reviewer's machine" in host
    assert "run in the submitter's process" not in page


def test_an_untrusted_or_unsigned_reproduction_says_no_page_counts_it():
    rerun = json.loads(RERUN.read_text())
    run, fp = rerun["runs"][0], signing.signer(rerun)
    said = run_page.reproduction_context(rerun, run, fp, Reviewers())
    assert said is not None and said["who"].startswith(f"signed by {fp}, not a trusted reviewer's key")
    assert "unverified claim" in said["who"] and said["href"] is None
    assert "unverified claim" in run_page.reproduction_context(rerun, run, None, Reviewers())["who"]
    assert run_page.reproduction_context(json.loads(ORIGINAL.read_text()), run, fp) is None  # no reproduction


def test_the_downloads_say_rerun_and_no_row_is_ranked_with_the_reproduced(rerun_site):
    site, _ = rerun_site
    [row] = _download_rows(site)
    assert (row["trust"], row["reviewed_by"], row["rerun_runs"], row["reproduced_runs"], row["code_read"]) == \
        ("rerun", "Audit team", "1 of 1 run", "", "")
    assert not list((site / "workloads").glob("*-reproduced*"))
    runs = json.loads((site / "runs.json").read_text())
    [rerun] = [r for r in runs if r["reproduces"]]
    assert rerun["reproduces_code_read"] is None and rerun["code_commit"] == COMMIT


def test_an_attested_reproduction_of_own_code_reads_reproduced_naming_commit_and_reviewer(attested_site):
    site, stored = attested_site
    shown = _labels_shown(site)
    assert shown and all(label.startswith("reproduced by a trusted reviewer") for label in shown), shown
    rows = [p.read_text() for p in (site / "workloads").glob("*.html")]
    assert any(ATTESTED_LINE in page for page in rows)
    page = _run_page(site, stored)
    assert ('<strong class="status-complete">reproduced 1 time on AMD EPYC x1 (reviewed by Audit team; Audit team '
            "attested reading its code at commit 16b0df863cf5)</strong>") in page
    assert labels.OWN_RERUN_TEXT not in page
    [row] = _download_rows(site)
    assert (row["trust"], row["reproduced_runs"], row["rerun_runs"], row["code_read"]) == \
        ("reproduced", "1 of 1 run", "", "16b0df863cf5 (Audit team)")


def _rows_of(reproduction: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    original = json.loads(ORIGINAL.read_text())
    entries = pd.DataFrame(leaderboard.rows(ORIGINAL.name, original), columns=leaderboard.ENTRY_COLUMNS)
    runs = pd.DataFrame(leaderboard.run_rows(ORIGINAL.name, original) + leaderboard.run_rows("r.json", reproduction),
                        columns=leaderboard.RUN_COLUMNS)
    return entries, runs


def test_a_long_reason_cut_under_its_link_points_to_the_whole_on_the_reproductions_page():
    """Walkthrough 5, L11: the original's page cut a reproduction's reason with "…", and nothing led
    to the rest; the reproduction's page holds it whole (its verdict line), and the cut one links there."""
    rerun = json.loads(RERUN.read_text())
    run = rerun["runs"][0]
    long = "differs: " + "throughput judged on the median step, " * 30
    rerun["settings"]["reproduces"]["runs"][0]["verdict"] = long
    _, runs = _rows_of(rerun)
    [[*found]] = leaderboard.reproductions(runs).values()
    original = json.loads(ORIGINAL.read_text())
    signer = signing.signer(json.loads(RERUN.read_text()))
    found = [{**r, "signer": signer} for r in found]  # as if its signature held over the longer verdict
    [line] = run_page.reproduced_lines(found, original["runs"][0], original, Reviewers(names={signer: "Audit"}))
    [link] = line["links"]
    assert link["cut"] and link["why"].endswith("…") and len(link["why"]) <= run_page.REASON_CHARS + 1
    said = run_page.reproduction_context(rerun, run, signer, Reviewers(names={signer: "Audit"}))
    assert said is not None and said["verdict"] == long  # whole on its own page
    [short_line] = run_page.reproduced_lines([{**found[0], "verdict": "reproduced"}], original["runs"][0], original,
                                             Reviewers(names={signer: "Audit"}))
    assert not short_line["links"][0]["cut"]


def test_an_attestation_of_another_commit_attests_nothing_of_the_original(tmp_path):
    """The validator ties an attestation to the commit the re-run recorded; the site ties it to the
    stored original's: a reproduction attesting another commit than the original's is a re-run."""
    key_path, fp = signing.keygen(tmp_path / "k")
    results = tmp_path / "results"
    stored = store.submit(ORIGINAL, results)
    entries, runs = _rows_of(_attested(signing.load_key(key_path.parent)))
    entries["file"] = stored.name
    runs.loc[runs["reproduces"].isna(), "file"] = stored.name
    trusted = Reviewers(names={fp: "Audit"})
    [row] = trust.with_trust(entries, runs, results, trusted).to_dict(orient="records")
    assert (row["trust"], row["code_read"]) == ("reproduced", "16b0df863cf5 (Audit)")
    assert trust.row_text(row) == ATTESTED_LINE.replace("Audit team", "Audit")
    [[reproduction]] = leaderboard.reproductions(runs).values()
    original = runs[runs["reproduces"].isna()].to_dict(orient="records")[0]
    assert trust.kind(reproduction, original, trusted) == (trust.REPRODUCED, None)
    assert trust.kind({**reproduction, "code_read": "f" * 40}, original, trusted) == (trust.RERUN, None)
    assert trust.kind({**reproduction, "code_read": None}, original, trusted) == (trust.RERUN, None)


def test_the_validator_refuses_an_attestation_of_reference_code_or_of_another_commit(tmp_path):
    rerun = json.loads(RERUN.read_text())
    wrong = copy.deepcopy(rerun)
    wrong["settings"]["reproduces"]["code_read"] = {"commit": "a" * 40}
    assert [p.line("r") for p in validate.check_document(wrong) if p.code == "reproduces-code-read"] == [
        f"r: settings.reproduces.code_read.commit: attests reading commit {'a' * 40}, but the re-run ran commit "
        f"{COMMIT}: an attestation names the code that was run [reproduces-code-read]"]
    right = copy.deepcopy(rerun)
    right["settings"]["reproduces"]["code_read"] = {"commit": COMMIT}
    assert [p.code for p in validate.check_document(right)] == ["signature"]  # edited after signing, nothing else
    doc = factories.synthetic_document("lab", rng=np.random.default_rng(7), scale="smoke", workloads=("gpt2-124m",))
    reference = factories.reproduction_of(doc, "1" * 64)
    assert validate.check_document(reference) == []
    reference["settings"]["reproduces"]["code_read"] = {"commit": COMMIT}
    assert [p.line("r") for p in validate.check_document(reference)] == [
        "r: settings.reproduces.code_read: attests reading the code of a reproduction that is not of own code: a "
        "reference workload's re-run runs goodbench's own code [reproduces-code-read]"]


def test_a_reference_workloads_reproduction_keeps_its_label_and_needs_no_attestation(tmp_path):
    doc = factories.synthetic_document("lab", rng=np.random.default_rng(8), accelerator=0, scale="full",
                                       workloads=("gpt2-124m",))
    path = tmp_path / "orig.json"
    path.write_text(json.dumps(doc))
    stored = store.submit(path, tmp_path / "results")
    key_path, fp = signing.keygen(tmp_path / "k")
    rep = signing.seal(factories.reproduction_of(doc, stored.stem), signing.load_key(key_path.parent))
    entries = pd.DataFrame(leaderboard.rows(stored.name, doc), columns=leaderboard.ENTRY_COLUMNS)
    runs = pd.DataFrame(leaderboard.run_rows(stored.name, doc) + leaderboard.run_rows("r.json", rep),
                        columns=leaderboard.RUN_COLUMNS)
    [row] = trust.with_trust(entries, runs, tmp_path / "results", Reviewers(names={fp: "Audit"})).to_dict(
        orient="records")
    assert (row["trust"], row["code_read"], row["rerun_runs"]) == ("reproduced", None, None)
    assert trust.row_text(row) == "reproduced by a trusted reviewer: 1 of 1 run (Audit)"


def test_only_an_attested_own_row_is_ranked_apart_with_the_reproduced(tmp_path):
    """A reproduction changes no rank; it only lists a row apart, above its division's ranking, as
    reproduced: own code only with the attestation."""
    doc = factories.synthetic_document("clock-box", rng=np.random.default_rng(44), accelerator=0,
                                       workloads=("lm-char",))
    [entry] = leaderboard.with_ranking(pd.DataFrame(leaderboard.rows("a.json", doc))).to_dict(orient="records")
    own = {"division": "own", "implementation": "mine", "second_clock": True}
    frame = leaderboard.with_ranking(pd.DataFrame([
        {**entry, **own, "file": "rerun.json", "trust": "rerun"},
        {**entry, **own, "file": "read.json", "trust": "reproduced"},
        {**entry, **own, "file": "signed.json", "trust": "signed"}]))
    assert list(frame["ranking"]) == ["ranked"] * 3
    built = {"built_at": "2026-11-29T00:00:00Z", "n_results": 3, "n_runs": 15}
    pages.workload_pages(tmp_path, "lm-char", frame, built)
    apart = pd.read_csv(tmp_path / "workloads" / f"{safe_name('lm-char')}-{safe_name('own')}-reproduced.csv")
    assert list(apart["file"]) == ["read.json"]
    ranked = pd.read_csv(tmp_path / "workloads" / f"{safe_name('lm-char')}-{safe_name('own')}.csv")
    assert sorted(ranked["file"]) == ["read.json", "rerun.json", "signed.json"]


OWN_SETTINGS = {"division": "own", "implementation": {"code": {"git_commit": COMMIT}}}


@pytest.mark.parametrize("settings, given, flags, refusal", [
    ({"division": "closed"}, COMMIT, {}, "is for own code"),
    (OWN_SETTINGS, COMMIT, {"run_recorded_command": False}, "pass --run-recorded-command too"),
    (OWN_SETTINGS, COMMIT, {"sign": False}, "cannot be written with --no-sign"),
    (OWN_SETTINGS, COMMIT[:11], {}, "does not name the recorded commit"),
    (OWN_SETTINGS, "0" * 40, {}, "does not name the recorded commit"),
    (OWN_SETTINGS, COMMIT[:12] + "zz", {}, "does not name the recorded commit"),
    ({"division": "own", "implementation": {"code": {"git_commit": None}}}, COMMIT, {}, "records no commit"),
])
def test_an_attestation_is_refused_where_it_would_attest_nothing(settings, given, flags, refusal):
    with pytest.raises(Usage, match=refusal):
        attestation.code_read(settings, given, **{"run_recorded_command": True, "sign": True, **flags})


def test_an_attestation_names_the_recorded_commit_in_full():
    for given in (COMMIT, COMMIT[:12], COMMIT[:20].upper()):
        assert attestation.code_read(OWN_SETTINGS, given, run_recorded_command=True, sign=True) == {"commit": COMMIT}


def test_reproduce_refuses_an_attestation_before_anything_runs(tmp_path, monkeypatch, capsys):
    from suite.cli import main

    monkeypatch.chdir(tmp_path)
    for argv, refusal in (([str(ORIGINAL)], "pass --run-recorded-command too"),
                          ([str(FIXTURES / "reference-smoke.json"), "--run-recorded-command"], "is for own code")):
        with pytest.raises(SystemExit) as exit_status:
            main(["reproduce", *argv, "--attest-code-read", COMMIT, "-o", "r.json"])
        assert exit_status.value.code == 2 and refusal in capsys.readouterr().err
        assert not (tmp_path / "r.json").exists()


def test_the_labels_of_own_reproductions_cannot_be_spelt_by_a_name_and_refuse_no_new_word():
    for phrase in (labels.LEVEL_TEXT["rerun"], f"{labels.LEVEL_TEXT['rerun']}: {labels.OWN_RERUN_TEXT}",
                   f"{labels.LEVEL_TEXT['reproduced']}; {labels.CODE_READ_TEXT} 16b0df863cf5"):
        assert labels.label_refusal(phrase) is not None  # a system named so is refused [name-trust]
    for plain in ("RE-7 code box", "step edges lab", "own figures rig"):  # words of the texts, not of a label
        assert labels.label_refusal(plain) is None


@pytest.mark.slow  # trains once and re-runs in the sandbox: ~20 s of the fast loop
def test_reproduce_records_the_attestation_signed_with_the_reproduction(tmp_path, monkeypatch, capsys):
    from test_own_code import TRAIN_SCRIPT, _git_repo

    from suite.cli import main

    (tmp_path / "code").mkdir()
    code = tmp_path / "code"
    (code / "train.py").write_text(TRAIN_SCRIPT)
    _git_repo(code)
    done = subprocess.run([sys.executable, "train.py"], cwd=code, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    commit = json.loads((code / "orig.json").read_text())["settings"]["implementation"]["code"]["git_commit"]
    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(tmp_path / "config"))
    _, fp = signing.keygen(tmp_path / "config")
    monkeypatch.chdir(code)
    assert main(["reproduce", "orig.json", "-o", str(tmp_path / "repro.json"), "--run-recorded-command",
                 "--attest-code-read", commit[:12], "--measure-for", "1"]) in (0, 1)
    assert f"you attested reading its code at commit {commit[:12]}" in capsys.readouterr().out
    repro = json.loads((tmp_path / "repro.json").read_text())
    assert repro["settings"]["reproduces"]["code_read"] == {"commit": commit}
    assert validate.check_document(repro) == [] and signing.signer(repro) == fp
