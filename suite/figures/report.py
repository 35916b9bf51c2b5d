"""The command line's summary tables, as text: the end of ``goodbench run`` (one row per run, the
goodput and badput of each, the time-to-target scores) and the table of ``goodbench project``.

Formatting only: every figure comes from the results document or the projection as it is.
"""
from __future__ import annotations

import math
import statistics

from suite.figures import load, tta
from suite.figures.naming import workload_label
from suite.record import results
from suite.record.text import cut
from workloads import own

GAP = "  "  # between columns: a header of several words stays readable as one
CELL_CHARS = 300  # of a cell as shown, escapes written out; longer (a list where a figure goes) ends in "…"


def _round(value, digits: int = 2):
    return None if value is None else round(value, digits)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _decimals(value: float, most: int) -> int:
    """Decimals ``value`` shows in its shortest repr, at most ``most``."""
    text = repr(value)
    return 0 if "e" in text or "." not in text else min(most, len(text.split(".")[1].rstrip("0")))


def _cells(values: list, float_format=None) -> list[str]:
    """One column's values as text: missing as "—"; floats with the column's decimals (or
    ``float_format``); any other value at most :data:`CELL_CHARS` characters, escapes written out."""
    floats = [v for v in values if isinstance(v, float) and math.isfinite(v)]
    digits = max((_decimals(v, 4) for v in floats), default=0)
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append("—")
        elif isinstance(v, float):
            out.append(float_format(v) if float_format else f"{v:.{digits}f}")
        else:
            out.append(cut(str(v), CELL_CHARS))
    return out


def table(rows: list[dict], float_format=None) -> str:
    """``rows`` as a plain-text table: columns two spaces apart, each header aligned like its
    column (numbers right, text left), missing values as "—"."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    lines: list[list[str]] = [[] for _ in range(len(rows) + 1)]
    for name in columns:
        values = [row.get(name) for row in rows]
        cells = [cut(str(name), CELL_CHARS), *_cells(values, float_format)]
        width = max(map(len, cells))
        numeric = all(_is_number(v) for v in values if v is not None)
        for line, cell in zip(lines, cells):
            line.append(cell.rjust(width) if numeric else cell.ljust(width))
    return "\n".join(GAP.join(line).rstrip() for line in lines)


def run_rows(runs: list[dict], implementation: str | None = None) -> list[dict]:
    """One row per run: status, steps, wall time, TTA, throughput, MFU and energy (and its repeat
    number, where a run was repeated: ``--repeat``); an own implementation's runs by its name
    (:func:`workload_label`)."""
    repeated = any("repeat" in r for r in runs)
    return [{
        "workload": workload_label(r, implementation), "seed": r["seed"], **({"repeat": r.get("repeat")} if repeated else {}),
        "status": r["status"],
        "steps": r["steps"], "wall s": round(r["wall_s"], 2),
        "TTA s": _round(r["metrics"]["tta_s"]),
        "samples/s": _round(results.samples_per_s(r)),
        "p50 step ms": _round(None if (p50 := results.step_time_s(r, "p50")) is None else 1000 * p50),
        "MFU": _round(r["metrics"]["mfu"], 3),
        "% of ceiling": _ceiling_cell(r["metrics"].get("share_of_ceiling")),
        "energy": "n/m" if r["metrics"]["energy_to_train_j"] is None
        else f"{r['metrics']['energy_to_train_j']:.0f} J",
    } for r in runs]


ABOVE_CEILING_MARK = "*"
"""Marks a share of the ceiling above 100% in the runs table; :func:`ceiling_lines` says why."""


def _ceiling_cell(share: float | None) -> str | None:
    """A run's share of the matmul ceiling (:func:`percent`), marked where it is above 100%."""
    return None if share is None else f"{percent(share)}{ABOVE_CEILING_MARK if share > 1 else ''}"


def ceiling_lines(doc: dict) -> list[str]:
    """Why a run's share of the ceiling reads above 100% (:data:`ABOVE_CEILING_MARK`): the ceiling
    it is a share of was measured before the runs, with other processes slowing it, and the one
    measured again after them, which the rules hold the runs to, where the file has one."""
    above = [r for r in doc["runs"] if (r["metrics"].get("share_of_ceiling") or 0) > 1]
    if not above:
        return []
    ceilings = (doc.get("settings") or {}).get("matmul_ceiling") or {}
    measured = []
    for precision in sorted({r["precision"] for r in above}):
        entry = ceilings.get(precision) or {}
        again = (entry.get("at_end") or {}).get("flops")
        measured.append(f"{precision} {entry.get('flops', 0) / 1e9:.3g} GFLOP/s before the runs"
                        + (f", {again / 1e9:.3g} after them" if again else ""))
    return [f"{ABOVE_CEILING_MARK} % of ceiling above 100%: the run went faster than the matrix multiply measured "
            f"before the runs ({'; '.join(measured)}); a ceiling reads low when other processes slow it while "
            "it is measured, and the rules hold each run to the faster measurement"]


def percent(share: float | None) -> str | None:
    """A share as a percentage with three significant digits ("7.70%"); None stays None (—)."""
    return None if share is None else f"{100 * share:#.3g}".rstrip(".") + "%"  # "18.0%", not "18%"


def goodput_rows(runs: list[dict], implementation: str | None = None) -> list[dict]:
    """One row per run with a goodput section: goodput and effective goodput (percentages) and badput seconds
    (the workload column as :func:`run_rows`'s)."""
    rows = []
    for r in runs:
        g = r.get("goodput")
        if not g:
            continue
        rows.append({"workload": workload_label(r, implementation), "seed": r["seed"],
                     "wall s": round(g["wall_s"], 2), "productive s": round(g["productive_s"], 2),
                     **{k: round(v, 2) for k, v in g["badput_s"].items()},
                     "goodput": percent(g["goodput"]), "eff. goodput": percent(g["effective_goodput"]),
                     "lost steps": g["lost_steps"]})
    return rows


def missing_lines(runs: list[dict]) -> list[str]:
    """Why the table's TTA or MFU reads "—" and its energy "n/m": each distinct status the runs recorded
    for a figure they have not ("MFU —: not measured: no peak FLOP/s known for 'cpu' (…)"); a TTA only
    where a target was missed (a throughput workload has none to reach)."""
    missed = dict.fromkeys(r["metrics"].get("tta_status") for r in runs if r["metrics"].get("tta_s") is None
                           and str(r["metrics"].get("tta_status") or "").startswith("not reached"))
    lines = [f"TTA —: {w}" for w in missed]
    for label, value, status in (("MFU —", "mfu", "mfu_status"), ("energy n/m", "energy_to_train_j", "energy_status")):
        why = dict.fromkeys(r["metrics"].get(status) for r in runs
                            if r["metrics"].get(value) is None and r["metrics"].get(status))
        lines += [f"{label}: {w}" for w in why]
    return lines


GOODPUT_HEADING = "goodput and badput (times in seconds; goodput as a share of the wall time, as the site shows it):"


def run_summary(runs: list[dict], implementation: str | None = None) -> str:
    """The runs table and why a figure of it is missing, then the goodput and badput table where
    any run has goodput; ``implementation``: the own code's name (:func:`workload_label`)."""
    text = "\n".join([table(run_rows(runs, implementation)), *missing_lines(runs)])
    goodput = goodput_rows(runs, implementation)
    if goodput:
        text += f"\n{GOODPUT_HEADING}\n" + table(goodput)
    return text


STEADY_STATE_NOTE = ("samples/s and p50 step ms are each run's steady state: its warm-up steps left out, its steps "
                     "and their batch waits counted (p50 step ms: the steps alone), its evaluations not, so they "
                     "can differ from the steps/s of the progress lines, which count every step since the run "
                     "started, warm-up and evaluations included")
"""The summary's footnote on why its rates are not the progress lines' (:func:`file_summary`)."""


def file_summary(doc: dict) -> str:
    """A results document's summary as ``goodbench run`` ends with it: the runs table (with why a
    figure is missing, and the goodput table), the time-to-target scores, the repeats' spread, and
    :data:`STEADY_STATE_NOTE`. ``goodbench run-own`` and ``goodbench show`` print it too; an own
    implementation's runs are named by its name (:func:`workload_label`)."""
    return "\n".join([run_summary(doc["runs"], own.implementation_name(doc)), *ceiling_lines(doc),
                      *score_lines(doc.get("summary") or {}),
                      *repeat_lines(doc["runs"]), STEADY_STATE_NOTE])


def load_warning(runs: list, implementation: str | None = None) -> str | None:
    """The warning ``goodbench run`` ends with where some runs were measured under load
    (:func:`suite.figures.load.runs_under_load`), as ``run-own`` and ``show`` end too, own code's
    runs named as its rows name them (``implementation``); None: none was."""
    loaded = load.runs_under_load(runs, implementation)
    return f"warning: {loaded}: such runs are flagged and left out of the site's comparisons" if loaded else None


def score_lines(summary: dict) -> list[str]:
    """One line per workload × scale scored over more than one seed: the score by the name of
    its estimator (olympic mean, or plain mean below three seeds), the 95% CI of the mean of
    the converged times (never below 0), validity."""
    lines = []
    for key, entry in summary.items():
        score = entry["tta"]
        if score and score["seeds"] > 1:
            ci = score["ci95_s"]
            value = score["olympic_mean_s"]
            lines.append(f"{key}: time to target, {tta.estimator(score)} "
                         + ("—" if value is None else f"{value:.2f} s")
                         + (f" (95% CI of the mean {ci[0]:.2f}–{ci[1]:.2f} s)" if ci else "")
                         + f" over {score['seeds']} seeds, {score['converged']} converged"
                         + ("" if score["valid"] else f" — INVALID: {score['reason']}"))
    return lines


def repeat_lines(runs: list[dict]) -> list[str]:
    """One line per workload × scale × seed run more than once (``--repeat``): how many complete
    repeats, their mean samples/s and spread (min–max and the coefficient of variation)."""
    groups: dict[tuple, list[float]] = {}
    for r in runs:
        if "repeat" in r:
            rates = groups.setdefault((r["workload"]["id"], r["scale"], r["seed"]), [])
            rate = results.samples_per_s(r) if r["status"] == "complete" else None
            if rate is not None:
                rates.append(rate)
    lines = []
    for (wid, scale, seed), rates in groups.items():
        if not rates:
            lines.append(f"{wid}@{scale} seed {seed}: no complete repeat")
            continue
        mean = statistics.fmean(rates)
        cv = statistics.stdev(rates) / mean if len(rates) > 1 else None  # the sample standard deviation
        lines.append(f"{wid}@{scale} seed {seed}: samples/s over {len(rates)} repeats: mean {mean:.4g}, "
                     f"min {min(rates):.4g}, max {max(rates):.4g}"
                     + (f", CV {100 * cv:.1f}%" if cv is not None else ""))
    return lines


NEAR_ZERO_GOODPUT = 1e-3  # below this a projected goodput is shown as "≈ 0"


def projection(measured, mtbf_hours: float, rows: list[dict]) -> str:
    """What a projection was measured from, then its table (``suite.figures.projection.table`` rows),
    and a note where failures come too often for any work to be kept (goodput ≈ 0)."""
    head = (f"step {measured.step_s:.4g} s, checkpoint {measured.checkpoint_s:.4g} s, restart "
            f"{measured.restart_s:.4g} s ({measured.restart_source}), steady efficiency "
            f"{measured.steady_efficiency:.4f}; per-GPU MTBF {mtbf_hours:g} h")
    text = head + "\n" + table(rows, float_format=lambda v: f"{v:.4g}")
    lost = [r for r in rows if r["failure_factor"] < NEAR_ZERO_GOODPUT]
    if lost:
        first = min(lost, key=lambda r: r["gpus"])
        text += (f"\ngoodput ≈ 0 from {first['gpus']:,} GPU{'' if first['gpus'] == 1 else 's'} on: "
                 f"the job fails every "
                 f"{first['mtbf_s']:.3g} s on average, too often for a restart "
                 f"({measured.restart_s:.4g} s) and a checkpoint interval to complete")
    return text


def peak_table(entries) -> str:
    """Entries of the peak table (``suite.figures.mfu.Peak``), one row per device and precision:
    the dense TFLOP/s, the board power (TDP), what was measured on such a device (the best share
    of the peak a dense GEMM reached, the idle power; "datasheet" where nothing was) and the
    datasheet the figures come from."""
    def measured(e, precision: str) -> str:
        share = (e.best_share or {}).get(precision)
        parts = ([f"GEMM {share:.3f} of peak"] if share is not None else []) + \
            ([f"idle {e.idle_w:g} W"] if e.idle_w is not None else [])
        return ", ".join(parts) or "datasheet"
    return table([{"device": e.name, "precision": precision, "dense TFLOP/s": tflops,
                   "TDP W": e.board_power_w, "measured": measured(e, precision), "source": e.source}
                  for e in entries for precision, tflops in e.tflops.items()])


def measured_line(entries) -> str:
    """Which entries hold figures measured on such a device, and what the others' bounds fall
    back to: the validator's bounds for an entry measured on no device are its datasheet's."""
    from suite.figures.mfu import IDLE_FLOOR_SHARE

    entries = list(entries)
    measured = [e.name for e in entries if e.best_share or e.idle_w is not None]
    datasheet = [e.name for e in entries if not (e.best_share or e.idle_w is not None)]
    head = f"measured on such a device: {', '.join(measured) if measured else 'none'}"
    if not datasheet:
        return head + "."
    others = datasheet[0] if len(datasheet) == 1 else f"every other entry ({len(datasheet)})"
    return (f"{head}; {others}: datasheet values only until measured — a measured ceiling is bounded "
            f"by the dense peak itself, and the least mean power is {IDLE_FLOOR_SHARE:.0%} of the board power.")
