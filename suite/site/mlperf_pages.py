"""The "MLPerf Training (imported)" pages: the documents of ``goodbench import mlperf`` as a
history, ranked only among themselves.

- ``mlperf.html``: what is there (rounds, benchmarks, accelerators), the latest round's best per
  benchmark, a round × benchmark matrix and the accelerators;
- ``mlperf/<round>-<benchmark>.html``: one round's results of one benchmark, ranked per
  division, with the time splits, goodput bars and energy;
- ``mlperf/history-<benchmark>.html``: the best closed-division score per round for each system
  size class, as a chart and a table naming the accelerator at every point;
- ``mlperf/acc-<family>.html``: one accelerator family across submitters, system sizes and
  rounds: score, scaling, init and eval shares, goodput, energy.

Every page says that its figures are derived from published MLPerf Training results and are not
MLPerf results. The official score is MLCommons' (recomputed as result_summarizer computes it);
the time splits and goodput bars are goodbench's reading of the submitters' event logs.
Imported documents never enter goodbench's workload leaderboards, and goodbench results never
enter these tables.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape

from suite.cost import prices
from suite.mlperf import division, documents, ingest
from suite.mlperf.targets import target_text
from suite.record.text import safe
from suite.site import cost_charts, mlperf_charts, mlperf_model
from suite.site.formatting import num, pct, seconds, usd
from suite.site.mlperf_model import (
    Row,
    add_costs,
    add_scaling,
    cheapest_to_target,
    history,
    history_rows,
    mark_carried,
    rank_rows,
    round_key,
    row,
)
from suite.site.names import safe_name
from suite.site.render import render
from suite.site.tables import downloads

PAGE = "mlperf.html"
FOLDER = "mlperf"
PROGRESS = "writing the imported MLPerf Training pages"  # what the site build says as it starts them
DERIVED = "derived from MLPerf Training results, not an MLPerf result"
# bar segments in order, with the site's palette classes (suite/site/static/style.css)
SEGMENTS = (("init", "p1"), ("eval", "p4"), ("train", "p3"), ("other", "p5"))
BAR_W, BAR_H, GAP = 100, 7, 2


def goodput_bars(runs: list[dict], at_round: bool = False) -> Markup:
    """One stacked bar per run (init / eval / train / other, each run's own wall time as the
    full width), as inline SVG: a path per bucket and a hit area per run with its figures as a
    tooltip; an unmeasured bucket is left out of the bar and said so in the tooltip, never
    drawn as zero. ``at_round``: the row is scored as its round's checker scored it, and a run
    that checker counted is not struck through."""
    shown = [(r, g) for r in runs if (g := ingest.goodput(r))["wall_s"]]
    if not shown:
        return Markup('<span class="empty">not measured</span>')
    height = len(shown) * (BAR_H + GAP)
    paths: dict[str, list[str]] = {name: [] for name, _ in SEGMENTS}
    hits, struck = [], []
    for i, (run, good) in enumerate(shown):
        wall = good["wall_s"]
        y, x = i * (BAR_H + GAP), 0.0
        words = []
        for name, _ in SEGMENTS:
            value = good["buckets"][name]
            if value is None:
                words.append(f"{name} not measured")
                continue
            w = BAR_W * max(0.0, value) / wall
            paths[name].append(f"M{x:.1f} {y}h{w:.1f}v{BAR_H}h{-w:.1f}z")
            words.append(f"{name} {seconds(value)}")
            x += w
        state = "" if run.get("counted") else (
            f"; counted by its round's checker, not today's: {(run.get('why') or '')[:70]}" if at_round and run.get("at_round")
            else f"; not counted: {(run.get('why') or run.get('status') or '')[:70]}")
        title = f"{run['file']}: {', '.join(words)}; goodput {pct(good['goodput'])}{state}"
        hits.append(f'<rect class="hit" y="{y}" width="{BAR_W}" height="{BAR_H}"><title>{escape(title)}</title></rect>')
        if not run.get("counted") and not (at_round and run.get("at_round")):
            struck.append(f"M0 {y + BAR_H / 2}h{BAR_W}")
    body = [f'<path class="seg {css}" d="{"".join(paths[name])}"/>' for name, css in SEGMENTS if paths[name]]
    if struck:
        body.append(f'<path class="dropped" d="{"".join(struck)}"/>')
    return Markup(f'<svg class="gp-bars" viewBox="0 0 {BAR_W} {height}" width="{BAR_W}" height="{height}" '
                  f'role="img" aria-label="goodput per run">{"".join(body)}{"".join(hits)}</svg>')


# ---------------------------------------------------------------- names of pages
def round_page(rnd: str, benchmark: str) -> str:
    return f"{safe_name(f'{rnd}-{benchmark}')}.html"


def history_page(benchmark: str, available_only: bool = False) -> str:
    return f"history-{safe_name(benchmark)}{'-available' if available_only else ''}.html"


def accelerator_page(family: str) -> str:
    return f"acc-{safe_name(family)}.html"


# ---------------------------------------------------------------- cells
def cell(text, v: float | None = None, href: str | None = None, sub: str | None = None,
         title: str | None = None, html: Markup | None = None, cls: str = "") -> dict:
    """A table cell: its text (or ``html``), the number it sorts by, a link, a small second line
    and a tooltip."""
    return {"text": "—" if text is None else str(text), "v": "" if v is None else repr(float(v)), "href": href,
            "sub": sub, "title": title, "html": html, "cls": cls}


def _score(r: Row, href: str | None = None) -> dict:
    """The official score's cell, marked where it is not a plain new result of its round."""
    found = _plain_score(r, href)
    if r.carried_from:  # the same runs were published in an earlier round
        found["sub"] = " · ".join(filter(None, (found["sub"], f"carried over from {r.carried_from}")))
        found["title"] = "; ".join(filter(None, (found["title"], f"its runs are {r.carried_from}'s, submitted again: "
                                                                 "not a new result of this round")))
    if r.unverified:  # not checked against MLCommons' published files: said wherever the score is
        found["sub"] = " · ".join(filter(None, (found["sub"], "source not verified")))
        found["title"] = "; ".join(filter(None, (found["title"], f"source not verified: {r.unverified}")))
    elif r.checked:  # checked, but by the importer, and only its word is stored
        found["title"] = "; ".join(filter(None, (found["title"], CHECKED_AT_IMPORT.format(commit=r.checked[:12]))))
    return found


CHECKED = "sources checked by the importer when imported (self-reported)"  # every page's line, by the label
CHECKED_AT_IMPORT = "source checked against MLCommons' commit {commit} at import: the importer's word (self-reported)"
"""A checked score's tooltip, on every row: short, as an accelerator's page holds hundreds (its
page line's :data:`CHECKED_TITLE` says the whole)."""
CHECKED_TITLE = ("A document says its source is verified where its importer, when it imported the round, found every "
                 "file it read (result logs, system description, scaling.json, power logs) to be the one MLCommons' "
                 "pinned commit of the round lists, by git blob id. The logs are not stored here, so this site cannot "
                 "check that again: a stored document is the importer's word (self-reported). What the site checks "
                 "on every load is that a document agrees with itself (its score with its runs, its commit with the "
                 "round's pin); a hand edit that changes both consistently is not caught. Energy imported before the "
                 "power logs were checked says so.")
POWER_UNCHECKED = "its power logs were not checked against MLCommons' commit (imported before goodbench checked them)"


def _plain_score(r: Row, href: str | None) -> dict:
    if r.at_round:
        return cell(f"{num(r.minutes)}†", r.minutes, href=href, sub="by its round's checker", cls="score",
                    title=f"today's checker: {r.doc['score']['status']}; a check changed after the round: {r.later}")
    if r.minutes is None:
        if r.absent:
            return cell("no score‡", title=r.status, cls="empty", href=href, sub="logs absent from the copy")
        if r.later:
            return cell("no score†", title=f"{r.status}; a check changed after the round: {r.later}", cls="empty", href=href,
                        sub="check changed after the round")
        return cell("no score", title=r.status, cls="empty", href=href)
    rcp = f"RCP\u00a0{r.rcp:.4f}" if r.rcp not in (None, 1.0) else None
    if not r.complete:  # runs missing: scored as result_summarizer scores it, not a full submission
        return cell(f"{num(r.minutes)}*", r.minutes, href=href, sub=rcp, title=r.status, cls="score")
    return cell(num(r.minutes), r.minutes, href=href, sub=rcp, cls="score")


RCP_WORDS = ("RCP: MLCommons' Reference Convergence Points, the epochs its reference runs took to reach the "
             "target; a score whose runs reached it in fewer is multiplied by the factor shown (RCP 1.0039: 0.39% "
             "added), as the official score is")
MAYBE_NOT_BEST = ("‡ may not be the best: the copy of the round imported lacked the logs of a closed-division "
                  "result of that benchmark, so its score, perhaps a better one, is not known here")


def score_legend(rows: list[list[dict]]) -> list[str]:
    """The words a table's score cells use, in full, for a line under it that a phone shows too (a
    tooltip it cannot): what RCP is where a score is scaled by it, what ‡ says where one is marked."""
    subs = " ".join(str(c.get("sub") or "") for row in rows for c in row)
    return [words for mark, words in (("RCP", RCP_WORDS), ("‡ may not be the best", MAYBE_NOT_BEST)) if mark in subs]


def _share(value: float | None, title: str | None = None) -> dict:
    return cell(pct(value), value, title=title)


def _eval(r: Row) -> dict:
    if r.eval_s is not None:
        return cell(num(r.eval_s), r.eval_s)
    counted = [run for run in r.doc["runs"] if run.get("counted")]
    code = (counted[0].get("unmeasured") or {}).get("eval_s") if counted else None
    return cell("not measured", title=ingest.UNMEASURED.get(code or "", "no counted run"), cls="empty")


def _energy(r: Row) -> dict:
    electricity = r.electricity
    if r.energy_kwh is not None:
        if r.energy_cost_usd is not None and electricity is not None:
            found = cell(num(r.energy_kwh), r.energy_kwh, sub=f"{usd(r.energy_cost_usd)} of electricity",
                        title=f"{r.energy_status or 'measured'}; at {usd(electricity.usd_per_kwh)} per kWh: "
                              f"{electricity.words()}")
        else:
            found = cell(num(r.energy_kwh), r.energy_kwh, title=r.energy_status)
        if r.power_unchecked:
            found["sub"] = " · ".join(filter(None, (found["sub"], "power logs not verified")))
            found["title"] = "; ".join(filter(None, (found["title"], POWER_UNCHECKED)))
        return found
    return cell("—", title=r.energy_status or "the submission has no power logs")


SCORE_TIME_ONLY = "score time only (MLPerf excludes init)"
COST_LABEL = "cost (USD), score time only"  # the tooltip and the note under the table: MLPerf excludes init
COST_TITLE = ("cost to train: accelerator-hours (accelerators × score) × the on-demand list price per "
              "accelerator-hour of the accelerator's class (the price table's page): a list price of its date (an "
              "undated page's: the day it was read), not what the submitter paid. The score's time only: MLPerf's score leaves out initialization (its "
              "rule), as goodbench's own cost to target does (both on MLPerf's clock); \"with init\" under it "
              "adds the median run's initialization (the cost ÷ (1 − init share))")
COST_NOTE = ("Cost (USD) prices the score's time only: MLPerf's score leaves out initialization (MLPerf's rule), "
             "as goodbench's own cost to target does (both on MLPerf's clock). On a large system initialization "
             "can be most of a run's wall time, so the figure \"with init\" under a cost (the cost ÷ (1 − the "
             "median run's init share), approximate: the score is an olympic mean × RCP factor) is nearer what "
             "running it costs.")


def _cost(r: Row, root: str) -> dict:
    """Cost to train with the accelerator-hours under it; "no price" where the class has none."""
    if r.accelerator_hours is None:
        return cell("—", title="no accelerator-hours: no score, or no count of accelerators")
    hours_text = f"{num(r.accelerator_hours)} h"  # accelerator-hours: the header says so
    if r.price is None or r.cost_usd is None:
        return cell("no price", href=f"{root}prices.html", sub=hours_text, cls="empty",
                    title=f"{r.family}: no price in the price table, never a guess")
    with_init = _with_init(r)
    return cell(usd(r.cost_usd), r.cost_usd, href=f"{root}prices.html",
                sub=" · ".join(filter(None, (hours_text, with_init))), cls="cost",
                title=f"{r.price.cls.name} at {usd(r.price.usd_per_hour)} per accelerator-hour, a list price "
                      f"(its date and source: the prices page); {SCORE_TIME_ONLY}"
                      + (f", init {pct(r.init_share)} of the median run's wall time" if with_init else ""))


def _with_init(r: Row) -> str:
    """The "≈ $X with init" under a cost (:attr:`Row.cost_with_init_usd`), or "" where there is none."""
    return "" if r.cost_with_init_usd is None else f"≈{usd(r.cost_with_init_usd)} with init"


def _accelerator(r: Row, root: str) -> dict:
    nodes = f"{r.nodes} node{'' if r.nodes == 1 else 's'}" if r.nodes is not None else None
    return cell(f"{r.accelerator}\u00a0×\u00a0{r.count if r.count is not None else '?'}", r.count,
                href=f"{root}{FOLDER}/{accelerator_page(r.family)}", sub=nodes, title=f"family: {r.family}",
                cls="wrap")


def _header(label: str, kind: str = "text", title: str | None = None) -> dict:
    return {"label": label, "kind": kind, "title": title}


ROUND_HEADERS = [_header("#", "num", "rank within the division"), _header("score (min)", "num", "official score"),
                 _header("division"), _header("category", title="availability: available, preview or research"),
                 _header("submitter"), _header("system", title="framework below"),
                 _header("accelerator × count", "num"),
                 _header(COST_LABEL, "num", COST_TITLE),
                 _header("runs", title="runs MLPerf counts / runs in the submission"),
                 _header("init (s)", "num", "median over counted runs, outside the score"),
                 _header("eval (s)", "num", "median over counted runs, inside the score"),
                 _header("goodput", "num", "median over counted runs: training time / wall time"),
                 _header("energy (kWh)", "num", "result_summarizer's power score, where measured"),
                 _header("per run: init / eval / train / other"), _header("source")]


def _round_cells(r: Row) -> list[dict]:
    return [cell(r.rank if r.rank is not None else "—", r.rank), _score(r), _division(r), _category(r),
            cell(r.submitter, cls="wrap"),  # a long name ("Hewlett Packard Enterprise") wraps
            cell(r.system, href=r.system_url, sub=r.framework, cls="wrap"), _accelerator(r, "../"), _cost(r, "../"),
            cell(f"{r.counted}/{r.runs}"), cell(num(r.init_s), r.init_s), _eval(r),
            _share(r.goodput), _energy(r), cell("", html=goodput_bars(r.doc["runs"], r.at_round)),
            _logs(r)]


def _logs(r: Row) -> dict:
    """The link to the result's folder on GitHub; where its document's repository is not an
    address there (:func:`suite.record.text.github_address`), that text, never a link."""
    if r.source is not None:
        return cell("logs", href=r.source)
    return cell(safe(r.doc["source"]["repository"], 80), title="not linked: not an address on GitHub", cls="wrap")


ACC_HEADERS = [_header("round"), _header("benchmark"), _header("submitter"), _header("system", title="framework below"),
               _header("accelerators", "num", "accelerators in the system (nodes below)"),
               _header("score (min)", "num", "official score"),
               _header(COST_LABEL, "num", COST_TITLE),
               _header("scaling", "num", "accelerator-minutes of the smallest system of this accelerator in the same "
                                         "round, benchmark and division, over this one's"),
               _header("init share", "num", "initialization / (initialization + time to train), medians"),
               _header("eval share", "num", "evaluation / time to train, medians"),
               _header("goodput", "num", "median over counted runs"), _header("energy (kWh)", "num"),
               _header("division"), _header("category", title="availability: available, preview or research")]


def _acc_cells(r: Row) -> list[dict]:
    nodes = f"{r.nodes} node{'' if r.nodes == 1 else 's'}" if r.nodes is not None else None
    page = round_page(r.round, r.benchmark)
    return [cell(r.round, round_key(r.round)[0] * 100 + round_key(r.round)[1]),
            cell(r.benchmark, href=page), cell(r.submitter),
            cell(r.system, href=r.system_url, sub=r.framework, cls="wrap", title=f"model: {r.accelerator}"),
            cell(r.count if r.count is not None else "—", r.count, sub=nodes), _score(r, href=page), _cost(r, "../"),
            _share(r.scaling), _share(r.init_share), _share(r.eval_share), _share(r.goodput),
            _energy(r),
            _division(r), _category(r)]


def _division(r: Row) -> dict:
    """The division, with where it was read under it when that is not the system description's
    ``division`` (:mod:`suite.mlperf.division`)."""
    source = r.doc.get("division_source")
    return cell(r.division, sub=division.SHORT.get(source, source) if source else None,
                title=f"read from the {division.source_words(r.doc)}: {r.doc.get('division') or 'none given'}")


def _category(r: Row) -> dict:
    """The availability category; a preview or research system's stands out."""
    return cell(r.category, title=f"as the submission describes it: {r.doc.get('availability') or '—'}",
                cls="category-other" if r.preview_or_research else "")


def _table(table_id: str, headers: list[dict], rows: list[list[dict]], caption: str | None = None,
           download: tuple[pd.DataFrame, Path] | None = None) -> dict:
    """A table for the ``mtable`` macro; ``download``: (its rows' exact values, the path without
    suffix) written as CSV and JSON beside the page, as goodbench's own tables are."""
    found = {"id": table_id, "headers": headers, "rows": rows, "caption": caption, "n": len(rows), "csv": None}
    if download is not None:
        frame, base = download
        downloads(frame, base)
        found.update(csv=f"{base.name}.csv", json=f"{base.name}.json")
    return found


def records(rows: list[Row]) -> pd.DataFrame:
    """``rows`` as the downloads hold them: one line per imported document, exact values, no
    formatting (minutes, seconds, shares as fractions, kWh)."""
    return pd.DataFrame([{
        "round": r.round, "benchmark": r.benchmark, "division": r.division, "category": r.category,
        "availability": r.doc.get("availability"), "submitter": r.submitter, "system": r.system,
        "accelerator": r.accelerator, "accelerator_family": r.family, "accelerators": r.count, "nodes": r.nodes,
        "framework": r.framework, "score_minutes": r.minutes, "score_status": r.status,
        "scored_at_round_only": r.at_round, "complete": r.complete, "rank_in_division": r.rank,
        "carried_over_from": r.carried_from, "rcp_scaling_factor": r.rcp, "runs": r.runs, "runs_counted": r.counted,
        "init_s_median": r.init_s, "eval_s_median": r.eval_s, "time_to_train_s_median": r.time_s,
        "goodput_median": r.goodput, "scaling_efficiency": r.scaling, "energy_kwh": r.energy_kwh,
        "quality_target": r.target, "quality_target_text": target_text(r.target, r.benchmark),
        "logs": r.source, "system_description": r.system_url, "source_not_verified": r.unverified,
        "source_checked_at_import_self_reported": r.checked, "power_logs_not_verified": r.power_unchecked,
        "accelerator_hours": r.accelerator_hours,
        "price_per_accelerator_hour_usd": r.price.usd_per_hour if r.price else None,
        "cost_usd": r.cost_usd,
        "cost_with_init_usd_estimate": r.cost_with_init_usd,
        "price_source": f"{r.price.cls.name}: {r.price.source}" if r.price else "no price",
        "price_date": r.price.date if r.price else None,
        "energy_cost_usd": r.energy_cost_usd,
    } for r in rows], columns=RECORD_COLUMNS).astype({c: "Int64" for c in ("accelerators", "nodes", "rank_in_division")})


RECORD_COLUMNS = ["round", "benchmark", "division", "category", "availability", "submitter", "system", "accelerator",
                  "accelerator_family", "accelerators", "nodes", "framework", "score_minutes", "score_status",
                  "scored_at_round_only", "complete", "rank_in_division", "carried_over_from", "rcp_scaling_factor",
                  "runs", "runs_counted", "init_s_median", "eval_s_median", "time_to_train_s_median",
                  "goodput_median", "scaling_efficiency", "energy_kwh", "quality_target", "quality_target_text",
                  "logs", "system_description", "source_not_verified", "source_checked_at_import_self_reported",
                  "power_logs_not_verified", "accelerator_hours", "price_per_accelerator_hour_usd", "cost_usd",
                  "cost_with_init_usd_estimate", "price_source", "price_date", "energy_cost_usd"]


# ---------------------------------------------------------------- the pages
def _round_pages(out: Path, by_rb: dict[tuple[str, str], list[Row]], common: dict) -> None:
    rounds_of: dict[str, list[str]] = defaultdict(list)
    for rnd, bench in by_rb:
        rounds_of[bench].append(rnd)
    for (rnd, bench), rows in by_rb.items():
        others = sorted(rounds_of[bench], key=round_key, reverse=True)
        render("mlperf_round.html", out / FOLDER / round_page(rnd, bench), root="../",
               title=f"MLPerf Training {rnd} · {bench}", round=rnd, benchmark=bench,
               target=target_text(rows[0].target, bench), history=history_page(bench),
               others=[{"round": o, "href": round_page(o, bench), "here": o == rnd} for o in others],
               table=_table("results", ROUND_HEADERS, [_round_cells(r) for r in rows],
                            download=(records(rows), out / FOLDER / Path(round_page(rnd, bench)).stem)),
               later=_later(rows), absent=_absent(rows), cheapest=_cheapest(rows), segments=[name for name, _ in SEGMENTS], classes=dict(SEGMENTS), **common)


CHEAPEST_HEADERS = [_header("score (min)", "num", "official score"), _header(COST_LABEL, "num", COST_TITLE),
                    _header("submitter"), _header("system"), _header("accelerator × count", "num"),
                    _header("price of", title="the accelerator class whose list price the cost uses")]


def score_counts(rows: list[Row]) -> dict[str, int]:
    """How the index's opening line counts results by their score: ``scored`` (an official score),
    ``at_round_n`` (scored as their round's own checker did, †), ``later_n`` (failed by checks
    changed after their round, †), ``absent_n`` (result logs absent from the copy imported, ‡) and
    ``dropped_n`` (no score otherwise: too few of their runs count)."""
    return {"scored": sum(r.minutes is not None for r in rows), "later_n": sum(bool(r.later) for r in rows),
            "at_round_n": sum(r.at_round for r in rows), "absent_n": sum(bool(r.absent) for r in rows),
            "dropped_n": sum(r.minutes is None and not r.later and not r.absent for r in rows)}


def _cheapest(rows: list[Row]) -> dict | None:
    """The round × benchmark's cheapest-to-target table: the cost–time Pareto front of its
    priced closed-division results, and whether they share one price (comparable) or not."""
    front = cheapest_to_target(rows)
    if not front:
        return None
    lines = [[_score(r), _cost(r, "../"), cell(r.submitter), cell(r.system, cls="wrap"), _accelerator(r, "../"),
              cell(r.price.cls.name if r.price else "—")] for r in front]
    classes_used = sorted({r.price.cls.name for r in front if r.price})
    chart = cost_charts.pareto(mlperf_model.priced_new(rows), front,
                               f"{front[0].round} · {front[0].benchmark}: cost to train against time")
    closed = [r for r in rows if r.complete and r.division == "closed"]
    new = [r for r in closed if r.carried_of is None]
    return {"table": _table("cheapest", CHEAPEST_HEADERS, lines), "classes": classes_used, "chart": chart,
            "priced": sum(r.cost_usd is not None for r in new), "closed": len(new), "carried": len(closed) - len(new)}


def _absent(rows: list[Row]) -> dict | None:
    """How many of ``rows`` have no score because the copy imported lacked their logs."""
    absent = [r for r in rows if r.absent]
    return {"n": len(absent), "of": len(rows), "logs": sum(r.absent for r in absent)} if absent else None


def _later(rows: list[Row]) -> dict | None:
    """How many of ``rows`` have no score only by a check changed after their round, and why."""
    later = [r for r in rows if r.later]
    if not later:
        return None
    checker = (later[0].doc.get("importer") or {}).get("mlperf_logging")
    return {"n": len(later), "of": len(rows), "why": later[0].later, "checker": checker,
            "scored": sum(r.at_round for r in later)}


def _history_pages(out: Path, by_bench: dict[str, list[Row]], common: dict) -> list[dict]:
    """Each benchmark's history page twice: every availability category (preview and research
    points marked), and available systems only."""
    found = []
    every = [r for rows in by_bench.values() for r in rows]
    for bench, own in by_bench.items():
        rows, renamed = history_rows(bench, every)
        for available_only in (False, True):
            rounds = _history_page(out, bench, rows, renamed, available_only, common)
        latest = max(rounds, key=round_key)
        found.append({"benchmark": bench, "href": f"{FOLDER}/{history_page(bench)}", "first": min(rounds, key=round_key),
                      "last": latest, "n": len(own)})
    return sorted(found, key=lambda h: (round_key(h["last"]), h["n"]), reverse=True)


def _history_page(out: Path, bench: str, rows: list[Row], renamed: list[str], available_only: bool,
                  common: dict) -> list[str]:
    """One history page of ``bench``; returns its rounds, oldest first."""
    categories = ("available",) if available_only else None
    rounds, sizes, best = history(rows, categories)
    targets = {r.round: r.target for r in rows}
    breaks = {b for a, b in zip(rounds, rounds[1:]) if targets.get(a) != targets.get(b)
              and targets.get(a) is not None and targets.get(b) is not None}
    which = "available systems" if available_only else "closed division"
    chart = mlperf_charts.history_chart(rounds, sizes, best, f"{bench}: best official score per round, {which}",
                                        bench, breaks)
    cost_chart = cost_charts.history(rounds, {rnd: _priced_charted(rows, rnd, categories) for rnd in rounds},
                                     f"{bench}: cost to train per round, {which}", breaks)
    table_rows = []
    for rnd in reversed(rounds):
        named = bench if any(r.round == rnd and r.benchmark == bench for r in rows) else \
            next(r.benchmark for r in rows if r.round == rnd)
        line = [cell(rnd if named == bench else f"{rnd} ({named})", round_key(rnd)[0] * 100 + round_key(rnd)[1],
                     href=round_page(rnd, named)),
                cell(target_text(targets.get(rnd), named), title=targets.get(rnd)),
                cell(sum(1 for r in rows if r.round == rnd), sum(1 for r in rows if r.round == rnd))]
        for size in sizes:
            r = best.get((rnd, size))
            line.append(cell("—") if r is None else cell(
                num(r.minutes) + ("†" if r.at_round else ""), r.minutes, href=round_page(rnd, r.benchmark),
                sub=f"{r.family} × {r.count if r.count is not None else '?'} · {r.submitter}"
                    + (f" · {r.category}" if r.preview_or_research else "")
                    + (" · source not verified" if r.unverified else ""),  # as wherever the score is (trial V)
                title=f"{r.system} ({r.accelerator}; {r.category})"
                      + (f"; source not verified: {r.unverified}" if r.unverified else ""),
                cls="category-other" if r.preview_or_research else ""))
        line.append(_cheapest_cell(rows, rnd, categories))
        table_rows.append(line)
    headers = [_header("round"), _header("quality target", title="MLCommons' closed-division rule"),
               _header("results", "num", "systems submitted, all divisions")] + [
        _header(f"{size} accelerators" if size[0].isdigit() or size.startswith("over") else size, "num",
                "best closed-division score (minutes) new in the round: a result carried over from an earlier "
                "round is that round's") for size in sizes] + [
        _header("cheapest (USD)", "num", "the round's cheapest charted result to the target, any size, cheapest by "
                "the score's time only (MLPerf's score excludes init; with init, under it, another may be "
                "cheapest): " + COST_TITLE)]
    closed = [r for r in rows if r.division == "closed"]
    render("mlperf_history.html", out / FOLDER / history_page(bench, available_only), root="../",
           title=f"MLPerf Training history · {bench}" + (" · available systems" if available_only else ""),
           benchmark=bench, chart=chart, cost_chart=cost_chart, available_only=available_only,
           views=[{"label": "every category", "href": history_page(bench), "here": not available_only},
                  {"label": "available systems only", "href": history_page(bench, True), "here": available_only}],
           not_available=sum(p.preview_or_research for p in best.values()),
           carried=sum(mlperf_model.charted(r, categories) and mlperf_model.carried_out(r, categories) for r in closed),
           left_out=sum(r.preview_or_research for r in closed) if available_only else 0,
           changed=sorted(breaks, key=round_key), renamed=renamed,
           later=[{"round": rnd, **info} for rnd in rounds
                  if (info := _later([r for r in closed if r.round == rnd]))],
           absent=[{"round": rnd, **info} for rnd in rounds
                   if (info := _absent([r for r in closed if r.round == rnd]))],
           earlier=sorted({r.benchmark for r in rows if r.benchmark != bench}),
           table=_table("history", headers, table_rows, download=(_history_records(bench, rounds, sizes, best),
                                                                  out / FOLDER / Path(history_page(bench, available_only)).stem)),
           **common)
    return rounds


def _priced_charted(rows: list[Row], rnd: str, categories: tuple[str, ...] | None) -> list[Row]:
    """The priced results the history charts in round ``rnd`` (new, complete, closed-division,
    of its categories): the points of the cost history."""
    return [r for r in rows if r.round == rnd and r.cost_usd is not None and mlperf_model.charted(r, categories)
            and not mlperf_model.carried_out(r, categories)]


def _cheapest_cell(rows: list[Row], rnd: str, categories: tuple[str, ...] | None) -> dict:
    """The cost history's cell of one round: the cheapest priced result the history charts there
    (a new, complete, closed-division result of its categories), its time and system below."""
    priced = _priced_charted(rows, rnd, categories)
    if not priced:
        return cell("no price", cls="empty", title="no charted result of this round has a priced accelerator class")
    r = min(priced, key=lambda r: r.cost_usd or 0.0)
    found = _cost(r, "../")  # its sub: the accelerator-hours and the cost with init, kept
    found["sub"] = " · ".join(filter(None, (found["sub"], f"{num(r.minutes)} min · {r.family} × {r.count}")))
    found["href"] = round_page(rnd, r.benchmark)
    return found


def _history_records(bench: str, rounds: list[str], sizes: list[str], best: dict[tuple[str, str], Row]) -> pd.DataFrame:
    """The history's points as the downloads hold them: a line per (round, size class) with its best row."""
    keys = [(rnd, size) for rnd in rounds for size in sizes if (rnd, size) in best]
    points = records([best[key] for key in keys])
    points.insert(0, "size_class", [size for _, size in keys])
    points.insert(0, "history_of", bench)
    return points


def _accelerator_pages(out: Path, by_family: dict[str, list[Row]], common: dict) -> list[dict]:
    found = []
    for fam, rows in by_family.items():
        rows = sorted(rows, key=lambda r: (tuple(-x for x in round_key(r.round)), r.benchmark, r.count or 0,
                                           r.submitter, r.system))
        charts = []
        by_bench: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            by_bench[r.benchmark].append(r)
        for bench, mine in sorted(by_bench.items(), key=lambda kv: -len(kv[1])):
            chart = mlperf_charts.scaling_chart(mine, f"{bench} on {fam}: official score against accelerators")
            if chart is not None:
                charts.append({"benchmark": bench, "chart": chart})
        spellings = sorted({r.accelerator for r in rows})
        rounds = sorted({r.round for r in rows}, key=round_key)
        render("mlperf_accelerator.html", out / FOLDER / accelerator_page(fam), root="../",
               title=f"{fam} in MLPerf Training", family=fam, spellings=spellings, charts=charts[:8],
               more_charts=len(charts) - 8, rounds=rounds, submitters=sorted({r.submitter for r in rows}),
               table=_table("results", ACC_HEADERS, [_acc_cells(r) for r in rows],
                            download=(records(rows), out / FOLDER / Path(accelerator_page(fam)).stem)), **common)
        scored = [r for r in rows if r.minutes is not None]
        found.append({"family": fam, "href": f"{FOLDER}/{accelerator_page(fam)}", "n": len(rows), "scored": len(scored),
                      "first": rounds[0], "last": rounds[-1], "submitters": len({r.submitter for r in rows}),
                      "benchmarks": len({r.benchmark for r in rows}),
                      # None (shown "—") where no result names its count: unknown, not 0
                      "largest": max((r.count for r in rows if r.count), default=None)})
    return found


def _index(out: Path, rows: list[Row], by_rb: dict, histories: list[dict], accelerators: list[dict],
           bad: list, common: dict) -> dict:
    rounds = sorted({r.round for r in rows}, key=round_key, reverse=True)
    benches = [h["benchmark"] for h in histories]
    latest = rounds[0]
    leaders = []
    for bench in sorted({r.benchmark for r in rows if r.round == latest}):
        ranked = [r for r in by_rb[(latest, bench)] if r.complete and r.division == "closed"]
        if ranked:
            top = min(ranked, key=lambda r: r.minutes or 0.0)
            best_cell = _score(top)
            if any(r.absent and r.division == "closed" for r in by_rb[(latest, bench)]):
                best_cell.update(sub=" · ".join(filter(None, (best_cell.get("sub"), "‡ may not be the best"))), title="the copy of the round imported lacked the logs of "
                                                               "a closed-division result: its score is not known here")
            leaders.append([cell(bench, href=f"{FOLDER}/{round_page(latest, bench)}"), best_cell,
                            cell(top.submitter), cell(top.system, cls="wrap"), _category(top),
                            cell(f"{top.family}\u00a0×\u00a0{top.count}", top.count,
                                 href=f"{FOLDER}/{accelerator_page(top.family)}"),
                            cell(len(by_rb[(latest, bench)]), len(by_rb[(latest, bench)]))])
    matrix = []
    for h in histories:
        line = [cell(h["benchmark"], href=h["href"])]
        for rnd in rounds:
            members = by_rb.get((rnd, h["benchmark"]))
            if not members:
                line.append(cell("", cls="none"))
                continue
            best = min((r.minutes for r in members if r.complete and r.division == "closed"), default=None)
            line.append(cell(len(members), len(members), href=f"{FOLDER}/{round_page(rnd, h['benchmark'])}",
                             title=f"{rnd} · {h['benchmark']}: {len(members)} systems; best closed score "
                                   f"{num(best)} min" if best is not None else f"{len(members)} systems, none scored"))
        matrix.append(line)
    acc_rows = [[cell(a["family"], href=a["href"]), cell(a["n"], a["n"]), cell(a["scored"], a["scored"]),
                 cell(f"{a['first']}–{a['last']}" if a["first"] != a["last"] else a["first"],
                      round_key(a["last"])[0] * 100 + round_key(a["last"])[1]),
                 cell(a["submitters"], a["submitters"]), cell(a["benchmarks"], a["benchmarks"]),
                 cell(None if a["largest"] is None else f"{a['largest']:,}", a["largest"])]
                for a in sorted(accelerators, key=lambda a: (-round_key(a["last"])[0], -round_key(a["last"])[1], -a["n"]))]
    summary = {"results": len(rows), "later": sorted({r.round for r in rows if r.later}, key=round_key),
               **score_counts(rows), "rounds": len(rounds),
               "first": rounds[-1], "last": latest, "benchmarks": len(benches), "accelerators": len(accelerators),
               "submitters": len({r.submitter for r in rows})}
    leaders_table = _table("leaders", [_header("benchmark"), _header("best score (min)", "num"), _header("submitter"),
                                       _header("system"), _header("category"), _header("accelerator × count", "num"),
                                       _header("results", "num", "results of the round and benchmark, every division")], leaders)
    leaders_table["legend"] = score_legend(leaders)
    every = _table("every", [], [], download=(records(sorted(rows, key=lambda r: (tuple(-x for x in round_key(r.round)),
                                                                                r.benchmark, r.division, r.rank or 10**9))),
                                             out / FOLDER / "all-results"))
    render("mlperf_index.html", out / PAGE, root="", title="MLPerf Training history (imported)", summary=summary,
           leaders=leaders_table, every={"csv": f"{FOLDER}/{every['csv']}", "json": f"{FOLDER}/{every['json']}"},
           matrix=_table("matrix", [_header("benchmark (history)")] + [_header(r, "num") for r in rounds], matrix),
           accelerators=_table("accelerators", [_header("accelerator"), _header("results", "num"),
                                                _header("scored", "num"), _header("rounds", "num"),
                                                _header("submitters", "num"), _header("benchmarks", "num"),
                                                _header("largest system", "num", "most accelerators in one system")],
                               acc_rows),
           not_shown=bad, **common)
    return {**summary, "leaders": leaders_table}


def write(out: Path, results_dir: str | Path, built: dict, table: prices.Table | None = None,
          progress: Callable[[str], None] | None = None) -> list[dict]:
    """Write the MLPerf pages when ``<results_dir>/mlperf/`` holds imported documents, saying so to
    ``progress`` (nothing said where there are none); returns the index page's lines (a summary,
    the latest round and its leaders' table, whose links are relative to the site's root), empty
    when none. Costs are priced with ``table`` (None: the shipped price table)."""
    docs, bad = documents.load_all(results_dir)
    if not docs and not bad:
        return []
    if progress is not None:
        progress(PROGRESS)
    rows = [row(d) for d in docs]
    add_costs(rows, table if table is not None else prices.load())
    add_scaling(rows)
    mark_carried(rows)
    by_rb: dict[tuple[str, str], list[Row]] = defaultdict(list)
    by_bench: dict[str, list[Row]] = defaultdict(list)
    by_family: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_rb[(r.round, r.benchmark)].append(r)
        by_bench[r.benchmark].append(r)
        by_family[r.family].append(r)
    by_rb = {k: rank_rows(v) for k, v in by_rb.items()}
    (out / FOLDER).mkdir(parents=True, exist_ok=True)
    common = {"label": documents.LABEL, "derived": DERIVED, "cost_note": COST_NOTE, "checked": CHECKED,
              "checked_title": CHECKED_TITLE, **built}
    if not rows:
        render("mlperf_index.html", out / PAGE, root="", title="MLPerf Training history (imported)", summary=None,
               leaders=None, every=None, matrix=None, accelerators=None, not_shown=bad, **common)
        return [{"href": PAGE, "title": "MLPerf Training history (imported)",
                 "detail": f"no document shown ({len(bad)} not read)", "latest": None, "leaders": None}]
    _round_pages(out, by_rb, common)
    histories = _history_pages(out, by_bench, common)
    accelerators = _accelerator_pages(out, by_family, common)
    s = _index(out, rows, by_rb, histories, accelerators, bad, common)
    return [{"href": PAGE, "title": "MLPerf Training history",
             "detail": f"{s['results']:,} results ({s['scored']:,} with an official score) of {s['rounds']} rounds, "
                       f"{s['first']}–{s['last']}: {s['benchmarks']} benchmarks, {s['accelerators']} accelerators, "
                       f"{s['submitters']} submitters",
             "latest": s["last"], "leaders": s["leaders"]}]
