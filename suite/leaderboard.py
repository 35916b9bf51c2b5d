"""Results files → rows: one per run, one leaderboard entry per (file, workload, scale), with pandas.

An entry's seeds, TTA score and medians are the document's summary (suite/summary.py).

Fields that later parts of the results format add (division, goodput, effective goodput) are
read where they exist and left ``None`` otherwise; nothing is filled in.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from suite import validate
from suite.summary import complete_runs, groups, median, summarize
from suite.validate import check_document, load

ENTRY_COLUMNS = ["file", "system", "accelerator", "count", "workload", "kind", "scale", "division",
                 "world_size", "scaling_efficiency", "seeds", "score_s", "ci95_low_s", "ci95_high_s", "tta_valid", "samples_per_s",
                 "tokens_per_s", "mfu", "energy_per_sample_j", "energy_per_token_j",
                 "energy_to_target_kwh", "goodput", "effective_goodput", "created_at",
                 "suite_version", "run_id"]
RUN_COLUMNS = ["file", "run_id", "system", "accelerator", "count", "workload", "kind", "scale",
               "division", "seed", "status", "samples_per_s", "tokens_per_s", "mfu", "tta_s",
               "energy_per_sample_j", "goodput", "effective_goodput", "created_at", "suite_version"]
J_PER_KWH = 3.6e6


def check_file(path: Path) -> tuple[dict | None, str | None]:
    """(document, None) for a valid file, (None, first problem as one line) for an invalid one."""
    doc, problems = load(path)
    problems = problems or check_document(doc)
    return (None, problems[0].line(path.name)) if problems else (doc, None)


def load_valid(results_dir: Path) -> tuple[list[tuple[str, dict]], list[tuple[str, str]]]:
    """(name, document) of every valid file, and (name, first problem) of every invalid one."""
    valid, invalid = [], []
    for path in sorted(Path(results_dir).glob("*.json")):
        doc, problem = check_file(path)
        if problem:
            invalid.append((path.name, problem))
        else:
            valid.append((path.name, doc))
    return valid, invalid


def division(doc: dict, run: dict) -> str:
    """The division a run was submitted to (the validator's reading of the file)."""
    return validate.division(doc)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def run_metric(run: dict, key: str) -> float | None:
    """A number from ``metrics`` or from a ``goodput`` section of the run; None when absent."""
    value = _number(run["metrics"].get(key))
    if value is None and isinstance(run.get("goodput"), dict):
        value = _number(run["goodput"].get(key))
    return value


def run_rows(name: str, doc: dict) -> list[dict]:
    """One row per run of one document."""
    out = []
    for run in doc["runs"]:
        tput = run["metrics"]["throughput"] or {}
        out.append({
            "file": name, "run_id": run["run_id"], "system": doc["system"]["name"],
            "accelerator": doc["system"]["accelerator"]["name"],
            "count": doc["system"]["accelerator"]["count"],
            "workload": run["workload"]["id"], "kind": run["workload"]["kind"], "scale": run["scale"],
            "division": division(doc, run), "seed": run["seed"], "status": run["status"],
            "samples_per_s": tput.get("samples_per_s"), "tokens_per_s": tput.get("tokens_per_s"),
            "mfu": run["metrics"]["mfu"], "tta_s": run["metrics"]["tta_s"],
            "energy_per_sample_j": run["metrics"]["energy_per_sample_j"],
            "goodput": run_metric(run, "goodput"),
            "effective_goodput": run_metric(run, "effective_goodput"),
            "created_at": doc["created_at"], "suite_version": doc["suite"]["version"],
        })
    return out


def rows(name: str, doc: dict) -> list[dict]:
    """One entry per (workload, scale) of one document, which has one division.

    The seeds, TTA score, and throughput and MFU medians are those of :func:`suite.summary.summarize`
    (recomputed from the runs, so files without a ``summary`` section read the same); energy,
    energy to target and goodput are medians over the complete runs, by the same rule: a failed
    or partial run's figures never count."""
    div, grouped = validate.division(doc), groups(doc["runs"])
    out = []
    for key, summary in summarize(doc["runs"]).items():
        runs = grouped[key]
        complete = complete_runs(runs)
        score = summary["tta"]
        ci = score["ci95_s"] if score and score["ci95_s"] else (None, None)
        to_target = median([run_metric(r, "energy_to_target_j") for r in complete])
        out.append({
            "file": name, "system": doc["system"]["name"],
            "accelerator": doc["system"]["accelerator"]["name"],
            "count": doc["system"]["accelerator"]["count"],
            "workload": summary["workload"], "kind": summary["kind"], "scale": summary["scale"],
            "division": div,
            "world_size": (runs[0].get("distributed") or {}).get("world_size", 1),
            "scaling_efficiency": None,  # set across documents by with_scaling_efficiency
            "seeds": len(summary["seeds"]),
            "score_s": score["olympic_mean_s"] if score else None,
            "ci95_low_s": ci[0], "ci95_high_s": ci[1],
            "tta_valid": score["valid"] if score else None,
            "samples_per_s": summary["samples_per_s_median"],
            "tokens_per_s": summary["tokens_per_s_median"],
            "mfu": summary["mfu_median"],
            "energy_per_sample_j": median([run_metric(r, "energy_per_sample_j") for r in complete]),
            "energy_per_token_j": median([run_metric(r, "energy_per_token_j") for r in complete]),
            "energy_to_target_kwh": None if to_target is None else to_target / J_PER_KWH,
            "goodput": median([run_metric(r, "goodput") for r in complete]),
            "effective_goodput": median([run_metric(r, "effective_goodput") for r in complete]),
            "created_at": doc["created_at"], "suite_version": doc["suite"]["version"],
            "run_id": (complete or runs)[0]["run_id"],
        })
    return out


def table(results: list[tuple[str, dict]]) -> pd.DataFrame:
    """All entries of all valid documents as one DataFrame."""
    frame = pd.DataFrame([row for name, doc in results for row in rows(name, doc)], columns=ENTRY_COLUMNS)
    return with_scaling_efficiency(frame)


def with_scaling_efficiency(frame: pd.DataFrame) -> pd.DataFrame:
    """Fill ``scaling_efficiency`` = samples/s(N) / (N × samples/s(1)) for entries of N > 1
    processes, against the best 1-process entry of the same system, workload, scale and division
    (None where there is none)."""
    if frame.empty:
        return frame
    keys = ["system", "workload", "scale", "division"]
    single = frame[frame["world_size"] == 1].groupby(keys)["samples_per_s"].max().to_dict()
    efficiency = []
    for row in frame[keys + ["world_size", "samples_per_s"]].itertuples(index=False):
        base = single.get(tuple(row[:4]))
        n, rate = row.world_size, row.samples_per_s
        ok = n > 1 and _number(base) and _number(rate)
        efficiency.append(rate / (n * base) if ok else None)
    frame = frame.copy()
    frame["scaling_efficiency"] = pd.Series(efficiency, index=frame.index, dtype=object)
    return frame


def rankable(frame: pd.DataFrame) -> pd.Series:
    """Which entries may be ranked: full scale, and for TTA a valid score."""
    return (frame["scale"] == "full") & ((frame["kind"] != "tta") | (frame["tta_valid"] == True))  # noqa: E712


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in leaderboard order: TTA ascending (valid first), else throughput descending."""
    if frame.empty:
        return frame
    tta_rows = frame[frame["kind"] == "tta"].sort_values(["tta_valid", "score_s"], ascending=[False, True],
                                                         na_position="last", kind="stable")
    tput_rows = frame[frame["kind"] != "tta"].sort_values("samples_per_s", ascending=False,
                                                          na_position="last", kind="stable")
    return pd.concat([tta_rows, tput_rows])


def pareto_front(frame: pd.DataFrame, x: str = "energy_per_sample_j", y: str = "samples_per_s") -> pd.DataFrame:
    """Entries no other entry beats on both less ``x`` and more ``y``, in increasing ``x``."""
    points = frame.dropna(subset=[x, y]).sort_values([x, y], ascending=[True, False], kind="stable")
    best = points[y].cummax().shift(fill_value=-np.inf)
    return points[points[y] > best]


def best_per_system(frame: pd.DataFrame) -> pd.DataFrame:
    """Each system's best entry per (workload, scale): lowest valid TTA score, else highest throughput."""
    if frame.empty:
        return frame
    order = ranked(frame)
    return order.drop_duplicates(subset=["system", "workload", "scale"], keep="first")
