"""A run is another's copy on its own evidence only (docs/rules.md, "One run, one owner"): a
third file that shares one run's step times and another run's curve joins neither to the other,
and a later file never demotes a run its owner signed and stored before it.

The runs are real: seeds 1 and 2 of dlrm-small's smoke runs (tests/corpus/valid/
dlrm-small-seeds-1-3.json), each given a file of its own and signed by its trainer; the bridge
is built the way a forger works (tests/forging.py): the victim's exact step times, the curve of
the attacker's own earlier run (curve and event log alike), fresh ids, a third key.
"""
from __future__ import annotations

import copy
import json

import pytest
from forging import CORPUS_VALID, codes, edit_log, moved, repair, set_logged
from test_copies import _key, _own_story, _statuses, _write

from suite.record import mllog
from suite.store.files import Refused, submit, submit_noted
from suite.trust import ownership, signing

SEEDS = next(p for p in CORPUS_VALID if p.name == "dlrm-small-seeds-1-3.json")


def _alone(seed: int, system: str) -> dict:
    """The corpus file's run of ``seed`` in a file of its own (another suite run, another system;
    in the open division, which may choose its seeds)."""
    doc = json.loads(SEEDS.read_text())
    doc["runs"] = [r for r in doc["runs"] if r["seed"] == seed]
    doc["settings"].update(seeds_per_workload=None, division="open", open_changes=[f"seed {seed} alone"])
    set_logged(doc["runs"][0], submission_division="open")
    return repair(_own_story(doc, system))


def _with_curve_of(doc: dict, source: dict) -> dict:
    """``doc`` (changed in place) whose one run reports the curve of ``source``'s one run: its
    curve points' values and its log's training losses and evaluations, step by step."""
    run, theirs = doc["runs"][0], source["runs"][0]
    logged = {(e.key, e.metadata.get("step")): e for e in mllog.parse(theirs["event_log"])
              if e.key in ("train_loss", "eval_accuracy")}

    def take(event: mllog.Event) -> mllog.Event:
        other = logged.get((event.key, event.metadata.get("step")))
        return event if other is None else moved(event, value=other.value, metadata={**event.metadata,
                                                                                      **other.metadata})
    edit_log(run, take)
    times = {p["step"]: p["time_s"] for p in run["curve"]}
    run["curve"] = [{**p, "time_s": times[p["step"]]} for p in copy.deepcopy(theirs["curve"])]
    return repair(doc)


@pytest.fixture()
def keys(tmp_path):
    return {who: _key(tmp_path, who) for who in ("attacker", "victim", "third")}


def _bridge(victim: dict, attacker: dict, key) -> dict:
    doc = _own_story(copy.deepcopy(victim), "bridge-lab")
    return signing.seal(_with_curve_of(doc, attacker), key)


def test_a_bridge_between_a_victim_and_an_earlier_run_is_the_copy_and_the_victim_stays_kept(tmp_path, keys):
    (attacker_key, attacker_fp), (victim_key, _), (third_key, _) = keys.values()
    folder = tmp_path / "results"
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    first = submit(_write(tmp_path / "attacker.json", earlier), folder)
    genuine = submit_noted(_write(tmp_path / "victim.json", victim), folder)
    assert genuine.notes == ()  # two independent runs: neither is the other's
    bridge = _bridge(victim, earlier, third_key)
    assert codes(bridge) == set()  # valid alone: only the store can tell
    claims = [c for name, doc in ((first.name, earlier), (genuine.path.name, victim), ("bridge.json", bridge))
              for c in ownership.claims(name, doc)]
    found = {(claims[link.a].file, claims[link.b].file): link.code for link in ownership.links(claims)}
    assert found == {(first.name, "bridge.json"): "seed-copy", (genuine.path.name, "bridge.json"): "duplicate-steps"}

    # it matches two runs stored before it, each signed by its owner: it is the copy, refused
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "bridge.json", bridge), folder)
    assert {p.code for p in refused.value.problems} == {"duplicate-steps"}
    assert genuine.path.name in refused.value.problems[0].reason
    assert _statuses(folder) == {first.name: {None}, genuine.path.name: {None}}

    # on the leaderboard too, whatever stored it: the victim and the earlier run are both kept
    verdicts = ownership.resolve(claims)
    assert set(verdicts) == {("bridge.json", 0)}
    assert verdicts[("bridge.json", 0)].status == ownership.COPY
    # signed by the attacker's own key, it is the attacker's run again: a copy as well
    again = ownership.claims("again.json", _bridge(victim, earlier, attacker_key))
    assert {k: v.status for k, v in ownership.resolve(claims[:2] + again).items()} == {("again.json", 0): "copy"}
    assert attacker_fp


def test_a_later_file_never_demotes_a_run_its_owner_signed_and_stored_first(tmp_path, keys):
    """A bridge signed by a third key and stored between the attacker's run and the victim's
    disputes the attacker's run only; the victim's, stored after it, is judged on its own
    evidence: the same step times as the bridge, but the bridge is already a record of the
    attacker's run, which the victim does not match — no record of the victim's run alone — so
    the victim stays kept and the bridge is the copy (a plain copy stored first still disputes
    it: the front-running a commitment prevents, docs/submitting.md). Stored after both, the bridge is
    the copy whichever key signed it, and neither run it matches loses anything."""
    (attacker_key, _), (victim_key, victim_fp), (third_key, _) = keys.values()
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    bridge = _bridge(victim, earlier, third_key)
    a, v, b = (ownership.claims(n, d) for n, d in (("a.json", earlier), ("v.json", victim), ("b.json", bridge)))
    for order in ([*a, *v, *b], [*v, *a, *b]):
        assert {k: x.status for k, x in ownership.resolve(order).items()} == {("b.json", 0): "copy"}
    # stored before the victim, the bridge is disputed with the attacker's run; the victim, judged
    # on its own evidence, matches the bridge only, and the bridge is a record of another run as
    # well: it is no record of the victim's run alone, so it demotes nothing and is the copy
    front = ownership.resolve([*a, *b, *v])
    assert {k: (x.status, x.original.file) for k, x in front.items()} == {("b.json", 0): ("copy", "a.json")}
    # while a plain copy stored first (the front-running a commitment prevents) still disputes it
    plain_copy = ownership.claims("c.json", signing.seal(_own_story(copy.deepcopy(victim), "copy-lab"), third_key))
    assert {k: (x.status, x.original.file) for k, x in ownership.resolve([*a, *plain_copy, *v]).items()} == \
        {("v.json", 0): ("disputed", "c.json")}
    # and a record disputed with the victim's own run keeps the victim's third copy disputed, not kept
    thief = ownership.claims("t.json", signing.seal(_own_story(copy.deepcopy(victim), "thief-lab"), attacker_key))
    assert {k: x.status for k, x in ownership.resolve([*v, *thief, *plain_copy]).items()} == \
        {("t.json", 0): "disputed", ("c.json", 0): "disputed"}
    # an unsigned victim stored before the bridge is not the bridge's to demote either: the
    # bridge, signed, is disputed with the attacker's run, and the unsigned run stays kept
    plain = ownership.claims("p.json", _alone(2, "victim-lab"))
    assert {k: (x.status, x.original.file) for k, x in ownership.resolve([*a, *plain, *b]).items()} == \
        {("b.json", 0): ("disputed", "a.json")}
    # while its owner's key, signing it later, still wins over that unsigned file
    assert {k: (x.status, x.original.owner) for k, x in ownership.resolve([*plain, *v]).items()} == \
        {("p.json", 0): ("copy", victim_fp)}


def test_a_victim_stored_after_a_bridge_is_stored_kept_and_the_bridge_shown_as_the_copy(tmp_path, keys):
    """The store and the leaderboard agree: a bridge stored between the attacker's run and the
    victim's is disputed with the attacker's until the victim is stored, then shown as a copy;
    the victim is stored and ranked, with a note saying that the bridge is now a copy and why."""
    (attacker_key, _), (victim_key, _), (third_key, _) = keys.values()
    folder = tmp_path / "results"
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    first = submit(_write(tmp_path / "attacker.json", earlier), folder)
    bridge = _bridge(victim, earlier, third_key)
    bridged = submit_noted(_write(tmp_path / "bridge.json", bridge), folder)
    assert len(bridged.notes) == 1 and "shown as disputed" in bridged.notes[0]
    assert _statuses(folder) == {first.name: {None}, bridged.path.name: {"disputed"}}
    genuine = submit_noted(_write(tmp_path / "victim.json", victim), folder)
    # one note says which earlier file is now judged a copy, and why: it is a record of two runs
    assert len(genuine.notes) == 1
    note = genuine.notes[0]
    assert note.startswith(f"run {bridge['runs'][0]['run_id']} of {bridged.path.name}, shown as disputed with run "
                           f"{earlier['runs'][0]['run_id']} of {first.name}, is also run {victim['runs'][0]['run_id']} "
                           "of this file (the same step times)")
    assert "a bridge between them" in note and note.endswith("is now shown as a copy, not ranked")
    assert _statuses(folder) == {first.name: {None}, bridged.path.name: {"copy"}, genuine.path.name: {None}}


def test_submit_prints_which_earlier_file_a_later_one_turned_into_a_copy(tmp_path, keys, capsys):
    """`goodbench submit` prints the note: one line naming the bridge now judged a copy."""
    from suite.cli import main

    (attacker_key, _), (victim_key, _), (third_key, _) = keys.values()
    folder = tmp_path / "results"
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    submit(_write(tmp_path / "attacker.json", earlier), folder)
    bridged = submit(_write(tmp_path / "bridge.json", _bridge(victim, earlier, third_key)), folder)
    capsys.readouterr()
    assert main(["submit", str(_write(tmp_path / "victim.json", victim)), "--results-dir", str(folder)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and f"of {bridged.name}, shown as disputed" in notes[0]
    assert notes[0].endswith(f"so {bridged.name}'s run is now shown as a copy, not ranked")
