"""The manifest of the pinned commit's logs: a stored document that names the pinned commit holds
exactly its runs (none left out, none added, the same bytes and record), and the committed
manifest is the one the pinned checkout gives."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from suite.speedrun import documents, manifest, manifest_build
from suite.speedrun.tree import PINNED

SHIPPED = Path(__file__).resolve().parent.parent / "results" / "speedrun"


def _shipped(track: int) -> dict:
    path = SHIPPED / f"track_{track}.json"
    if not path.is_file():
        pytest.skip("no imported documents under results/speedrun")
    return json.loads(path.read_text())


def test_every_pinned_commit_has_a_manifest_and_the_shipped_documents_match_it():
    for commit in PINNED:
        assert manifest.load(commit), commit
    for track in (1, 2):
        doc = _shipped(track)
        assert doc["commit"] in PINNED and manifest.difference(doc) is None
        assert documents.check(doc, f"track_{track}.json") is None
    listed = manifest.load(_shipped(1)["commit"])
    assert len(listed) == len(_shipped(1)["runs"]) + len(_shipped(2)["runs"])


def test_a_run_left_out_is_caught_naming_it():
    doc = _shipped(1)
    # a run of no record: every figure the document derives again still agrees without it
    gone = next(r for r in doc["runs"] if r["record"] is None and r["baseline_of"] is None)
    doc["runs"].remove(gone)
    assert documents.check(doc, "track_1.json") == (
        f"its runs lack {gone['log']}, a log of commit {doc['commit'][:7]}'s manifest: import the checkout again")


def test_an_extra_run_is_caught_naming_it():
    doc = _shipped(2)
    extra = dict(doc["runs"][-1], log="records/track_2_medium/2099-01-01_Extra/a.txt", record=None, baseline_of=None)
    doc["runs"].append(extra)
    assert documents.check(doc, "track_2.json") == (
        f"its runs hold {extra['log']}, no log of commit {doc['commit'][:7]}'s manifest: import the checkout again")


def test_a_run_of_other_bytes_or_another_record_is_caught():
    doc = _shipped(1)
    run = next(r for r in doc["runs"] if r["record"] == 64)
    run["log_sha256"] = "0" * 64
    assert documents.check(doc, "track_1.json") == (
        f"its run {run['log']}'s log_sha256 is not that of commit {doc['commit'][:7]}'s manifest: "
        "import the checkout again")
    doc = _shipped(1)
    run = next(r for r in doc["runs"] if r["record"] == 64)
    run["record"] = 63
    assert "'s record is not that of commit" in documents.check(doc, "track_1.json")


def test_a_document_of_a_commit_without_a_manifest_is_not_held_to_one():
    doc = _shipped(2)
    doc.update(commit="0" * 40, upstream=None)
    doc["runs"].pop()
    assert manifest.difference(doc) is None


@pytest.mark.skipif(not os.environ.get("GOODBENCH_SPEEDRUN_CHECKOUT"),
                    reason="no modded-nanogpt checkout: set GOODBENCH_SPEEDRUN_CHECKOUT to one at f411b3d")
def test_the_manifest_regenerated_from_the_pinned_checkout_is_the_committed_one():
    commit, text = manifest_build.build(Path(os.environ["GOODBENCH_SPEEDRUN_CHECKOUT"]))
    assert text == manifest.path_of(commit).read_text(encoding="utf-8")
