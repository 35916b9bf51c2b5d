"""Copies of another run, whose a run is, and when a file can have been written (rules v7;
docs/rules.md, "One run, one owner" and "Plausibility").

Each forgery is built the way a forger works (tests/forging.py): the real smoke result, one
change — step times nudged or rescaled, run ids and the suite run's id made anew, seed 1's run
claimed for other seeds, every stamp moved — every derived figure repaired with suite/figures/derive.py
and the event log rewritten to tell the same story. Then the exact refusal, or the label the
leaderboard gives. The honest files (the reference result and tests/corpus/valid/) pass, and
the margin each threshold leaves on them is measured here.
"""
from __future__ import annotations

import copy
import datetime as dt
import hashlib
import itertools
import json
import math
import re
import uuid
from pathlib import Path

import factories
import numpy as np
import pytest
from forging import HONEST, SMOKE, codes, edit_log, moved, real, repair, set_logged

from suite import validate as v
from suite.figures.reproducibility import SEED_SPREAD
from suite.leaderboard import pipeline
from suite.record import claims, mllog, results
from suite.record.errors import GoodbenchError
from suite.record.rules_version import RULES_DATES
from suite.site.builder import build_site
from suite.site.names import run_slug, system_slug
from suite.store import ledger
from suite.store.files import Refused, stored_files, submit, submit_noted
from suite.trust import commitment, fingerprint, ownership, shuffles, signing
from suite.validate.tolerance import CLOCK_SLACK

COPIED = "dlrm-small"  # the run copied: 150 real steps


# ---------------------------------------------------------------- how a copier works
def _own_story(doc: dict, system: str) -> dict:
    """``doc`` (changed in place) made to look like a file of its own: new run ids, a new suite
    run id, another system name, each in the event logs too."""
    session = uuid.uuid4().hex
    doc["settings"]["session"]["id"] = session
    doc["system"]["name"] = system
    for run in doc["runs"]:
        run["run_id"] = uuid.uuid4().hex
        run.pop("run_id_nonce", None)
        set_logged(run, **{claims.SESSION: session, "submission_platform": system})
    doc.pop("signature", None)
    return doc


def _timed(meta: dict, factor: float) -> dict:
    """An event's metadata with every duration (a key ending in ``_s``) × ``factor``."""
    def scaled(value):
        if isinstance(value, list):
            return [scaled(x) for x in value]
        return value * factor if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    return {k: scaled(value) if k.endswith("_s") else value for k, value in meta.items()}


def _retimed(doc: dict, factor: float = 1.0, nudge: float = 0.0, seed: int = 0) -> dict:
    """Every run's time stretched by ``factor`` from its first ``init_start`` — its log's stamps
    and durations, its step times, curve times, time to train, wall time and phases, and the
    file's creation — then each step time moved by ± ``nudge`` (at random, to the stored 7
    decimals) with each logged block's step clock the sum of its new times: the log rewritten to
    tell the same story; then every figure repaired."""
    rng = np.random.default_rng(seed)
    created = dt.datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00")).timestamp()
    for run in doc["runs"]:
        origin = min(e.t for e in mllog.parse(run["event_log"]) if e.key == "init_start")
        edit_log(run, lambda e, o=origin: moved(e, time_ms=1000 * (o + (e.t - o) * factor),
                                                metadata=_timed(e.metadata, factor)))
        for point in run["curve"]:
            point["time_s"] *= factor
        run["time_to_train_s"] *= factor
        run["wall_s"] *= factor
        run["phases_s"] = {k: value * factor for k, value in run["phases_s"].items()}
        times = np.asarray(run["step_times_s"]) * factor + rng.choice([-nudge, nudge], len(run["step_times_s"]))
        run["step_times_s"] = [round(float(t), 7) for t in times]

        def block(event, times=run["step_times_s"]):
            if event.key not in ("block_stop", "warmup_stop"):
                return event
            first, last = event.metadata["first_step"], event.metadata["last_step"]
            return moved(event, metadata={**event.metadata, "step_s": sum(times[first - 1:last])})
        edit_log(run, block)
        created = max(created, origin + (created - origin) * factor)
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(math.ceil(created), dt.UTC))
    return repair(doc)


def _statuses(folder: Path) -> dict[str, set]:
    """What the leaderboard says of each stored file's entries: {file: {None (kept), "copy", "disputed"}}."""
    table = _table(folder)
    return {f: {None if s is None or s != s else s for s in group} for f, group in table["copy_status"].groupby(level=0)}


def _key(tmp_path: Path, name: str):
    path, fp = signing.keygen(tmp_path / name)
    return signing.load_key(path.parent), fp


def _write(path: Path, doc: dict) -> Path:
    results.write(path, doc)
    return path


def _table(folder: Path):
    """The leaderboard's entries of the store, by file, in the order the files were stored."""
    paths = ledger.in_store_order(folder, stored_files(folder))
    return pipeline.table([(p.name, results.load(p)) for p in paths]).set_index("file")


@pytest.fixture(scope="module")
def original() -> dict:
    return real(COPIED)


# ---------------------------------------------------------------- copies by fingerprint
@pytest.mark.parametrize("factor, nudge", [(1.0, 1e-7), (1.01, 0.0), (0.99, 1e-7)],
                         ids=["nudged-1e-7", "times-x1.01", "x0.99-and-nudged"])
def test_a_rescaled_or_nudged_copy_is_valid_alone_and_refused_by_the_store(tmp_path, original, factor, nudge):
    folder = tmp_path / "results"
    first = submit(_write(tmp_path / "original.json", original), folder)
    forged = _retimed(_own_story(copy.deepcopy(original), "copier-lab"), factor, nudge)
    assert forged["runs"][0]["step_times_s"] != original["runs"][0]["step_times_s"]
    assert codes(forged) == set()  # on its own, a valid file: only the store can tell
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "forged.json", forged), folder)
    [problem] = refused.value.problems
    assert (problem.code, problem.field) == ("steps-fingerprint", "runs[0].step_times_s")
    assert first.name in problem.reason and original["runs"][0]["run_id"] in problem.reason
    assert sorted(p.name for p in folder.iterdir()) == before


def test_a_copy_in_the_same_file_is_refused_by_its_fingerprint(original):
    doc = copy.deepcopy(SMOKE)
    doc["runs"] = [r for r in doc["runs"] if r["workload"]["id"] in ("lm-char", COPIED)]
    doc["settings"]["workloads"] = ["lm-char", COPIED]
    doc = repair(doc)
    # the dlrm run again, ×1.01, as seed 2 trained after the others: its log moved after them
    again = _retimed(real(COPIED), 1.01)["runs"][0]
    later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [again]})[0]
    again = factories.retimed_copy(again, later, {"seed": 2}, variant=None) | {"seed": 2}
    for point in again["curve"]:  # its losses edited a little too; its AUC, kept, still says one run
        point["train_loss"] *= 1.01
    edit_log(again, lambda e: moved(e, value=e.value * 1.01) if e.key == "train_loss" else e)
    doc["runs"].append(again)
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(doc)[1] + 2, dt.UTC))
    doc = repair(doc)
    assert {(p.code, p.field) for p in v.check_document(doc)} == {("steps-fingerprint", "runs[2].step_times_s"),
                                                                   ("seed-copy", "runs[2].curve")}



def test_pairs_of_equal_step_times_are_left_to_duplicate_steps_and_a_run_is_flagged_once():
    """One filter serves the validator's rules and the store's links (ownership.not_equal): a pair
    whose step times are equal is duplicate-steps' to say, a run without a steps key is compared,
    and with ``flagged`` a later run is named by its first pair only, across the rules."""
    steps = ["same", "same", None, None, "other"]
    pairs = [(0, 1, 0.9), (0, 2, 0.8), (2, 3, 0.7), (1, 4, 0.6), (0, 4, 0.5)]
    assert list(ownership.not_equal(pairs, steps)) == pairs[1:]
    flagged: set[int] = set()
    assert list(ownership.not_equal(pairs, steps, flagged)) == [(0, 2, 0.8), (2, 3, 0.7), (1, 4, 0.6)]
    assert flagged == {2, 3, 4}
    assert list(ownership.not_equal([(1, 3, 0.1), (3, 0, 0.2)], steps, flagged)) == [(3, 0, 0.2)]

def test_seed_ones_run_claimed_as_seeds_two_to_five_is_one_run(original):
    """Each copy's step times shuffled within its logged blocks (a fingerprint of its own, every
    figure and the log's block sums kept), its seed and its log's seed changed: the curve, the
    same for five seeds, says it is one run."""
    doc = copy.deepcopy(original)
    first = doc["runs"][0]
    for seed in range(2, 6):
        later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [first]})[0]
        doc["runs"].append(factories.retimed_copy(first, later, {"seed": seed}, variant=seed) | {"seed": seed})
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(doc)[1] + 2, dt.UTC))
    doc["settings"]["seeds_per_workload"] = 5
    doc = repair(doc)
    sims = fingerprint.similarity([fingerprint.signature(r["step_times_s"]) for r in doc["runs"]],
                                  [fingerprint.signature(first["step_times_s"])])
    assert (sims[1:] < fingerprint.THRESHOLD).all()  # the step times alone do not tell
    assert [(p.code, p.field) for p in v.check_document(doc)] == \
        [("seed-copy", f"runs[{i}].curve") for i in range(1, 5)]


def test_seed_ones_run_with_its_losses_nudged_is_still_one_run_by_the_metric_it_kept(original):
    """The audit's variant: each copy's training losses × (1 + 0.002·k), curve and log alike, its
    quality metric kept bit for bit: that one metric, the same for every seed, says it is one run."""
    doc = copy.deepcopy(original)
    first = doc["runs"][0]
    for seed in range(2, 6):
        later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [first]})[0]
        again = factories.retimed_copy(first, later, {"seed": seed}, variant=seed) | {"seed": seed}
        factor = 1 + 0.002 * seed
        for point in again["curve"]:
            point["train_loss"] *= factor
        edit_log(again, lambda e, f=factor: moved(e, value=e.value * f) if e.key == "train_loss" else e)
        doc["runs"].append(again)
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(doc)[1] + 2, dt.UTC))
    doc["settings"]["seeds_per_workload"] = 5
    doc = repair(doc)
    assert len(doc["runs"][0]["curve"]) >= fingerprint.MIN_POINTS
    assert [(p.code, p.field) for p in v.check_document(doc)] == \
        [("seed-copy", f"runs[{i}].curve") for i in range(1, 5)]


def test_seed_ones_run_claimed_as_a_failed_seed_two_is_one_run(original):
    """A failed seed counts in the TTA score, as a seed that did not converge, and so fills the
    seed count a score needs: one claimed with another seed's curve is that run copied too."""
    doc = copy.deepcopy(original)
    first = doc["runs"][0]
    later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [first]})[0]
    failed = factories.retimed_copy(first, later, {"seed": 2}, variant=2) | {"seed": 2}
    doc["runs"].append(factories.set_status(failed, "failed", "RuntimeError after 150 of at most 150 steps"))
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(doc)[1] + 2, dt.UTC))
    doc = repair(doc)
    assert ("seed-copy", "runs[1].curve") in [(p.code, p.field) for p in v.check_document(doc)]


def test_seed_ones_run_in_another_file_as_seed_two_is_told_by_its_clock_not_its_curve(tmp_path, original):
    """Its steps redrawn inside the blocks, its log's clock kept: refused as one run by the clock.
    Measured again (step times and a clock of its own), only its curve is seed 1's, and across keys
    a curve tells nothing of who ran it (rule seed-copy holds within one key: trial 16's swapped
    seed labels): it is stored."""
    from test_log_times import _redraw

    folder = tmp_path / "results"
    first = submit(_write(tmp_path / "original.json", original), folder)

    def as_seed_two(change) -> dict:
        forged = _own_story(copy.deepcopy(original), "copier-lab")
        run = forged["runs"][0]
        change(run)
        run["seed"] = 2  # in the open division, which may choose its seeds
        forged["settings"].update(division="open", open_changes=["seed 2 instead of 1"])
        set_logged(run, seed=2, submission_division="open")
        forged = repair(forged)
        assert codes(forged) == set()
        return forged

    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "forged.json", as_seed_two(lambda run: _redraw(run, np.random.default_rng(7)))),
               folder)
    [problem] = refused.value.problems
    assert (problem.code, problem.field) == ("log-times", "runs[0].event_log")
    assert first.name in problem.reason
    again = submit(_write(tmp_path / "again.json", as_seed_two(lambda run: factories.retimed(run, 7))), folder)
    assert _statuses(folder) == {first.name: {None}, again.name: {None}}


def test_honest_runs_of_one_workload_are_never_one_run():
    """Every pair of honest runs of a workload — the same seed in other files, on other days,
    killed and resumed, over 2 ranks — is far below the fingerprint's threshold, and the
    store keeps them all. The worst similarity is the margin docs/rules.md states."""
    runs = {}
    for path in HONEST:
        if path.name == "lm-char-smoke-as-h100-derived.json":
            continue  # lm-char-smoke.json's run, its device edited (a test file, not another run)
        for run in json.loads(path.read_text())["runs"]:
            runs[(path.name, run["run_id"])] = run
    worst, pairs, honest_seed_pairs = -1.0, 0, 0
    for (a, ra), (b, rb) in itertools.combinations(runs.items(), 2):
        if ra["workload"]["id"] != rb["workload"]["id"]:
            continue
        sa, sb = fingerprint.signature(ra["step_times_s"]), fingerprint.signature(rb["step_times_s"])
        assert sa is not None and sb is not None, (a, b)  # every honest run has a fingerprint
        worst = max(worst, float(fingerprint.similarity([sa], [sb])[0, 0]))
        pairs += 1
        if ra["seed"] != rb["seed"]:  # honest seeds: the corpus's *-seeds-1-3.json files
            ca, cb = fingerprint.curve_of(ra), fingerprint.curve_of(rb)
            if ca.steps == cb.steps:  # (a TTA run may stop at another evaluation: never one curve then)
                diff = fingerprint.curve_difference(ca, cb)
                assert diff >= fingerprint.HONEST_CURVE_SPREAD, (a, b, diff)
                honest_seed_pairs += 1
    assert pairs >= 6  # the same workload in three files: lm-char and gpt2-124m, three pairs each
    assert -1.0 < worst < 0.45 < fingerprint.THRESHOLD, worst  # measured 0.251 (docs/rules.md; 0.363 with results/)
    # honest seeds differ at least this much, metric by metric (measured): 5.3 × the bound under
    # which two curves are one
    assert honest_seed_pairs >= 6
    assert min(SEED_SPREAD.values()) >= fingerprint.HONEST_CURVE_SPREAD
    assert fingerprint.HONEST_CURVE_SPREAD > 5 * fingerprint.SAME_CURVE_REL


def test_the_honest_files_are_stored_side_by_side(tmp_path):
    folder = tmp_path / "results"
    for path in HONEST:
        if path.name != "lm-char-smoke-as-h100-derived.json":
            assert submit_noted(path, folder).notes == ()
    assert all(statuses == {None} for statuses in _statuses(folder).values())


# ---------------------------------------------------------------- ownership
def test_a_signed_file_wins_over_an_unsigned_copy_with_fresh_ids_stored_first(tmp_path, capsys, original):
    owner, owner_fp = _key(tmp_path, "owner")
    folder = tmp_path / "results"
    genuine = signing.seal(copy.deepcopy(original), owner)
    stolen = _retimed(_own_story(copy.deepcopy(genuine), "thief-lab"), 1.0, 1e-7)
    thief = submit(_write(tmp_path / "stolen.json", stolen), folder)
    stolen_bytes = thief.read_bytes()
    stored = submit_noted(_write(tmp_path / "genuine.json", genuine), folder)
    [note] = stored.notes
    assert note.startswith(f"run {genuine['runs'][0]['run_id']} is also in {thief.name} (its step times "
                           "rescaled or nudged: fingerprint similarity ")
    assert note.endswith(f"which is not signed by its owner's key ({owner_fp}): {thief.name}'s run is now "
                         "shown as a copy, not ranked")
    assert thief.read_bytes() == stolen_bytes and len(stored_files(folder)) == 2  # never deleted
    table = _table(folder)
    assert (table.loc[thief.name, "copy_status"], table.loc[thief.name, "copy_of"]) == ("copy", owner_fp)
    assert table["copy_status"].isna()[stored.path.name]


def test_between_two_signatures_the_first_stored_stays_and_the_later_is_disputed(tmp_path, original):
    owner, owner_fp = _key(tmp_path, "owner")
    thief, thief_fp = _key(tmp_path, "thief")
    folder = tmp_path / "results"
    genuine = signing.seal(copy.deepcopy(original), owner)
    first = submit(_write(tmp_path / "genuine.json", genuine), folder)
    resigned = signing.seal(_retimed(_own_story(copy.deepcopy(genuine), "thief-lab"), 1.01), thief)
    assert codes(resigned) == set()
    stored = submit_noted(_write(tmp_path / "resigned.json", resigned), folder)
    [note] = stored.notes
    assert note.startswith(f"run {resigned['runs'][0]['run_id']} is also in {first.name} (its step times")
    assert note.endswith(f"signed by {owner_fp} and stored first: this file is stored, its run shown as "
                         "disputed, not ranked")
    later = stored.path
    table = _table(folder)
    assert (table.loc[later.name, "copy_status"], table.loc[later.name, "copy_of"]) == ("disputed", owner_fp)
    assert table["copy_status"].isna()[first.name]
    # unsigned, or signed again by either key, the same run is not stored a third time
    for n, doc in enumerate((_own_story(copy.deepcopy(resigned), "third-lab"),
                             signing.seal(_own_story(copy.deepcopy(resigned), "third-lab"), owner),
                             signing.seal(_own_story(copy.deepcopy(resigned), "third-lab"), thief))):
        with pytest.raises(Refused) as refused:
            submit(_write(tmp_path / f"third-{n}.json", doc), folder)
        assert {p.code for p in refused.value.problems} == {"duplicate-steps"}  # the disputed run's times

    # the site: the disputed run's page and row say so and link the run stored first
    build_site(folder, tmp_path / "site")
    site = tmp_path / "site"
    page = (site / "runs" / f"{run_slug(later.name, resigned['runs'][0]['run_id'])}.html").read_text()
    assert f"disputed: the same run as one signed by <code>{owner_fp}</code> and stored first, not ranked" in page
    assert f'href="{run_slug(first.name, genuine["runs"][0]["run_id"])}.html"' in page
    system = (site / "systems" / f"{system_slug('thief-lab', thief_fp)}.html").read_text()
    assert f"disputed: the same run as one signed by {signing.short(owner_fp)} and stored first" in system
    assert "disputed" not in (site / "systems" / f"{system_slug(genuine['system']['name'], owner_fp)}.html").read_text()


def test_a_file_committed_to_before_it_was_shown_wins_over_a_copy_re_signed_and_stored_first(tmp_path, original):
    """Front-running a public pull request: the thief re-signs the shown file with fresh ids and
    is stored first. A commitment (its sha256 in the ledger, published before the file) makes the
    file count from the commitment's line, so the thief's run is the later one: disputed."""
    owner, owner_fp = _key(tmp_path, "owner")
    thief, _ = _key(tmp_path, "thief")
    folder = tmp_path / "results"
    genuine = signing.seal(copy.deepcopy(original), owner)
    path = _write(tmp_path / "genuine.json", genuine)
    promised = submit_noted(path, folder, commit=True, key=owner)
    assert stored_files(folder) == [] and ledger.committed(folder) == {promised.path.name}
    with pytest.raises(Refused, match="already committed to"):
        submit_noted(path, folder, commit=True, key=owner)
    resigned = signing.seal(_retimed(_own_story(copy.deepcopy(genuine), "thief-lab"), 1.01), thief)
    early = submit(_write(tmp_path / "resigned.json", resigned), folder)  # stored before the genuine file
    stored = submit_noted(path, folder)
    assert stored.path == promised.path
    [note] = stored.notes
    assert note.startswith(f"run {genuine['runs'][0]['run_id']} is also in {early.name} (its step times")
    assert note.endswith("signed by another key and stored after this file was committed to in the ledger: "
                         f"{early.name}'s run is now shown as disputed, not ranked")
    assert ledger.order(folder) == [stored.path.name, early.name]
    table = _table(folder)
    assert (table.loc[early.name, "copy_status"], table.loc[early.name, "copy_of"]) == ("disputed", owner_fp)
    assert table["copy_status"].isna()[stored.path.name]
    # a commitment made after the copy was stored counts for nothing against it
    later = tmp_path / "later"
    submit(_write(tmp_path / "resigned-2.json", resigned), later)
    submit_noted(path, later, commit=True, key=owner)
    assert "stored first" in submit_noted(path, later).notes[0]


def test_a_commitment_is_signed_by_the_key_that_signed_its_file(tmp_path, original):
    """Rules v8: a commitment's ledger line carries its key and a signature over its file and stamp
    (the pull request's check counts commitments per signer); an unsigned file, or another key
    than the file's, cannot commit."""
    owner, owner_fp = _key(tmp_path, "owner")
    thief, _ = _key(tmp_path, "thief")
    folder = tmp_path / "results"
    path = _write(tmp_path / "genuine.json", signing.seal(copy.deepcopy(original), owner))
    with pytest.raises(GoodbenchError, match=f"signed by {re.escape(owner_fp)}, .* not SHA256:"):
        submit_noted(path, folder, commit=True, key=thief)
    with pytest.raises(GoodbenchError, match="only a signed file can be committed to"):
        submit_noted(_write(tmp_path / "unsigned.json", copy.deepcopy(original)), folder, commit=True, key=owner)
    assert not (folder / ledger.NAME).exists()
    promised = submit_noted(path, folder, commit=True, key=owner).path.name
    [entry] = ledger.entries((folder / ledger.NAME).read_bytes())
    assert set(entry) == {"file", "committed_at", "key", "signature"} and entry["file"] == promised
    assert commitment.signer(entry) == owner_fp
    assert commitment.signer({**entry, "committed_at": "2001-01-01T00:00:00Z"}) is None  # the stamp is signed
    assert commitment.signer({**entry, **commitment.sign(promised, entry["committed_at"], thief)}) != owner_fp


def test_the_merge_order_race_and_what_a_commitment_proves(tmp_path, original):
    """The pull requests' race, as the store sees their merges (each merge appends its lines to
    main's ledger in merge order; the check stores each file as submit does).

    Committed first: the owner's commitment merged, then its file shown; a thief re-signs the
    shown file, commits to the copy and gets both merged before the owner's file: the owner's run
    counts from its commitment and is kept, the thief's is disputed. Not committed first (or the
    file shown before its commitment was merged): the thief's commitment merged first puts the
    copy first, and the owner is the disputed one — the race a commitment closes, and only once
    merged: it proves its file's bytes existed when its line was merged, nothing earlier."""
    owner, owner_fp = _key(tmp_path, "owner")
    thief, thief_fp = _key(tmp_path, "thief")
    genuine = signing.seal(copy.deepcopy(original), owner)
    path = _write(tmp_path / "genuine.json", genuine)
    resigned = signing.seal(_retimed(_own_story(copy.deepcopy(genuine), "thief-lab"), 1.01), thief)
    copied = _write(tmp_path / "resigned.json", resigned)

    committed_first = tmp_path / "committed-first"
    submit_noted(path, committed_first, commit=True, key=owner)    # 1. the owner's commitment, merged
    submit_noted(copied, committed_first, commit=True, key=thief)  # 2. the thief's, after seeing the file
    thiefs = submit(copied, committed_first)                       # 3. the copy merged before ...
    owners = submit_noted(path, committed_first).path              # 4. ... the owner's file
    table = _table(committed_first)
    assert (table.loc[thiefs.name, "copy_status"], table.loc[thiefs.name, "copy_of"]) == ("disputed", owner_fp)
    assert table["copy_status"].isna()[owners.name]

    shown_first = tmp_path / "shown-first"
    submit_noted(copied, shown_first, commit=True, key=thief)      # the thief's commitment merged first
    thiefs = submit(copied, shown_first)
    owners = submit_noted(path, shown_first).path
    table = _table(shown_first)
    assert (table.loc[owners.name, "copy_status"], table.loc[owners.name, "copy_of"]) == ("disputed", thief_fp)
    assert table["copy_status"].isna()[thiefs.name]


def test_a_second_signer_after_an_unsigned_copy_and_its_owner_is_disputed_with_the_owner(tmp_path, original):
    """An unsigned copy stored first, its owner's signed file next (kept), then another key's
    re-signed copy: disputed, and its note names the owner's file, not the unsigned copy."""
    owner, owner_fp = _key(tmp_path, "owner")
    other, _ = _key(tmp_path, "other")
    folder = tmp_path / "results"
    genuine = signing.seal(copy.deepcopy(original), owner)
    thief = submit(_write(tmp_path / "stolen.json", _retimed(_own_story(copy.deepcopy(genuine), "thief-lab"),
                                                             1.0, 1e-7)), folder)
    kept = submit_noted(_write(tmp_path / "genuine.json", genuine), folder).path
    resigned = signing.seal(_retimed(_own_story(copy.deepcopy(genuine), "other-lab"), 1.01, 0.0, 1), other)
    stored = submit_noted(_write(tmp_path / "resigned.json", resigned), folder)
    [note] = stored.notes
    assert note.startswith(f"run {resigned['runs'][0]['run_id']} is also in {kept.name} (")
    assert note.endswith(f"signed by {owner_fp} and stored first: this file is stored, its run shown as disputed, "
                         "not ranked")
    assert _statuses(folder) == {thief.name: {"copy"}, kept.name: {None}, stored.path.name: {"disputed"}}


def test_the_order_stored_is_kept_by_the_ledger_not_by_file_names_or_times(tmp_path, original):
    one, _ = _key(tmp_path, "one")
    two, two_fp = _key(tmp_path, "two")
    a = signing.seal(copy.deepcopy(original), one)
    b = signing.seal(_retimed(_own_story(copy.deepcopy(original), "second-lab"), 0.99), two)
    for n, (first, second) in enumerate(((a, b), (b, a))):
        folder = tmp_path / f"results-{n}"
        kept = submit(_write(tmp_path / f"first-{n}.json", first), folder)
        later = submit(_write(tmp_path / f"second-{n}.json", second), folder)
        assert ledger.order(folder) == [kept.name, later.name]
        assert _statuses(folder) == {kept.name: {None}, later.name: {"disputed"}}
        (folder / ledger.NAME).unlink()  # without the ledger: name order, said to be unknown
        assert [p.name for p in ledger.in_store_order(folder, stored_files(folder))] == sorted([kept.name, later.name])
    assert two_fp


def test_a_ledger_line_cut_short_is_skipped_and_the_next_starts_a_line(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    names = [hashlib.sha256(bytes([i])).hexdigest() + ".json" for i in range(3)]
    ledger.record(folder, names[0])
    with open(folder / ledger.NAME, "a") as fh:
        fh.write('{"file": "' + names[1][:20])  # a writer killed mid-line
    ledger.record(folder, names[2])
    ledger.record(folder, names[0])  # listed again (its first submission killed before its file): the last counts
    assert ledger.order(folder) == [names[2], names[0]]
    (folder / "elsewhere.jsonl").write_text(json.dumps({"file": names[1]}) + "\n")
    (folder / ledger.NAME).unlink()
    (folder / ledger.NAME).symlink_to(folder / "elsewhere.jsonl")
    assert ledger.order(folder) == []  # a link is never followed
    with pytest.raises(GoodbenchError, match="cannot list .* in the store's ledger"):
        ledger.record(folder, names[1])


# ---------------------------------------------------------------- time
def _moved_in_time(doc: dict, seconds: float) -> dict:
    """Every stamp of ``doc`` moved by ``seconds``: created_at, the suite run's and each run's
    start, every line of every event log; then repaired."""
    def shifted(stamp: str) -> str:
        when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")) + dt.timedelta(seconds=seconds)
        return factories.stamp(when)
    doc["created_at"] = shifted(doc["created_at"])
    doc["settings"]["session"]["started_at"] = shifted(doc["settings"]["session"]["started_at"])
    for run in doc["runs"]:
        run["started_at"] = shifted(run["started_at"])
        run["event_log"] = factories.relogged(run["event_log"], shift_s=seconds)
    return repair(doc)


def test_a_file_dated_before_its_rules_version_existed_is_refused(original):
    day = 86400.0
    early = _moved_in_time(copy.deepcopy(original), -400 * day)
    assert [(p.code, p.field) for p in v.check_document(early)] == [("created-before-rules", "created_at")]
    early["rules_version"] = 6  # "written under rules v6", 400 days before they existed
    for entry in early["settings"]["matmul_ceiling"].values():
        entry.pop("at_end", None)  # a record only v8 on writes: it would hold the file to v8
    early = repair(early)  # its rates as v6 has them (over the steps alone, not their batch waits: v10)
    assert [(p.code, p.field) for p in v.check_document(early)] == [("created-before-rules", "created_at")]
    del early["rules_version"]  # naming no version is naming v1, which came on 2026-11-23
    assert [(p.code, p.field) for p in v.check_document(early)] == [("created-before-rules", "created_at")]
    future = copy.deepcopy(original) | {"rules_version": v.RULES_VERSION + 1}
    assert [(p.code, p.field) for p in v.check_document(future)] == [("created-before-rules", "rules_version")]


def test_every_honest_file_was_written_after_its_rules_came_into_force():
    """The margin: the honest file written closest to its rules version's first day."""
    margins = {}
    for path in HONEST:
        doc = json.loads(path.read_text())
        since = dt.datetime.fromisoformat(RULES_DATES[doc.get("rules_version", 1)]).replace(tzinfo=dt.UTC)
        margins[path.name] = (dt.datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00")) - since)
    assert min(margins.values()) >= dt.timedelta(hours=1), margins  # measured: 1 h 40 min (corpus, v6)
    assert sorted(RULES_DATES) == list(range(1, v.RULES_VERSION + 1))
    assert list(RULES_DATES.values()) == sorted(RULES_DATES.values())


def test_a_file_ending_after_it_was_submitted_is_refused(original):
    created = dt.datetime.fromisoformat(original["created_at"].replace("Z", "+00:00"))
    assert v.check_document(original, created) == []
    assert v.check_document(original, created - CLOCK_SLACK) == []  # a clock that far ahead: allowed
    late = [(p.code, p.field) for p in v.check_document(original, created - CLOCK_SLACK - dt.timedelta(seconds=1))]
    assert late == [("future-timestamp", "created_at")]
    # every stamp moved 4 minutes past the submission (within the 5 minutes allowed before v7)
    now = dt.datetime.now(dt.UTC)
    # by whole seconds: the stamps in seconds (created_at, started_at) move exactly as the log's
    ahead = _moved_in_time(copy.deepcopy(original), math.ceil((now - created).total_seconds()) + 240)
    assert [(p.code, p.field) for p in v.check_document(ahead, now)] == [("future-timestamp", "created_at")]


def test_one_suite_run_split_into_two_files_is_refused_unless_signed_over_an_unsigned_one(tmp_path):
    """The reference result's suite run cut in two files, each valid alone: the same session id
    and time span. The store keeps one suite run in one file; a signed half wins over an
    unsigned one stored first, as for a run."""
    def half(workloads):
        doc = copy.deepcopy(SMOKE)
        doc["runs"] = [r for r in doc["runs"] if r["workload"]["id"] in workloads]
        doc["settings"]["workloads"] = list(workloads)
        return repair(doc)

    first, second = half(("lm-char", "gpt2-124m")), half(("fashion-cnn",))
    assert codes(first) == codes(second) == set()
    folder = tmp_path / "results"
    kept = submit(_write(tmp_path / "first.json", first), folder)
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "second.json", second), folder)
    assert [(p.code, p.field) for p in refused.value.problems] == [("duplicate-session", "settings.session.id")]
    assert kept.name in refused.value.problems[0].reason

    key, fp = _key(tmp_path, "owner")
    signed = submit_noted(_write(tmp_path / "signed.json", signing.seal(second, key)), folder)
    name = second["system"]["name"]
    assert signed.notes == (f"suite run {first['settings']['session']['id']} is also in {kept.name}, which is not "
                            f"signed by its owner's key ({fp}): {kept.name}'s runs are now shown as copies, not "
                            "ranked",)  # its system's name is its device's (an unnamed run): no note on it
    acc = second["system"]["accelerator"]
    assert name == f"{acc['name']} x{acc['count']}"
    assert _statuses(folder) == {kept.name: {"copy"}, signed.path.name: {None}}


def _five_seeds_of_one_run(original: dict, edit=None) -> dict:
    """Seed 1's run claimed as seeds 2-5 (each copy's step times shuffled in its logged blocks),
    ``edit(run)`` applied to every run, curve and log alike; repaired."""
    doc = copy.deepcopy(original)
    first = doc["runs"][0]
    for seed in range(2, 6):
        later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [first]})[0]
        doc["runs"].append(factories.retimed_copy(first, later, {"seed": seed}, variant=seed) | {"seed": seed})
    for run in doc["runs"]:
        if edit is not None:
            edit(run)
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(doc)[1] + 2, dt.UTC))
    doc["settings"]["seeds_per_workload"] = 5
    return repair(doc)


def test_a_null_training_loss_no_longer_hides_a_curve_claimed_for_five_seeds(original):
    """The first point's training loss left out (null in the curve, its log's training losses up
    to it dropped): every other value is still seed 1's, for five seeds."""
    def unlogged(run):
        first = run["curve"][0]["step"]
        run["curve"][0]["train_loss"] = None
        run["event_log"] = [line for line, e in zip(run["event_log"], mllog.parse(run["event_log"]))
                            if not (e.key == "train_loss" and e.metadata.get("step", 0) <= first)]
    doc = _five_seeds_of_one_run(original, unlogged)
    curve = fingerprint.curve_of(doc["runs"][1])
    assert curve is not None and np.isnan(curve.column("train_loss")[0])
    assert [(p.code, p.field) for p in v.check_document(doc)] == \
        [("seed-copy", f"runs[{i}].curve") for i in range(1, 5)]


def _restamped(run: dict, times: list[float]) -> None:
    """``run`` (changed in place) given the step times ``times``: each logged block's step clock
    their sum, and every later stamp of its log, curve time, time to train and wall time moved by
    what the blocks before it gained or lost — the log rewritten to tell the new story."""
    offset, at_eval, events = 0.0, {}, []
    for e in mllog.parse(run["event_log"]):
        if e.key in ("block_stop", "warmup_stop"):
            first, last = e.metadata["first_step"], e.metadata["last_step"]
            summed = math.fsum(times[first - 1:last])
            offset += summed - e.metadata["step_s"]
            e = moved(e, metadata={**e.metadata, "step_s": summed})
        events.append(moved(e, time_ms=e.time_ms + 1000 * offset))
        if e.key == "eval_stop":
            at_eval[e.metadata["step"]] = offset
    run["event_log"] = [mllog.format_event(e) for e in events]
    run["step_times_s"] = times
    for point in run["curve"]:
        point["time_s"] += at_eval[point["step"]]
    run["time_to_train_s"] += offset
    run["wall_s"] += offset


def _shifted(doc: dict, k: int) -> dict:
    """Every run's step times after its warm-up block shifted by ``k`` steps (step t takes step
    t + k's time, the first ``k`` of them moved to the end), the log restamped (:func:`_restamped`),
    ``created_at`` after the new end; repaired."""
    for run in doc["runs"]:
        times = run["step_times_s"]
        start = next(e.metadata["last_step"] for e in mllog.parse(run["event_log"]) if e.key == "warmup_stop")
        _restamped(run, times[:start] + times[start + k:] + times[start:start + k])
    created = dt.datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00")).timestamp()
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(
        math.ceil(max(created, factories.log_span(doc)[1] + 1)), dt.UTC))
    return repair(doc)


@pytest.mark.parametrize("k", [4, 12])
def test_a_copy_shifted_by_more_than_three_steps_is_refused_by_the_store(tmp_path, original, k):
    """The audit's copy shifted by 4 steps scored 0.324 at the 3 steps of shift compared before
    rules v8; the shifts compared now reach 16."""
    folder = tmp_path / "results"
    submit(_write(tmp_path / "original.json", original), folder)
    forged = _shifted(_own_story(copy.deepcopy(original), "copier-lab"), k)
    assert codes(forged) == set()
    mine, theirs = (fingerprint.signature(d["runs"][0]["step_times_s"]) for d in (forged, original))
    # measured on the reference's dlrm-small run: 0.98 (4), 0.93 (12) under v7's; 0.885 (4) under v8's
    assert float(fingerprint.similarity([mine], [theirs])[0, 0]) > fingerprint.THRESHOLD
    lag, fingerprint.MAX_LAG = fingerprint.MAX_LAG, 3
    try:
        assert float(fingerprint.similarity([mine], [theirs])[0, 0]) < fingerprint.THRESHOLD  # v7's reach
    finally:
        fingerprint.MAX_LAG = lag
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "forged.json", forged), folder)
    assert [p.code for p in refused.value.problems] == ["steps-fingerprint"]


# ---------------------------------------------------------------- copies reordered, and short runs
def _reordered(doc: dict, seed: int = 0, nudge: float = 0.0) -> dict:
    """Every run's step times shuffled within each logged block (which keeps every block sum,
    stamp and figure: the audit's copy, fingerprint similarity 0.158), then nudged by ± ``nudge``
    with the log's block sums rewritten (:func:`_retimed`); repaired."""
    rng = np.random.default_rng(seed)
    for run in doc["runs"]:
        times = run["step_times_s"]
        for e in mllog.parse(run["event_log"]):
            if e.key in ("block_stop", "warmup_stop"):
                first, last = e.metadata["first_step"], e.metadata["last_step"]
                times[first - 1:last] = list(rng.permutation(times[first - 1:last]))
    return _retimed(doc, 1.0, nudge, seed) if nudge else repair(doc)


@pytest.mark.parametrize("nudge", [0.0, 1e-7], ids=["shuffled", "shuffled-and-nudged"])
def test_a_copy_reordered_within_its_logged_blocks_is_refused_by_the_store(tmp_path, original, nudge):
    folder = tmp_path / "results"
    first = submit(_write(tmp_path / "original.json", original), folder)
    forged = _reordered(_own_story(copy.deepcopy(original), "copier-lab"), 3, nudge)
    assert codes(forged) == set()
    mine, theirs = (fingerprint.signature(d["runs"][0]["step_times_s"]) for d in (forged, original))
    assert float(fingerprint.similarity([mine], [theirs])[0, 0]) < fingerprint.THRESHOLD  # its order is its own
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "forged.json", forged), folder)
    [problem] = refused.value.problems
    assert (problem.code, problem.field) == ("steps-shuffled", "runs[0].step_times_s")
    assert first.name in problem.reason and "in each logged block reordered" in problem.reason


def test_six_reordered_copies_of_one_run_in_one_file_are_refused(original):
    """The real run and six copies of it, each shuffled in its blocks and claimed for another
    seed: their step times' values say they are one run (their one curve says so too)."""
    doc = copy.deepcopy(original)
    first = doc["runs"][0]
    rng = np.random.default_rng(6)
    for seed in range(2, 8):
        later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [first]})[0]
        again = factories.retimed_copy(first, later, {"seed": seed}, variant=None) | {"seed": seed}
        times = again["step_times_s"]
        for e in mllog.parse(again["event_log"]):
            if e.key in ("block_stop", "warmup_stop"):
                lo, hi = e.metadata["first_step"], e.metadata["last_step"]
                times[lo - 1:hi] = list(rng.permutation(times[lo - 1:hi]))
        doc["runs"].append(again)
    doc["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(doc)[1] + 2, dt.UTC))
    doc["settings"]["seeds_per_workload"] = 7
    doc = repair(doc)
    found = [(p.code, p.field) for p in v.check_document(doc)]
    assert [f for f in found if f[0] == "steps-shuffled"] == [("steps-shuffled", f"runs[{i}].step_times_s")
                                                               for i in range(1, 7)]
    assert {code for code, _ in found} == {"steps-shuffled", "seed-copy"}


def _short(run: dict, steps: int) -> dict:
    """A run's first ``steps`` steps as a short run records them: its step times and the lines
    of its log up to its last whole block."""
    lines = [line for line, e in zip(run["event_log"], mllog.parse(run["event_log"]))
             if not any(isinstance(e.metadata.get(k), int) and e.metadata[k] > steps
                        for k in ("step", "last_step", "first_step"))]
    return {**copy.deepcopy(run), "step_times_s": run["step_times_s"][:steps], "event_log": lines}


@pytest.mark.parametrize("steps", [6, 8, 40])
def test_a_short_run_copied_rescaled_and_re_signed_is_labelled_a_copy(tmp_path, steps):
    """Too short for a fingerprint (fewer than 50 steps) or for equal step times to say one run
    (fewer than 10): the real lm-char run's first steps, copied × 1.01 under new ids and another
    key, are one run by their values; honest runs' first steps are not (measured below)."""
    owner, _ = _key(tmp_path, "owner")
    thief, _ = _key(tmp_path, "thief")
    real_run = next(r for r in SMOKE["runs"] if r["workload"]["id"] == "lm-char")
    mine = {**copy.deepcopy(SMOKE), "runs": [_short(real_run, steps)]}
    theirs = copy.deepcopy(mine)
    theirs["runs"][0]["step_times_s"] = [round(t * 1.01, 7) for t in mine["runs"][0]["step_times_s"]]
    theirs["settings"]["session"]["id"] = uuid.uuid4().hex
    mine["runs"][0].update(signing.new_run_id(signing.public_bytes(owner)))
    theirs["runs"][0].update(signing.new_run_id(signing.public_bytes(thief)))
    found = ownership.claims("mine.json", signing.sign(mine, owner)) + \
        ownership.claims("theirs.json", signing.sign(theirs, thief))
    assert found[0].steps_print is None and (steps < 10) == (found[0].steps is None)
    [link] = ownership.links(found)
    assert link.code == "steps-shuffled" and link.similarity < 1e-3
    assert {k: x.status for k, x in ownership.resolve(found).items()} == {("theirs.json", 0): "disputed"}


def test_honest_runs_are_never_one_run_by_their_sorted_blocks():
    """The margin of suite/trust/shuffles.py on every pair of honest runs of one workload (the
    fixtures' and the corpus's; docs/rules.md states it): their sorted blocks stay far from one
    run's — over whole runs, and over their first steps as a short run records them."""
    runs = [run for path in HONEST if path.name != "lm-char-smoke-as-h100-derived.json"
            for run in json.loads(path.read_text())["runs"]]
    least = {}
    for steps in (6, 8, 10, 20, 49, None):
        found = []
        for ra, rb in itertools.combinations(runs, 2):
            if ra["workload"]["id"] == rb["workload"]["id"]:
                sa, sb = (shuffles.sorted_blocks(r if steps is None else _short(r, steps)) for r in (ra, rb))
                assert sa is not None and sb is not None
                found.append(shuffles.distance(sa, sb))
        least[steps] = min(d for d in found if d is not None)
    # measured (with results/ too: docs/rules.md): 0.895 (6 steps), 0.927 (8), 0.705 (10), 1.278 (20),
    # 1.047 (49), 1.542 (whole runs)
    assert min(least.values()) > 4 * shuffles.THRESHOLD, least


@pytest.mark.parametrize("workload_id", ("lm-char", "gpt2-124m", "fashion-cnn", "llama-1b", "dlrm-small"))
def test_a_copy_given_noise_of_its_own_is_still_one_run(workload_id):
    """Trial 5: a stored run's step times, each moved by up to ±0.2% (the block sums kept near),
    went as another run at the old threshold (0.046–0.086 against 0.05); at 0.15 it is one run.
    The runs are those of the reference measured under rules v9 (tests/fixtures/reference-smoke-v9.json),
    the trial's: the same noise on the quieter reference of rules v10 reads 0.089–0.235 over 20 draws
    (gpt2-124m 0.150–0.235), so a copy that noisy of a quiet run can pass as another by this rule
    alone (docs/rules.md, "One run, one owner")."""
    doc = json.loads((Path(__file__).resolve().parent / "fixtures" / "reference-smoke-v9.json").read_text())
    victim = next(r for r in doc["runs"] if r["workload"]["id"] == workload_id)
    rng = np.random.default_rng(7)
    noisy = copy.deepcopy(victim)
    noisy["step_times_s"] = [round(t * (1 + rng.uniform(-0.002, 0.002)), 7) for t in victim["step_times_s"]]
    found = shuffles.distance(shuffles.sorted_blocks(victim), shuffles.sorted_blocks(noisy))
    assert found is not None and 0.02 < found <= shuffles.THRESHOLD


def test_a_long_first_step_does_not_make_short_honest_runs_one():
    """A GPU's short run: one long first step (its compilation), then 10 ms steps with 0.1%
    jitter. Honest runs differ in that step by more than their steady steps do; the spread the
    distance divides by is the median deviation, which that step does not inflate (a standard
    deviation would make two honest runs of 8 such steps one)."""
    rng = np.random.default_rng(0)

    def run(times):
        return shuffles.sorted_blocks({"step_times_s": [round(float(t), 7) for t in times], "event_log": []})

    def draw():
        return [1.2 * (1 + 0.05 * rng.standard_normal()), *(0.01 * (1 + 0.001 * rng.standard_normal(7)))]
    pairs = [(run(draw()), run(draw())) for _ in range(200)]
    honest = [shuffles.distance(a, b) for a, b in pairs if a is not None and b is not None]
    assert len(honest) > 100 and min(honest) > 4 * shuffles.THRESHOLD  # measured 0.89
    times = next(t for t in iter(draw, None) if run(t) is not None)  # a spread of 2 µs or more
    copied = [t * 1.01 + 1e-7 for t in times]  # rescaled and nudged by 0.1 µs
    assert shuffles.distance(run(times), run(copied)) <= shuffles.THRESHOLD  # measured 0.024


def test_the_fingerprints_running_median_and_ranks_are_scipys_without_importing_it():
    """numpy's running median and average ranks give scipy.ndimage.median_filter's (mode "nearest")
    and scipy.stats.rankdata's values exactly, on every stored and valid run and on series with
    ties; and validating a file imports no scipy (it was 0.9 s of validate's start)."""
    import subprocess
    import sys

    from scipy.ndimage import median_filter
    from scipy.stats import rankdata

    repo = Path(__file__).resolve().parent.parent
    series = [np.asarray(r["step_times_s"], float) for f in [*repo.glob("results/*.json"),
                                                              *repo.glob("tests/corpus/valid/*.json")]
              for r in json.loads(f.read_text())["runs"]]
    rng = np.random.default_rng(0)
    series += [rng.lognormal(size=n) for n in (9, 50, 1033)] + [np.round(rng.uniform(0.1, 1, 300), 2)]
    checked = 0
    for times in series:
        if len(times) < 2 or (times <= 0).any():
            continue
        x = np.log(times[:fingerprint.MAX_STEPS + fingerprint.MEDIAN_WINDOW])
        median = median_filter(x, size=fingerprint.MEDIAN_WINDOW, mode="nearest")
        assert np.array_equal(fingerprint.running_median(x, fingerprint.MEDIAN_WINDOW), median)
        assert np.array_equal(fingerprint.average_ranks(x - median), rankdata(x - median))
        checked += 1
    assert checked >= 20
    probe = subprocess.run([sys.executable, "-c", "import sys; from suite.validate import validate_files; "
                            f"validate_files([{str(repo / 'tests/corpus/valid/lm-char-smoke.json')!r}]); "
                            "print(any(m.startswith('scipy') for m in sys.modules))"],
                           capture_output=True, text=True, cwd=repo, timeout=300)
    assert probe.stdout.strip() == "False", probe.stderr
