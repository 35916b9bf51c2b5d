"""A README row joined with its logs: the record's runs (the logs in the folder its log link points
into), their means, the t-test verdict, measured beside claimed, the speed-up over reruns of the
previous record kept beside it (``baseline*``), and flags: each a :class:`Flag`, its kind (a code,
which the verdict's rule reads) and its words (what a document stores and the pages show)."""
from __future__ import annotations

import posixpath
import statistics
from collections import Counter
from dataclasses import dataclass

from suite.speedrun import plausible, stats
from suite.speedrun.tree import link_target


@dataclass(frozen=True)
class Track:
    """A speedrun track: its name, its folder of logs and its target validation loss."""
    name: str
    folder: str
    target: float


TRACKS = {1: Track("GPT-2 small (track 1)", "records/track_1_short", 3.28),
          2: Track("GPT-2 medium (track 2)", "records/track_2_medium", 2.92)}
TRACK_GPU, TRACK_GPUS = "H100", 8  # both tracks: 8× NVIDIA H100


@dataclass(frozen=True)
class Flag:
    """A record's flag: its kind (one of the codes below) and its words, as stored and shown."""
    code: str
    text: str


# the flags of a record's selection of logs (:func:`select`)
NO_LOG, LINK_OUTSIDE, BROKEN_LINK = "no-log", "link-outside", "broken-link"
LEFT_OUT, EMPTY_FOLDER, MISSING_FILES = "left-out", "empty-folder", "missing-files"
STORED = "stored"  # a selection's flag read back from a stored document: its words alone
# the flags its runs give (:func:`figures_and_times`) and its baselines' runs (:func:`record_figures`)
IMPLAUSIBLE, UNTIMED_RUNS, LOSSLESS_RUNS, NO_TIME = "implausible", "untimed-runs", "lossless-runs", "no-time"
STOPPED_EARLY, NO_SMI, FEWER_GPUS, OTHER_GPU = "stopped-early", "no-smi", "fewer-gpus", "other-gpu"
CLAIM, BASELINE_RUN = "claim", "baseline-run"
# the kinds that never block "met" (:func:`decide`): the claim's (it concerns the README's claimed
# time, not the runs) and the accelerator's (another GPU or fewer of them: the runs are all in)
NOT_BLOCKING = frozenset({CLAIM, FEWER_GPUS, OTHER_GPU})


def texts(flags: list[Flag]) -> list[str]:
    """The flags' words, as a document stores them."""
    return [f.text for f in flags]


def stored_flags(words: list[str]) -> list[Flag]:
    """A stored document's flags of a record's selection (their words), as :data:`STORED` flags:
    every selection flag blocks "met"."""
    return [Flag(STORED, w) for w in words]


def left_out_flag(left: int) -> Flag:
    """The flag of a selection that leaves out ``left`` logs of its folder."""
    return Flag(LEFT_OUT, f"{left} other log(s) of the folder left out: another format or GPU count than the linked log")


def is_baseline(name: str) -> bool:
    return name.lower().startswith("baseline")


def runs_folder(target: str, folders: set[str]) -> str:
    """The folder a README log link points into: the link itself when it names a folder, else
    the linked file's folder."""
    return target if target in folders else posixpath.dirname(target)


def baseline_groups(folder: str, runs: dict[str, dict], track_folder: str) -> dict[str, list[dict]]:
    """Reruns of the previous record beside a record's runs: logs named baseline* in its folder,
    and the logs under folders named baseline* in it or beside it (not beside a track's dated
    folders), one group per name."""
    parents = [folder]
    parent = posixpath.dirname(folder)
    if parent != track_folder and parent.startswith(track_folder + "/"):
        parents.append(parent)
    groups: dict[str, list[dict]] = {}
    for path, run in runs.items():
        if not path.startswith(parents[-1] + "/"):
            continue
        head, name = posixpath.split(path)
        if head == folder and is_baseline(name):
            groups.setdefault(f"{folder}/baseline*", []).append(run)
            continue
        for p in parents:
            if path.startswith(p + "/"):
                first = path[len(p) + 1:].split("/", 1)
                if len(first) == 2 and is_baseline(first[0]):
                    groups.setdefault(f"{p}/{first[0]}", []).append(run)
    return dict(sorted(groups.items()))


def _accelerator(linked: dict | None, runs: list[dict]) -> tuple[str | None, int | None]:
    if linked is not None and linked.get("gpu"):
        return linked["gpu"], linked["gpus"]
    seen = Counter((r["gpu"], r["gpus"]) for r in runs if r.get("gpu"))
    return seen.most_common(1)[0][0] if seen else (None, None)


def _mean(values: list, digits: int = 1) -> float | None:
    """The mean of the values every run has; ``None`` when any run lacks one ("not in the log")."""
    if not values or any(v is None for v in values):
        return None
    return round(statistics.fmean(values), digits)


@dataclass
class Selection:
    """The runs a README row's log link points at: ``chosen`` (alike the linked log), the linked
    log's run, the folder, and the flags that come from the tree (the link, files not read)."""
    chosen: list[dict]
    linked: dict | None
    folder: str | None
    flags: list[Flag]


def select(track: int, row: dict, runs: dict[str, dict], folders: set[str], files: set[str],
           problems: list[str]) -> Selection:
    """The runs of one README row (see the module's docstring)."""
    info = TRACKS[track]
    flags: list[Flag] = []
    chosen: list[dict] = []
    linked = None
    folder = None
    link = row.get("log_link")
    if not link:
        flags.append(Flag(NO_LOG, "no log"))
    else:
        target = link_target(link)
        if target is None or not target.startswith(info.folder + "/"):
            flags.append(Flag(LINK_OUTSIDE, f"link leaves the track's records folder: {link}"))
        elif target not in files and target not in folders:
            flags.append(Flag(BROKEN_LINK, f"broken link: {target} is not in the repository"))
        else:
            folder = runs_folder(target, folders)
            linked = runs.get(target)
            chosen = [r for p, r in runs.items()
                      if p.startswith(folder + "/") and posixpath.dirname(p) == folder and not is_baseline(posixpath.basename(p))]
            if linked is not None:  # the folder's other logs count when they ran like the linked one
                alike = [r for r in chosen if r["format"] == linked["format"] and r["gpus"] == linked["gpus"]]
                left = len(chosen) - len(alike)
                if left:
                    flags.append(left_out_flag(left))
                chosen = alike
            if not chosen:
                flags.append(Flag(EMPTY_FOLDER, "no log directly in the linked folder"))
            flags += missing_flags(folder, problems, info.folder)
    return Selection(chosen, linked, folder, flags)


def missing_flags(folder: str, problems: list[str], track_folder: str) -> list[Flag]:
    """The "missing files" flags of a record whose runs folder is ``folder``, from the lines of
    files not read (``problems``, each opening with its path): one for the folder's own files, and
    one naming each baseline of :func:`baseline_groups`' places (``baseline*`` files and folders
    in the runs folder, ``baseline*`` folders beside it) with files not read. A baseline's absent
    logs were once only lines of the document's problems (finding F1: record 82's baseline-s1410
    deleted at an upstream ancestor took its speed-up of −1.086 s away, the record still "met")."""
    parent = posixpath.dirname(folder)
    places = [folder] + ([parent] if parent != track_folder and parent.startswith(track_folder + "/") else [])
    own, beside = 0, Counter[str]()
    for line in problems:
        path = line.split(": ", 1)[0]
        place = next((p for p in places if path.startswith(p + "/")), None)
        if place is None:
            continue
        head, _, rest = path[len(place) + 1:].partition("/")
        if place == folder and not rest and is_baseline(head):
            beside[f"{folder}/baseline*"] += 1
        elif is_baseline(head) and (rest or place == parent) and f"{place}/{head}" != folder:
            beside[f"{place}/{head}"] += 1
        elif place == folder:
            own += 1
    flags = [Flag(MISSING_FILES, f"missing files: {own} in the linked folder not read")] if own else []
    return flags + [Flag(MISSING_FILES, f"missing files: {n} of baseline {name} not read")
                    for name, n in sorted(beside.items())]


FIGURES = ("runs", "measured_s", "linked_train_time_s", "measured_over_claimed", "mean_val_loss", "p_value",
           "verdict", "accelerator", "accelerators", "tokens_per_s", "tokens_per_s_per_gpu", "mfu_estimate", "mfu_peak")


def figures(track: int, claimed: float | None, chosen: list[dict], linked: dict | None,
            copied: dict[str, str]) -> tuple[dict, list[str]]:
    """(the record's :data:`FIGURES`, the words of the flags its runs give) from its runs; a
    flagged run (:mod:`suite.speedrun.plausible`) never improves a figure (see
    :func:`figures_and_times`)."""
    found, flags, _ = figures_and_times(track, claimed, chosen, linked, copied)
    return found, texts(flags)


UNTIMED = "no train_time, where other runs of its record have one"
LOSSLESS = "no validation loss, where other runs of its record have one"


def _time(run: dict, slowest: float | None = None) -> float | None:
    """A run's train_time; for a run without one, the slowest timed run's of its record
    (``slowest``) or its last validation's time, whichever is larger, so that leaving its time
    out never makes a record faster; ``None`` when there is neither."""
    if run["train_time_s"] is not None:
        return run["train_time_s"]
    last = next((v[2] for v in reversed(run.get("validations") or []) if v[2] is not None), None)
    known = [t for t in (last, slowest) if t is not None]
    return max(known) if known else None


def _mean_time(runs: list[dict], slowest: float | None = None) -> float:
    return statistics.fmean(_time(r, slowest) for r in runs)  # type: ignore[misc]


def _slower(sets: list[list[dict]], slowest: float | None = None) -> list[dict]:
    """Of the sets of timed runs given, the one of the slowest mean time."""
    return max(sets, key=lambda runs: _mean_time(runs, slowest))


def figures_and_times(track: int, claimed: float | None, chosen: list[dict], linked: dict | None,
                      copied: dict[str, str]) -> tuple[dict, list[Flag], list[float]]:
    """:func:`figures`, and the record's times a speed-up over a baseline is measured with.

    Loss, p and verdict count every run once: a run flagged for its figures keeps its loss in,
    a copy (``copied``) is left out (its losses are another log's). The time figures (measured,
    throughput, MFU) are those of the slower of all the timed runs and the timed runs not
    flagged, none when every run is flagged; a run without a train_time where others of the
    record have one is flagged ("k of n runs without a time") and counts in the first set at the
    slowest timed run's time (or its last validation's, where larger); a run without a loss among
    runs with one flags the record ("k of n runs without a validation loss"). The speed-up's
    times are the same but for copies, which it leaves out (a copy counted again would narrow its
    interval). The verdict is :func:`decide`'s: a record with a flag is never "met"."""
    info = TRACKS[track]
    flags: list[Flag] = []
    flagged = {r["log"]: plausible.all_flags(r, copied) for r in chosen}
    untimed = [r for r in chosen if r["train_time_s"] is None]
    if untimed and len(untimed) < len(chosen):
        for r in untimed:
            flagged[r["log"]] = flagged[r["log"]] + [UNTIMED]
    left = [r for r in chosen if flagged[r["log"]]]
    if left:
        first = flagged[left[0]["log"]][0]
        flags.append(Flag(IMPLAUSIBLE, f"{len(left)} of {len(chosen)} run(s) flagged implausible, counted only "
                                       f"where it makes no figure better (first: {left[0]['log'].rsplit('/', 1)[-1]}: "
                                       f"{first})"))
    if untimed and len(untimed) < len(chosen):
        flags.append(Flag(UNTIMED_RUNS, f"{len(untimed)} of {len(chosen)} runs without a time"))
    counted = [r for r in chosen if r["log"] not in copied]
    clean = [r for r in chosen if not flagged[r["log"]] and r["train_time_s"] is not None]
    slowest = max((r["train_time_s"] for r in chosen if r["train_time_s"] is not None), default=None)
    every = [r for r in chosen if _time(r, slowest) is not None]
    paced = _slower([every, clean], slowest) if clean else []
    timed = [_time(r, slowest) for r in paced]
    once = [r for r in every if r["log"] not in copied]
    speed = [_time(r, slowest) for r in _slower([once, clean], slowest)] if clean else []
    losses = [r["val_loss"] for r in counted if r["val_loss"] is not None]
    lossless = [r for r in counted if r["val_loss"] is None]
    if losses and lossless:
        flags.append(Flag(LOSSLESS_RUNS, f"{len(lossless)} of {len(counted)} runs without a validation loss"))
    if counted and len(untimed) == len(chosen):
        flags.append(Flag(NO_TIME, "no time in the log" + (" (llm.c format)" if all(r["format"] == "llm.c"
                                                                                      for r in counted) else "")))
    short = sum(1 for r in counted if r["reached_planned_step"] is False)
    if short:
        flags.append(Flag(STOPPED_EARLY, f"{short} of {len(counted)} runs stopped before their planned last step"))
    gpu, gpus = _accelerator(linked, paced or counted)
    if counted and gpu is None:
        flags.append(Flag(NO_SMI, "no nvidia-smi table in the log"))
    if gpus is not None and gpus < TRACK_GPUS:
        flags.append(Flag(FEWER_GPUS, f"fewer GPUs than the track's {TRACK_GPUS}: {gpus}"))
    if gpu is not None and TRACK_GPU not in gpu:
        flags.append(Flag(OTHER_GPU, f"another GPU than the track's {TRACK_GPU}: {gpu}"))
    p = stats.p_below_target(losses, info.target)
    measured = round(statistics.fmean(timed), 3) if timed else None  # type: ignore[arg-type]
    off = plausible.claim_flag(measured, claimed)
    if off:
        flags.append(Flag(CLAIM, off))
    verdict = decide(stats.verdict(losses, info.target, p) if counted or not chosen else "no plausible run: no test",
                     flags, [])
    return {
        "runs": len(counted), "measured_s": measured,
        "linked_train_time_s": linked["train_time_s"] if linked else None,
        "measured_over_claimed": round(measured / claimed, 4) if measured and claimed else None,
        "mean_val_loss": round(statistics.fmean(losses), 5) if losses else None,
        "p_value": None if p is None else float(f"{p:.4g}"),
        "verdict": verdict,
        "accelerator": gpu, "accelerators": gpus,
        "tokens_per_s": _mean([r["tokens_per_s"] for r in paced]),
        "tokens_per_s_per_gpu": _mean([r["tokens_per_s_per_gpu"] for r in paced]),
        "mfu_estimate": _mean([r["mfu_estimate"] for r in paced], 4),
        "mfu_peak": paced[0]["mfu_peak"] if paced and len({r["mfu_peak"] for r in paced}) == 1 else None,
    }, flags, speed  # type: ignore[return-value]


def baseline_times(group: list[dict], copied: dict[str, str] | None = None) -> list[float]:
    """A baseline's times: those of the faster of all its timed runs and its timed runs not
    flagged (:func:`plausible.all_flags`), so that no flag widens a speed-up; none when every run
    is flagged. A copy (``copied``) counts once: its holder's time is in, the copy's never (the
    copy of a slow run counted again made a speed-up larger and its interval narrower). A run
    without a train_time counts in the first set with its last validation's time."""
    copied = copied or {}
    every = [r for r in group if _time(r) is not None and r["log"] not in copied]
    clean = [r for r in every if r["train_time_s"] is not None and not plausible.run_flags(r)]
    if not clean:
        return []
    fast = min([every, clean], key=_mean_time)
    return [_time(r) for r in fast]  # type: ignore[misc]


def baselines(groups: dict[str, list[dict]], timed: list[float], copied: dict[str, str],
              gpus: int | None) -> list[dict]:
    """The speed-ups of a record (its times ``timed``, :func:`figures_and_times`, on ``gpus``
    GPUs) over each baseline group beside its runs folder (``groups``: :func:`baseline_groups`),
    each over the group's runs known to be on as many GPUs: ``other_gpus`` counts those left out,
    on another count or with none in their log (review B: record 88's 1-GPU runs less an 8-GPU
    baseline's gave a "speed-up" of −516 s, ±0.5 s). A record whose own count is unknown is
    compared with every run."""
    found = []
    for name, group in groups.items():
        alike = [r for r in group if gpus is None or r.get("gpus") == gpus]
        measured_gain = stats.speedup(baseline_times(alike, copied), timed)
        found.append({"folder": name, "runs": len(group), "other_gpus": len(group) - len(alike),
                      **(measured_gain or {})})
    return found


def copied_runs(track: int, rows: list[tuple[int, list[dict], str | None]], runs: dict[str, dict]) -> dict[str, str]:
    """:func:`plausible.copies` over each README row's runs (``rows``: record number, its runs,
    its runs folder, in README order) and then its baseline runs: a copy within a record, within
    a baseline, or of an earlier row's; and both runs of an equal pair between a record and its
    own baselines (:func:`plausible.equal_pairs`), so that baseline logs copied into the record's
    folder count for neither side."""
    found: list[tuple[int, list[dict]]] = []
    pairs: dict[str, str] = {}
    for number, chosen, folder in rows:
        found.append((number, chosen))
        if folder is not None:
            groups = baseline_groups(folder, runs, TRACKS[track].folder).values()
            beside = list({r["log"]: r for g in groups for r in g}.values())
            found.append((number, beside))
            pairs.update(plausible.equal_pairs(number, chosen, beside))
    return {**plausible.copies(found), **pairs}


def decide(verdict: str, flags: list[Flag], baseline_flags: list[Flag]) -> str:
    """The one rule of a verdict: a record with any flag (of its selection of logs, its runs,
    its baselines' runs, copies on either side) is never "met", but for the kinds
    :data:`NOT_BLOCKING` (read from each flag's code, never its words); it is at best
    "undecided", naming the first flag."""
    blocking = [f for f in flags + baseline_flags if f.code not in NOT_BLOCKING]
    if blocking and verdict.startswith("met"):
        return f"undecided: p < 0.01, but {blocking[0].text}"
    return verdict


def record_parts(track: int, claimed: float | None, chosen: list[dict], linked: dict | None, folder: str | None,
                 runs: dict[str, dict], copied: dict[str, str]) -> tuple[dict, list[Flag], list[dict], list[Flag]]:
    """A record's :data:`FIGURES` before its selection's flags are weighed (:func:`record_figures`),
    the flags its runs give, its baselines and its baselines' runs' flags."""
    found, flags, timed = figures_and_times(track, claimed, chosen, linked, copied)
    groups = baseline_groups(folder, runs, TRACKS[track].folder) if folder is not None else {}
    beside = baselines(groups, timed, copied, _accelerator(linked, chosen)[1])
    baseline_flags = [Flag(BASELINE_RUN, f"baseline run {r['log'].rsplit('/', 1)[-1]}: {why[0]}")
                      for g in groups.values() for r in g for why in [plausible.all_flags(r, copied)] if why]
    return found, flags, beside, baseline_flags


def record_figures(track: int, claimed: float | None, selection_flags: list[Flag], chosen: list[dict],
                   linked: dict | None, folder: str | None, runs: dict[str, dict],
                   copied: dict[str, str]) -> tuple[dict, list[Flag], list[dict]]:
    """A record's :data:`FIGURES` (its verdict by :func:`decide`), the flags its runs give and its
    baselines: the one place a verdict is decided, for the import and for a stored document's
    check alike (which weighs its stored selection flags, :func:`stored_flags`, the same way)."""
    found, flags, beside, baseline_flags = record_parts(track, claimed, chosen, linked, folder, runs, copied)
    found["verdict"] = decide(found["verdict"], selection_flags + flags, baseline_flags)
    return found, flags, beside


def build_record(track: int, row: dict, chosen: Selection, runs: dict[str, dict], copied: dict[str, str]) -> dict:
    """One README row with what its logs say (see the module's docstring): its runs
    (:func:`select`), their figures and every flag."""
    record = dict(row)
    found, flags, beside = record_figures(track, row.get("claimed_s"), chosen.flags, chosen.chosen, chosen.linked,
                                          chosen.folder, runs, copied)
    record.update({"track": track, "runs_folder": chosen.folder, "run_logs": sorted(r["log"] for r in chosen.chosen),
                   **found, "flags": texts(chosen.flags + flags), "baselines": beside})
    return record
