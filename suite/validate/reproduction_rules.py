"""The rule of a reproduction's ``settings.reproduces`` section (docs/rules.md, "Reproducing a
result"): its verdicts follow from its own figures, and those figures from the file's runs.

The original is not at hand (only its sha256), so the comparison itself cannot be redone here;
what can be checked is that the section speaks of this file's runs, that every throughput
figure it states is the one its run records and the ratio their quotient, and that each verdict
is the one its own figures give: ``reproduced`` only where the run completed, its curve agrees and
its throughput's 95% interval lies within the tolerance; ``differs`` where the run failed, the
curve differs or the interval lies wholly outside, or, measured on, its median step time's ratio
lies far outside (``measuring.median``, :func:`~suite.figures.reproducibility.median_judgement`;
a record without one is judged on the mean alone); ``inconclusive`` otherwise, and where a
throughput outside the band is slower than recorded while the re-run's ``host_load`` says it was
measured under load (a ``differs`` stored before stays valid there) (the verdict since rules v7:
before, the ratio alone decided the throughput's part, and a reproduction stored under those
rules keeps its status)."""
from __future__ import annotations

import datetime as dt

from suite.figures.load import load_explains, lockstep, tta_load_explains
from suite.figures.reproducibility import (
    INCONCLUSIVE,
    MAX_CURVE_ABS_TOLERANCE,
    MAX_THROUGHPUT_TOLERANCE,
    MEDIAN_MARGIN,
    OUTSIDE,
    curve_bound,
    decided_ratio,
    interval_judgement,
    median_judgement,
    tta_differs,
)
from suite.record import results
from suite.record.text import safe
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V7, V8, V9
from suite.validate.tolerance import close

code("reproduces", "a reproduction's section names runs not in the file, states figures its runs do not "
                   "give, or a verdict its figures contradict")
code("reproduces-verdict", "a reproduction's verdict is not the one its run, curve and throughput interval give "
                           "(reproduced within the tolerance, differs wholly outside, inconclusive otherwise)",
     since=V7)

code("reproduces-bounds", f"a reproduction claims a throughput tolerance beyond ±{MAX_THROUGHPUT_TOLERANCE:.0%}, or a "
                          "curve tolerance beyond its workload's seed-to-seed bound (1% for own code's free job)",
     since=V8)

code("reproduces-code-read", "a reproduction attests reading code that is not own code, or not at the commit its "
                             "re-run ran (settings.reproduces.code_read: own code, goodbench reproduce "
                             "--run-recorded-command --attest-code-read)", since=V9)

Runs = list[tuple[int, dict]]


@document_rule("reproduces-code-read")
def _check_code_read(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A reviewer's attestation of reading the code (``settings.reproduces.code_read``, optional)
    stands only in a reproduction of own code — a reference workload's re-run ran goodbench's own
    code — and names the commit the re-run recorded running (the copy of the original's). Since
    the field was added every file may hold it; none held it before (the schema refused it), so
    this refuses nothing accepted before."""
    section = doc["settings"].get("reproduces")
    attested = section.get("code_read") if isinstance(section, dict) else None
    if attested is None:
        return []
    where = "settings.reproduces.code_read"
    if doc["settings"].get("division") != "own":
        return [Problem("reproduces-code-read", where, "attests reading the code of a reproduction that is not of own "
                                                       "code: a reference workload's re-run runs goodbench's own code")]
    implementation = doc["settings"].get("implementation")
    code_section = implementation.get("code") if isinstance(implementation, dict) else None
    ran = code_section.get("git_commit") if isinstance(code_section, dict) else None
    if attested["commit"] != ran:
        return [Problem("reproduces-code-read", f"{where}.commit",
                        f"attests reading commit {safe(attested['commit'], 64)}, but the re-run ran commit "
                        f"{safe(str(ran), 64)}: an attestation names the code that was run")]
    return []


@document_rule("reproduces-bounds")
def _check_reproduction_bounds(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A reproduction's tolerances are the rules', never its own: the throughput's at most
    :data:`MAX_THROUGHPUT_TOLERANCE`, each run's curve's at most :func:`curve_bound` (relative) and
    :data:`MAX_CURVE_ABS_TOLERANCE` (absolute)."""
    section = doc["settings"].get("reproduces")
    if section is None:
        return []
    problems: list[Problem] = []
    if section["throughput_tolerance"] > MAX_THROUGHPUT_TOLERANCE:
        problems.append(Problem("reproduces-bounds", "settings.reproduces.throughput_tolerance",
                                f"±{section['throughput_tolerance']:.4g} is wider than the rules' "
                                f"±{MAX_THROUGHPUT_TOLERANCE:g}"))
    by_id = {run["run_id"]: run for _, run in runs}
    free_job = doc["settings"].get("division") == "own"
    for k, entry in enumerate(section["runs"]):
        run, curve = by_id.get(entry["run_id"]), entry["curve"]
        if run is None:
            continue
        bound = curve_bound(run["workload"]["id"], free_job)
        if curve["rel_tolerance"] > bound * (1 + 1e-9) or curve["abs_tolerance"] > MAX_CURVE_ABS_TOLERANCE:
            problems.append(Problem("reproduces-bounds", f"settings.reproduces.runs[{k}].curve",
                                    f"claims a curve tolerance of {curve['rel_tolerance']:.4g} relative + "
                                    f"{curve['abs_tolerance']:.3g}: at most {bound:g} + {MAX_CURVE_ABS_TOLERANCE:g} "
                                    f"for {safe(run['workload']['id'], 60)}"))
    return problems


@document_rule("reproduces", "reproduces-verdict")
def _check_reproduces(doc: dict, runs: Runs, now: dt.datetime) -> list[Problem]:
    """A reproduction names each of its runs once, with figures its runs give and a verdict they support."""
    section = doc["settings"].get("reproduces")
    if section is None:
        return []
    problems: list[Problem] = []
    by_id = {run["run_id"]: run for _, run in runs}
    named: set[str] = set()
    for k, entry in enumerate(section["runs"]):
        where = f"settings.reproduces.runs[{k}]"
        run = by_id.get(entry["run_id"])
        if entry["run_id"] in named:
            problems.append(Problem("reproduces", f"{where}.run_id", "names a run already named"))
            continue
        named.add(entry["run_id"])
        if entry["run_id"] == entry.get("original_run_id"):  # the original handed back, not trained again
            problems.append(Problem("reproduces", f"{where}.run_id", "is the original run's: a reproduction's runs are "
                                                                      "trained again"))
            continue
        if run is None:
            if len(runs) == len(doc["runs"]):  # else the run may be one the schema refused
                problems.append(Problem("reproduces", f"{where}.run_id", "not a run of this file"))
            continue
        problems += _entry(doc, entry, run, where, section["throughput_tolerance"])
    missing = [i for i, run in runs if run["run_id"] not in named]
    if missing:
        problems.append(Problem("reproduces", f"runs[{missing[0]}].run_id",
                                "a run of a reproduction without its comparison in settings.reproduces"))
    return problems


def _entry(doc: dict, entry: dict, run: dict, where: str, tolerance: float) -> list[Problem]:
    problems = []
    if "workload" in entry and entry["workload"] != run["workload"]["id"]:
        problems.append(Problem("reproduces", f"{where}.workload", "is not the run's workload"))
    if "seed" in entry and entry["seed"] != run["seed"]:
        problems.append(Problem("reproduces", f"{where}.seed", "is not the run's seed"))
    tput = entry["throughput"]
    measured = results.samples_per_s(run) if run["status"] == "complete" else None
    if not close(tput["samples_per_s"], measured):
        problems.append(Problem("reproduces", f"{where}.throughput.samples_per_s",
                                "is not the run's steady-state samples/s"))
    a, b, ratio = tput["original_samples_per_s"], tput["samples_per_s"], tput["ratio"]
    want = b / a if a is not None and b is not None else None
    if not close(ratio, want):
        problems.append(Problem("reproduces", f"{where}.throughput.ratio",
                                "is not samples_per_s ÷ original_samples_per_s"))
    if tput["tolerance"] != tolerance:
        problems.append(Problem("reproduces", f"{where}.throughput.tolerance",
                                "is not the section's throughput_tolerance"))
    within = None if a is None and b is None else (ratio is not None and abs(ratio - 1) <= tolerance)
    if ratio is not None and tput["within"] is not None and tput["within"] != within:
        problems.append(Problem("reproduces", f"{where}.throughput.within",
                                f"ratio {ratio:.4g} is {'within' if within else 'outside'} ±{tolerance:.4g}"))
    ci = tput["ci95"]
    if ci is not None and (ratio is None or not ci[0] * (1 - 1e-9) <= ratio <= ci[1] * (1 + 1e-9)):
        problems.append(Problem("reproduces", f"{where}.throughput.ci95", "does not hold the ratio"))
    tta = entry["tta"]
    if not close(tta["reproduction_s"], run["metrics"]["tta_s"]):
        problems.append(Problem("reproduces", f"{where}.tta.reproduction_s", "is not the run's time to target"))
    diff = None if tta["original_s"] is None or tta["reproduction_s"] is None \
        else tta["reproduction_s"] - tta["original_s"]
    if not close(tta["difference_s"], diff, abs_tol=1e-6):
        problems.append(Problem("reproduces", f"{where}.tta.difference_s", "is not reproduction_s − original_s"))
    curve = entry["curve"]
    if curve["agrees"] != (curve["first_difference"] is None):
        problems.append(Problem("reproduces", f"{where}.curve.first_difference",
                                "names a difference of a curve that agrees, or none of one that does not"))
    if curve["points"] != len(run["curve"]) and curve["agrees"]:
        problems.append(Problem("reproduces", f"{where}.curve.points",
                                "an agreeing curve has as many points as the run's"))
    judged = tput  # the throughput the verdict rests on: this run's, or every re-run's pooled
    if entry.get("measuring") is not None:
        judged, more = _measuring(entry, a, where, tolerance)
        problems += more + _last_load(entry["measuring"], run, f"{where}.measuring")
    tta_off = run["status"] == "complete" and curve["agrees"] and tta.get("original_interrupted") is not True and \
        tta_differs(tta["original_s"], tta["reproduction_s"], tolerance)
    supported = run["status"] == "complete" and curve["agrees"] and judged["within"] is not False and not tta_off
    said = entry["verdict"].split(":", 1)[0]
    if (said == "reproduced" and not supported) or (said == "differs" and supported):
        problems.append(Problem("reproduces", f"{where}.verdict", (
            "says reproduced, but the run's status, curve, throughput or time to target says it differs" if not supported
            else "says differs, but the run's status, curve and throughput say it reproduced")))
        return problems  # the rules before v7: a stored reproduction keeps the status they gave it
    ci, median = judged["ci95"], judged.get("median")
    want = _verdict(run["status"] == "complete" and curve["agrees"] and not tta_off, a, b, ci, tolerance, median)
    if want == "differs" and said == "inconclusive" and run["status"] == "complete" and curve["agrees"] \
            and (not tta_off or _tta_loaded(doc, run, entry, tta, tolerance)) \
            and (_verdict(True, a, b, ci, tolerance, median) != "differs"
                 or _loaded_slower(doc, run, entry, _decided_ratio(judged, tolerance), tolerance)):
        want = said  # a slower re-run measured under load: inconclusive (a stored "differs" stays valid too)
    if said != want:
        interval = "no interval" if ci is None else f"95% interval {ci[0]:.4g}–{ci[1]:.4g}"
        at_median = "" if median is None or median[1] is None else \
            f", median step {median[1]:.4g}–{median[2]:.4g} widened {MEDIAN_MARGIN:g}×"
        problems.append(Problem("reproduces-verdict", f"{where}.verdict",
                                f"says {safe(said, 20)}, but its figures give {want} (run {safe(run['status'])}, "
                                f"curve {'agrees' if curve['agrees'] else 'differs'}, throughput {interval}"
                                f"{at_median} against ±{tolerance:.4g})"))
    return problems


def _measuring(entry: dict, original: float | None, where: str, tolerance: float) -> tuple[dict, list[Problem]]:
    """The pooled throughput of a run measured on (``measuring``: its ratio, interval and whether
    the ratio is within ``tolerance``), and what contradicts it: a count that is not the entry's,
    a ratio that is not its samples/s over the original's, an interval not holding it, more
    re-runs than its cap, or a stop called decisive whose interval does not decide."""
    m, problems = entry["measuring"], []
    at = f"{where}.measuring"
    if m["measurements"] != entry["measurements"] or m["measurements"] > m["cap"]["measurements"]:
        problems.append(Problem("reproduces", f"{at}.measurements",
                                "is not the entry's measurements, or is beyond its cap"))
    want = m["samples_per_s"] / original if m["samples_per_s"] is not None and original is not None else None
    if not close(m["ratio"], want):
        problems.append(Problem("reproduces", f"{at}.ratio", "is not samples_per_s ÷ original_samples_per_s"))
    ci, ratio = m["ci95"], m["ratio"]
    if ci is not None and (ratio is None or not ci[0] * (1 - 1e-9) <= ratio <= ci[1] * (1 + 1e-9)):
        problems.append(Problem("reproduces", f"{at}.ci95", "does not hold the ratio"))
    decides = ci is not None and interval_judgement(ci[0], ci[1], tolerance) != INCONCLUSIVE
    if (m["stopped"] == "decisive") != decides:
        problems.append(Problem("reproduces", f"{at}.stopped", f"says {m['stopped']}, but its interval "
                                f"{'decides' if decides else 'does not decide'} against ±{tolerance:.4g}"))
    within = None if ratio is None else abs(ratio - 1) <= tolerance
    median, more = _median(m.get("median"), ratio, at)
    median_ratio = m["median"]["ratio"] if isinstance(m.get("median"), dict) else None
    return {"ci95": ci, "within": within, "median": median, "ratio": ratio, "median_ratio": median_ratio}, \
        problems + more


LOAD_KEYS = ("start", "during", "end")  # a run's host_load as measuring.host_loads keeps it (suite/run/reproduce/measuring.py loads)


def _last_load(m: dict, run: dict, at: str) -> list[Problem]:
    """The last pooled re-run is the run the file holds, so its load in ``measuring.host_loads`` is
    that run's own ``host_load`` (its start, during and end readings), as goodbench writes it:
    pooled loads written apart from the run's could make a quiet pool's slower throughput read as
    loaded (review C, M6)."""
    loads = m.get("host_loads")
    if not isinstance(loads, list) or not loads:
        return []
    own = run.get("host_load")
    want = {k: own[k] for k in LOAD_KEYS if k in own} if isinstance(own, dict) else None
    if loads[-1] == want:
        return []
    return [Problem("reproduces", f"{at}.host_loads[{len(loads) - 1}]",
                    "the last pooled re-run's load is not the file's run's own host_load: the last re-run "
                    "pooled is the run the file holds")]


def _decided_ratio(judged: dict, tolerance: float) -> float | None:
    """The throughput ratio a differing verdict rests on (:func:`~suite.figures.reproducibility.decided_ratio`,
    as ``goodbench reproduce`` chose it): the pooled one's when measured on, the median step's where that decided."""
    ci, median = judged["ci95"], judged.get("median")
    low, high = ci if ci is not None else (None, None)
    at_median = None if median is None else (judged.get("median_ratio"), median[1], median[2])
    return decided_ratio(judged.get("ratio"), low, high, tolerance, at_median)


def _host_loads(run: dict, entry: dict) -> list | None:
    """The ``host_load`` of each re-run a verdict rests on: measured on, each pooled one's
    (``measuring.host_loads``); None for a record of several re-runs without it (judged as quiet)."""
    m = entry.get("measuring")
    if m is None or m["measurements"] == 1:
        return [run.get("host_load")]
    if isinstance(m.get("host_loads"), list) and len(m["host_loads"]) == m["measurements"]:
        return m["host_loads"]
    return None


def _lockstep(doc: dict, run: dict) -> bool:
    """Whether the run's threads or ranks wait on each other (:func:`~suite.figures.load.lockstep`), as its file records them."""
    return lockstep(doc["system"]["accelerator"]["type"], results.world_size(run), doc["settings"].get("cpu_threads"))


def _loaded_slower(doc: dict, run: dict, entry: dict, ratio: float | None, tolerance: float) -> bool:
    """Whether a throughput outside the band was slower than recorded (``ratio`` below 1) while
    every re-run it rests on was measured under load (:func:`_host_loads`), and no slower than
    that load could cost (:func:`~suite.figures.load.load_explains`, for the run's threads and
    ranks), or than goodbench judged it could before (:data:`~suite.figures.load.FLOOR_BEFORE`):
    its verdict may then read inconclusive (docs/rules.md, "Reproducing a result")."""
    host_loads = _host_loads(run, entry)
    if host_loads is None:
        return False
    steps = _lockstep(doc, run)
    return any(load_explains(host_loads, ratio, tolerance, lockstep=steps, most_loaded=before) is not None
               for before in (False, True))


def _tta_loaded(doc: dict, run: dict, entry: dict, tta: dict, tolerance: float) -> bool:
    """Whether the re-runs' load explains a time to target beyond its band (:func:`~suite.figures.load.tta_load_explains`)."""
    host_loads = _host_loads(run, entry)
    return host_loads is not None and tta_load_explains(
        host_loads, tta["original_s"], tta["reproduction_s"], tolerance, lockstep=_lockstep(doc, run)) is not None


MedianFigures = tuple[float | None, float | None, float | None]  # the mean ratio, the median ratio's interval


def _median(m: dict | None, ratio: float | None, at: str) -> tuple[MedianFigures | None, list[Problem]]:
    """(the pooled mean ``ratio`` and the median ratio's interval, for :func:`_verdict`; None for a
    record written before the median was kept) and what contradicts the median figures: a ratio
    that is not their quotient, an interval not holding it, a margin not the rules'."""
    if m is None:
        return None, []
    problems, at = [], f"{at}.median"
    if not close(m["ratio"], m["samples_per_s"] / m["original_samples_per_s"]):
        problems.append(Problem("reproduces", f"{at}.ratio", "is not samples_per_s ÷ original_samples_per_s"))
    ci = m["ci95"]
    if ci is not None and not ci[0] * (1 - 1e-9) <= m["ratio"] <= ci[1] * (1 + 1e-9):
        problems.append(Problem("reproduces", f"{at}.ci95", "does not hold the ratio"))
    if m["margin"] != MEDIAN_MARGIN:
        problems.append(Problem("reproduces", f"{at}.margin", f"is not the rules' {MEDIAN_MARGIN:g}"))
    low, high = ci if ci is not None else (None, None)
    return (ratio, low, high), problems


def _verdict(agrees: bool, original: float | None, rerun: float | None, ci: list | None, tolerance: float,
             median: MedianFigures | None = None) -> str:
    """The verdict a run's figures give: differs when it failed or its curve differs; then by its
    throughput — reproduced when neither run has one or the interval lies within 1 ± tolerance,
    differs when only one has one or the interval lies wholly outside, or when it reaches across
    an edge and ``median`` (the mean ratio, the median ratio's interval) lies far outside
    (:func:`median_judgement`), inconclusive otherwise."""
    if not agrees:
        return "differs"
    if original is None and rerun is None:
        return "reproduced"
    if original is None or rerun is None:
        return "differs"
    low, high = ci if ci is not None else (None, None)
    judged = interval_judgement(low, high, tolerance)
    if judged == INCONCLUSIVE and median is not None and median_judgement(*median, tolerance) == OUTSIDE:
        return "differs"
    return {OUTSIDE: "differs", INCONCLUSIVE: "inconclusive"}.get(judged, "reproduced")
