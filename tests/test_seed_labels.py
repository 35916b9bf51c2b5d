"""A curve under another seed says nothing of who ran it (docs/rules.md, "One run, one owner",
rule seed-copy): each workload trains one curve per seed wherever it runs, so trial 16's file
with its seed labels swapped, stored first, would have demoted every later honest run of those
seeds. Across keys it demotes nothing; within one key it is still one run claimed twice.

The runs are real: seeds 1 and 2 of dlrm-small's smoke runs (tests/corpus/valid/
dlrm-small-seeds-1-3.json); the honest victim's seed 1 is the same run measured again (step
times and a clock of its own, the same curve).
"""
from __future__ import annotations

import copy
import json

import factories
import pytest
from forging import codes, repair, set_logged
from test_bridges import SEEDS, _alone
from test_copies import _key, _own_story, _statuses, _write
from test_log_times import reclocked

from suite.store.files import Refused, submit, submit_noted
from suite.trust import ownership, signing


def _swapped() -> dict:
    """Seeds 1 and 2 of the corpus file in one file of their own, each run labelled with the
    other's seed (its log too), in the open division."""
    doc = json.loads(SEEDS.read_text())
    doc["runs"] = [r for r in doc["runs"] if r["seed"] in (1, 2)]
    for run in doc["runs"]:
        run["seed"] = 3 - run["seed"]
        set_logged(run, seed=run["seed"], submission_division="open")
    doc["runs"].sort(key=lambda r: r["seed"])
    doc["settings"].update(seeds_per_workload=None, division="open", open_changes=["seeds 1 and 2"])
    return repair(_own_story(doc, "attacker-lab"))


def _measured_again(seed: int, system: str, variant: int) -> dict:
    """The corpus run of ``seed`` as another machine measures it again: its curve, times of its own."""
    doc = _alone(seed, system)
    factories.retimed(doc["runs"][0], variant)
    reclocked(doc["runs"][0], variant)
    return repair(doc)


@pytest.fixture()
def keys(tmp_path):
    return {who: _key(tmp_path, who) for who in ("attacker", "victim")}


def test_a_file_with_swapped_seed_labels_stored_first_demotes_no_honest_run(tmp_path, keys):
    (attacker_key, _), (victim_key, _) = keys.values()
    folder = tmp_path / "results"
    swapped = signing.seal(_swapped(), attacker_key)
    assert codes(swapped) == set()  # valid alone: each curve once
    planted = submit(_write(tmp_path / "swapped.json", swapped), folder)
    victim = signing.seal(_measured_again(1, "victim-lab", 4), victim_key)
    assert codes(victim) == set()
    # the victim's seed 1 is the curve the swapped file calls seed 2: no link, no note
    claims = ownership.claims(planted.name, swapped) + ownership.claims("victim.json", victim)
    assert ownership.links(claims) == []
    assert [link.code for link in ownership.links(claims, any_key=True)] == [ownership.SEED_COPY]
    stored = submit_noted(_write(tmp_path / "victim.json", victim), folder)
    [note] = stored.notes  # flagged, not demoted: one of the two labels is wrong
    assert f"(seed 1) has the curve of run {swapped['runs'][1]['run_id']} (seed 2) in {planted.name}" in note
    assert "neither is demoted" in note and "seed labels is wrong" in note
    assert _statuses(folder) == {planted.name: {None}, stored.path.name: {None}}


def test_one_key_claiming_one_curve_under_two_seeds_is_still_refused(tmp_path, keys):
    """The swapped file's key storing seed 1's curve as seed 1 as well holds one run twice."""
    (attacker_key, _), _ = keys.values()
    folder = tmp_path / "results"
    planted = submit(_write(tmp_path / "swapped.json", signing.seal(_swapped(), attacker_key)), folder)
    again = signing.seal(_measured_again(1, "attacker-lab", 6), attacker_key)
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "again.json", copy.deepcopy(again)), folder)
    [problem] = refused.value.problems
    assert (problem.code, problem.field) == (ownership.SEED_COPY, "runs[0].curve")
    assert planted.name in problem.reason


def test_the_site_shows_the_seed_conflict_on_both_runs(tmp_path, keys):
    """The note to the submitter is not the only trace: the leaderboard, from the stored files,
    shows both runs as a seed conflict (neither demoted) and the runs download names the other."""
    from suite.leaderboard import pipeline
    from suite.site.columns import _system_caveats

    (attacker_key, _), (victim_key, _) = keys.values()
    folder = tmp_path / "results"
    planted = submit(_write(tmp_path / "swapped.json", signing.seal(_swapped(), attacker_key)), folder)
    victim = submit_noted(_write(tmp_path / "victim.json",
                                 signing.seal(_measured_again(1, "victim-lab", 4), victim_key)), folder).path
    board = pipeline.read(folder)
    runs = board.runs.set_index(["file", "seed"])
    assert runs.loc[(victim.name, 1), "seed_conflict"] == (
        f"same curve as {planted.name}'s seed 2 (another key): one seed label is wrong; a reproduction tells which")
    assert runs.loc[(planted.name, 2), "seed_conflict"].startswith(f"same curve as {victim.name}'s seed 1 (another key)")
    assert runs.loc[(planted.name, 1), "seed_conflict"] is None
    assert board.runs["copy_status"].isna().all()
    for name in (planted.name, victim.name):
        [entry] = board.entries[board.entries["file"] == name].to_dict("records")
        assert ("seed conflict", "warn") in [b for c in _system_caveats(entry) for b in c.badges]
