"""Leaderboard entries take their per-workload figures from the document's summary."""
from __future__ import annotations

import json
from pathlib import Path

import factories
import numpy as np
import pytest

from suite import validate
from suite.figures import tta
from suite.figures.summary import summarize
from suite.leaderboard import rows as leaderboard
from suite.record import results

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"


def _with_failed_fastest_seed(workload: str) -> dict:
    """A valid document of one workload whose fastest run failed but still carries its tta_s."""
    doc = factories.synthetic_document("synthetic-alpha", rng=np.random.default_rng(3), accelerator=0,
                                       workloads=(workload,), goodput=True)
    fastest = min(doc["runs"], key=lambda r: r["metrics"]["tta_s"])
    fastest.update(status="failed", error="process exited with code 1")
    fastest["event_log"] = [line.replace('"status": "success"', '"status": "aborted"') if '"run_stop"' in line
                            else line for line in fastest["event_log"]]  # its log says so too (stream-run-bounds)
    doc["summary"] = summarize(doc["runs"])
    doc = json.loads(results.dumps(doc))
    assert validate.check_document(doc) == []
    return doc


def test_a_failed_runs_tta_does_not_count_on_the_leaderboard():
    doc = _with_failed_fastest_seed("fashion-cnn")
    [entry] = leaderboard.rows("r.json", doc)
    score = doc["summary"]["fashion-cnn@full"]["tta"]
    assert (entry["score_s"], [entry["ci95_low_s"], entry["ci95_high_s"]], entry["tta_valid"]) == \
        (score["olympic_mean_s"], score["ci95_s"], score["valid"])
    assert score["converged"] == len(doc["runs"]) - 1
    counting_all = tta.score({r["seed"]: r["metrics"]["tta_s"] for r in doc["runs"]})
    assert entry["score_s"] != pytest.approx(counting_all["olympic_mean_s"])
    assert entry["seeds"] == len(doc["runs"])


def test_throughput_mfu_energy_and_goodput_are_medians_of_complete_runs():
    doc = _with_failed_fastest_seed("lm-char")
    [entry] = leaderboard.rows("r.json", doc)
    summary = doc["summary"]["lm-char@full"]
    assert (entry["samples_per_s"], entry["tokens_per_s"], entry["mfu"]) == \
        (summary["samples_per_s_median"], summary["tokens_per_s_median"], summary["mfu_median"])
    complete = [r for r in doc["runs"] if r["status"] == "complete"]
    assert entry["energy_per_sample_j"] == pytest.approx(
        np.median([r["metrics"]["energy_per_sample_j"] for r in complete]))
    assert entry["goodput"] == pytest.approx(np.median([r["goodput"]["goodput"] for r in complete]))


def test_entries_do_not_depend_on_a_stored_summary():
    doc = _with_failed_fastest_seed("dlrm-small")
    without = {k: v for k, v in doc.items() if k != "summary"}
    assert leaderboard.rows("r.json", without) == leaderboard.rows("r.json", doc)


def _refuse_every_file(doc, runs, now):
    """A rule of the next rules version that no stored file passes."""
    return [validate.Problem("division", "settings", "refused by a newer rule")]


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """A file valid under today's rules (no rules_version: written under rules v1), and the rules
    bumped to v2 with one more rule that refuses it."""
    from suite.record.rules_version import RULES_DATES
    from suite.validate import registry

    path = tmp_path / "stored.json"
    doc = json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())
    del doc["rules_version"]  # a file written before rules had versions
    for version in RULES_DATES:  # later rules in force only after the file's day: it is held to v1
        if version > 1:
            monkeypatch.setitem(RULES_DATES, version, "2026-12-31")
    path.write_text(json.dumps(doc))
    assert leaderboard.check_file(path) == (json.loads(path.read_text()), None, [])
    monkeypatch.setitem(registry._rules, registry.DOCUMENT, list(registry.rules(registry.DOCUMENT)))
    validate.document_rule("division")(_refuse_every_file)
    monkeypatch.setattr(validate, "RULES_VERSION", 2)
    return path


def test_a_file_refused_by_newer_rules_says_under_which_rules_it_was_stored(stored):
    """A file that states no rules version is held to v1 but never said to be stored under it
    (a malformed file without one read "stored under rules v1, refused by rules v9" in the site's
    list of files not shown); one that states v1 is."""
    doc, line, _ = leaderboard.check_file(stored)
    assert doc is None
    assert line == ("states no rules version (held to v1), refused by rules v2: "
                    "stored.json: settings: refused by a newer rule [division]")
    doc = json.loads(stored.read_text())
    for version in (1, 3):  # recorded explicitly: older, or newer than this suite's rules
        stored.write_text(json.dumps({**doc, "rules_version": version}))
        _, line, _ = leaderboard.check_file(stored)
        assert line.startswith("stored under rules v1, refused by rules v2: ") == (version == 1)
        assert "states no rules version" not in line


def test_a_file_its_date_holds_to_later_rules_says_the_version_it_states_and_the_one_it_is_held_to():
    """A file stating v5 but dated when v9 was due read "stored under rules v9" (review L12)."""
    from suite.record.rules_version import RULES_VERSION

    doc = {"rules_version": 5, "created_at": "2030-01-01T00:00:00Z"}
    held = validate.stored_under(doc)
    assert held == RULES_VERSION > 5
    assert validate.stored_words(doc) == f"states rules v5 (held to v{held})"
    assert validate.stored_words({**doc, "rules_version": held}) == f"stored under rules v{held}"


def test_a_file_of_the_current_rules_or_unreadable_is_refused_without_versions(stored, monkeypatch):
    monkeypatch.setattr(validate, "RULES_VERSION", 1)
    assert leaderboard.check_file(stored)[1] == "stored.json: settings: refused by a newer rule [division]"
    monkeypatch.setattr(validate, "RULES_VERSION", 2)
    stored.write_text("{not json")
    assert leaderboard.check_file(stored)[1].startswith("stored.json: not valid JSON")


OLD_STORED = sorted(p for p in (REPO / "results").glob("*.json")
                    if json.loads(p.read_text()).get("rules_version", 1) < 6)


@pytest.mark.parametrize("path", OLD_STORED, ids=lambda p: p.name[:16])
def test_a_file_stored_before_rules_v6_keeps_its_status_with_what_v6_would_refuse_listed(path):
    """Rules v6 require an event log with the run's claims; a file stored before keeps its
    status, and the site lists what v6 would refuse (suite.validate.check_stored)."""
    assert {p.code for p in validate.validate_file(path)} <= {c for c in validate.CODES if validate.SINCE[c] >= 6}
    doc, line, waived = leaderboard.check_file(path)
    assert doc is not None and line is None and waived
    stated = "rules_version" in doc  # one that states none is held to v1 (or its date's), never "stored under" it
    said = "stored under rules v" if stated else f"states no rules version (held to v{validate.stored_under(doc)}), "
    assert all(w.startswith(said) and "not held to v6's [" in w for w in waived)


def test_a_file_claiming_old_rules_is_held_to_every_rule_on_submission(tmp_path):
    """Naming an older rules version waives nothing at the store: submit holds every new file to
    every rule, whatever it names."""
    from suite.store import files as store

    doc = json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())
    doc["rules_version"] = 1
    del doc["runs"][0]["event_log"], doc["runs"][0]["goodput"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(store.Refused) as refused:
        store.submit(path, tmp_path / "results")
    # (and the file, dated after rules v5 came into force, names v1: rule rules-version-behind)
    assert {p.code for p in refused.value.problems} == {"event-log-missing", "rules-version-behind"}


# ---------------------------------------------------------------- scaling efficiency
def _entry(file: str, ranks: int, samples_per_s: float, signer: str | None = None, copy_of: str | None = None,
           system: str = "lab-8x") -> dict:
    return {**dict.fromkeys(leaderboard.ENTRY_COLUMNS), "file": file, "system": system, "workload": "gpt2-124m",
            "scale": "full", "division": "closed", "world_size": ranks, "samples_per_s": samples_per_s,
            "signer": signer, "copy_of": copy_of}


def _efficiency(*entries: dict) -> dict[tuple[str, int], float | None]:
    import pandas as pd

    frame = leaderboard.with_scaling_efficiency(pd.DataFrame(list(entries), columns=leaderboard.ENTRY_COLUMNS))
    return {(f, n): e for f, n, e in zip(frame["file"], frame["world_size"], frame["scaling_efficiency"])}


def test_scaling_efficiency_is_against_a_one_rank_entry_of_the_same_file_or_signer_only():
    """A system name is anyone's to write: another submitter's slow 1-rank entry under the same
    name once made an 8-rank entry's efficiency 451.7."""
    eight = _entry("a.json", 8, 800.0)
    other = _entry("x.json", 1, 0.2214)  # another submitter's, unsigned, under the same name
    assert _efficiency(eight, other)[("a.json", 8)] is None
    assert _efficiency(eight, other, _entry("a.json", 1, 125.0))[("a.json", 8)] == pytest.approx(0.8)
    signed = _entry("b.json", 8, 800.0, signer="SHA256:me")
    mine = _entry("c.json", 1, 100.0, signer="SHA256:me")  # another file, the same key
    theirs = _entry("d.json", 1, 0.2214, signer="SHA256:them")
    assert _efficiency(signed, mine, theirs)[("b.json", 8)] == pytest.approx(1.0)
    assert _efficiency(signed, theirs)[("b.json", 8)] is None
    assert _efficiency(_entry("e.json", 8, 800.0), mine)[("e.json", 8)] is None  # unsigned: its own file only
    copy = _entry("b.json", 1, 0.2214, signer="SHA256:me", copy_of="SHA256:owner")
    assert _efficiency(signed, copy)[("b.json", 8)] is None  # a copy is no baseline
    assert _efficiency(signed, mine, _entry("c.json", 1, 100.0, signer="SHA256:me", system="other"))[
        ("b.json", 8)] == pytest.approx(1.0)  # the same system name only


def test_a_scaling_efficiency_beyond_superlinear_is_left_empty():
    """One's own slow 1-rank run (the same file, signed by the same key) made any efficiency show."""
    eight = _entry("a.json", 8, 800.0, signer="SHA256:me")
    assert _efficiency(eight, _entry("a.json", 1, 100.0 / 3))[("a.json", 8)] is None  # 3.0
    assert _efficiency(eight, _entry("b.json", 1, 100.0 / leaderboard.SUPERLINEAR_LIMIT,
                                     signer="SHA256:me"))[("a.json", 8)] == pytest.approx(leaderboard.SUPERLINEAR_LIMIT)


def test_a_json_file_that_is_no_results_file_is_said_to_be_none_not_stored_under_old_rules(tmp_path):
    """A new user's notes.json in the results folder read "stored under rules v1, refused by rules
    v9" on the index page: goodbench never stored it under any rules."""
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"title": "my notes"}))
    doc, line, _ = leaderboard.check_file(notes)
    assert doc is None and line.startswith("notes.json: schema_version: no schema_version: not a goodbench results file")
    assert "rules v" not in line
