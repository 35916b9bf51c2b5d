"""Comparison of results files: for each workload × scale that two sides share (a file each, or
several files merged into a side: :func:`merge_side`), each headline figure's two values
(suite/compare/estimates.py: across files, across runs or within one run, the widest level both
sides allow), the ratio NEW/BASE with a 95% confidence interval (suite/compare/stats.py), and a
verdict; the regression gate; the site's entries.

The verdict follows the interval only: ``faster`` when it lies wholly on the better side of 1,
``slower`` when wholly on the worse side, else ``no significant change``; but the TTA score's is
``target missed more often in NEW`` where a larger share of NEW's seeds missed the target than of
BASE's, which the score (a missed seed dropped as the slowest) does not show. Figures that cannot be
compared (another spec hash, scale, precision, world size or division; energy measured another
way) are reported as not comparable, never compared, with what differs item by item. Own code is
held to its declaration instead of its spec hash, and a difference in its code or command is
shown (:mod:`suite.compare.definition`). docs/compare.md has the statistics and an example.

Torch-free: the engine reads results only (numpy; scipy lazily, for the t table).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from suite.compare import definition
from suite.compare.estimates import BY_ID, FIGURE_IDS, FIGURES, FILE_KEY, Figure, Runs, side_estimates
from suite.compare.stats import Estimate, Ratio, ratio_interval
from suite.figures import clock_cover
from suite.figures import load as host_load
from suite.figures.summary import complete_runs, groups
from suite.record import results
from workloads import own

# verdicts
FASTER, SLOWER, SAME = "faster", "slower", "no significant change"
NOT_COMPARABLE, NOT_MEASURED, NO_INTERVAL = "not comparable", "not measured", "no interval"
NOT_COMPARED = "not compared"  # a side has no complete run (partial or failed): measured, but never compared
MISSING = "missing in NEW"  # a workload × scale of BASE that NEW has no run of (at none or another scale)
NOT_REACHED = "target not reached in NEW"  # NEW's runs are complete, but its seeds missed the target: no valid TTA score
MISSED_MORE = "target missed more often in NEW"  # both TTA scores valid, but a larger share of NEW's seeds missed it
SCORES_ALONE = "; the scores alone: "  # in a MISSED_MORE row's reason: what the scores' interval says, after the seeds
Doc = dict[str, Any]  # a parsed results document
GATE_DEFAULT = ("samples_per_s", "tta")  # what a bare --fail-on-regression PCT checks
# what a step-time figure's interval covers (its row's ``spread``)
ACROSS_FILES = "across files"  # the spread between each side's files: processes made at other times
ACROSS_RUNS = "across runs of one file"  # runs of one process, one stretch of time: blind to what differs between them
ONE_RUN = "within one run"  # the noise inside a run only: blind to machine noise between runs
SPREADS = {"files": ACROSS_FILES, "runs": ACROSS_RUNS, "steps": ONE_RUN}  # widest first


# ---------------------------------------------------------------- verdicts
def verdict(figure: Figure, r: Ratio) -> str:
    """``faster`` when the interval lies wholly on the better side of 1, ``slower`` when wholly
    on the worse side, else ``no significant change`` (no interval: :data:`NO_INTERVAL`)."""
    if r.low is None or r.high is None:
        return NO_INTERVAL
    higher = figure.better == "higher"
    if r.low > 1:
        return FASTER if higher else SLOWER
    if r.high < 1:
        return SLOWER if higher else FASTER
    return SAME


def worse_by(figure: Figure, ratio: float) -> float:
    """How much worse NEW is than BASE, as a fraction (0.1: 10% worse; negative: better). For a
    figure where higher is better, ``1 − ratio``; where lower is better, ``ratio − 1``."""
    return 1 - ratio if figure.better == "higher" else ratio - 1


# ---------------------------------------------------------------- comparing files
@dataclass
class Row:
    """One figure of one workload × scale: both values, the ratio and interval, the verdict,
    and why there is no verdict where there is none."""

    figure: str
    label: str
    better: str
    base: float | None
    new: float | None
    ratio: float | None
    low: float | None
    high: float | None
    verdict: str
    reason: str | None = None
    method: str = ""
    regression: bool = False  # set by the gate: significantly worse beyond its threshold
    spread: str = ""  # ACROSS_RUNS or ONE_RUN for the step-time figures (throughput, MFU, p50/p99)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = None if self.low is None else [self.low, self.high]
        del out["low"], out["high"]
        return out


@dataclass
class Pair:
    """One workload × scale compared: its rows, or why it is not comparable."""

    key: str
    workload: str
    scale: str
    comparable: bool
    reason: str | None = None
    rows: list[Row] = field(default_factory=list)
    # what made it not comparable, item by item: {"what", "base", "new", "text"} (:func:`differences`)
    differences: list[dict[str, Any]] = field(default_factory=list)
    # two sides of own code: each side's code identity and what differs between them, shown
    # (:func:`suite.compare.definition.code_differences`); None for goodbench's workloads
    own_code: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "workload": self.workload, "scale": self.scale,
                "comparable": self.comparable, "reason": self.reason, "differences": self.differences,
                "own_code": self.own_code, "figures": [r.to_json() for r in self.rows]}


def _one(values: Iterable, what: str) -> Any:
    found = sorted({repr(v) for v in values})
    return found[0] if len(found) == 1 else f"mixed {what}"


def context(doc: Doc, runs: Runs, own_by_declaration: bool = True) -> dict[str, Any]:
    """What must be equal for two sides to be comparable. A side of own code is held to its
    declaration, not its spec hash, which also covers the code and command that may differ
    between two versions of it (:mod:`suite.compare.definition`); ``own_by_declaration`` False
    holds it to the spec hash (the site's entries: its pages do not show the code)."""
    settings = doc.get("settings", {})
    impl = definition.implementation(doc) if own_by_declaration else None
    held = {"spec hash": _one((r["workload"]["spec_hash"] for r in runs), "spec hashes")} if impl is None \
        else {name: _declared_text(value) for name, value in definition.declared(impl).items()}
    return {
        **held,
        "workload version": _one((r["workload"]["version"] for r in runs), "versions"),
        "scale": _one((r["scale"] for r in runs), "scales"),
        "precision": _one((r.get("precision") for r in runs), "precisions"),
        "world size": _one((results.world_size(r) for r in runs), "world sizes"),
        "division": settings.get("division", "closed"),  # as results.division reads it
        "open-division changes": repr(sorted(map(repr, settings.get("open_changes") or []))),
    }


def _declared_text(value: Any) -> str:
    """A declared value as the file writes it (16, null, 38912.0, fp32)."""
    return value if isinstance(value, str) else json.dumps(value)


def differences(base: dict[str, Any], new: dict[str, Any],
                origins: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """What differs between two sides' contexts (:func:`context`): each item's name, its value in
    BASE and in NEW, and the line that says so. ``origins``: what each side's spec hash is
    (:func:`suite.compare.definition.spec_hash_origin`), where the documents are at hand."""
    out = []
    if base.keys() != new.keys():  # own code on one side only: held to a declaration, the other to a spec hash
        held = [definition.OWN_DECLARATION if "spec hash" not in side else (origins[i] if origins else
                definition.short_hash(_plain(side["spec hash"]))) for i, side in enumerate((base, new))]
        out.append({"what": "definition", "base": held[0], "new": held[1],
                    "text": f"own code on one side only (BASE: {held[0]}; NEW: {held[1]})"})
    for name, value in base.items():
        if name not in new:
            continue
        other = new[name]
        if other == value and not _plain(value).startswith("mixed"):  # a mixed side is comparable with nothing
            continue
        shown = (_plain(value), _plain(other))
        if name == "spec hash":
            told = origins or (definition.short_hash(shown[0]), definition.short_hash(shown[1]))
            text = (f"the pinned definition differs (BASE: {told[0]}; NEW: {told[1]}"
                    + ("" if origins else "; the entries record only the hash") + ")")
        else:
            text = f"{name} differs ({shown[0]} in BASE, {shown[1]} in NEW)"
        out.append({"what": name, "base": shown[0], "new": shown[1], "text": text})
    return out


def incomparable(base: dict[str, Any], new: dict[str, Any],
                 origins: tuple[str, str] | None = None) -> str | None:
    """Why two sides' contexts (:func:`context`) may not be compared, or None."""
    return "; ".join(d["text"] for d in differences(base, new, origins)) or None


def _plain(value: Any) -> str:
    return str(value).strip("'")


def compare_runs(base_doc: Doc, base_runs: Runs,
                 new_doc: Doc, new_runs: Runs,
                 base_estimates: dict[str, Estimate] | None = None,
                 new_estimates: dict[str, Estimate] | None = None) -> Pair:
    """Compare one workload × scale: the runs of it in BASE and in NEW. Estimates already made
    (the site reuses each entry's) may be passed in."""
    run0 = base_runs[0]
    key = f"{run0['workload']['id']}@{run0['scale']}"
    pair = Pair(key, run0["workload"]["id"], run0["scale"], True)
    origins = (definition.spec_hash_origin(base_doc, base_runs), definition.spec_hash_origin(new_doc, new_runs))
    pair.differences = differences(context(base_doc, base_runs), context(new_doc, new_runs), origins)
    impls = definition.implementation(base_doc), definition.implementation(new_doc)
    if impls[0] is not None and impls[1] is not None:
        pair.own_code = {"base": definition.identity(impls[0]), "new": definition.identity(impls[1]),
                         "differs": definition.code_differences(impls[0], impls[1])}
    if pair.differences:
        pair.comparable, pair.reason = False, "; ".join(d["text"] for d in pair.differences)
        return pair
    b = base_estimates or side_estimates(base_runs, 0)
    n = new_estimates or side_estimates(new_runs, 1)
    energy_methods = ({energy_method(r) for r in complete_runs(list(base_runs))},
                      {energy_method(r) for r in complete_runs(list(new_runs))})
    for figure in FIGURES:
        pair.rows.append(compare_figure(figure, b[figure.id], n[figure.id], energy_methods))
    return pair


def compare_figure(figure: Figure, b: Estimate, n: Estimate,
                   energy_methods: tuple[set, set] | None = None) -> Row:
    """One figure's row from the two sides' estimates (at the widest spread both have:
    :func:`_same_spread`)."""
    b, n, spread = _same_spread(b, n)
    row = Row(figure.id, figure.label, figure.better, b.value, n.value, None, None, None, NO_INTERVAL,
              spread=spread)
    if b.value is None or n.value is None:
        missing = [e for e in (b, n) if e.value is None]
        row.verdict = NOT_REACHED if n.value is None and n.missed else \
            NOT_COMPARED if all(e.incomplete for e in missing) else NOT_MEASURED
        row.reason = "; ".join(f"{side}: {e.reason}" for side, e in (("BASE", b), ("NEW", n))
                               if e.value is None and e.reason) or "not measured"
        if b.value is None and n.value is None and b.reason == n.reason:
            row.reason = b.reason
        return row
    if figure.id == "energy_per_sample" and energy_methods and energy_methods[0] != energy_methods[1]:
        row.verdict = NOT_COMPARABLE
        row.reason = (f"energy measured by {', '.join(sorted(energy_methods[0]))} in BASE, "
                      f"{', '.join(sorted(energy_methods[1]))} in NEW")
        return row
    r = ratio_interval(b, n)
    row.ratio, row.low, row.high = r.ratio, r.low, r.high
    row.verdict = verdict(figure, r)
    if row.verdict == NO_INTERVAL:
        row.reason = "; ".join(f"{side}: {e.reason}" for side, e in (("BASE", b), ("NEW", n)) if e.reason) \
            or "no interval"
        if b.reason and b.reason == n.reason:
            row.reason = b.reason
    row.method = b.method if b.method == n.method else "; ".join(m for m in (b.method, n.method) if m)
    if (why := missed_more(b, n)) is not None:  # the scores' values, ratio and interval stay as they are
        alone = row.verdict if row.reason is None else f"{row.verdict} ({row.reason})"
        row.verdict, row.reason = MISSED_MORE, f"{why}{SCORES_ALONE}{alone}"
    return row


def missed_more(b: Estimate, n: Estimate) -> str | None:
    """Why NEW's TTA score hides a loss BASE's does not, or None: a larger share of NEW's seeds
    missed the target than of BASE's (``seeds`` run, ``n`` reached it: :func:`~suite.compare.
    estimates.tta_estimate`). The score drops a missed seed as the slowest, so NEW 14, 15 s and a
    miss scores as BASE 14, 15, 16 s; the scores' ratio cannot see it. With as many seeds a side
    the shares compare as counts; with other seed counts the share is what is compared (1 of 5
    is less than 1 of 3), and the text gives both. Equal shares, or a smaller one in NEW, are no
    loss; figures without seeds (``seeds`` 0: any but the TTA score, or the site's summaries)
    never are."""
    if not (b.seeds and n.seeds):
        return None
    base_missed, new_missed = b.seeds - b.n, n.seeds - n.n
    if new_missed * b.seeds <= base_missed * n.seeds:  # new_missed / n.seeds <= base_missed / b.seeds, exactly
        return None
    text = f"NEW: {new_missed} of {n.seeds} seeds missed the target, BASE: {base_missed} of {b.seeds}"
    if b.seeds != n.seeds:
        text += f" (a larger share: {new_missed / n.seeds:.0%} against {base_missed / b.seeds:.0%})"
    return text


def _same_spread(b: Estimate, n: Estimate) -> tuple[Estimate, Estimate, str]:
    """The two sides' estimates at the widest level both have (:data:`SPREADS`: between files,
    between runs, within runs; a side with more gives its ``fallback``), and what the interval
    covers ("" for figures read once per run or seed, or not measured on a side)."""
    if b.value is None or n.value is None:  # not measured on a side: nothing is judged
        return b, n, ""
    levels_b, levels_n = _levels(b), _levels(n)
    for level, label in SPREADS.items():
        if level in levels_b and level in levels_n:
            return levels_b[level], levels_n[level], label
    return b, n, ""


def _levels(est: Estimate) -> dict[str, Estimate]:
    """An estimate and its fallbacks, by spread."""
    out: dict[str, Estimate] = {}
    found: Estimate | None = est
    while found is not None:
        if found.spread:
            out.setdefault(found.spread, found)
        found = found.fallback
    return out


@dataclass
class Column:
    """One NEW file against BASE."""

    file: str
    doc: Doc
    pairs: list[Pair]
    only_base: list[str]
    only_new: list[str]
    # the rows of the figures BASE measured (verdict MISSING) of each workload × scale NEW has no
    # run of: each ``only_base`` key, and each key of a pair whose scale differs, for the gate
    gone: dict[str, list[Row]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, **describe(self.doc), "pairs": [p.to_json() for p in self.pairs],
                "only_in_base": self.only_base, "only_in_new": self.only_new}


def describe(doc: Doc) -> dict[str, Any]:
    """A file's identity for a report: its system, accelerator, software and date, whether runs of
    it were measured under load (:func:`suite.figures.load.runs_under_load`) or some run has no
    load record (``load_unrecorded``: dated before goodbench recorded it), and for own code
    how many clocks timed it (``clocks``: 2 when goodbench run-own stamped every run, else 1; None
    for goodbench's workloads)."""
    system = doc.get("system", {})
    accel = system.get("accelerator", {})
    soft = system.get("software", {})
    return {"system": system.get("name"), "accelerator": f"{accel.get('name')} × {accel.get('count')}",
            "torch": soft.get("torch"), "goodbench": soft.get("goodbench"),
            "compile": doc.get("settings", {}).get("compile", "off"), "created_at": doc.get("created_at"),
            "under_load": host_load.runs_under_load(doc.get("runs") or [], own.implementation_name(doc)),
            "load_unrecorded": any(not isinstance(r.get("host_load"), dict) for r in doc.get("runs") or []
                                   if isinstance(r, dict)),
            "clocks": own_clocks(doc), "clock_gaps": own_clock_gaps(doc)}


def own_clocks(doc: Doc) -> int | None:
    """How many clocks timed an own-code document's runs (None: not own code)."""
    if doc.get("settings", {}).get("division") != "own":
        return None
    runs = doc.get("runs") or []
    return 2 if runs and all(clock_cover.stamped(doc, r.get("run_id")) for r in runs) else 1


def own_clock_gaps(doc: Doc) -> list[str]:
    """Why an own-code document is timed by one clock (empty: it is not, or not own code):
    ``"unstamped"`` where a run's edges were not stamped whole by a second clock, ``"short steps"``
    where they were on a CPU whose median step the clock cannot hold, ``"steps' sum disagrees"`` where
    the steady steps' sum is not held (:func:`suite.figures.clock_cover.steps_flaw`)."""
    if own_clocks(doc) != 1:
        return []
    runs = [r for r in doc.get("runs") or [] if isinstance(r, dict)]
    gaps = ["unstamped"] if not all(clock_cover.edges_whole(doc, r.get("run_id")) for r in runs) else []
    flaws = {clock_cover.steps_flaw(doc, r) for r in runs} if doc.get("second_clock") is not None else set()
    return gaps + (["short steps"] if clock_cover.SHORT in flaws else []) \
        + (["steps' sum disagrees"] if clock_cover.SUM_OFF in flaws else [])


def merge_side(docs: Sequence[Doc]) -> Doc:
    """Several results files of one side (``compare BASE... --vs NEW...``) as one document:
    their runs together (the runs of one workload × scale are then that side's runs), the first
    file's system and settings. A division or open-division changes that differ between the
    files read as "mixed", so that the side is compared with nothing."""
    first, *rest = docs
    if not rest:
        return first
    settings = dict(first.get("settings", {}))  # the runs are tagged with their file (FILE_KEY)
    for name, default, mixed in (("division", "closed", "mixed divisions"),
                                 ("open_changes", [], ["mixed open-division changes"])):
        if any(d.get("settings", {}).get(name, default) != settings.get(name, default) for d in rest):
            settings[name] = mixed
    if settings.get("implementation") is not None:
        settings["implementation"] = definition.merged_implementation(docs)
    stamped = [e for d in docs for e in ((d.get("second_clock") or {}).get("runs") or [])]  # every file's
    return {**first, "settings": settings, "second_clock": {"runs": stamped} if stamped else None,
            "runs": [{**r, FILE_KEY: i} for i, d in enumerate(docs) for r in d.get("runs", [])]}


def repeated(names: Sequence[str], docs: Sequence[Doc]) -> str | None:
    """Why the files of one side are not independent replicates (one line, naming both), or
    None: two of them the same document, or one run id in two of them. Counted twice, a run
    would shrink the spread between files to nothing and decide verdicts on rounding. Runs are
    told apart by their ids only, so a side of two files or more with a run without a string
    ``run_id`` (the schema requires one; a file read without it checked may lack it) is refused
    too, naming the file and the run, rather than let that run past the check."""
    seen: dict[str, str] = {}
    for i, (name, doc) in enumerate(zip(names, docs)):
        same = next((names[j] for j in range(i) if docs[j] == doc), None)
        if same is not None:
            return f"{same} and {name} are the same results file"
        for k, run in enumerate(doc.get("runs") or []):
            rid = run.get("run_id") if isinstance(run, dict) else None
            if not isinstance(rid, str):
                if len(docs) > 1:
                    return f"{name}: runs[{k}] has no run id, so it cannot be told from the side's other runs"
                continue
            if seen.get(rid, name) != name:
                return f"{seen[rid]} and {name} hold the same run ({rid})"
            seen[rid] = name
    return None


def compare_documents(base: Doc, new: Doc, new_name: str = "NEW") -> Column:
    """Every workload × scale of BASE and NEW compared. A workload present in both at different
    scales is a pair that is not comparable (scale differs), and to the gate a workload × scale
    NEW has no run of (:attr:`Column.gone`, its reason naming both scales); the rest present in
    one file only is listed as such."""
    bg, ng = groups(base.get("runs", [])), groups(new.get("runs", []))
    pairs = [compare_runs(base, bg[k], new, ng[k]) for k in bg if k in ng]
    only_base = [k for k in bg if k not in ng]
    only_new = [k for k in ng if k not in bg]
    gone = {}
    for k in list(only_base):
        workload = k.split("@")[0]
        match = next((m for m in only_new if m.split("@")[0] == workload), None)
        if match is None:
            gone[k] = missing_rows(bg[k], f"only in BASE: {new_name} has no run of it")
            continue
        only_base.remove(k)
        only_new.remove(match)
        why = f"scale differs ({k.split('@')[1]} in BASE, {match.split('@')[1]} in NEW)"
        pairs.append(Pair(k, workload, k.split("@")[1], False, why))
        gone[k] = missing_rows(bg[k], f"{why}: {new_name} has no run of it at {k.split('@')[1]}")
    return Column(new_name, new, pairs, only_base, only_new, gone)


def missing_rows(base_runs: Runs, reason: str) -> list[Row]:
    """The rows of a workload × scale NEW has no run of (at any scale, or only at another one:
    ``reason`` says which): each figure BASE measured, verdict :data:`MISSING` (the step-time
    quantiles are measured where samples/s is)."""
    est = side_estimates(base_runs, 0, quantiles=False)
    steps = est["samples_per_s"].value is not None
    return [Row(f.id, f.label, f.better, est[f.id].value, None, None, None, None, MISSING, reason=reason)
            for f in FIGURES if est[f.id].value is not None or (steps and f.id.startswith("step_time_"))]


# ---------------------------------------------------------------- the regression gate
@dataclass
class Gate:
    """``--fail-on-regression``: a threshold (fraction) per figure id; ``fail_on_undecided``
    (``--fail-on-undecided``): a gated figure the gate cannot tell fails it too, whether undecided
    (:meth:`undecided`) or not judged at all (:meth:`unchecked`)."""

    thresholds: dict[str, float]
    fail_on_undecided: bool = False

    @classmethod
    def parse(cls, specs: Sequence[str]) -> Gate:
        """From ``PCT`` (the default figures, :data:`GATE_DEFAULT`) and ``NAME=PCT`` items; a
        later item overrides an earlier one for the same figure. ValueError on a bad item."""
        out: dict[str, float] = {}
        for spec in specs:
            name, _, pct = spec.rpartition("=")
            names = [name] if name else list(GATE_DEFAULT)
            for n in names:
                if n not in BY_ID:
                    raise ValueError(f"unknown figure {n!r} in {spec!r}; figures: {', '.join(FIGURE_IDS)}")
            try:
                value = float(pct)
            except ValueError:
                raise ValueError(f"{spec!r}: {pct!r} is not a percentage") from None
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{spec!r}: the percentage must be 0 or more")
            for n in names:
                out[n] = value / 100
        return cls(out)

    def judge(self, columns: Sequence[Column]) -> tuple[list[tuple[str, str, Row]], list[tuple[str, str, Row]]]:
        """(:meth:`apply`'s regressions, marked; :meth:`undecided`) from one pass over the rows."""
        regressions, undecided = self._sort(columns)
        for _, _, row in regressions:
            row.regression = True
        return regressions, undecided

    def apply(self, columns: Sequence[Column]) -> list[tuple[str, str, Row]]:
        """Mark and return the regressions: (NEW file, workload × scale, row) of every gated
        figure whose verdict is ``slower`` (the interval lies wholly on the worse side of 1)
        and whose ratio is worse than its threshold."""
        return self.judge(columns)[0]

    def undecided(self, columns: Sequence[Column]) -> list[tuple[str, str, Row]]:
        """Gated figures whose ratio is worse than the threshold while the interval does not
        decide (it reaches the better side of 1): no regression by the rule, but the change
        could be one larger than the threshold. They pass the gate unless ``fail_on_undecided``."""
        return self._sort(columns)[1]

    def _sort(self, columns: Sequence[Column]) -> tuple[list[tuple[str, str, Row]], list[tuple[str, str, Row]]]:
        """(regressions, undecided), unmarked: the gated figures worse than their threshold, by verdict."""
        regressions, undecided = [], []
        for col in columns:
            for pair in col.pairs:
                for row in pair.rows:
                    limit = self.thresholds.get(row.figure)
                    if limit is None or row.ratio is None or row.verdict == MISSED_MORE \
                            or not worse_by(BY_ID[row.figure], row.ratio) > limit:  # MISSED_MORE: lost
                        continue
                    if row.verdict == SLOWER:
                        regressions.append((col.file, pair.key, row))
                    elif row.low is not None:
                        undecided.append((col.file, pair.key, row))
        return regressions, undecided

    def failed(self, regressions: Sequence, undecided: Sequence, unchecked: Sequence) -> bool:
        """Whether the gate fails: a regression; a gated figure BASE measured that NEW lacks
        (:meth:`lost`: the workload × scale is missing from NEW or run there only at another
        scale, NEW's runs of it all failed or are partial, they never reached the target BASE
        reached, or a larger share of NEW's seeds missed it); or, under ``fail_on_undecided``, a
        gated figure it cannot tell: undecided (:meth:`undecided`) or not checked at all
        (:meth:`unchecked`: no interval, not compared, measured on one side only, not
        comparable), none of which rules a regression out."""
        return bool(regressions) or any(self.lost(row) for _, _, row in unchecked) \
            or (self.fail_on_undecided and bool(undecided or unchecked))

    @staticmethod
    def lost(row: Row | None) -> bool:
        """Whether an :meth:`unchecked` row is a figure BASE measured and NEW lacks: no run of
        the workload × scale in NEW (:data:`MISSING`: none, or only at another scale), none of
        NEW's runs complete (:data:`NOT_COMPARED`), NEW's complete runs missed the target
        (:data:`NOT_REACHED`: no seed reached it, or too few for a valid score), or both TTA
        scores are valid but a larger share of NEW's seeds missed the target than of BASE's
        (:data:`MISSED_MORE`, :func:`missed_more`: the score hides a seed lost; the row keeps
        both scores). It fails the gate, flag or not. NEW reaching a target BASE missed, or
        missing it as often or less often, is no such loss."""
        return row is not None and row.base is not None and (
            (row.new is None and row.verdict in (MISSING, NOT_REACHED, NOT_COMPARED)) or row.verdict == MISSED_MORE)

    def narrow(self, columns: Sequence[Column]) -> list[tuple[str, str, Row]]:
        """Gated figures judged without the spread between files (:data:`ACROSS_RUNS`,
        :data:`ONE_RUN`): a side had one file, so their intervals miss the machine's noise
        between processes and stretches of time (docs/compare.md measured its false alarms)."""
        return [(col.file, pair.key, row) for col in columns for pair in col.pairs for row in pair.rows
                if row.figure in self.thresholds and row.spread in (ACROSS_RUNS, ONE_RUN) and row.low is not None]

    def unchecked(self, columns: Sequence[Column]) -> list[tuple[str, str, Row | None]]:
        """Gated figures the gate could not judge: not comparable, not measured on one side, not
        compared (a side has no complete run), target not reached in NEW (:data:`NOT_REACHED`)
        or missed more often there (:data:`MISSED_MORE`), or without an interval (a pair not
        comparable as a whole gives a None row, but for one whose scale differs, whose figures
        are listed as missing instead), and those of a
        workload × scale missing from NEW (:data:`MISSING`). A figure measured on neither side
        (tokens/s of a workload without tokens, the TTA score of a throughput workload) is not
        the gate's to judge and is not listed. They pass the gate unless ``fail_on_undecided``,
        but for those :meth:`lost`."""
        out: list[tuple[str, str, Row | None]] = []
        for col in columns:
            for pair in col.pairs:
                if not pair.comparable:
                    if pair.key not in col.gone:  # scale differs: its figures are in ``gone``
                        out.append((col.file, pair.key, None))
                    continue
                for row in pair.rows:
                    if row.figure not in self.thresholds:
                        continue
                    one_sided = row.verdict == NOT_MEASURED and (row.base is None) != (row.new is None)
                    if row.verdict in (NOT_COMPARABLE, NO_INTERVAL, NOT_COMPARED, NOT_REACHED, MISSED_MORE) \
                            or one_sided:
                        out.append((col.file, pair.key, row))
            out += [(col.file, key, row) for key, rows in col.gone.items() for row in rows
                    if row.figure in self.thresholds]
        return out


def energy_method(run: dict) -> str:
    """How a run's energy was metered ("nvml", "rapl", …), or "no meter" where none was."""
    return str(run["metrics"].get("energy_method") or "no meter")


# ---------------------------------------------------------------- the site's entries
SITE_FIGURES = ("tta", "samples_per_s", "tokens_per_s", "mfu", "energy_per_sample", "goodput")


def entry_summary(doc: Doc, runs: Runs) -> dict[str, Any]:
    """What the site keeps of one entry (a file's runs of one workload × scale) to compare it
    with any other: its comparability context, its energy methods and, for each of
    :data:`SITE_FIGURES`, ``[value, log_se, df, reason]`` (plain JSON, for the pages and their
    script). No step-time quantiles: the site builds without a bootstrap. The step-time figures
    are the estimates within the runs (its entries are mostly one run: docs/compare.md)."""
    estimates = {f: _levels(e).get("steps", e) for f, e in side_estimates(runs, quantiles=False).items()}
    methods = {energy_method(r) for r in complete_runs(list(runs))}
    return {"context": {k: _plain(v) for k, v in context(doc, runs, own_by_declaration=False).items()},
            "energy": sorted(methods),
            "figures": {f: [estimates[f].value, estimates[f].log_se, estimates[f].df, estimates[f].reason]
                        for f in SITE_FIGURES}}


def compare_summaries(base: dict[str, Any], new: dict[str, Any]) -> tuple[str | None, dict[str, Row]]:
    """Two entries' summaries (:func:`entry_summary`) compared: (why they are not comparable,
    or None; each site figure's row)."""
    why = incomparable(base["context"], new["context"])
    if why:
        return why, {}
    rows = {}
    for fid in SITE_FIGURES:
        (bv, bse, bdf, breason), (nv, nse, ndf, nreason) = base["figures"][fid], new["figures"][fid]
        rows[fid] = compare_figure(BY_ID[fid], Estimate(bv, bse, bdf, reason=breason),
                                   Estimate(nv, nse, ndf, reason=nreason),
                                   (set(base["energy"]), set(new["energy"])))
    return None, rows
