"""``goodbench site``: render the results directory into a static, self-contained site.

Layout of the output folder (every name derived from results goes through :func:`safe_name`, that
is ``suite.store.safe_filename`` plus a hash): ``index.html``, ``compare.html``,
``workloads/<workload>.html`` (+ ``-p<N>.html`` pages and ``.csv``/``.json`` downloads per
table), ``systems/<system>.html``, ``runs/<run>.html``, ``raw/<file>.json`` (each valid results
file, byte for byte: a hard link where the filesystem allows, else a copy),
``raw/<run>-events.txt`` (a run's event log, control characters
escaped) and ``static/`` (CSS and JS). Charts are inline SVG from :mod:`suite.charts`.
Per-file work (validate, copy, run pages) is spread over processes for large result sets.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from importlib.resources import files
from pathlib import Path

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from suite import __version__, charts, leaderboard
from suite.charts import missing as _missing, num, pct
from suite.store import safe_filename
from suite.results import utc_now
from workloads import registry

PAGE_ROWS = 100  # rows per table page; further rows go to numbered pages
SCATTER_POINTS = 300  # at most this many points in a throughput-vs-energy chart
PARALLEL_FROM = 200  # files: below this, one process is faster than starting workers
PHASE_ORDER = ("data_load", "init", "compile_warmup", "train", "eval", "other")
RANK_ROWS = 256  # a run page lists at most this many ranks (rank 0 and the slowest); the raw JSON has all


# ---------------------------------------------------------------- templates and formatting
@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(files("goodbench_site").joinpath("templates"))),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = num
    env.filters["pct"] = charts.pct
    return env


def safe_name(text: str, key: str | None = None) -> str:
    """File and URL name for a string from a results file: ``safe_filename`` cut to 40, plus 8 hex of sha256."""
    return safe_filename(text, 40, key=text if key is None else key)


def _render(template: str, path: Path, **context) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    html = _environment().get_template(template).render(suite_version=__version__, **context)
    path.write_text(html, encoding="utf-8")


def run_slug(file: str, run_id: str) -> str:
    """Page name of one run (unique per file and run id)."""
    return safe_name(run_id, key=f"{file}/{run_id}")


def file_slug(file: str) -> str:
    """Name of the raw copy of one results file."""
    return safe_name(Path(file).stem, key=file)


# ---------------------------------------------------------------- per-file work
def _process(paths: list[str], out_dir: str, built_at: str):
    """Validate files, copy valid ones to raw/, write their run pages and event logs; return entries, runs,
    invalid files and (system name, interconnect text) pairs."""
    entries, runs, invalid, links = [], [], [], []
    out = Path(out_dir)
    for p in map(Path, paths):
        doc, problem = leaderboard.check_file(p)
        if problem:
            invalid.append((p.name, problem))
            continue
        _link_or_copy(p, out / "raw" / f"{file_slug(p.name)}.json")
        entries += leaderboard.rows(p.name, doc)
        runs += leaderboard.run_rows(p.name, doc)
        shared = doc_context(p.name, doc)
        if shared["interconnect"] is not None:
            links.append((doc["system"]["name"], shared["interconnect"]))
        for run in doc["runs"]:
            slug = run_slug(p.name, run["run_id"])
            log = event_log_text(p.name, run)
            if log is not None:
                (out / "raw" / f"{slug}-events.txt").write_text(log, encoding="utf-8")
            _render("run.html", out / "runs" / f"{slug}.html", root="../", built_at=built_at,
                    **run_context(p.name, doc, run, shared))
    return entries, runs, invalid, links


def _link_or_copy(src: Path, dest: Path) -> None:
    """``dest`` as a hard link to ``src`` (stored results files are never modified), else a byte copy."""
    dest.unlink(missing_ok=True)
    try:
        os.link(src, dest)
    except OSError:  # another filesystem, or links not allowed
        shutil.copyfile(src, dest)


# C0/C1 controls (newline and tab too: one event per line), and the invisible format characters
# that can reorder or hide text (bidi overrides, zero-width marks, separators, BOM); lone surrogates.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")


def _printable(text: str) -> str:
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def event_log_text(file: str, run: dict) -> str | None:
    """The run's event log as plain text: a comment line, then one ``:::MLLOG`` line per event; None without one.

    Characters that could break a line or disguise text are written as ``\\uXXXX``.
    """
    lines = run.get("event_log")
    if not isinstance(lines, list) or not lines:
        return None
    head = _printable(f"# event log of run {run['run_id']} in results file {file}: {len(lines)} events")
    return "\n".join([head, *(_printable(str(line)) for line in lines)]) + "\n"


@cache
def _pinned(workload_id: str, scale: str) -> Markup:
    return escape(json.dumps(registry.get(workload_id).pinned(scale), indent=1, sort_keys=True))


@cache
def _target(workload_id: str, scale: str):
    return registry.get(workload_id).spec(scale).target


def _flat(value, prefix: str = "") -> list[tuple[str, str]]:
    """Nested dicts as (dotted key, text) pairs; lists of scalars as comma-separated text."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _flat(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [pair for i, v in enumerate(value) for pair in _flat(v, f"{prefix}[{i}]")]
    if isinstance(value, list):
        return [(prefix, ", ".join(num(v, 6) if isinstance(v, float) else str(v) for v in value))]
    return [(prefix, num(value, 6) if isinstance(value, float) else "—" if value is None else str(value))]


def doc_context(file: str, doc: dict) -> dict:
    """The parts of a run page that every run of one document shares."""
    return {"doc": doc, "file": file, "raw_href": f"../raw/{file_slug(file)}.json",
            "system_href": f"../systems/{safe_name(doc['system']['name'])}.html",
            "interconnect": interconnect_text(doc["system"]),
            "settings": kv_table(_flat(doc["settings"])), "system": kv_table(_flat(doc["system"]))}


def interconnect_text(system: dict) -> str | None:
    """``system.interconnect.summary`` (nvswitch/nvlink/pcie), or "unknown" with its status; None when absent."""
    link = system.get("interconnect")
    if not isinstance(link, dict):
        return None
    if link.get("summary") is not None:
        return str(link["summary"])
    status = str(link.get("summary_status") or "")
    return status if status.startswith("unknown") else f"unknown ({status})" if status else "unknown"


def _text(value, digits: int = 4) -> str:
    """Any field value as text: numbers through :func:`num`, nothing as "—"."""
    return num(value, digits) if isinstance(value, (int, float)) and not isinstance(value, bool) else \
        "—" if value is None else str(value)


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def distributed_context(run: dict) -> dict | None:
    """What a run page shows of a distributed run: a summary table and per-rank rows; None otherwise.

    The exposed communication share shows its status where it is null. Beyond RANK_ROWS ranks,
    rank 0 and the slowest ranks (by mean steady-state step time) are listed, and the note says so.
    """
    section = run.get("distributed")
    if not isinstance(section, dict):
        return None
    comm = _dict(section.get("communication"))
    share = comm.get("exposed_share")
    spread = section.get("straggler_spread")
    pairs = [("world size (processes)", _text(section.get("world_size"))),
             ("nodes", _text(section.get("nnodes"))),
             ("processes per node", _text(section.get("local_world_size"))),
             ("backend", _text(section.get("backend"))), ("parallel mode", _text(section.get("parallel"))),
             ("global batch", _text(section.get("global_batch"))),
             ("per-rank batch", _text(section.get("per_rank_batch"))),
             ("micro-batch", _text(section.get("micro_batch"))),
             ("gradient accumulation steps", _text(section.get("grad_accumulation_steps"))),
             ("straggler spread (max / median of the ranks' mean step time)",
              f"{spread:.3f}×" if isinstance(spread, (int, float)) else "— (not measured)")]
    if not comm:
        pairs.append(("exposed communication share", "— (not recorded in this run)"))
    else:
        pairs += [("exposed communication share",
                   pct(share) if isinstance(share, (int, float)) else f"— ({_text(comm.get('status'))})"),
                  ("step with gradient sync (s)", _text(comm.get("step_s_with_sync"))),
                  ("step without gradient sync (s)", _text(comm.get("step_s_without_sync"))),
                  ("communication method", _text(comm.get("method"))),
                  ("communication status", _text(comm.get("status")))]
    ranks = [r for r in section.get("ranks") or [] if isinstance(r, dict)]
    shown, note = ranks, None
    if len(ranks) > RANK_ROWS:
        def mean(r):
            value = _dict(r.get("step_time_s")).get("mean")
            return value if isinstance(value, (int, float)) else -math.inf
        slowest = sorted(ranks[1:], key=mean, reverse=True)[:RANK_ROWS - 1]
        shown = sorted([ranks[0], *slowest], key=lambda r: r["rank"])  # an integer (schema)
        note = (f"{len(shown)} of {len(ranks)} ranks listed: rank 0 and the slowest by mean step time; "
                "the raw results JSON holds every rank.")
    return {"summary": kv_table(pairs), "ranks": [_rank_row(r) for r in shown], "n_ranks": len(ranks),
            "note": note}


RANK_COLUMNS = [("rank", "num"), ("node", "num"), ("host", "text"), ("device", "text"),
                ("mean step (s)", "num"), ("p50 step (s)", "num"), ("max step (s)", "num"),
                ("init (s)", "num"), ("eval (s)", "num"), ("energy to train (J)", "num")]


def _rank_row(rank: dict) -> list[dict]:
    """One rank's cells (text, and the number the sortable table sorts by)."""
    times, phases = _dict(rank.get("step_time_s")), _dict(rank.get("phases_s"))
    values = [rank.get("rank"), rank.get("node_rank"), rank.get("host"), rank.get("device"),
              times.get("mean"), times.get("p50"), times.get("max"), phases.get("init"), phases.get("eval"),
              rank.get("energy_to_train_j")]
    return [{"text": _text(v), "v": repr(float(v)) if kind == "num" and isinstance(v, (int, float))
             and not isinstance(v, bool) and not _missing(v) else ""}
            for v, (_, kind) in zip(values, RANK_COLUMNS)]


def kv_table(pairs: list[tuple[str, str]]) -> Markup:
    """A two-column key/value table, every key and value escaped."""
    rows = "".join(f'<tr><th scope="row">{escape(k)}</th><td>{escape(v)}</td></tr>' for k, v in pairs)
    return Markup(f'<table class="kv"><tbody>{rows}</tbody></table>')


def run_context(file: str, doc: dict, run: dict, shared: dict | None = None) -> dict:
    """Everything the run page shows, computed at build time (charts as escaped inline SVG).

    ``shared`` is :func:`doc_context` of the document, passed in to compute it once per file.
    """
    wid, scale = run["workload"]["id"], run["scale"]
    target = _target(wid, scale)
    curve = run["curve"]
    series_names = [k for k in dict.fromkeys(k for p in curve for k in p) if k not in ("step", "time_s")]
    metrics = {k: v for k, v in run["metrics"].items() if k != "throughput"}
    telemetry = run.get("telemetry") if isinstance(run.get("telemetry"), dict) else {}
    warnings = run.get("warnings", telemetry.get("warnings"))
    trace = telemetry.get("power_trace")
    trace = [(t[0], t[1]) for t in trace if isinstance(t, list) and len(t) == 2] if isinstance(trace, list) else []
    goodput = run.get("goodput") if isinstance(run.get("goodput"), dict) else {}
    badput = goodput.get("badput_s") if isinstance(goodput.get("badput_s"), dict) else None
    phases = run["phases_s"]
    events = run.get("event_log") if isinstance(run.get("event_log"), list) else []
    return {
        **(shared or doc_context(file, doc)),
        "title": f"{wid} {scale} seed {run['seed']}", "run": run,
        "distributed": distributed_context(run), "rank_headers": [{"label": k, "kind": v} for k, v in RANK_COLUMNS],
        "log_href": f"../raw/{run_slug(file, run['run_id'])}-events.txt" if events else None,
        "n_events": len(events),
        "workload_href": f"../workloads/{safe_name(wid)}.html",
        "pinned": _pinned(wid, scale),
        "metrics": kv_table(_flat(metrics)),
        "throughput": kv_table(_flat(run["metrics"]["throughput"])) if run["metrics"]["throughput"] else None,
        "warnings": [str(w) for w in warnings] if isinstance(warnings, list) else [],
        "loss_chart": charts.line_chart(
            {key: [(p["step"], p.get(key)) for p in curve] for key in series_names}, "step", "value",
            "evaluation points by step", hline=(f"target {target.describe()}", target.value) if target else None),
        "step_chart": charts.histogram(run["step_times_s"], "step time (s)",
                                       f"distribution of per-step times ({run['steps']} steps)"),
        "power_chart": charts.line_chart({"power (W)": trace}, "seconds since start", "W", "power trace")
        if trace else None,
        "badput": charts.stacked_bar({"productive": goodput.get("productive_s"), **badput},
                                     "goodput: productive time and badput by cause") if badput else None,
        "goodput": kv_table(_flat({k: v for k, v in goodput.items() if k != "badput_s"})) if goodput else None,
        "phases": charts.stacked_bar({k: phases.get(k) for k in
                                      list(PHASE_ORDER) + sorted(set(phases) - set(PHASE_ORDER))},
                                     "phases of the run"),
    }


def _map(pool: ProcessPoolExecutor | None, fn, *args) -> list:
    """``fn`` over zipped ``args``: in the worker processes when there is a pool, else here."""
    return list(pool.map(fn, *args) if pool is not None else map(fn, *args))


def _gather(paths: list[Path], out_dir: Path, pool: ProcessPoolExecutor | None, workers: int, built_at: str):
    names = [str(p) for p in paths]
    # many small chunks, so that both workers stay busy to the end
    size = math.ceil(len(names) / (workers * 16)) if pool is not None else max(1, len(names))
    chunks = [names[i:i + size] for i in range(0, len(names), size)] or [[]]
    parts = _map(pool, _process, chunks, [str(out_dir)] * len(chunks), [built_at] * len(chunks))
    entries = [e for part in parts for e in part[0]]
    runs = [r for part in parts for r in part[1]]
    invalid = [i for part in parts for i in part[2]]
    links: dict[str, set[str]] = {}
    for system, text in (pair for part in parts for pair in part[3]):
        links.setdefault(system, set()).add(text)
    return (leaderboard.with_scaling_efficiency(pd.DataFrame(entries, columns=leaderboard.ENTRY_COLUMNS)),
            pd.DataFrame(runs, columns=leaderboard.RUN_COLUMNS), invalid, links)


# ---------------------------------------------------------------- tables
COLUMNS = {  # key: (header, kind)
    "rank": ("#", "num"), "system": ("system", "text"), "accelerator": ("accelerator × count", "text"),
    "workload": ("workload", "text"), "scale": ("scale", "text"), "division": ("division", "text"),
    "score": ("score", "num"), "ci": ("95% CI (s)", "num"), "samples_per_s": ("samples/s", "num"), "tokens_per_s": ("tokens/s", "num"),
    "mfu": ("MFU", "num"), "energy_to_target_kwh": ("energy to target (kWh)", "num"),
    "energy_per_sample_j": ("J/sample", "num"), "energy_per_token_j": ("J/token", "num"),
    "goodput": ("goodput", "num"), "effective_goodput": ("effective goodput", "num"),
    "world_size": ("processes", "num"), "scaling_efficiency": ("scaling efficiency", "num"),
    "seeds": ("seeds", "num"), "date": ("date", "text"), "suite_version": ("suite", "text"),
    "run": ("run", "text"),
}
ENTRY_TABLE = ["rank", "system", "accelerator", "world_size", "score", "ci", "samples_per_s",
               "scaling_efficiency", "tokens_per_s", "mfu",
               "energy_to_target_kwh", "energy_per_sample_j", "energy_per_token_j", "goodput",
               "effective_goodput", "seeds", "date", "suite_version", "run"]
SYSTEM_TABLE = ["workload", "scale", "division", "accelerator", "score", "ci", "samples_per_s", "tokens_per_s",
                "mfu", "energy_to_target_kwh", "energy_per_sample_j", "goodput", "effective_goodput",
                "seeds", "date", "suite_version", "run"]


def _cell(key: str, row: dict, root: str, rank: int | None) -> dict:
    value, text, href = None, None, None
    if key == "rank":
        value = rank
    elif key == "system":
        text, href = row["system"], f"{root}systems/{safe_name(row['system'])}.html"
    elif key == "accelerator":
        text = f"{row['accelerator']} × {row['count']}"
    elif key == "workload":
        text, href = row["workload"], f"{root}workloads/{safe_name(row['workload'])}.html"
    elif key == "score":
        if row["kind"] == "tta":
            value = row["score_s"]
            if row["tta_valid"] is False:
                text = "did not converge"
            elif not _missing(value):
                text = f"{num(value)} s"
        else:
            value = row["samples_per_s"]
            text = None if _missing(value) else f"{num(value)} samples/s"
    elif key == "ci":
        value = row["ci95_low_s"]
        if not _missing(value):
            text = f"{num(value)}–{num(row['ci95_high_s'])}"
    elif key in ("mfu", "goodput", "effective_goodput", "scaling_efficiency"):
        value = row[key]
        text = None if _missing(value) else f"{100 * value:.1f}%"
    elif key == "date":
        text = row["created_at"][:10]
    elif key == "run":
        text, href = "run", f"{root}runs/{run_slug(row['file'], row['run_id'])}.html"
    elif COLUMNS[key][1] == "text":
        text = str(row[key])
    else:
        value = row[key]
    if _missing(value):
        value = None
    if text is None:
        text = num(value) if not isinstance(value, str) else value
    return {"text": text, "v": "" if value is None else repr(float(value)), "href": href}


def _table_pages(frame: pd.DataFrame, columns: list[str], table_id: str, caption: str, base: Path,
                 root: str, ranked: bool, page_href) -> list[dict]:
    """The table split into pages of PAGE_ROWS rows (cells preformatted), plus its CSV/JSON files."""
    records = frame.to_dict(orient="records")
    _downloads(frame, base)
    pages = []
    n_pages = max(1, math.ceil(len(records) / PAGE_ROWS))
    for page in range(n_pages):
        chunk = records[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]
        rows = [[_cell(c, r, root, page * PAGE_ROWS + i + 1 if ranked else None) for c in columns]
                for i, r in enumerate(chunk)]
        pages.append({
            "id": table_id, "caption": caption, "rows": rows, "page": page + 1, "n_pages": n_pages,
            "n_rows": len(records), "headers": [{"label": COLUMNS[c][0], "kind": COLUMNS[c][1]} for c in columns],
            "csv": f"{base.name}.csv", "json": f"{base.name}.json",
            "links": [{"n": k + 1, "href": page_href(k + 1)} for k in range(n_pages)] if n_pages > 1 else [],
        })
    return pages


def _downloads(frame: pd.DataFrame, base: Path) -> None:
    base.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(base.with_suffix(".csv"), index=False)
    frame.to_json(base.with_suffix(".json"), orient="records", indent=1)


# ---------------------------------------------------------------- pages
def _workload_pages(out: Path, workload_id: str, mine: pd.DataFrame, built: dict) -> dict:
    """The leaderboard pages of one workload from its entries ``mine``; returns its summary for the index."""
    workload = registry.get(workload_id)
    wslug = safe_name(workload.id)
    ordered = leaderboard.ranked(mine) if not mine.empty else mine
    rank_ok = leaderboard.rankable(ordered) if not ordered.empty else pd.Series(dtype=bool)
    ranked = ordered[rank_ok] if not ordered.empty else ordered
    groups = []  # (title, frame, ranked?, slug)
    for div in sorted(ranked["division"].unique()) if not ranked.empty else []:
        groups.append((f"Division: {div} — ranked", ranked[ranked["division"] == div], True, safe_name(div)))
    if not ordered.empty:
        unconverged = ordered[(ordered["scale"] == "full") & ~rank_ok]
        smoke = ordered[ordered["scale"] == "smoke"]
        if not unconverged.empty:
            groups.append(("Full scale, not ranked: too many seeds missed the target", unconverged, False,
                           "not-ranked"))
        if not smoke.empty:
            groups.append(("Smoke scale — not ranked (a quick check, not a benchmark)", smoke, False, "smoke"))
    tables = [_table_pages(frame, ENTRY_TABLE, f"t-{slug}", title, out / "workloads" / f"{wslug}-{slug}",
                           "../", ranked_flag,
                           lambda k, s=slug: f"{wslug}.html" if k == 1 else f"{wslug}-{s}-p{k}.html")
              for title, frame, ranked_flag, slug in groups]
    scatter = _scatter(ordered[ordered["scale"] == "full"] if not ordered.empty else ordered, "../")
    target = workload.spec("full").target
    info = {"id": workload.id, "version": workload.version, "task": workload.task, "kind": workload.kind,
            "target": target.describe() if target else "throughput workload", "href": f"workloads/{wslug}.html",
            "page1": f"{wslug}.html"}
    n_pages = max([len(t) for t in tables] or [1])
    for page in range(1, n_pages + 1):
        shown = [t[page - 1] for t in tables if len(t) >= page]
        if page == 1:
            _render("workload.html", out / "workloads" / f"{wslug}.html", root="../", title=workload.id, w=info,
                    tables=shown, scatter=scatter, page=1, **built)
        else:
            for t, (_, _, _, slug) in zip(tables, groups):
                if len(t) >= page:
                    _render("workload.html", out / "workloads" / f"{wslug}-{slug}-p{page}.html", root="../",
                            title=f"{workload.id} page {page}", w=info, tables=[t[page - 1]], scatter=None,
                            page=page, **built)
    leaders = [frame.iloc[0] for _, frame, is_ranked, _ in groups if is_ranked]
    info["leaders"] = [{"division": top["division"], "system": top["system"],
                        "score": _cell("score", top, "", 1)["text"],
                        "href": f"systems/{safe_name(top['system'])}.html"} for top in leaders]
    info["n_entries"] = len(mine)
    return info


def _scatter(frame: pd.DataFrame, root: str) -> dict:
    """Throughput vs energy per sample, with the Pareto front; or why there is no chart.

    Beyond SCATTER_POINTS results only the front and each system's fastest and most frugal
    result are drawn (the note says so; the CSV downloads hold every row).
    """
    if frame.empty:
        return {"chart": None, "note": "No full-scale results yet."}
    measured = frame.dropna(subset=["energy_per_sample_j", "samples_per_s"])
    if measured.empty:
        return {"chart": None, "note": "Energy was not measured for any result of this workload, "
                                       "so there is no throughput-vs-energy chart."}
    front = leaderboard.pareto_front(measured)
    shown = measured
    if len(measured) > SCATTER_POINTS:
        by_system = measured.groupby("system", sort=False)
        picks = [front.index, measured.loc[by_system["samples_per_s"].idxmax()].index,
                 measured.loc[by_system["energy_per_sample_j"].idxmin()].index]
        extremes = measured.loc[pd.Index(picks[1]).append(picks[2]).unique().difference(front.index)]
        extremes = extremes.sort_values("samples_per_s", ascending=False, kind="stable")
        shown = pd.concat([front, extremes]).head(SCATTER_POINTS)  # the front first, then the fastest
    points = [(r["energy_per_sample_j"], r["samples_per_s"],
               f"{r['system']} ({r['scale']}): {num(r['samples_per_s'])} samples/s, "
               f"{num(r['energy_per_sample_j'])} J/sample",
               f"{root}runs/{run_slug(r['file'], r['run_id'])}.html")
              for r in shown[["system", "scale", "samples_per_s", "energy_per_sample_j", "file", "run_id"]]
              .to_dict(orient="records")]
    notes = []
    if len(shown) < len(measured):
        notes.append(f"{len(shown)} of {len(measured)} results drawn: the Pareto front and each system's fastest "
                     "and most frugal result; the CSV downloads hold them all.")
    if len(frame) > len(measured):
        notes.append(f"{len(frame) - len(measured)} result(s) without an energy measurement are not plotted.")
    chart = charts.scatter(points, list(zip(front["energy_per_sample_j"], front["samples_per_s"])),
                           "energy per sample (J)", "samples/s",
                           "samples/s against energy per sample, full-scale results")
    return {"chart": chart, "note": " ".join(notes)}


def _version_key(version: str) -> tuple:
    """Sort key of a suite version: its numbers in order, then the text."""
    return tuple(int(n) for n in re.findall(r"\d+", version)), version


def history_charts(frame: pd.DataFrame) -> list:
    """One chart per workload of a system's throughput across suite versions (best per version and scale)."""
    best: dict[str, dict[str, dict[str, float]]] = {}  # workload -> scale -> version -> samples/s
    for wid, scale, version, value in zip(frame["workload"], frame["scale"], frame["suite_version"],
                                          frame["samples_per_s"]):
        if not _missing(value):
            per = best.setdefault(wid, {}).setdefault(f"{scale} scale", {})
            per[version] = max(value, per.get(version, value))
    versions = sorted(set(frame["suite_version"]), key=_version_key)
    where = {v: i for i, v in enumerate(versions)}
    note = "" if len(versions) > 1 else " (one suite version so far)"
    out = []
    for wid in sorted(best):
        series = {scale: sorted((where[v], y) for v, y in best[wid][scale].items()) for scale in sorted(best[wid])}
        out.append(charts.line_chart(series, "suite version", "samples/s",
                                     f"{wid}: best samples/s per suite version{note}", categories=versions))
    return out


def _system_pages(out: Path, entries: pd.DataFrame, built: dict, links: dict[str, set[str]]) -> list[dict]:
    """Pages of every system in ``entries`` (``links``: each system's interconnect summaries);
    returns each system's summary for the index."""
    systems = []
    for system, frame in entries.groupby("system", sort=True):
        sslug = safe_name(system)
        ordered = frame.sort_values(["workload", "scale", "created_at"], kind="stable")
        tables = _table_pages(ordered, SYSTEM_TABLE, "t-system", "All results", out / "systems" / sslug, "../",
                              False, lambda k, s=sslug: f"{s}.html" if k == 1 else f"{s}-p{k}.html")
        history = history_charts(frame)
        for page in tables:
            page_name = f"{sslug}.html" if page["page"] == 1 else f"{sslug}-p{page['page']}.html"
            _render("system.html", out / "systems" / page_name, root="../", title=system, system=system,
                    accelerators=sorted({f"{a} × {c}" for a, c in zip(frame["accelerator"], frame["count"])}),
                    interconnects=sorted(links.get(system, ())),
                    tables=[page], history=history if page["page"] == 1 else [], **built)
        systems.append({"name": system, "href": f"systems/{sslug}.html", "n": len(frame)})
    return systems


COMPARE_METRICS = [("score_s", "time to target (s)", "lower"), ("samples_per_s", "samples/s", "higher"),
                   ("tokens_per_s", "tokens/s", "higher"), ("mfu", "MFU", "higher"),
                   ("energy_per_sample_j", "J/sample", "lower"), ("goodput", "goodput", "higher")]


def compare_data(entries: pd.DataFrame) -> dict:
    """Each system's best entry per workload and scale, as plain JSON-able data for the compare page."""
    best = leaderboard.best_per_system(entries)
    values: dict[str, dict] = {}
    for r in best.to_dict(orient="records"):
        key = f"{r['workload']} ({r['scale']})"
        values.setdefault(r["system"], {})[key] = {
            m: (None if _missing(r[m]) or (m == "score_s" and r["tta_valid"] is False) else float(r[m]))
            for m, _, _ in COMPARE_METRICS}
    keys = sorted({k for per in values.values() for k in per})
    return {"systems": sorted(values), "keys": keys,
            "metrics": [{"id": m, "label": label, "better": better} for m, label, better in COMPARE_METRICS],
            "values": values}


def compare_rows(data: dict, a: str, b: str) -> list[dict]:
    """Rows of the comparison of systems ``a`` and ``b``: both values and the ratio a/b."""
    rows = []
    for key in data["keys"]:
        va, vb = data["values"].get(a, {}).get(key), data["values"].get(b, {}).get(key)
        if not va and not vb:
            continue
        for m in data["metrics"]:
            x, y = (va or {}).get(m["id"]), (vb or {}).get(m["id"])
            if x is None and y is None:
                continue
            ratio = x / y if x is not None and y else None
            rows.append({"key": key, "metric": m["label"], "a": num(x), "b": num(y),
                         "ratio": "—" if ratio is None else f"{ratio:.3g}×", "better": m["better"]})
    return rows


def _compare_page(out: Path, entries: pd.DataFrame, built: dict) -> None:
    data = compare_data(entries)
    a, b = (data["systems"] + ["", ""])[:2]
    best = leaderboard.best_per_system(entries)
    _downloads(best, out / "compare")
    _render("compare.html", out / "compare.html", root="", title="compare systems", data=data, a=a, b=b,
            rows=compare_rows(data, a, b) if a and b else [], **built)


# ---------------------------------------------------------------- build
def build(results_dir: str | Path, out_dir: str | Path, workers: int | None = None) -> Path:
    """Render ``results_dir`` into ``out_dir``; returns the path of ``index.html``."""
    out = Path(out_dir)
    for sub in ("raw", "runs", "workloads", "systems", "static"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    paths = sorted(p for p in Path(results_dir).glob("*.json") if not p.name.startswith("."))
    built_at = utc_now()
    workers = workers or os.cpu_count() or 1
    parallel = len(paths) >= PARALLEL_FROM and workers > 1
    with ProcessPoolExecutor(workers) if parallel else contextlib.nullcontext() as pool:
        entries, runs, invalid, links = _gather(paths, out, pool, workers, built_at)
        built = {"built_at": built_at, "n_results": int(entries["file"].nunique()), "n_runs": len(runs)}
        ids = list(registry.WORKLOADS)
        workloads = _map(pool, _workload_pages, [out] * len(ids), ids,
                         [entries[entries["workload"] == w] for w in ids], [built] * len(ids))
        names = sorted(entries["system"].unique())
        parts = [names[i::workers * 2] for i in range(workers * 2)] if pool is not None else [names]
        groups = [entries[entries["system"].isin(part)] for part in parts if part]
        systems = sorted((s for found in _map(pool, _system_pages, [out] * len(groups), groups,
                                              [built] * len(groups), [links] * len(groups))
                          for s in found), key=lambda s: s["name"])
    _compare_page(out, entries, built)
    _downloads(runs, out / "runs")
    _render("index.html", out / "index.html", root="", title="leaderboard", workloads=workloads,
            systems=systems, invalid=invalid, **built)
    for asset in files("goodbench_site").joinpath("static").iterdir():
        if asset.is_file():
            shutil.copyfile(str(asset), out / "static" / asset.name)
    return out / "index.html"

