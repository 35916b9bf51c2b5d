"""What a reproduction found, said where it is shown (suite/leaderboard/reproduction_words.py,
suite/leaderboard/trust.py, suite/site/columns.py, suite/site/run_page.py): a red "reproduction
differs" says which way and what differed, an original measured under load is named beside it,
an inconclusive reproduction leaves a grey badge on its row, the run page shows each
reproduction's reason as text under links numbered apart and names an attestation whatever the
verdict (a new user's walkthrough: H1, M2, M3, L7). The fixtures are a real own file measured
under load and its reproduction (tests/test_own_reproduction_trust.py), its entry edited to the
verdicts the walkthrough met."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd

from suite.leaderboard import reproduction_words as words
from suite.leaderboard import rows as leaderboard
from suite.leaderboard import trust
from suite.site import columns, labels, run_page
from suite.store import files as store
from suite.trust import signing
from suite.trust.reviewers import Reviewers

FIXTURES = Path(__file__).parent / "fixtures"
ORIGINAL = FIXTURES / "own-stored-losses.json"  # measured under load: other processes used 1.18 of 2 cores
RERUN = FIXTURES / "own-stored-losses-rerun.json"
COMMIT = "16b0df863cf5e29dc300e041bc838cf514feb663"  # the commit the original recorded
DIFFERS = ("differs: throughput: 3.664× the recorded samples/s, 95% interval 2.190–6.130, wholly outside ±20% "
           "(measured 2 times (14 batches, 62 s; …): stopped, the interval lies wholly outside ±20%)")
INCONCLUSIVE = ("inconclusive: throughput: 1.015× the recorded samples/s, 95% interval 0.516–1.995, neither wholly "
                "within nor wholly outside ±20% (measured 1 time (…): stopped, the recorded run's own interval alone "
                "is wider than the band)")


def _reproduction(verdict: str, ratio: float, measurements: int = 1, code_read: str | None = None) -> dict:
    """The fixture's reproduction with its one entry's verdict, ratio (pooled over ``measurements``
    re-runs where more than one) and attestation as given."""
    doc = json.loads(RERUN.read_text())
    entry = doc["settings"]["reproduces"]["runs"][0]
    entry.update(verdict=verdict, measurements=measurements)
    entry["throughput"]["ratio"] = ratio
    if measurements > 1:
        entry["measuring"] = {"measurements": measurements, "ratio": ratio, "ci95": [ratio * 0.6, ratio * 1.7]}
    if code_read:
        doc["settings"]["reproduces"]["code_read"] = {"commit": code_read}
    return doc


def _row(tmp_path: Path, *reproductions: dict) -> tuple[dict, pd.DataFrame, Reviewers]:
    """The original's row with ``reproductions`` beside it, signed by a key trusted as "Audit"."""
    key_path, fp = signing.keygen(tmp_path / "k")
    key = signing.load_key(key_path.parent)
    reproductions = tuple(signing.seal({k: v for k, v in doc.items() if k != "signature"}, key) for doc in reproductions)
    results = tmp_path / "results"
    stored = store.submit(ORIGINAL, results)
    original = json.loads(ORIGINAL.read_text())
    entries = pd.DataFrame(leaderboard.rows(stored.name, original), columns=leaderboard.ENTRY_COLUMNS)
    runs = pd.DataFrame(leaderboard.run_rows(stored.name, original)
                        + [r for i, doc in enumerate(reproductions) for r in leaderboard.run_rows(f"r{i}.json", doc)],
                        columns=leaderboard.RUN_COLUMNS)
    trusted = Reviewers(names={fp: "Audit"})
    [row] = trust.with_trust(entries, runs, results, trusted).to_dict(orient="records")
    return row, runs, trusted


def test_a_reproduction_says_which_way_its_throughput_went_and_how_its_curve_compared():
    entry = _reproduction(DIFFERS, 3.664, measurements=2)["settings"]["reproduces"]["runs"][0]
    assert words.compared_words(entry) == "throughput 3.664× the recorded (faster, pooled over 2 re-runs); curve " \
        "bit-identical"
    assert words.badge_words(entry) == "3.66× faster"
    slow = copy.deepcopy(entry)
    slow["measuring"]["ratio"] = 0.444
    slow["curve"].update(identical=False, agrees=False, max_rel_diff=0.031)
    assert words.compared_words(slow) == "throughput 0.444× the recorded (slower, pooled over 2 re-runs); curve " \
        "differs (largest relative difference 0.031)"
    unsure = _reproduction(INCONCLUSIVE, 1.015)["settings"]["reproduces"]["runs"][0]
    assert words.compared_words(unsure) == "throughput 1.015× the recorded; curve bit-identical"  # no way: noise


def test_a_row_whose_reproduction_differs_says_which_way_and_that_its_original_was_loaded(tmp_path):
    row, _, _ = _row(tmp_path, _reproduction(DIFFERS, 3.664, measurements=2))
    assert (row["trust"], row["differs_badge"]) == ("differs", "3.66× faster")
    assert trust.row_text(row) == (
        "a trusted reviewer's reproduction differs (Audit): throughput 3.664× the recorded (faster, pooled over 2 "
        f"re-runs); curve bit-identical; {words.UNDER_LOAD_NOTE}")
    caveat = columns._trust_caveat(row)
    assert caveat is not None and caveat.badges == (("signed; reproduction differs: 3.66× faster", "bad"),)
    assert columns._inconclusive_caveat(row) is None


def test_an_inconclusive_reproduction_leaves_a_grey_badge_on_its_row(tmp_path):
    """Before: the row still read "signed, not reproduced" alone; only the run page said it."""
    row, _, _ = _row(tmp_path, _reproduction(INCONCLUSIVE, 1.015))
    assert (row["trust"], row["inconclusive_runs"]) == ("signed", "1 of 1 run")  # the level is unchanged
    # one badge says both, never "signed, not reproduced" beside "reproduction inconclusive" (walkthrough 5, L10)
    assert columns._inconclusive_caveat(row) is None
    caveat = columns._trust_caveat(row)
    assert caveat is not None and caveat.badges == (("signed; reproduction inconclusive: 1 of 1 run", "plain"),)
    assert caveat.text == (f"signed by {signing.short(row['signer'])}; a trusted reviewer's reproduction was "
                           "inconclusive: 1 of 1 run (Audit): throughput 1.015× the recorded; curve bit-identical; "
                           f"{trust.INCONCLUSIVE_WHY}")
    assert caveat in columns._system_caveats(row) and caveat in columns._signer_caveats(row)
    words_shown = [b for c in columns._system_caveats(row) for b, _ in c.badges]
    assert not any("not reproduced" in w for w in words_shown), words_shown
    beside, _, _ = _row(tmp_path / "b", _reproduction(INCONCLUSIVE, 1.015), _reproduction(DIFFERS, 3.664, 2))
    assert beside["inconclusive_runs"] is None  # the run's counted reproduction differs: that badge says it


def test_an_inconclusive_badge_says_its_re_run_was_measured_under_load(tmp_path):
    """A slower re-run under load is inconclusive (docs/rules.md); its grey badge says why."""
    busy = {"load_1m": 6.65, "cores": 2, "other_cores": 1.88, "busy": [{"name": "mypy", "cores": 0.51}]}
    loaded = _reproduction(INCONCLUSIVE, 1.015)
    for run in loaded["runs"]:
        run["host_load"] = {"start": busy, "end": busy, "gpu_other_processes_end": None}
    row, _, _ = _row(tmp_path, loaded)
    assert row["trust"] in ("signed", "unsigned")  # its one trust badge says it (columns._trust_caveat)
    caveat = columns._trust_caveat(row)
    assert caveat is not None and caveat.badges == ((f"{row['trust']}; reproduction inconclusive: 1 of 1 run, "
                                                     "re-run under load", "plain"),)
    assert "the re-run was measured under load (other processes used 1.88 of 2 cores" in caveat.text
    quiet, _, _ = _row(tmp_path / "q", _reproduction(INCONCLUSIVE, 1.015))
    assert not quiet["inconclusive_loaded"]


def test_the_two_clocks_note_of_a_reproduced_row_no_longer_waits_for_a_reproduction(tmp_path):
    row, _, _ = _row(tmp_path, json.loads(RERUN.read_text()))
    assert row["trust"] == "rerun" and row["second_clock"] is True
    said = columns._own_text(row)
    assert labels.TWO_CLOCKS_RESTAMPED in said and "until a reviewer's reproduction" not in said
    assert labels.TWO_CLOCKS in columns._own_text({**row, "reviewed_by": None})  # none yet: it waits


def test_the_run_page_shows_each_reason_under_links_numbered_apart_and_every_attestation(tmp_path):
    """Before: both reproductions linked "[1]", their verdicts only in the links' titles, and the
    attestation of the one that differed nowhere."""
    _, runs, trusted = _row(tmp_path, _reproduction(DIFFERS, 3.664, 2),
                            _reproduction(DIFFERS, 7.454, 2, code_read=COMMIT))
    runs.loc[runs["file"] == "r1.json", "system"] = "Lab B 2-core box"
    [[*found]] = leaderboard.reproductions(runs).values()
    original = json.loads(ORIGINAL.read_text())
    lines = run_page.reproduced_lines(found, original["runs"][0], original, trusted)
    assert [link["n"] for line in lines for link in line["links"]] == [1, 2]
    assert [link["why"][:40] for line in lines for link in line["links"]] == [DIFFERS[:40]] * 2
    assert lines[0]["text"] == ("differs 1 time on AMD EPYC x1 (reviewed by Audit): throughput 3.664× the recorded "
                                f"(faster, pooled over 2 re-runs); curve bit-identical; {words.UNDER_LOAD_NOTE}")
    assert lines[1]["text"].endswith("throughput 7.454× the recorded (faster, pooled over 2 re-runs); curve "
                                     "bit-identical")  # the load said once
    assert [link["attested"] for line in lines for link in line["links"]] == [
        None, "Audit attested reading its code at commit 16b0df863cf5"]  # shown though it differs
    other = {**found[1], "code_read": "65f78db5c825" + "0" * 28}
    [line] = run_page.reproduced_lines([other], original["runs"][0], original, trusted)
    assert line["links"][0]["attested"] == ("Audit attested reading its code at commit 65f78db5c825, not the commit "
                                            "this run recorded: it attests nothing of this run's code")


def _entry(**changes) -> dict:
    entry = copy.deepcopy(json.loads(RERUN.read_text())["settings"]["reproduces"]["runs"][0])
    entry.pop("measuring", None)
    for key, value in changes.items():
        entry[key] = {**entry[key], **value} if isinstance(value, dict) and isinstance(entry.get(key), dict) else value
    return entry


def test_a_badge_names_what_differed_not_a_throughput_that_held():
    """A review found "reproduction differs: 1.01× faster" on a reproduction whose curve differed and
    whose throughput was within the band, and a failed re-run read as a throughput difference."""
    curve = _entry(verdict="differs: curve: step 40: loss 2.31 vs 2.12 recorded", throughput={"ratio": 1.012},
                   curve={"agrees": False, "identical": False, "first_difference": "step 40: loss 2.31 vs 2.12 recorded"})
    assert words.badge_words(curve) == "curve differs"
    assert words.compared_words(curve) == ("throughput 1.012× the recorded; curve differs (step 40: loss 2.31 vs "
                                           "2.12 recorded)")  # no way: the throughput held
    failed = _entry(verdict="differs: the re-run is failed: CUDA error: out of memory", throughput={"ratio": 0.97})
    assert words.badge_words(failed, "failed") == "re-run failed"  # the re-run's own status, not the verdict's words
    assert words.compared_words(failed, "failed").startswith("the re-run failed; throughput 0.970× the recorded;")
    # what differed comes from the figures the validator judges, whatever the verdict's words say
    assert words.badge_words(_entry(verdict="differs: throughput: wholly outside", throughput={"ratio": 0.5})) is None
    slower = _entry(verdict="differs: throughput: 0.444× the recorded samples/s, …, wholly outside ±20%",
                    throughput={"ratio": 0.444, "ci95": [0.40, 0.49]})
    assert words.badge_words(slower) == "0.44× the throughput" and "(slower)" in words.compared_words(slower)
    assert not words.reads_faster(words.compared_words(slower))  # the load explains a faster re-run only
    assert words.direction(0.99999) is None and words.direction(1.006) == "faster"  # "1.00× slower" never shown


WALKTHROUGH_MEDIAN = {  # a walkthrough's reproduction: the mean's interval held 1, the median decided
    "measurements": 2, "ratio": 0.2584, "ci95": [0.0435, 1.5338],
    "median": {"ratio": 0.0827, "ci95": [0.0582, 0.1176], "margin": 1.8}}


def test_a_badge_names_the_figure_that_decided_the_median_where_the_mean_could_not():
    """The walkthrough's badge read "reproduction differs: 0.26× slower": the mean, whose interval
    0.044–1.534 holds 1, not the median step time that decided, and "0.26× slower" read oddly."""
    entry = _entry(verdict="differs: throughput: judged on the median step time, …", measuring=WALKTHROUGH_MEDIAN,
                   throughput={"ratio": 0.2059, "ci95": [0.0345, 1.2292]})
    assert words.median_decided(entry) == WALKTHROUGH_MEDIAN["median"]["ratio"]
    assert words.badge_words(entry) == "re-run's median step 12.1× longer"
    assert words.compared_words(entry) == ("throughput 0.083× the recorded at the median step (slower, pooled over 2 "
                                           "re-runs; re-run's median step 12.1× longer), which decides: the mean, "
                                           "0.258×, cannot; curve bit-identical")
    mean = copy.deepcopy(entry)
    mean["measuring"]["ci95"] = [0.2, 0.33]  # the mean's interval decides: the median is not named
    assert words.median_decided(mean) is None and words.badge_words(mean) == "0.26× the throughput"


def test_a_badge_and_its_note_say_the_re_run_was_measured_under_load():
    """The walkthrough's re-run ran with 1.88 of 2 cores busy; neither badge nor page said so."""
    why = "other processes used 1.88 of 2 cores at its start (mypy, python)"
    curve = _entry(verdict="differs: curve: x", curve={"agrees": False, "identical": False, "first_difference": "x"})
    assert words.badge_words(curve, "complete", why) == "curve differs, re-run under load"
    assert words.compared_words(curve, "complete", why).endswith(f"; the re-run was measured under load ({why})")
    assert words.badge_words(curve) == "curve differs"


def test_hostile_numbers_in_a_reproduction_read_as_none():
    """A review: ``10**400`` raised OverflowError, a list entry AttributeError, a ratio of -3 read
    "-3.00× slower" and 10**30 re-runs were said."""
    for ratio in (10 ** 400, -3.0, 0, float("nan"), "2", True):
        entry = _entry(verdict="differs: throughput: x", throughput={"ratio": ratio, "ci95": [2.5, 3.5]},
                       curve={"max_rel_diff": 10 ** 400})
        assert words.badge_words(entry) == "throughput" and "no throughput ratio" in words.compared_words(entry)
    pooled = _entry(verdict="differs: throughput: x", measuring={"ratio": 3.0, "measurements": 10 ** 30, "ci95": [2, 4]})
    assert "pooled over 8 re-runs" in words.compared_words(pooled)
    assert words.badge_words([]) is None and words.compared_words("x") == ""  # type: ignore[arg-type]


def test_a_time_to_target_that_differs_is_named_in_the_badge_and_the_note():
    """Trial 17, G: 0.019 s recorded, 0.369 s re-run, the throughput within its band."""
    entry = {"throughput": {"ratio": 1.02, "ci95": [0.98, 1.06], "tolerance": 0.2, "within": True},
             "curve": {"agrees": True, "identical": True}, "tta": {"original_s": 0.01886, "reproduction_s": 0.3691}}
    assert words.badge_words(entry) == "time to target 0.05× the speed"
    assert words.compared_words(entry).endswith("time to target 0.01886 s recorded, 0.3691 s re-run (0.051× the "
                                                "speed), which differs")
    near = {**entry, "tta": {"original_s": 10.0, "reproduction_s": 11.0}}
    assert words.badge_words(near) is None and "time to target" not in words.compared_words(near)
