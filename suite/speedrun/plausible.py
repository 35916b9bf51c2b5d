"""Plausibility of a speedrun log's figures against each other, and copies of a run: a flagged
run is shown with its flags, and it can never make its record faster, better or "met"
(:mod:`suite.speedrun.records` says how each figure treats it).

The thresholds were measured on the history (modded-nanogpt at f411b3d, its 1,126 timed logs;
docs/speedrun.md):
- train_time against final_step × step_avg: every log is within 0.0089% (the rounding of
  step_avg to 0.01 ms) of final_step × step_avg, or, for the history's logs dated before Feb
  2025 (whose step_avg leaves out the first 10 steps; :mod:`suite.speedrun.early_logs`, by the
  sha256 of their bytes), of (final_step − 10) × step_avg; flagged beyond :data:`PRODUCT_TOLERANCE`;
- every log of modded-nanogpt's format in the history has its train_time on its last step line;
  a run whose last step line has none (its time then that of the last line that has one) is
  flagged, and so is one without a train_time whose validations carry times;
- train_time across a run's validations never goes backwards in the history;
- train_time / final_step is at least 54.24 ms on track 1 and 219.64 ms on track 2; a run's
  steps under half of that (:data:`MIN_STEP_S`) are flagged, and any train_time under
  :data:`MIN_TRAIN_TIME_S`;
- the history's largest MFU estimate is 40.9%; above 100% is impossible; and where no MFU is
  estimated, tokens/s per GPU × :data:`MIN_FLOPS_PER_TOKEN` above the GPU's dense bf16 peak is
  impossible too (the history's fastest: 495,693 tokens/s per GPU, a quarter of that bound);
- a validation-loss sequence equal to one of another run's, of this record, its baselines or an
  earlier row's, is a copy (one in the history: record 9's folder holds record 8's log, byte for
  byte); and so is a log whose timing is another's, whatever its losses say: at least
  :data:`MIN_COPY_TIMES` validations at the same step with the same train_time, to the ms (finding
  F6: 6 copies of a run, one mid-run loss of each nudged by 0.0001, made p 0.5 into 0.00997,
  "met"). Over the history's 1,108 timed logs of track 1 (613,278 pairs) two logs of other bytes
  share 1 such validation in 935 pairs, 2 in 35, 3 in 2 (2024-12-04_ValueEmbed's 2d140d43 and
  bb60727f; 2026-04-22_MuddFormer/baseline-s1480's 3d10444e and b6162335), never 4; track 2's 18
  logs (153 pairs), 2 at most; byte-identical logs share 14 to 154. 5 is 2 above the most.
"""
from __future__ import annotations

from collections import Counter

from suite.figures import mfu as peaks
from suite.speedrun.early_logs import is_early

PRODUCT_TOLERANCE = 0.0005  # |train_time − steps × step_avg| / train_time; honest worst 0.0089%
WARMUP_STEPS = 10  # the history's logs before Feb 2025 (early_logs): step_avg may leave these out
MIN_TRAIN_TIME_S = 1.0
# half the history's fastest train_time / final_step per track folder (54.24 ms, 219.64 ms)
MIN_STEP_S = {"records/track_1_short/": 0.027, "records/track_2_medium/": 0.110}
MAX_MFU = 1.0
# training FLOPs per token of the smallest model a track trains: GPT-2 small's 12 blocks of width
# 768 hold 85M matmul weights, 6 × 85M ≈ 5.1e8 (embeddings and attention scores left out)
MIN_FLOPS_PER_TOKEN = 5e8
CLAIM_TOLERANCE = 0.02  # |measured / claimed − 1| beyond this is flagged; honest worst 1.64%, next 2.62%
MIN_COPY_VALIDATIONS = 3  # sequences shorter than this are not compared (a chance match)
# validations at the same step and train_time (to the ms) that make two logs one run; the most two
# distinct logs of the history share is 3 (2 of 613,278 pairs on track 1; 2 on track 2)
MIN_COPY_TIMES = 5


def run_flags(run: dict) -> list[str]:
    """Why a run's figures cannot all be true (empty when they can)."""
    flags = []
    times = [v[2] for v in run.get("validations") or [] if v[2] is not None]
    back = next((i for i in range(1, len(times)) if times[i] < times[i - 1]), None)
    if back is not None:
        flags.append(f"train_time goes backwards across its validations ({times[back - 1]:g} s, then {times[back]:g} s)")
    seconds, steps, avg = run.get("train_time_s"), run.get("final_step"), run.get("step_avg_ms")
    if run.get("format") == "modded-nanogpt":
        after = run.get("untimed_step_lines")
        if seconds is None and times:
            flags.append(f"no train_time, though its validations carry times (the last: {times[-1]:g} s)")
        elif seconds is not None and after != 0:
            flags.append(f"its last {after} step line(s) have no train_time: its time is an earlier line's")
    if seconds is not None and steps and steps >= 1 and seconds < MIN_TRAIN_TIME_S:
        flags.append(f"a train_time of {seconds:g} s for {steps} steps (under {MIN_TRAIN_TIME_S:g} s)")
    elif seconds and steps and steps >= 1:
        floor = next((v for k, v in MIN_STEP_S.items() if str(run.get("log", "")).startswith(k)), None)
        if floor is not None and seconds / steps < floor:
            flags.append(f"{1000 * seconds / steps:.4g} ms per step (train_time / final_step), under "
                         f"{1000 * floor:g} ms: half the track's fastest in the history")
        if avg is not None:
            gap = min(abs(n * avg / 1000.0 - seconds) for n in _timed_steps(run, steps))
            if gap > PRODUCT_TOLERANCE * seconds:
                flags.append(f"train_time {seconds:g} s against final_step × step_avg = {steps * avg / 1000.0:.6g} s "
                             f"(beyond {100 * PRODUCT_TOLERANCE:g}%)")
    unread = next((n for n in run.get("notes") or [] if "validation-looking step line" in n), None)
    if unread:
        flags.append(unread)
    mfu = run.get("mfu_estimate")
    rate = run.get("tokens_per_s_per_gpu")
    peak = peaks.find_peak(run["gpu"]) if rate and run.get("gpu") else None
    if mfu is not None and mfu > MAX_MFU:
        flags.append(f"an MFU estimate of {100 * mfu:.1f}%, above 100% of the GPU's peak")
    elif rate and peak is not None and "bf16" in peak.tflops and rate * MIN_FLOPS_PER_TOKEN > peak.tflops["bf16"] * 1e12:
        flags.append(f"{rate:,.0f} tokens/s per GPU: even GPT-2 small's {MIN_FLOPS_PER_TOKEN:.1e} FLOPs per token "
                     f"would need more than the {peak.name}'s peak")
    return flags


def _timed_steps(run: dict, steps: int) -> tuple[int, ...]:
    """The step counts step_avg may divide train_time by: final_step, and for one of the history's
    logs dated before February 2025 (:func:`~suite.speedrun.early_logs.is_early`: its bytes' sha256
    at its path in the history) final_step − :data:`WARMUP_STEPS` too."""
    early = is_early(run.get("log_sha256"), run.get("log"))
    return (steps, steps - WARMUP_STEPS) if early and steps > WARMUP_STEPS else (steps,)


def _sequence(run: dict) -> tuple | None:
    seq = tuple((v[0], v[1]) for v in run.get("validations") or [] if v[1] is not None)
    return seq if len(seq) >= MIN_COPY_VALIDATIONS else None


def _times(run: dict) -> frozenset[tuple[int, float]]:
    """A run's timing record: (step, train_time) of each validation timed after its start (every
    run's step 0 is at 0 s)."""
    return frozenset((v[0], v[2]) for v in run.get("validations") or [] if v[2] is not None and v[2] > 0)


def same_times(a: dict, b: dict) -> bool:
    """Whether two runs share :data:`MIN_COPY_TIMES` validations at the same step and the same
    train_time, to the millisecond: one run's timing, whatever its losses say."""
    return len(_times(a) & _times(b)) >= MIN_COPY_TIMES


def copies(rows: list[tuple[int, list[dict]]]) -> dict[str, str]:
    """{log: "a copy of …"} for each run whose validation-loss sequence equals that of another log
    of the same or an earlier README row, or whose timing is another's (:func:`same_times`)
    (``rows``: (record number, runs) in README order; the first log holding a sequence or a
    timing, by row then by name, keeps it)."""
    first: dict[tuple, tuple[int, str]] = {}
    timed: dict[tuple[int, float], list[int]] = {}  # (step, train_time) → positions in ``seen``
    seen: list[tuple[int, str]] = []
    found: dict[str, str] = {}
    for number, runs in rows:
        for run in sorted(runs, key=lambda r: r["log"]):
            seq = _sequence(run)
            holder = first.setdefault(seq, (number, run["log"])) if seq is not None else None
            if holder is not None and holder[1] != run["log"]:
                found[run["log"]] = (f"its validation losses are those of record {holder[0]}'s run {holder[1]}: "
                                     "a copy")
            mine = _times(run)
            shared = Counter(i for key in mine for i in timed.get(key, ()) if seen[i][1] != run["log"])
            match = min((i for i, n in shared.items() if n >= MIN_COPY_TIMES), default=None)
            if match is not None and run["log"] not in found:
                found[run["log"]] = (f"its train_time at {shared[match]} validations is that of record "
                                     f"{seen[match][0]}'s run {seen[match][1]}: a copy")
            seen.append((number, run["log"]))
            for key in mine:
                timed.setdefault(key, []).append(len(seen) - 1)
    return found


def equal_pairs(number: int, chosen: list[dict], beside: list[dict]) -> dict[str, str]:
    """{log: "a copy …"} for both runs of each pair, one of record ``number``'s runs (``chosen``)
    and one of its baselines' (``beside``), whose validation-loss sequences are equal or whose
    timings are one (:func:`same_times`)."""
    mine: dict[tuple, str] = {}
    for run in chosen:
        seq = _sequence(run)
        if seq is not None:
            mine.setdefault(seq, run["log"])
    found: dict[str, str] = {}
    for run in beside:
        seq = _sequence(run)
        if seq is not None and seq in mine and mine[seq] != run["log"]:
            found[run["log"]] = f"its validation losses are those of record {number}'s run {mine[seq]}: a copy"
            for other in chosen:
                if _sequence(other) == seq:
                    found.setdefault(other["log"], f"its validation losses are those of its baseline's run "
                                                   f"{run['log']}: a copy")
        for other in chosen:
            if other["log"] != run["log"] and same_times(run, other):
                found.setdefault(run["log"], f"its train_time is that of record {number}'s run {other['log']}: "
                                             "a copy")
                found.setdefault(other["log"], f"its train_time is that of its baseline's run {run['log']}: a copy")
    return found


def all_flags(run: dict, copied: dict[str, str]) -> list[str]:
    """A run's flags: its own figures' (:func:`run_flags`) and a copy's."""
    return run_flags(run) + ([copied[run["log"]]] if run.get("log") in copied else [])


def claim_flag(measured: float | None, claimed: float | None) -> str | None:
    """The record's measured time off its claim by more than :data:`CLAIM_TOLERANCE`."""
    if not measured or not claimed:
        return None
    share = measured / claimed - 1
    if abs(share) <= CLAIM_TOLERANCE:
        return None
    return (f"measured {100 * abs(share):.1f}% {'slower' if share > 0 else 'faster'} than claimed "
            f"(beyond {100 * CLAIM_TOLERANCE:g}%)")
