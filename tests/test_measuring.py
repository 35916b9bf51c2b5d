"""A reproduction measures a throughput on until its interval decides or a stated cap is reached
(suite/run/reproduce/measuring.py; docs/rules.md, "Reproducing a result").

The measurement source is fake and fast: each "re-run" is a window of step times with
deterministic noise (a seeded generator, uniform ± ``noise`` around the mean step time, so the
mean is the one asked for), and a fake clock that advances 100 s per re-run."""
from __future__ import annotations

import copy
import itertools
import json
import uuid
from pathlib import Path

import factories
import numpy as np
import pytest

from suite.figures import derive, load
from suite.figures import reproducibility as tolerance
from suite.run.reproduce import comparison, measuring, planning
from suite.validate import check_document

REPO = Path(__file__).resolve().parents[1]
TWO_RANKS = REPO / "tests" / "corpus" / "valid" / "gpt2-smoke-2-ranks.json"
ONE_THREAD = REPO / "tests" / "corpus" / "valid" / "lm-char-smoke.json"  # one rank on the CPU
RERUN_S = 100  # what the fake clock says each re-run took


def _run(mean_s: float, noise: float, seed: int, steps: int = 40) -> dict:
    """A complete run record of ``steps`` step times around ``mean_s``, its throughput derived."""
    rng = np.random.default_rng(seed)
    times = [round(float(mean_s * (1 + noise * rng.uniform(-1, 1))), 7) for _ in range(steps)]
    tput, _ = derive.throughput(times, warmup_steps=0, samples_per_step=8, tokens_per_step=None)
    return {"status": "complete", "run_id": uuid.uuid4().hex, "step_times_s": times, "curve": [], "scale": "smoke",
            "metrics": {"throughput": tput, "samples_per_step": 8, "tokens_per_step": None, "flops_per_step": 1e9}}


ORIGINAL = _run(0.01, 0.02, 0, steps=128)  # a quiet recorded run


def _measured(ratio: float, cap: measuring.Cap, noise: float = 0.9, original: dict = ORIGINAL,
              steps: int = 40, loads=None) -> tuple[measuring.Measuring, list[str]]:
    """Measure re-runs at ``ratio`` × the original's throughput on, as goodbench reproduce does;
    ``loads``: each re-run's ``host_load`` in turn (None: not recorded)."""
    seeds, ticks = itertools.count(1), itertools.count(0, RERUN_S)
    loads = itertools.repeat(None) if loads is None else iter(loads)
    said: list[str] = []
    state = measuring.Measuring(cap, 0.2)
    again = True
    while again:  # the loop of suite/run/reproduce/own.py and training.py: a re-run, pooled, until add says stop
        if state.records:
            said.append(state.progress())
        start = next(ticks)
        record = _run(0.01 / ratio, noise, next(seeds), steps) | {"host_load": next(loads)}
        again = state.add(original, record, next(ticks) - start)
    return state, said


def test_a_throughput_a_first_re_run_cannot_place_is_measured_on_and_stops_once_decisive():
    first = measuring.pooled(ORIGINAL, [_run(0.01 / 0.95, 0.9, 1, 30)], 0.2)
    assert tolerance.interval_judgement(first.low, first.high, 0.2) == tolerance.INCONCLUSIVE
    state, said = _measured(0.95, measuring.Cap(), steps=30)
    n = len(state.records)
    assert state.stopped == measuring.DECISIVE and state.judged == tolerance.WITHIN
    assert 1 < n < measuring.MAX_MEASUREMENTS  # early: before the cap
    assert state.seconds == n * RERUN_S and state.pool.batches == sum(30 // 6 for _ in range(n))
    assert len(said) == n - 1 and all("measuring again" in line for line in said)
    assert state.describe() == (f"measured {n} times ({state.pool.batches} batches, {n * RERUN_S} s; cap 8 re-runs, "
                                f"240 batches or 900 s): stopped, the interval lies within ±20%")


def test_a_throughput_that_never_decides_stops_at_the_stated_cap():
    state, _ = _measured(0.84, measuring.Cap(measurements=3))
    assert (state.stopped, len(state.records), state.judged) == (measuring.CAPPED, 3, tolerance.INCONCLUSIVE)
    assert state.why == "the cap of 3 re-runs is reached"
    timed, _ = _measured(0.84, measuring.Cap(seconds=250))
    assert (timed.stopped, len(timed.records), timed.seconds) == (measuring.CAPPED, 2, 200)
    assert timed.why == "another re-run would pass the cap of 250 s (200 s measured)"
    batches, _ = _measured(0.84, measuring.Cap(batches=10))
    assert (batches.stopped, len(batches.records)) == (measuring.CAPPED, 2)


def test_one_outside_measurement_is_measured_again_and_a_noisy_original_stops_at_once():
    slow, _ = _measured(0.6, measuring.Cap())
    assert (slow.stopped, slow.judged, len(slow.records)) == (measuring.DECISIVE, tolerance.OUTSIDE, 2)
    noisy = _run(0.01, 0.9, 0, steps=20)  # the recorded run's own interval is wider than the band
    state, said = _measured(0.8, measuring.Cap(), noise=0.02, original=noisy)
    assert (state.stopped, len(state.records), said) == (measuring.UNDECIDABLE, 1, [])


def test_a_ratio_settled_where_the_recorded_noise_alone_straddles_the_edge_stops_after_two_re_runs():
    # the load-3 case: 0.86x held 0.72-1.03 from its 2nd to its 8th re-run, 154 s, because the
    # recorded run's own error alone keeps an interval at 0.86x across the 0.8 edge
    loaded = _run(0.01, 0.7, 0, steps=60)
    state, said = _measured(0.86, measuring.Cap(), noise=0.05, original=loaded)
    assert state.pool is not None and state.pool.decidable and state.pool.settled  # within was possible at 1x
    assert (state.stopped, len(state.records), state.judged) == (measuring.UNDECIDABLE, 2, tolerance.INCONCLUSIVE)
    assert state.why.startswith(f"the ratio is settled within its re-runs' error ({state.pool.ratio:.3f}×)")
    assert len(said) == 1  # one "measuring again" line, after the first re-run
    near_one, _ = _measured(0.97, measuring.Cap(), noise=0.05, original=loaded)
    assert near_one.stopped == measuring.DECISIVE and near_one.judged == tolerance.WITHIN


def _target(run: dict) -> planning.Target:
    return planning.Target(0, run, "gpt2-124m", 1, "cpu", "fp32", planning.Layout(), None, tolerance.EXACT)


def test_the_verdict_and_the_time_taken_are_in_the_reproduction_record():
    state, _ = _measured(0.95, measuring.Cap(), steps=30)
    first = comparison.compare_run(_target(ORIGINAL), state.records[0], 0.2)
    assert first.unsettled and first.verdict.startswith("inconclusive: ")
    c = comparison.compare_run(_target(ORIGINAL), state.records[-1], 0.2, first, state)
    n = len(state.records)
    assert c.verdict == "reproduced" and c.measurements == n
    entry = c.to_json()
    assert entry["measurements"] == n and entry["first_ratio"] == pytest.approx(first.throughput.ratio)
    m = entry["measuring"]
    assert (m["measurements"], m["seconds"], m["stopped"]) == (n, n * RERUN_S, "decisive")
    assert m["ratio"] == pytest.approx(state.pool.ratio) and m["ci95"] == [state.pool.low, state.pool.high]
    assert m["cap"] == {"measurements": 8, "batches": 240, "seconds": 900.0}
    from suite.run.reproduce.reporting import report_lines
    from suite.run.reproduce.training import Reproduction

    lines = report_lines(Reproduction({}, [c]))
    assert lines[1] == (f"  throughput  {state.pool.ratio:.3f}× the recorded samples/s, pooled over {n} re-runs (the "
                        f"headline, which decides): 95% interval {state.pool.low:.3f}–{state.pool.high:.3f}; "
                        "tolerance ±20% — interval within")
    assert lines[2].startswith(f"              (measured {n} times ({state.pool.batches} batches, {n * RERUN_S} s; cap "
                               "8 re-runs, 240 batches or 900 s): stopped, the interval lies within ±20%; batch means: ")
    # every other figure is one re-run's, and says which
    assert [x[:26] for x in lines[3:] if not x.startswith("              ")] == \
        ["  curve       last re-run:", "  last re-run 798.8 → 797.", "  TTA         last re-run:"]
    assert lines[5].endswith(f"not judged alone: the pooled ratio decides; first re-run: {first.throughput.ratio:.3f}×")
    capped, _ = _measured(0.84, measuring.Cap(measurements=3))
    c = comparison.compare_run(_target(ORIGINAL), capped.records[-1], 0.2,
                               comparison.compare_run(_target(ORIGINAL), capped.records[0], 0.2), capped)
    assert c.verdict.startswith("inconclusive: throughput: ") and "measured 3 times (15 batches, 300 s; cap 3 " \
        "re-runs, 240 batches or 900 s): stopped, the cap of 3 re-runs is reached" in c.verdict


def _measured_entry(rep: dict, stopped: str = "decisive") -> dict:
    """``rep`` whose first run was measured twice, its pooled figures consistent with its own."""
    bad = copy.deepcopy(rep)
    entry = bad["settings"]["reproduces"]["runs"][0]
    tput = entry["throughput"]
    entry.update(measurements=2, first_ratio=0.7)
    entry["measuring"] = {"measurements": 2, "batches": 20, "steps": 160, "seconds": 42.0,
                          "samples_per_s": tput["samples_per_s"], "ratio": tput["ratio"], "ci95": tput["ci95"],
                          "method": "batch means", "stopped": stopped, "why": "w",
                          "cap": {"measurements": 8, "batches": 240, "seconds": 900.0}}
    return bad


def _found(doc: dict) -> list[tuple[str, str]]:
    """The validator's (code, field) of each problem of ``doc``."""
    return [(p.code, p.field) for p in check_document(doc)]


def test_the_validator_holds_a_measured_on_entry_to_its_own_pooled_figures():
    rep = factories.reproduction_of(json.loads(TWO_RANKS.read_text()), "1" * 64)
    where = "settings.reproduces.runs[0]"

    good = _measured_entry(rep)
    assert _found(good) == []
    assert _found(_measured_entry(rep, "cap")) == [("reproduces", f"{where}.measuring.stopped")]
    wide = _measured_entry(rep)
    wide["settings"]["reproduces"]["runs"][0]["measuring"]["ci95"] = [0.5, 1.9]  # pooled: undecided
    assert _found(wide) == [("reproduces", f"{where}.measuring.stopped"), ("reproduces-verdict", f"{where}.verdict")]
    lied = _measured_entry(rep)
    lied["settings"]["reproduces"]["runs"][0]["measuring"]["ratio"] = 3.0
    assert ("reproduces", f"{where}.measuring.ratio") in _found(lied)
    over = _measured_entry(rep)
    over["settings"]["reproduces"]["runs"][0]["measuring"]["cap"]["measurements"] = 1
    assert _found(over) == [("reproduces", f"{where}.measuring.measurements")]


def _unsteady(mean_s: float, steps: int, every: int, share: float) -> dict:
    """A recorded run of mean step time ``mean_s`` whose every ``every``-th step holds ``share``
    of the time (a forged window: the claimed mean kept, its noise made huge by a few steps)."""
    quick = mean_s * (1 - share)
    times = [round(quick + (mean_s * share * every if (i + 1) % every == 0 else 0.0), 7) for i in range(steps)]
    run = _run(mean_s, 0.0, 0, steps)
    tput, _ = derive.throughput(times, warmup_steps=0, samples_per_step=8, tokens_per_step=None)
    return run | {"step_times_s": times, "metrics": {**run["metrics"], "throughput": tput, "tta_s": None}}


FORGED = [(40, 20, 0.9), (40, 13, 0.9), (128, 40, 0.95)]  # steps, one slow step in every so many, its share


@pytest.mark.parametrize("steps, every, share", FORGED)
def test_an_unsteady_forged_window_re_run_at_half_its_claim_differs_on_the_median_step_time(steps, every, share):
    forged = _unsteady(0.01, steps, every, share)
    state, _ = _measured(0.5, measuring.Cap(), noise=0.02, original=forged)
    p = state.pool
    assert state.judged == tolerance.INCONCLUSIVE and state.stopped == measuring.UNDECIDABLE  # the mean cannot tell
    assert state.on_median and len(state.records) >= measuring.MIN_AGAINST
    assert p.median.high < (1 - 0.2) / tolerance.MEDIAN_MARGIN and p.ratio < 1 - 0.2
    first = comparison.compare_run(_target(forged), state.records[0], 0.2)
    c = comparison.compare_run(_target(forged), state.records[-1], 0.2, first, state)
    assert c.verdict.startswith("differs: throughput: judged on the median step time, the recorded window being "
                                "unsteady")
    assert c.to_json()["measuring"]["median"]["ratio"] == pytest.approx(p.median.ratio)


def test_a_verdict_given_on_the_median_step_time_is_said_once_by_the_figure_that_gave_it():
    """A walkthrough read "→ differs: judged on the median step time … 0.083×" above "throughput 0.258×
    … (the headline, which decides) … — inconclusive": two verdicts. The mean's line now says it could
    not decide, and the median's that it decides, how far beyond which edge, and by which rule."""
    from suite.run.reproduce.reporting import report_lines
    from suite.run.reproduce.training import Reproduction

    forged = _unsteady(0.01, *FORGED[0])
    state, _ = _measured(0.5, measuring.Cap(), noise=0.02, original=forged)
    c = comparison.compare_run(_target(forged), state.records[-1], 0.2, None, state)
    lines = report_lines(Reproduction({}, [c]))
    assert c.verdict.startswith("differs: ") and not any("headline, which decides" in line for line in lines)
    [mean] = [line for line in lines if line.startswith("  throughput  ")]
    assert mean.endswith("inconclusive: the interval reaches across the tolerance, so the median step time decides "
                         "(below)")
    [median] = [line for line in lines if line.startswith("  median      ")]
    m = state.pool.median
    assert median.startswith(f"  median      {m.ratio:.3f}× the recorded samples/s at the median step time (the "
                             f"re-run's median step {1 / m.ratio:.3g}× longer; which decides): 95% interval "
                             f"{m.low:.3f}–{m.high:.3f}, wholly below {0.8 / tolerance.MEDIAN_MARGIN:.3f} (the band's "
                             f"edge 0.8 widened {tolerance.MEDIAN_MARGIN:g}×) — differs")
    assert "the median rule" in lines[lines.index(median) + 1]


@pytest.mark.parametrize("noise, steps", [(0.7, 40), (0.7, 128), (0.99, 40), (0.99, 128)])
def test_an_honest_noisy_window_re_run_near_its_throughput_never_differs_on_the_median(noise, steps):
    loaded = _run(0.01, noise, 0, steps=steps)  # uniform noise: a loaded machine's honest window
    for ratio, rerun_noise in itertools.product((0.9, 1.0, 1.1), (0.05, 0.9)):
        state, _ = _measured(ratio, measuring.Cap(), noise=rerun_noise, original=loaded)
        assert not state.on_median and state.judged != tolerance.OUTSIDE, (ratio, rerun_noise)
        assert state.pool.median is not None  # kept in the record all the same


def _median_entry(rep: dict, verdict: str = "", ratio: float = 0.5, host_load: dict | None = None) -> dict:
    """``rep`` whose first run was measured on against the forged window and differs on the median
    (each re-run measured with ``host_load``)."""
    forged = _unsteady(0.01, *FORGED[0])
    state, _ = _measured(ratio, measuring.Cap(), noise=0.02, original=forged, loads=itertools.repeat(host_load))
    c = comparison.compare_run(_target(forged), state.records[-1], 0.2, None, state)
    bad = copy.deepcopy(rep)
    entry = bad["settings"]["reproduces"]["runs"][0]
    m = c.to_json()["measuring"]
    m["samples_per_s"] = m["ratio"] * entry["throughput"]["original_samples_per_s"]  # pooled against this file's
    entry.update(measurements=m["measurements"], first_ratio=0.5, measuring=m, verdict=verdict or c.verdict)
    [run] = [r for r in bad["runs"] if r["run_id"] == entry["run_id"]]
    if host_load is not None:  # the last re-run pooled is the file's run
        run["host_load"] = host_load
    return bad


def test_the_validator_recomputes_a_verdict_given_on_the_median_step_time():
    rep = factories.reproduction_of(json.loads(TWO_RANKS.read_text()), "1" * 64)
    where = "settings.reproduces.runs[0]"

    good = _median_entry(rep)
    assert good["settings"]["reproduces"]["runs"][0]["verdict"].startswith("differs: ") and _found(good) == []
    assert _found(_median_entry(rep, "inconclusive: edited")) == [("reproduces-verdict", f"{where}.verdict")]
    within = _median_entry(rep)
    median = within["settings"]["reproduces"]["runs"][0]["measuring"]["median"]
    median.update(ratio=1.0, samples_per_s=median["original_samples_per_s"], ci95=[1 - 0.1, 1 + 0.1])
    assert _found(within) == [("reproduces-verdict", f"{where}.verdict")]  # a median within never differs
    lied = _median_entry(rep)
    lied["settings"]["reproduces"]["runs"][0]["measuring"]["median"]["ratio"] = 1.0
    assert ("reproduces", f"{where}.measuring.median.ratio") in _found(lied)
    wider = _median_entry(rep)
    wider["settings"]["reproduces"]["runs"][0]["measuring"]["median"]["margin"] = tolerance.MEDIAN_MARGIN * 10
    assert _found(wider) == [("reproduces", f"{where}.measuring.median.margin")]
    old = _median_entry(rep)  # written before the median was kept: judged on the mean alone, as then
    del old["settings"]["reproduces"]["runs"][0]["measuring"]["median"]
    assert _found(old) == [("reproduces-verdict", f"{where}.verdict")]
    old["settings"]["reproduces"]["runs"][0]["verdict"] = "inconclusive: the interval reaches across the edge"
    assert _found(old) == []


BUSY = {"load_1m": 6.65, "cores": 2, "other_cores": 1.88, "busy": [{"name": "mypy", "cores": 0.51}]}
LOADED = {"start": BUSY, "end": BUSY, "gpu_other_processes_end": None}  # a walkthrough's re-run's load
HALF = {"start": BUSY | {"other_cores": 1.0}, "end": BUSY | {"other_cores": 1.0}, "gpu_other_processes_end": None}
"""A re-run one busy process shared its 2 cores with: a lockstep run keeps a core, and the floor holds."""


def test_a_slower_re_run_measured_under_load_is_inconclusive_never_a_difference():
    """A walkthrough's re-run at 1.88 of 2 cores busy published "differs" against an honest file:
    a loaded re-run's slower throughput cannot show the recorded one wrong (docs/rules.md)."""
    from suite.run.reproduce.reporting import report_lines
    from suite.run.reproduce.training import Reproduction

    slow = _run(0.01 / 0.6, 0.02, 1)
    assert comparison.compare_run(_target(ORIGINAL), slow, 0.2).verdict.startswith("differs: throughput: ")
    c = comparison.compare_run(_target(ORIGINAL), slow | {"host_load": LOADED}, 0.2)
    assert c.loaded_slower is not None and c.loaded_slower.startswith("other processes used 1.88 of 2 cores at its start")
    assert c.verdict.startswith("inconclusive: throughput: ") and c.reasons() == []
    assert f"the re-run was measured under load ({c.loaded_slower}): a slower re-run is then expected" in c.verdict
    assert any(line.startswith("  load        the re-run was measured under load (") for line in
               report_lines(Reproduction({}, [c])))
    fast = _run(0.01 / 2, 0.02, 1) | {"host_load": LOADED}  # the load explains a slower re-run only
    assert comparison.compare_run(_target(ORIGINAL), fast, 0.2).verdict.startswith("differs: throughput: ")


def _loaded(other: float, cores: int, during: bool = True) -> dict:
    """A re-run's ``host_load``: ``other`` of ``cores`` busy at its start and end, and on average
    over it (``during``) unless told not."""
    snap = {"load_1m": other, "cores": cores, "other_cores": other, "busy": [{"name": "mypy", "cores": other}]}
    average = {"during": {"cores": cores, "other_cores": other, "busy": [], "seconds": 60.0}} if during else {}
    return {"start": snap, "end": snap, "gpu_other_processes_end": None} | average


@pytest.mark.parametrize("ratio, other, cores, threads, explained", [
    (0.6, 1.88, 2, 1, True),        # the machine all but full: one thread, down to the floor
    (1 / 178, 1.96, 2, 1, False),   # trial 17: 178× slower differs whatever the load
    (0.1, 1.0, 2, 2, False),        # ten times slower differs, threads or not, where the load left a core
    (0.024, 1.88, 2, 2, True),      # a full machine: two busy processes took 2 threads as low as 0.024×
    (0.01, 1.88, 2, 1, False),      # ... but not one thread, which they can take only the cores from
    (0.12, 1.88, 2, 1, False),      # below the floor
    (0.75, 0.6, 128, 1, False),     # half a core of 128 cannot cost one thread 6% below the band
    (0.7, 1.0, 4, 1, True),         # a quarter of 4 cores: down to 0.8 × 0.75 = 0.6
    (0.55, 1.0, 4, 1, False),
    (0.27, 1.0, 2, 2, True),        # benchmarks/load_slowdown.py: one busy process on 2 cores took 2 threads to 0.27×
    (0.27, 1.0, 2, None, True),     # threads not recorded: as in lockstep
    (0.6, 0.6, 128, 4, True),       # threads in lockstep: the share left bounds nothing
])
def test_load_excuses_only_the_slowdown_it_could_cause(ratio, other, cores, threads, explained):
    """The load explains a slower re-run only down to the band's edge scaled by the share of the
    cores it left, never below the floor, where the run is one thread; threads in lockstep lose
    more than the cores the load used: the floor alone (docs/rules.md, "Reproducing a result")."""
    left = 1 - other / cores
    floor = 0.0 if threads != 1 and left <= load.SATURATED_LEFT else load.LOADED_FLOOR
    bound = max(floor, (1 - 0.2) * left) if threads == 1 else floor
    assert (ratio >= bound) == explained
    c = comparison.compare_run(_target(ORIGINAL), _run(0.01 / ratio, 0.02, 1) | {"host_load": _loaded(other, cores)},
                               0.2, cpu_threads=threads)
    assert c.lockstep == (threads != 1)
    assert c.verdict.startswith("inconclusive: " if explained else "differs: throughput: ")


def test_a_full_machine_is_read_from_the_average_over_the_run_never_from_one_snapshot():
    """Review D, M2: a busy second at a lockstep run's start and end, with no average kept, excused
    any slowdown; only an average over the run says the machine was full."""
    assert load.loaded_bound([_loaded(1.9, 2)], 0.2, lockstep=True) == 0.0
    assert load.loaded_bound([_loaded(1.9, 2, during=False)], 0.2, lockstep=True) == load.LOADED_FLOOR
    half = _loaded(1.9, 2) | {"during": {"cores": 2, "other_cores": 1.0, "busy": [], "seconds": 60.0}}
    assert load.loaded_bound([half], 0.2, lockstep=True) == load.LOADED_FLOOR


def test_the_load_is_read_on_average_over_the_run_where_that_was_recorded():
    """One busy reading at a run's start excused the whole run (review C, L1): the share left is
    the run's average where its watch recorded one, the more loaded snapshot only where it did not."""
    busy = {"load_1m": 2.0, "cores": 2, "other_cores": 1.9, "busy": []}
    quiet = {"load_1m": 0.1, "cores": 2, "other_cores": 0.1, "busy": []}
    during = {"cores": 2, "other_cores": 0.6, "busy": [], "seconds": 60.0}
    assert load.share_left({"start": busy, "during": during, "end": quiet}) == pytest.approx(0.7)
    assert load.share_left({"start": busy, "end": quiet}) == pytest.approx(0.05)
    assert load.share_left({"start": busy, "during": None, "end": quiet}) == pytest.approx(0.05)
    assert load.share_left({"start": busy, "during": during, "end": quiet}, most_loaded=True) == pytest.approx(0.05)
    record = {"start": busy, "during": during, "end": quiet}
    assert load.loaded_bound([record], 0.2, lockstep=False) == pytest.approx(0.8 * 0.7)
    assert load.loaded_bound([record], 0.2, lockstep=True) == load.LOADED_FLOOR


@pytest.mark.parametrize("device, world_size, threads, steps", [
    ("cpu", 1, 1, False), ("cpu", 1, 2, True), ("cpu", 1, None, True), ("cpu", 2, 1, True),
    ("cuda", 1, 16, False), ("cuda", 8, 16, True),
])
def test_threads_or_ranks_in_lockstep_are_told_from_one_thread(device, world_size, threads, steps):
    assert load.lockstep(device, world_size, threads) == steps


def _pooled(loads: list, ratio: float = 0.6) -> measuring.Measuring:
    """Re-runs at ``ratio`` × the original's throughput pooled, one per entry of ``loads`` (its ``host_load``)."""
    state = measuring.Measuring(measuring.Cap(measurements=8, batches=10_000, seconds=10_000), 0.2)
    for seed, host_load in enumerate(loads, 1):
        state.add(ORIGINAL, _run(0.01 / ratio, 0.9, seed) | {"host_load": host_load}, RERUN_S)
    return state


def test_a_pooled_verdict_is_excused_only_where_every_pooled_re_run_was_loaded():
    """Seven quiet re-runs clearly slower and an eighth loaded: the pool differs (review H2)."""
    state = _pooled([None] * 7 + [LOADED])
    c = comparison.compare_run(_target(ORIGINAL), state.records[-1], 0.2, None, state)
    assert c.pooled and c.verdict.startswith("differs: throughput: ")
    every = _pooled([LOADED] * 8)
    c = comparison.compare_run(_target(ORIGINAL), every.records[-1], 0.2, None, every)
    assert c.pooled and c.verdict.startswith("inconclusive: throughput: ") and "each of the 8 re-runs" in c.verdict
    assert c.to_json()["measuring"]["host_loads"] == [measuring.loads(LOADED)] * 8


def test_the_load_note_follows_each_run_s_verdict_never_contradicts_it():
    """A new user's reproduction read "differs" beside a note that the re-run's load made such a
    throughput inconclusive: 2 of its 4 pooled re-runs were loaded, too few. The note is now each
    run's, and says what the load did to that verdict (docs/rules.md, "Reproducing a result")."""
    from suite.run.reproduce.reporting import load_notes, rerun_load_notes

    few = _pooled([None] * 7 + [LOADED])
    c = comparison.compare_run(_target(ORIGINAL), few.records[-1], 0.2, None, few)
    assert c.verdict.startswith("differs: throughput: ")
    [note] = rerun_load_notes(c)
    assert note.startswith("note: 1 of 8 re-runs of run 0 were measured under load here (other processes used 1.88 "
                           "of 2 cores at its start")
    assert "too few to explain the difference in its throughput" in note and "inconclusive" not in note
    every = _pooled([LOADED] * 8)
    c = comparison.compare_run(_target(ORIGINAL), every.records[-1], 0.2, None, every)
    assert c.verdict.startswith("inconclusive: ")
    [note] = rerun_load_notes(c)
    assert note.startswith("note: all 8 re-runs of run 0 were measured under load here (first: other processes used")
    assert "its throughput outside the band is inconclusive, not a difference" in note and "--wait-quiet" in note
    fast = comparison.compare_run(_target(ORIGINAL), _run(0.01 / 2, 0.02, 1) | {"host_load": LOADED}, 0.2)
    assert fast.verdict.startswith("differs: ")
    assert rerun_load_notes(fast) == [f"note: the re-run of run 0 was measured under load here ({load.under_load(LOADED)}): "
                                      "but its throughput is no slower than recorded, which the load does not explain"]
    far = comparison.compare_run(_target(ORIGINAL), _run(0.01 / 0.12, 0.02, 1) | {"host_load": _loaded(1.88, 2)},
                                 0.2, cpu_threads=1)
    assert far.verdict.startswith("differs: ")
    [note] = rerun_load_notes(far)
    bound = load.loaded_bound(far.host_loads, 0.2, lockstep=False)
    assert f"but its throughput ratio {far.decided_ratio:.3f}× lies below the least the rules let that load excuse " \
        f"(≥ {bound:.3f}×)" in note and note.endswith("(--wait-quiet SECONDS) to decide it")
    same = comparison.compare_run(_target(ORIGINAL), _run(0.01, 0.02, 1) | {"host_load": LOADED}, 0.2)
    assert same.verdict == comparison.REPRODUCED and rerun_load_notes(same) == []  # the load decided nothing
    quiet = comparison.compare_run(_target(ORIGINAL), _run(0.01 / 0.6, 0.02, 1), 0.2)
    assert rerun_load_notes(quiet) == [] and load_notes([ORIGINAL], [quiet, same]) == []


def test_a_re_run_differing_on_its_median_step_differs_whatever_its_load():
    """The median decides only below (1 − tolerance) / 1.8, beneath the floor the load can excuse
    where it left the run a core."""
    forged = _unsteady(0.01, *FORGED[0])
    state, _ = _measured(0.6, measuring.Cap(), noise=0.02, original=forged, loads=itertools.repeat(HALF))
    on_median = comparison.compare_run(_target(forged), state.records[-1], 0.2, None, state)
    assert on_median.on_median and on_median.loaded_slower is None
    assert on_median.verdict.startswith("differs: throughput: judged on the median step")


def _pooled_entry(rep: dict, loads: list, ratio: float = 0.6, threads: int | None = None) -> dict:
    """``rep`` whose first run was measured on, ``len(loads)`` re-runs at ``ratio`` × the steady
    original's throughput, each with its ``host_load`` in ``loads``: it differs on the mean.
    ``threads``: the re-run's torch CPU threads, as its file's settings record them."""
    state = _pooled(loads, ratio)
    c = comparison.compare_run(_target(ORIGINAL), state.records[-1], 0.2, None, state, cpu_threads=threads)
    bad = copy.deepcopy(rep)
    entry = bad["settings"]["reproduces"]["runs"][0]
    m = c.to_json()["measuring"]
    m["samples_per_s"] = m["ratio"] * entry["throughput"]["original_samples_per_s"]  # pooled against this file's
    entry.update(measurements=m["measurements"], first_ratio=ratio, measuring=m, verdict=c.verdict)
    [run] = [r for r in bad["runs"] if r["run_id"] == entry["run_id"]]
    run["host_load"] = loads[-1]
    return bad


def test_the_validator_takes_a_loaded_slower_re_run_as_inconclusive_or_as_stored_before_as_differs():
    rep = factories.reproduction_of(json.loads(TWO_RANKS.read_text()), "1" * 64)
    verdict = [("reproduces-verdict", "settings.reproduces.runs[0].verdict")]
    entry_of = lambda doc: doc["settings"]["reproduces"]["runs"][0]
    loaded = _pooled_entry(rep, [LOADED] * 8)
    assert entry_of(loaded)["verdict"].startswith("inconclusive: ") and _found(loaded) == []
    entry_of(loaded)["verdict"] = "differs: throughput: stored before the rule"
    assert _found(loaded) == []  # a stored "differs" keeps its meaning
    quiet = _pooled_entry(rep, [None] * 7 + [LOADED])  # review H2: seven quiet re-runs and a loaded last
    assert entry_of(quiet)["verdict"].startswith("differs: ") and _found(quiet) == []
    entry_of(quiet)["verdict"] = "inconclusive: the re-run was measured under load"
    assert _found(quiet) == verdict
    unkept = _pooled_entry(rep, [LOADED] * 8)  # several re-runs whose loads were not kept: judged as quiet
    del entry_of(unkept)["measuring"]["host_loads"]
    assert _found(unkept) == verdict
    one = factories.reproduction_of(json.loads(ONE_THREAD.read_text()), "1" * 64)
    one["settings"]["cpu_threads"] = 1
    many_cores = _pooled_entry(one, [_loaded(0.6, 128)] * 8, threads=1)  # a load that cannot cost one thread 40%
    assert entry_of(many_cores)["verdict"].startswith("differs: ") and _found(many_cores) == []
    entry_of(many_cores)["verdict"] = "inconclusive: the re-run was measured under load"
    assert _found(many_cores) == verdict
    ranks = _pooled_entry(rep, [_loaded(0.6, 128)] * 8)  # two ranks in lockstep: the floor alone bounds it
    assert entry_of(ranks)["verdict"].startswith("inconclusive: ") and _found(ranks) == []
    tenfold = _pooled_entry(rep, [HALF] * 8, ratio=0.1)  # ten times slower differs where the load left a core
    assert entry_of(tenfold)["verdict"].startswith("differs: ") and _found(tenfold) == []
    entry_of(tenfold)["verdict"] = "inconclusive: the re-run was measured under load"
    assert _found(tenfold) == verdict
    full = _pooled_entry(rep, [_loaded(1.88, 2)] * 8, ratio=0.1)  # a full machine (1.88 of 2 cores): any slowdown
    assert entry_of(full)["verdict"].startswith("inconclusive: ") and _found(full) == []
    busy_start = _pooled_entry(rep, [LOADED] * 8, ratio=0.1)  # full at its start and end, no average kept
    assert entry_of(busy_start)["verdict"].startswith("differs: ") and _found(busy_start) == []
    median = _median_entry(rep, ratio=0.6, host_load=HALF)  # on the median: differs where the load left a core
    assert entry_of(median)["verdict"].startswith("differs: ") and _found(median) == []
    entry_of(median)["verdict"] = "inconclusive: the re-run was measured under load"
    assert _found(median) == verdict


def test_a_recorded_median_the_stored_original_does_not_hold_is_not_counted():
    from suite.leaderboard import rows

    stored = rows.original_figures(_unsteady(0.01, *FORGED[0]), {"created_at": "2026-11-28T00:00:00Z", "settings": {}})
    told = {key: stored[key] for key in ("samples_per_s", "tta_s", "median_samples_per_s")}
    reproduction = {"original": told, "started_at": "2026-11-29T00:00:00Z", "scale": "smoke", "tolerance": 0.2}
    assert rows.contradicted(reproduction, stored) is None
    assert rows.contradicted(reproduction | {"original": told | {"median_samples_per_s": None}}, stored) is None  # before
    edited = reproduction | {"original": told | {"median_samples_per_s": stored["samples_per_s"]}}
    assert "at its median step" in str(rows.contradicted(edited, stored))
    rep = _median_entry(factories.reproduction_of(json.loads(TWO_RANKS.read_text()), "1" * 64))
    [row, *_] = rows.run_rows("rep.json", rep)  # what the site reads and holds to the stored original
    recorded = rep["settings"]["reproduces"]["runs"][0]["measuring"]["median"]["original_samples_per_s"]
    assert row["reproduces_original_median_samples_per_s"] == recorded
    assert row["median_samples_per_s"] == pytest.approx(rows.original_figures(rep["runs"][0], rep)["median_samples_per_s"])


def test_the_pooled_method_says_the_batches_each_re_run_gave():
    """A re-run of 140 steps cut into 5 batches of 28, the next into 9 of 15 (its steps noisier):
    the method said "14 batches of 28 steps over 2 runs", 392 steps where 275 were batched (newuser3, M1)."""
    from suite.compare import stats

    rng = np.random.default_rng(3)
    smooth = 0.01 + 0.001 * np.sin(np.arange(140) / 9)  # slow drift: long batches
    noisy = 0.01 * (1 + 0.5 * rng.uniform(-1, 1, 140))  # white noise: short ones
    layout = [(x.size // stats.batch_length(x), stats.batch_length(x)) for x in (smooth, noisy)]
    assert layout[0] != layout[1]  # the two windows are cut apart
    said = stats.rate_estimate([smooth, noisy]).method
    assert said == (f"batch means: {layout[0][0] + layout[1][0]} batches over 2 runs ({layout[0][0]} of "
                    f"{layout[0][1]} steps, {layout[1][0]} of {layout[1][1]} steps)")
    assert stats.batches_text([(5, 28), (5, 28)]) == "10 batches of 28 steps over 2 runs"
    assert stats.batches_text([(5, 28)]) == "5 batches of 28 steps"


@pytest.mark.parametrize("original_s, rerun_s, differs", [
    (0.01886, 0.3691, True),   # trial 17: 19× the time, shown and read "reproduced"
    (10.0, 12.0, False),       # as the throughput's band allows
    (10.0, 24.0, False),       # within the band widened for the evaluations' time
    (10.0, 26.0, True),
    (10.0, 3.0, True),         # far faster
    (0.02, 0.2, False),        # 10× but under a quarter of a second: a first step's start-up
    (None, 0.5, False),        # one did not reach the target: the curve says so, not the time
])
def test_a_time_to_target_far_outside_what_the_throughput_allows_differs(original_s, rerun_s, differs):
    assert tolerance.tta_differs(original_s, rerun_s, 0.2) == differs
    original = copy.deepcopy(ORIGINAL)
    rerun = _run(0.01, 0.02, 1, steps=128)
    original["metrics"]["tta_s"], rerun["metrics"]["tta_s"] = original_s, rerun_s
    c = comparison.compare_run(_target(original), rerun, 0.2)
    assert c.verdict.startswith("differs: time to target: ") == differs
    assert c.verdict == comparison.REPRODUCED or differs or c.verdict.startswith("inconclusive")


def test_the_validator_holds_a_reproduced_verdict_to_its_time_to_target():
    rep = factories.reproduction_of(json.loads((REPO / "tests/corpus/valid/lm-char-smoke.json").read_text()), "1" * 64)
    entry = rep["settings"]["reproduces"]["runs"][0]
    [run] = [r for r in rep["runs"] if r["run_id"] == entry["run_id"]]
    assert _found(rep) == [] and entry["verdict"] == "reproduced"
    tol = rep["settings"]["reproduces"]["throughput_tolerance"]
    rerun = run["metrics"]["tta_s"]  # the run's own, from its curve
    assert rerun is not None and rerun > 19 * tolerance.TTA_ABS_S / 18
    original = rerun / 19  # the recorded one 19× faster (trial 17)
    entry["tta"].update(original_s=original, reproduction_s=rerun, difference_s=rerun - original)
    assert tolerance.tta_differs(original, rerun, tol)
    assert ("reproduces", "settings.reproduces.runs[0].verdict") in _found(rep)
    entry["verdict"] = "differs: time to target: 19×"
    assert _found(rep) == []


@pytest.mark.parametrize("faults, goodput", [
    ({"kills": 1}, {}), ({"kills": 0, "paused_s": 6.0}, {}), ({}, {"failures": 1}),
    ({}, {"badput_s": {"lost_work": 2.5, "restart_recovery": 0}}),
])
def test_an_original_killed_resumed_or_paused_is_not_held_to_a_re_runs_time_to_target(faults, goodput):
    """Review C, H1: a killed and resumed (or paused) original's time to target holds its downtime,
    which a re-run does not spend: 11.25 s recorded against 2.95 s re-run read "differs: time to
    target" for an honest file. It is not judged (``tta.original_interrupted``), in the comparison,
    the validator and the badge alike; an uninterrupted original still is."""
    original = copy.deepcopy(ORIGINAL)
    original["faults"], original["goodput"] = faults, {**(original.get("goodput") or {}), **goodput}
    rerun = _run(0.01, 0.02, 1, steps=128)
    original["metrics"]["tta_s"], rerun["metrics"]["tta_s"] = 11.25, 2.95
    assert tolerance.tta_differs(11.25, 2.95, 0.2) and tolerance.interrupted(original)
    c = comparison.compare_run(_target(original), rerun, 0.2)
    assert c.tta["original_interrupted"] is True and not c.verdict.startswith("differs: time to target")
    assert not tolerance.interrupted(ORIGINAL)
    plain = comparison.compare_run(_target(copy.deepcopy(ORIGINAL) | {"metrics": {**ORIGINAL["metrics"], "tta_s": 11.25}}),
                                   rerun, 0.2)
    assert plain.tta["original_interrupted"] is False and plain.verdict.startswith("differs: time to target")


def test_the_validator_and_the_badge_leave_an_interrupted_originals_time_to_target_unjudged():
    rep = factories.reproduction_of(json.loads((REPO / "tests/corpus/valid/lm-char-smoke.json").read_text()), "1" * 64)
    entry = rep["settings"]["reproduces"]["runs"][0]
    [run] = [r for r in rep["runs"] if r["run_id"] == entry["run_id"]]
    rerun = run["metrics"]["tta_s"]
    original = rerun / 19
    entry["tta"].update(original_s=original, reproduction_s=rerun, difference_s=rerun - original,
                        original_interrupted=True)
    assert entry["verdict"] == "reproduced" and _found(rep) == []
    from suite.leaderboard import reproduction_words
    assert reproduction_words.tta_speed(entry) is None
    entry["tta"]["original_interrupted"] = False
    assert ("reproduces", "settings.reproduces.runs[0].verdict") in _found(rep)
    assert reproduction_words.tta_speed(entry) == pytest.approx(1 / 19)


def test_pooled_loads_are_the_pooled_re_runs_own_the_last_the_files_run():
    """Review C, M6: the last pooled re-run is the file's run, so its load in
    ``measuring.host_loads`` is that run's ``host_load``; a quiet pool whose loads were written in
    by hand read as loaded, and its slower throughput as inconclusive."""
    rep = factories.reproduction_of(json.loads(TWO_RANKS.read_text()), "1" * 64)
    written = _pooled_entry(rep, [LOADED] * 8)
    assert _found(written) == []
    invented = _pooled_entry(rep, [_loaded(0.1, 2)] * 8)  # eight quiet re-runs: differs
    m = invented["settings"]["reproduces"]["runs"][0]["measuring"]
    m["host_loads"] = [measuring.loads(LOADED)] * 8
    invented["settings"]["reproduces"]["runs"][0]["verdict"] = "inconclusive: the re-run was measured under load"
    found = check_document(invented)
    assert ("reproduces", "settings.reproduces.runs[0].measuring.host_loads[7]") in [(p.code, p.field) for p in found]
    assert any("not the file's run's own host_load" in p.reason for p in found)


def test_a_pooled_re_runs_busy_process_named_like_a_trust_label_is_refused():
    """Review C, M6: the names of the processes that loaded pooled re-runs are shown as the run's
    own load is, so they are held to the site's labels too."""
    rep = factories.reproduction_of(json.loads(TWO_RANKS.read_text()), "1" * 64)
    named = copy.deepcopy(LOADED)
    named["start"] = {**BUSY, "busy": [{"name": "reproduced", "cores": 1.5}]}
    doc = _pooled_entry(rep, [named] + [LOADED] * 7)
    assert [(p.code, p.field) for p in check_document(doc) if p.code == "name-trust"] == [
        ("name-trust", "settings.reproduces.runs[0].measuring.host_loads[0].start.busy[0].name")]


@pytest.mark.parametrize("ratio, threads, loaded, verdict", [
    (0.27, 2, True, "inconclusive: "),   # two threads at 0.27× under one busy process: late to its target as much
    (0.27, 2, False, "differs: "),       # the same quiet
    (0.1, 2, True, "differs: "),         # ten times slower differs whatever the load
    (0.27, 1, True, "differs: "),        # one thread: the load left it half the cores, 0.4× at least
])
def test_a_time_to_target_as_late_as_the_load_explains_is_inconclusive(ratio, threads, loaded, verdict):
    """A lockstep re-run the load slowed to 0.27× reaches its target as much later: beyond the
    time to target's band (0.4–2.4×), within what the load could cost the throughput (review C, H3)."""
    original = ORIGINAL | {"metrics": ORIGINAL["metrics"] | {"tta_s": 10.0}}
    rerun = _run(0.01 / ratio, 0.02, 1)
    rerun["metrics"]["tta_s"] = 10.0 / ratio
    if loaded:
        rerun["host_load"] = _loaded(1.0, 2)
    c = comparison.compare_run(_target(original), rerun, 0.2, cpu_threads=threads)
    assert c.tta_off and c.verdict.startswith(verdict)
    assert "time to target" in c.verdict and bool(c.tta_loaded) == (verdict == "inconclusive: ")  # a doubt, or a reason


def test_an_inconclusive_the_earlier_bound_gave_stays_valid():
    """goodbench judged a one-thread re-run by its most loaded reading before (review C, L1): a
    busy start, a quiet average, 0.6× read inconclusive then and differs now; the stored verdict
    is still taken."""
    busy = {"load_1m": 2.0, "cores": 2, "other_cores": 1.9, "busy": []}
    quiet = {"load_1m": 0.1, "cores": 2, "other_cores": 0.2, "busy": []}
    spiky = {"start": busy, "during": {"cores": 2, "other_cores": 0.2, "busy": [], "seconds": 60.0}, "end": quiet,
             "gpu_other_processes_end": None}
    one = factories.reproduction_of(json.loads(ONE_THREAD.read_text()), "1" * 64)
    one["settings"]["cpu_threads"] = 1
    doc = _pooled_entry(one, [spiky] * 8, threads=1)
    entry = doc["settings"]["reproduces"]["runs"][0]
    assert entry["verdict"].startswith("differs: ") and _found(doc) == []
    entry["verdict"] = "inconclusive: the re-run was measured under load"
    assert _found(doc) == []


def test_a_load_note_says_nothing_without_a_ratio_and_never_asks_a_quiet_re_run_to_settle_a_curve():
    """A second look: a partial re-run (no throughput, so no ratio) measured under load read "but
    its throughput is no slower than recorded"; beside a curve that differs, a note asked for a
    quiet re-run "to decide it", which no re-run's speed decides."""
    from types import SimpleNamespace

    from suite.run.reproduce.reporting import rerun_load_notes

    def judged(ratio, loaded_slower, curve_agrees):
        return SimpleNamespace(host_loads=[LOADED], target=SimpleNamespace(index=0), on_median=False,
                               judged=comparison.OUTSIDE, loaded_slower=loaded_slower, tta_off=False,
                               decided_ratio=ratio, curve=SimpleNamespace(agrees=curve_agrees),
                               throughput=SimpleNamespace(tolerance=0.2), lockstep=False)

    assert rerun_load_notes(judged(None, None, True)) == []
    [note] = rerun_load_notes(judged(0.6, "other processes used 1.88 of 2 cores", False))
    assert note.endswith("inconclusive, not a difference; its curve differs all the same, which no load explains")
    [note] = rerun_load_notes(judged(0.6, "other processes used 1.88 of 2 cores", True))
    assert note.endswith("run again on a quiet machine (--wait-quiet SECONDS) to decide it")
