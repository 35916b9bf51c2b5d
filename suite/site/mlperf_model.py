"""The imported MLPerf Training documents as the site shows them: one row per document, with
the figures a page needs, the accelerator's family, the system's size class, and the history
and scaling views built from the rows.

Nothing here renders; :mod:`suite.site.mlperf_pages` turns these into pages. Nothing here
imports MLCommons' ``mlperf_logging`` either: the site builds without it.
"""
from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from suite.cost import hours
from suite.cost.prices import Electricity, Price, Table
from suite.figures.derive import J_PER_KWH
from suite.mlperf import division as mlperf_division
from suite.mlperf import importer, ingest, later_rules

# Size classes by accelerator count, for comparing like with like across rounds.
SIZE_CLASSES = ((1, 8, "1–8"), (9, 64, "9–64"), (65, 512, "65–512"), (513, 4096, "513–4,096"),
                (4097, 10 ** 9, "over 4,096"))
CPU_ONLY, SIZE_UNKNOWN = "no accelerator (CPU only)", "size not given"
# Benchmarks MLCommons renamed in v5.0 (ssd → retinanet, gnn → rgat): the old name's rounds whose
# quality target is the new name's also belong to the new name's history.
RENAMED = {"ssd": "retinanet", "gnn": "rgat"}

# Accelerator families: the first rule whose pattern matches the model name (lower case)
# names the family; the name as written stays on every row. Power limits ("(400W)"), "CTS",
# vendor names and punctuation vary between submitters for the same part.
_FAMILIES: tuple[tuple[str, str], ...] = (
    (r"gb300", "NVIDIA GB300"), (r"b300", "NVIDIA B300"), (r"gb200", "NVIDIA GB200"), (r"b200", "NVIDIA B200"),
    (r"h200.*nvl", "NVIDIA H200 NVL"), (r"h200", "NVIDIA H200 SXM"),
    (r"h100.*nvl", "NVIDIA H100 NVL"), (r"h100.*pcie", "NVIDIA H100 PCIe"), (r"h100.*96\s*gb", "NVIDIA H100 SXM 96GB"),
    (r"h100", "NVIDIA H100 SXM"),
    (r"a100.*pcie.*80|a100.*80.*pcie|a100 - pcie - 80", "NVIDIA A100 PCIe 80GB"), (r"a100.*pcie", "NVIDIA A100 PCIe 40GB"),
    (r"a100.*80", "NVIDIA A100 SXM 80GB"), (r"a100.*(sxm|40)", "NVIDIA A100 SXM 40GB"),
    (r"a100", "NVIDIA A100 (variant not given)"),
    (r"v100s|v100.*pcie", "NVIDIA V100 PCIe"), (r"v100.*sxm3", "NVIDIA V100 SXM3 32GB"),
    (r"v100.*sxm2.*32", "NVIDIA V100 SXM2 32GB"), (r"v100.*sxm2", "NVIDIA V100 SXM2 16GB"),
    (r"v100", "NVIDIA V100 (variant not given)"),
    (r"l40s", "NVIDIA L40S"), (r"l40", "NVIDIA L40"), (r"\bl4\b", "NVIDIA L4"), (r"a10g", "NVIDIA A10G"),
    (r"\ba30\b", "NVIDIA A30"), (r"\ba40\b", "NVIDIA A40"), (r"rtx a5000", "NVIDIA RTX A5000"),
    (r"rtx 4090", "NVIDIA GeForce RTX 4090"), (r"rtx pro 6000", "NVIDIA RTX Pro 6000"),
    (r"mi355x", "AMD Instinct MI355X"), (r"mi350x", "AMD Instinct MI350X"), (r"mi325x", "AMD Instinct MI325X"),
    (r"mi300x", "AMD Instinct MI300X"), (r"mi250", "AMD Instinct MI250"), (r"7900 xtx", "AMD Radeon RX 7900 XTX"),
    (r"gaudi\s*\(r\)\s*2|gaudi\s*2|gaudi2", "Intel Gaudi2"), (r"gaudi\s*3|gaudi3", "Intel Gaudi3"),
    (r"gaudi|hl-205", "Habana Gaudi"),
    (r"bow ipu", "Graphcore Bow IPU"), (r"ipu", "Graphcore IPU GC200"),
    (r"ascend\s*910", "Huawei Ascend 910"),
    (r"trillium|tpu.*v6", "Google TPU Trillium"), (r"tpu.*v5p", "Google TPU v5p"), (r"tpu.*v5e", "Google TPU v5e"),
    (r"tpu.*v4", "Google TPU v4"), (r"tpu.*v3", "Google TPU v3"),
)


def family(accelerator: str | None, system: str = "", count: int | None = None) -> str:
    """The accelerator family of a model name as written ("NVIDIA A100-SXM4-80GB (400W)" →
    "NVIDIA A100 SXM 80GB"); a bare "TPU" takes its version from the system's name; no
    accelerator (or a count of 0) is :data:`CPU_ONLY`; an unknown name is itself, less a
    power limit in parentheses; an empty or "N/A" name with accelerators "accelerator not
    named"."""
    name = (accelerator or "").strip()
    lower = name.lower()
    if count == 0:
        return CPU_ONLY
    if lower in ("", "n/a", "none"):
        return "accelerator not named"
    if lower == "tpu":
        version = re.search(r"tpu-?v(\d)", system.lower())
        lower = f"tpu v{version.group(1)}" if version else lower
    for pattern, label in _FAMILIES:
        if re.search(pattern, lower):
            return label
    return re.sub(r"\s*\(\s*\d+\s*W\s*\)", "", name).strip() or name


def size_class(count: int | None) -> str:
    """The size class of a system with ``count`` accelerators."""
    if count is None:
        return SIZE_UNKNOWN
    if count == 0:
        return CPU_ONLY
    return next(label for lo, hi, label in SIZE_CLASSES if lo <= count <= hi)


def round_key(name: str) -> tuple[int, int]:
    """"v5.1" → (5, 1), for ordering rounds."""
    major, minor = name.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


@dataclass
class Row:
    """One imported document (one system × benchmark of a round) as the pages show it."""

    doc: dict
    round: str
    benchmark: str
    division: str
    submitter: str
    system: str
    accelerator: str          # as written
    family: str
    count: int | None
    nodes: int | None
    framework: str
    minutes: float | None
    status: str
    rcp: float | None
    runs: int
    counted: int
    init_s: float | None
    eval_s: float | None
    time_s: float | None      # median time to train of the counted runs
    goodput: float | None
    energy_kwh: float | None
    energy_status: str | None
    target: str | None
    source: str | None      # the result's folder on GitHub (None: its repository is not there)
    system_url: str | None  # its system description on GitHub, as ``source``
    size: str = ""
    scaling: float | None = None  # efficiency against the smallest system of its family (same round, benchmark)
    rank: int | None = None
    later: str | None = None  # no score today only by a check changed after the round (suite/mlperf/later_rules.py)
    at_round: bool = False    # scored as the round's own checker scored it (today's gives none)
    absent: int = 0           # no score: result logs the published folder has and the copy imported lacked
    category: str = "—"       # availability: available, preview or research (:func:`category`)
    carried_of: Row | None = field(default=None, repr=False)  # the earliest row holding the same runs (:func:`mark_carried`)
    extra: dict = field(default_factory=dict)
    accelerator_hours: float | None = None  # accelerators × score (suite/cost/hours.py)
    unverified: str | None = None  # why its source is not verified as MLCommons' published round (suite/mlperf/published.py)
    checked: str | None = None     # the commit its importer checked its files against (its word: self-reported)
    power_unchecked: bool = False  # an energy from power logs its importer did not check (imported before it did)
    price: Price | None = None     # its class's price per accelerator-hour (:func:`add_costs`)
    cost_usd: float | None = None  # accelerator-hours × that price
    energy_cost_usd: float | None = None  # energy measured (kWh) × the table's electricity price
    electricity: Electricity | None = field(default=None, repr=False)  # that price, with its source

    @property
    def complete(self) -> bool:
        """A score from at least the runs an official submission needs: one for the history and
        the best-of tables (a folder with runs missing still has a score, marked as such)."""
        return self.minutes is not None and self.status == "ok"

    @property
    def carried_from(self) -> str | None:
        """The earlier round that published this row's runs (:func:`mark_carried`), else None."""
        return None if self.carried_of is None else self.carried_of.round

    @property
    def preview_or_research(self) -> bool:
        """A system MLCommons' tables rank apart from those one can buy or rent (:func:`category`)."""
        return self.category in ("preview", "research")

    @property
    def init_share(self) -> float | None:
        """Initialization's share of the wall time (init + time to train), medians."""
        if self.init_s is None or self.time_s is None or self.init_s + self.time_s <= 0:
            return None
        return self.init_s / (self.init_s + self.time_s)

    @property
    def cost_with_init_usd(self) -> float | None:
        """An estimate of the cost with initialization: the cost (the score's time only: MLPerf's
        score excludes init) ÷ (1 − the median run's init share); approximate, the score being an
        olympic mean × RCP factor. None without a cost or an init share below 1."""
        share = self.init_share
        if self.cost_usd is None or share is None or not 0 <= share < 1:
            return None
        return self.cost_usd / (1 - share)

    @property
    def eval_share(self) -> float | None:
        """Evaluation's share of the time to train, medians."""
        if self.eval_s is None or not self.time_s:
            return None
        return self.eval_s / self.time_s


def category(text: str | None) -> str:
    """The availability category of a system's ``status`` as MLCommons' tables separate them:
    "preview", "research" (also "Research, Development, or Internal"), else "available" —
    rounds spell it "available", "onprem", "cloud", "Available on-premise" and more; "—" where
    the description has none."""
    folded = (text or "").strip().lower()
    if not folded:
        return "—"
    if folded.startswith("preview"):
        return "preview"
    if folded.startswith(("research", "rdi")):
        return "research"
    return "available"


def division(text: str | None) -> str:
    """The division as the pages rank it: MLPerf has two, and submitters' descriptions spell them
    "Closed", "close" or "Open" too (v0.7 Fujitsu, v1.0 PCL); the document keeps the text as
    written, anything else stays as it is, none is "—"."""
    if not text:
        return "—"
    folded = mlperf_division.folded(text)  # as the importer holds a log's division to its description
    return folded if folded in ("closed", "open") else text


def row(doc: dict) -> Row:
    """The row of one document."""
    system, score, runs = doc["system"], doc["score"], doc["runs"]
    then = score.get("at_round") if score.get("minutes") is None else None  # the round's checker's score
    counted = [r for r in runs if r.get("counted") or (then and r.get("at_round"))]
    med = lambda key: _median([r[key] for r in counted if r.get(key) is not None])
    good = _median([g for g in (ingest.goodput(r)["goodput"] for r in counted) if g is not None])
    energy = score.get("energy_j")
    count = system.get("accelerators")
    out = Row(
        doc=doc, round=doc["source"]["round"], benchmark=doc["benchmark"], division=division(doc.get("division")),
        submitter=doc["submitter"], system=system["name"], accelerator=system.get("accelerator") or "—",
        family=family(system.get("accelerator"), f"{system['name']} {system['folder']}", count), count=count,
        nodes=system.get("nodes"), framework=system.get("framework") or "—", minutes=then["minutes"] if then else score.get("minutes"),
        status=then["status"] if then else score["status"], rcp=score.get("rcp_scaling_factor"), runs=len(runs), counted=len(counted),
        init_s=med("init_s"), eval_s=med("eval_s"), time_s=med("time_to_train_s"), goodput=good,
        energy_kwh=energy / J_PER_KWH if energy is not None else None,
        energy_status=score.get("energy_status"), target=doc.get("quality_target"),
        source=importer.source_url(doc), system_url=importer.system_url(doc))
    out.size = size_class(count)
    out.category = category(doc.get("availability") or system.get("availability"))
    out.later = later_rules.stricter_since(doc)
    out.at_round = bool(then and out.later)
    listed = set(doc["source"].get("absent") or ())  # written by the import only, never by a log
    out.absent = sum(r["file"] in listed for r in runs) if score.get("minutes") is None else 0
    src = doc["source"]
    if "verified" not in src:  # a document of an earlier import, or of files not checked: not claimed
        said = [t for t in (src.get("round_note"), src.get("not_verified")) if t]
        out.unverified = "; ".join(dict.fromkeys(said)) or (  # each distinct reason once (--round's is both)
            "imported before goodbench checked sources against MLCommons' published round")
    else:  # the importer's word: the logs are not stored, so nothing here can check it again
        out.checked = src["verified"]["commit"]
        out.power_unchecked = out.energy_kwh is not None and "power_logs" not in src["verified"]
    return out


def rank_rows(rows: list[Row]) -> list[Row]:
    """Rows of one round × benchmark ranked by official score within each division (rows
    without a score last, unranked); each row's scaling efficiency against the smallest system
    of its accelerator family there."""
    rows = sorted(rows, key=lambda r: (r.division, r.minutes is None, r.minutes or 0.0, r.submitter, r.system))
    seen: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.minutes is not None:
            seen[r.division] += 1
            r.rank = seen[r.division]
    return rows


def add_scaling(rows: list[Row]) -> None:
    """Each scored row's scaling efficiency: accelerator-minutes of the smallest scored system
    of its family, division, round and benchmark over its own (1.0 for that system; lower when
    more accelerators buy less than proportional speed)."""
    groups: dict[tuple, list[Row]] = defaultdict(list)
    for r in rows:
        if r.minutes is not None and r.count:
            groups[(r.round, r.benchmark, r.division, r.family)].append(r)
    for members in groups.values():
        base = min(members, key=lambda r: (r.count, r.minutes))
        for r in members:
            r.scaling = (base.minutes * base.count) / (r.minutes * r.count)  # type: ignore[operator]


def _run_key(benchmark: str, run: dict) -> tuple | None:
    """What identifies one run's result log across rounds: its benchmark (under its current name:
    ssd's runs are retinanet's, :data:`RENAMED`) and its measured figures (time to train, init,
    eval, samples, accuracy), equal to the last digit only in a copy."""
    if run.get("time_to_train_s") is None:
        return None
    return (RENAMED.get(benchmark, benchmark), run["time_to_train_s"], run.get("init_s"), run.get("eval_s"),
            run.get("samples"), run.get("accuracy"))


def mark_carried(rows: list[Row]) -> None:
    """Mark each row holding a run an earlier round already published (a submitter may submit a
    result again in a later round: v4.1's gpt3 3.444 min on 11,616 GPUs is v4.0's run) with the
    earliest such round and its row there: its score is not a new result of its own round."""
    first: dict[tuple, Row] = {}
    for r in sorted(rows, key=lambda r: round_key(r.round)):
        for run in r.doc["runs"]:
            if (key := _run_key(r.benchmark, run)) is not None:
                first.setdefault(key, r)
    for r in rows:
        earlier = [first[key] for run in r.doc["runs"]
                   if (key := _run_key(r.benchmark, run)) is not None and first[key].round != r.round]
        r.carried_of = min(earlier, key=lambda o: round_key(o.round)) if earlier else None


@dataclass
class Point:
    """The best closed-division score of one size class in one round."""

    round: str
    size: str
    row: Row


def history(rows: list[Row], categories: tuple[str, ...] | None = None
            ) -> tuple[list[str], list[str], dict[tuple[str, str], Row]]:
    """(rounds oldest first, size classes present, best row per (round, size class)) of one
    benchmark's closed-division rows scored from complete submissions (:attr:`Row.complete`),
    of the availability ``categories`` given (None: every one): each round's best new result,
    a run carried over from an earlier round (:func:`mark_carried`) left out."""
    best: dict[tuple[str, str], Row] = {}
    for r in rows:
        if not charted(r, categories) or carried_out(r, categories):
            continue
        key = (r.round, r.size)
        if key not in best or r.minutes < best[key].minutes:  # type: ignore[operator]
            best[key] = r
    rounds = sorted({r.round for r in rows}, key=round_key)
    order = [label for _, _, label in SIZE_CLASSES] + [CPU_ONLY, SIZE_UNKNOWN]
    sizes = [s for s in order if any(k[1] == s for k in best)]
    return rounds, sizes, best


def charted(r: Row, categories: tuple[str, ...] | None) -> bool:
    """Whether a history of the availability ``categories`` (None: every one) can chart ``r``."""
    return r.complete and r.division == "closed" and (categories is None or r.category in categories)


def carried_out(r: Row, categories: tuple[str, ...] | None) -> bool:
    """Whether such a history leaves ``r`` out as carried over: its runs are an earlier round's
    row that the history charts there (a row carried from one it does not chart, a preview in
    the available view, is charted in its own round)."""
    return r.carried_of is not None and charted(r.carried_of, categories)


def history_rows(benchmark: str, rows: list[Row]) -> tuple[list[Row], list[str]]:
    """The rows of ``benchmark``'s history, all benchmarks' ``rows`` given: its own, and those of
    its earlier name (:data:`RENAMED`) whose quality target it kept; and the rounds taken from
    the earlier name."""
    own = [r for r in rows if r.benchmark == benchmark]
    targets = {r.target for r in own if r.target}
    earlier = [old for old, new in RENAMED.items() if new == benchmark]
    taken = [r for r in rows if r.benchmark in earlier and r.target and r.target in targets]
    return own + taken, sorted({r.round for r in taken}, key=round_key)


def finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def add_costs(rows: list[Row], table: Table) -> None:
    """Each row's accelerator-hours (accelerators × score ÷ 60, :func:`suite.cost.hours.mlperf`),
    the price of its accelerator's class in ``table`` (None: no price), its cost to train and,
    where energy was measured, its energy at the table's electricity price."""
    for r in rows:
        system = r.doc["system"]
        r.accelerator_hours = hours.mlperf(r.doc)
        r.price = table.price_of(system.get("accelerator"), system.get("accelerator_memory_gib"))
        r.cost_usd = hours.cost(r.accelerator_hours, r.price.usd_per_hour if r.price else None)
        r.electricity = table.electricity
        r.energy_cost_usd = hours.cost(r.energy_kwh, table.electricity.usd_per_kwh if table.electricity else None)


def priced_new(rows: list[Row]) -> list[Row]:
    """The rows the cheapest-to-target view weighs: complete, closed-division, priced and new in
    their round (not carried over from an earlier one)."""
    return [r for r in rows if r.complete and r.division == "closed" and r.cost_usd is not None
            and r.carried_of is None]


def cheapest_to_target(rows: list[Row]) -> list[Row]:
    """The Pareto front of cost and time among the closed-division rows of one round × benchmark
    scored from complete submissions, priced and new in the round (a carried-over result is its
    earlier round's, :func:`mark_carried`): fastest first, each row on it cheaper than every
    faster one (no other row is both faster and cheaper); rows of equal time and cost are both on it."""
    priced = sorted(priced_new(rows), key=lambda r: (r.minutes, r.cost_usd))
    front: list[Row] = []
    for r in priced:
        last = front[-1] if front else None
        if last is None or r.cost_usd < last.cost_usd or (  # type: ignore[operator]
                r.minutes == last.minutes and r.cost_usd == last.cost_usd):  # a tie: neither is better
            front.append(r)
    return front
