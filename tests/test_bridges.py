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
    """Signed by the key of the run whose curve it holds, the bridge is one run with that run (a
    key claiming one curve under two seeds) and with the victim (its step times): a copy."""
    (attacker_key, _), (victim_key, _), (third_key, _) = keys.values()
    folder = tmp_path / "results"
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    first = submit(_write(tmp_path / "attacker.json", earlier), folder)
    genuine = submit_noted(_write(tmp_path / "victim.json", victim), folder)
    assert genuine.notes == ()  # two independent runs: neither is the other's
    bridge = _bridge(victim, earlier, attacker_key)
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
    verdicts = ownership.resolve(claims)
    assert {k: v.status for k, v in verdicts.items()} == {("bridge.json", 0): ownership.COPY}


def test_a_curve_under_another_key_links_nothing_a_third_keys_bridge_is_a_plain_copy(tmp_path, keys):
    """Signed by a third key, the curve of the attacker's run is no evidence (every workload
    trains one curve per seed wherever it runs: rule seed-copy holds within one key): the bridge
    is the victim's step times under another key, a plain copy — disputed stored after the
    victim, disputing it stored before (the front-running a commitment prevents, docs/submitting.md)."""
    (attacker_key, _), (victim_key, _), (third_key, _) = keys.values()
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    bridge = _bridge(victim, earlier, third_key)
    a, v, b = (ownership.claims(n, d) for n, d in (("a.json", earlier), ("v.json", victim), ("b.json", bridge)))
    claims = [*a, *v, *b]
    assert {(claims[x.a].file, claims[x.b].file): x.code for x in ownership.links(claims)} == \
        {("v.json", "b.json"): "duplicate-steps"}
    for order in ([*a, *v, *b], [*v, *a, *b]):
        assert {k: (x.status, x.original.file) for k, x in ownership.resolve(order).items()} == \
            {("b.json", 0): ("disputed", "v.json")}
    assert {k: (x.status, x.original.file) for k, x in ownership.resolve([*a, *b, *v]).items()} == \
        {("v.json", 0): ("disputed", "b.json")}


def test_a_later_file_never_demotes_a_run_its_owner_signed_and_stored_first(tmp_path, keys):
    """A bridge signed by the attacker's key (its earlier run's curve, the victim's step times) is
    that key's run again wherever it is stored: a copy, which demotes nothing — the victim stored
    after it stays kept (a plain copy stored first still disputes it: the front-running a
    commitment prevents, docs/submitting.md)."""
    (attacker_key, _), (victim_key, victim_fp), (third_key, _) = keys.values()
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    bridge = _bridge(victim, earlier, attacker_key)
    a, v, b = (ownership.claims(n, d) for n, d in (("a.json", earlier), ("v.json", victim), ("b.json", bridge)))
    for order in ([*a, *v, *b], [*v, *a, *b]):
        assert {k: x.status for k, x in ownership.resolve(order).items()} == {("b.json", 0): "copy"}
    # stored before the victim, the bridge is a copy of its key's own run; the victim, matching
    # only that copy, stays kept
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
    # bridge, its key's run again, is a copy, and the unsigned run stays kept
    plain = ownership.claims("p.json", _alone(2, "victim-lab"))
    assert {k: (x.status, x.original.file) for k, x in ownership.resolve([*a, *plain, *b]).items()} == \
        {("b.json", 0): ("copy", "a.json")}
    # while its owner's key, signing it later, still wins over that unsigned file
    assert {k: (x.status, x.original.owner) for k, x in ownership.resolve([*plain, *v]).items()} == \
        {("p.json", 0): ("copy", victim_fp)}


def test_the_attackers_own_bridge_is_refused_and_the_victim_stored_after_it_is_kept(tmp_path, keys):
    """The store and the leaderboard agree: the bridge, signed by the key that stored the run
    whose curve it holds, is refused (a key holds a run once), and the victim is stored and
    ranked, with no note."""
    (attacker_key, _), (victim_key, _), _ = keys.values()
    folder = tmp_path / "results"
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    first = submit(_write(tmp_path / "attacker.json", earlier), folder)
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "bridge.json", _bridge(victim, earlier, attacker_key)), folder)
    assert {(p.code, p.field) for p in refused.value.problems} == {("seed-copy", "runs[0].curve")}
    assert first.name in refused.value.problems[0].reason
    genuine = submit_noted(_write(tmp_path / "victim.json", victim), folder)
    assert genuine.notes == ()
    assert _statuses(folder) == {first.name: {None}, genuine.path.name: {None}}


def _times_of(doc: dict, source: dict) -> dict:
    """``doc`` (changed in place) whose one run takes ``source``'s step times, each logged block's
    rescaled to ``doc``'s block sum: ``source``'s jitter (its fingerprint) under ``doc``'s log clock."""
    run, theirs = doc["runs"][0], source["runs"][0]["step_times_s"]
    for event in mllog.parse(run["event_log"]):
        if event.key in ("block_stop", "warmup_stop"):
            first, last = event.metadata["first_step"], event.metadata["last_step"]
            total, taken = sum(run["step_times_s"][first - 1:last]), theirs[first - 1:last]
            new = [round(t * total / sum(taken), 7) for t in taken]
            new[-1] = round(total - sum(new[:-1]), 7)
            run["step_times_s"][first - 1:last] = new
    return repair(doc)


def test_a_victim_stored_after_a_bridge_turns_the_bridge_into_the_copy_and_says_why(tmp_path, keys):
    """A third key's bridge (the attacker's step times, rule steps-fingerprint, under the victim's
    log clock, rule log-times) stored before the victim is disputed with the attacker's run; the
    victim, stored next, is kept, and its submit prints why the bridge is now a copy."""
    (attacker_key, _), (victim_key, _), (third_key, _) = keys.values()
    folder = tmp_path / "results"
    earlier = signing.seal(_alone(1, "attacker-lab"), attacker_key)
    victim = signing.seal(_alone(2, "victim-lab"), victim_key)
    bridge = signing.seal(_times_of(_own_story(copy.deepcopy(victim), "bridge-lab"), earlier), third_key)
    assert codes(bridge) == set()
    first = submit(_write(tmp_path / "attacker.json", earlier), folder)
    held = submit_noted(_write(tmp_path / "bridge.json", bridge), folder)
    [note] = held.notes
    assert "fingerprint similarity" in note and "disputed" in note
    stored = submit_noted(_write(tmp_path / "victim.json", victim), folder)
    [note] = stored.notes
    assert f"run {bridge['runs'][0]['run_id']} of {held.path.name}, shown as disputed with run" in note
    assert "the same logged block sums and stamps" in note and "a bridge between them" in note
    assert _statuses(folder) == {first.name: {None}, held.path.name: {"copy"}, stored.path.name: {None}}
