"""The leaderboard's pages: one per workload (ranked tables, throughput-vs-energy chart), one per
system (its results, history across suite versions), the comparison of two systems, and the index."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from suite.compare import engine as compare
from suite.compare import stats as compare_stats
from suite.leaderboard import rows as leaderboard
from suite.leaderboard import systems as system_ids
from suite.site import charts, labels
from suite.site.columns import LOAD_NOT_RECORDED, accelerator_text, cell
from suite.site.formatting import missing
from suite.site.names import run_slug, safe_name, system_slug
from suite.site.render import render
from suite.site.tables import ENTRY_TABLE, SYSTEM_TABLE, downloads, table_pages
from workloads import own, registry

SCATTER_POINTS = 300  # at most this many points in a throughput-vs-energy chart


def free_jobs_page(out: Path, mine: pd.DataFrame, built: dict) -> dict:
    """The page of own code's free jobs (held to no goodbench target: measured and shown, never
    ranked), in the order they were stored; returns its summary for the index."""
    slug = safe_name(own.FREE_JOB)
    info: dict[str, Any] = {
        "id": "own code, free jobs", "version": None, "kind": "throughput",  # no version: no pinned workload
        "task": "the submitters' own training code, held to no goodbench target",
        "target": "none, at any scale: measured and shown, never ranked", "href": f"workloads/{slug}.html",
        "page1": f"{slug}.html", "leaders": [], "n_entries": len(mine), "free": True}
    title = "Own code, free jobs — never ranked (each its own job: compare them only knowing what each trains)"
    tables = table_pages(mine, ENTRY_TABLE, f"t-{slug}", title, out / "workloads" / slug, "../", False,
                         lambda k: f"{slug}.html" if k == 1 else f"{slug}-p{k}.html")
    for page, table in enumerate(tables, start=1):
        render("workload.html", out / "workloads" / (f"{slug}.html" if page == 1 else f"{slug}-p{page}.html"),
               root="../", title=info["id"], w=info, tables=[table], scatter=None, page=page, **built)
    return info


def _current_rules_first(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the rows valid only under older rules (``stale_rules``) moved last, each part in its order."""
    if frame.empty or "stale_rules" not in frame:
        return frame
    stale = frame["stale_rules"].map(lambda v: isinstance(v, str))
    return pd.concat([frame[~stale], frame[stale]])


def workload_pages(out: Path, workload_id: str, mine: pd.DataFrame, built: dict) -> dict:
    """The leaderboard pages of one workload from its entries ``mine``; returns its summary for the index."""
    if workload_id == own.FREE_JOB:
        return free_jobs_page(out, mine, built)
    workload = registry.get(workload_id)
    wslug = safe_name(workload.id)
    ordered = leaderboard.ranked(mine) if not mine.empty else mine
    # each entry's group and why (suite/leaderboard/pipeline.py: the column ``ranking``)
    group = ordered["ranking"] if "ranking" in ordered else leaderboard.ranking(ordered)
    ranked = ordered[group == "ranked"] if not ordered.empty else ordered
    groups = []  # (title, frame, ranked?, slug)
    for div in sorted(ranked["division"].unique()) if not ranked.empty else []:
        groups.append((f"Division: {div} — ranked", ranked[ranked["division"] == div], True, safe_name(div)))
    if not ordered.empty:
        unbounded, unconverged = ordered[group == "no-known-peak"], ordered[group == "not-ranked"]
        copied, smoke, one_clock = ordered[group == "copy"], ordered[group == "smoke"], ordered[group == "one-clock"]
        if not unbounded.empty:
            groups.append((f"Full scale, not ranked: {leaderboard.NO_KNOWN_PEAK} (a device the peak table "
                           "cannot bound: `goodbench peaks`)", unbounded, False, "no-known-peak"))
        if not unconverged.empty:
            groups.append(("Full scale, not ranked: too many seeds missed the target", unconverged, False,
                           "not-ranked"))
        if not one_clock.empty:
            groups.append((f"Own code, not ranked: {_one_clock_reason(one_clock)}", one_clock, False, "one-clock"))
        if not smoke.empty:
            smoke_target = workload.spec("smoke").target  # each scale pins its own target
            title = "Smoke scale — not ranked (a quick check, not a benchmark)"
            if smoke_target is not None:
                title += f"; score: time to {labels.target_text(smoke_target)}"
            divisions = sorted(smoke["division"].unique())  # one table each, as the ranked ones: own code
            for div in divisions:                            # never shares a table with the reference's runs
                apart = f" — {div} division" if len(divisions) > 1 else ""
                groups.append((title + apart, smoke[smoke["division"] == div], False,
                               "smoke" if div == divisions[0] else f"smoke-{safe_name(div)}"))
        if not copied.empty:  # last: below the results they copy
            scales = " and ".join(sorted(copied["scale"].unique()))
            groups.append((f"Copies, not ranked ({scales} scale): runs another stored file holds too, which is "
                           "kept (its owner's signed file, else the first stored; disputed: signed by another "
                           "key, stored later)", copied, False, "copies"))
    leading = groups  # the index's leaders: the first of each division's ranking
    # reproduced results ranked apart, first: the rows a trusted reviewer's reproduction backs (own
    # code's only where the reviewer attested reading it: a re-run alone, "rerun", is not promoted)
    reproduced = [(title.replace(" — ranked", " — reproduced by a trusted reviewer, ranked among themselves"),
                   frame[backed], True, f"{slug}-reproduced")
                  for title, frame, is_ranked, slug in leading
                  if is_ranked and (backed := frame.get("trust", pd.Series(dtype=object)) == "reproduced").any()]
    groups = reproduced + leading
    # a table that ranks nothing lists the results today's rules accept first: a file valid only under
    # the older rules it was stored with (its figures from another day's rules) does not lead it
    groups = [(title, frame if ranked_flag else _current_rules_first(frame), ranked_flag, slug)
              for title, frame, ranked_flag, slug in groups]
    tables = [table_pages(frame, ENTRY_TABLE, f"t-{slug}", title, out / "workloads" / f"{wslug}-{slug}",
                          "../", ranked_flag,
                          lambda k, s=slug: f"{wslug}.html" if k == 1 else f"{wslug}-{s}-p{k}.html")
              for title, frame, ranked_flag, slug in groups]
    # only what is ranked: a copy, a device without a known peak or a CPU is never on the front
    full = ranked
    scatter = _scatter(full, "../", unranked=int((ordered["scale"] == "full").sum()) - len(full)
                       if not ordered.empty else 0)
    target = workload.spec("full").target
    info = {"id": workload.id, "version": workload.version, "task": workload.task, "kind": workload.kind,
            "target": labels.target_text(target) if target else "throughput workload", "href": f"workloads/{wslug}.html",
            "page1": f"{wslug}.html"}
    n_pages = max([len(t) for t in tables] or [1])
    for page in range(1, n_pages + 1):
        shown = [t[page - 1] for t in tables if len(t) >= page]
        if page == 1:
            render("workload.html", out / "workloads" / f"{wslug}.html", root="../", title=workload.id, w=info,
                   tables=shown, scatter=scatter, page=1, **built)
        else:
            for t, (_, _, _, slug) in zip(tables, groups):
                if len(t) >= page:
                    render("workload.html", out / "workloads" / f"{wslug}-{slug}-p{page}.html", root="../",
                           title=f"{workload.id} page {page}", w=info, tables=[t[page - 1]], scatter=None,
                           page=page, **built)
    leaders = [frame.iloc[0] for _, frame, is_ranked, _ in leading if is_ranked]
    info["leaders"] = [{"division": top["division"], **_system_link(top, ""),
                        "score": cell("score", top, "", 1)["text"]} for top in leaders]
    info["n_entries"] = len(mine)
    return info


def _system_link(row, root: str) -> dict:
    """A system as a link shows it: ``system`` (its name, with its signer where another system's
    name reads as its own), ``note`` (whose system stored first it shares or resembles the name of,
    or None) and ``href`` (its page: its name and signer's)."""
    shown = row.get("system_shown")
    note = row.get("system_note")
    return {"system": shown if isinstance(shown, str) else row["system"], "note": note if isinstance(note, str) else None,
            "href": f"{root}systems/{system_slug(row['system'], system_ids.signer_of(row.get('signer')))}.html"}


def _one_clock_reason(group: pd.DataFrame) -> str:
    """Why a workload page's group of own code timed by one clock is not ranked: the reason its
    entries share (:func:`suite.leaderboard.rows.one_clock_reasons`), else the one naming both."""
    reasons = {tuple(leaderboard.one_clock_reasons(row)) for row in group.to_dict(orient="records")}
    return reasons.pop()[0] if len(reasons) == 1 and len(next(iter(reasons))) == 1 else leaderboard.ONE_CLOCK_REASON


def _scatter(frame: pd.DataFrame, root: str, unranked: int = 0) -> dict:
    """Throughput vs energy per sample of the ranked full-scale results, with the Pareto front; or
    why there is no chart. ``unranked``: full-scale results left out (copies, devices without a
    known peak), which the note counts.

    Beyond SCATTER_POINTS results only the front and each system's fastest and most frugal
    result are drawn (the note says so; the CSV downloads hold every row).
    """
    left_out = (f"{unranked} unranked full-scale result{'' if unranked == 1 else 's'} (a copy, a device "
                "without a known peak, own code timed by one clock) not plotted: the chart compares ranked "
                "results only.") if unranked else None
    if frame.empty:
        return {"chart": None, "note": " ".join(filter(None, ["No ranked full-scale results yet.", left_out]))}
    metered = frame.dropna(subset=["energy_per_sample_j", "samples_per_s"])
    measured = metered[metered["energy_unchecked"].isna()]  # energy no other record checks: not compared
    unchecked = len(metered) - len(measured)
    self_reported = (f"{unchecked} result{'' if unchecked == 1 else 's'} whose energy is self-reported (not checked "
                     "against the power sampled beside the energy counter) not plotted.") if unchecked else None
    if measured.empty:
        return {"chart": None, "note": " ".join(filter(None, [
            "Energy was not measured for any ranked result of this workload, so there is no "
            "throughput-vs-energy chart." if metered.empty else "No ranked result of this workload has an energy "
            "figure checked against sampled power, so there is no throughput-vs-energy chart.",
            self_reported, left_out]))}
    front = leaderboard.pareto_front(measured)
    shown = measured
    if len(measured) > SCATTER_POINTS:
        by_system = measured.groupby(system_ids.IDENTITY, sort=False, dropna=False)  # a name's signers apart
        picks = [front.index, measured.loc[by_system["samples_per_s"].idxmax()].index,
                 measured.loc[by_system["energy_per_sample_j"].idxmin()].index]
        extremes = measured.loc[pd.Index(picks[1]).append(picks[2]).unique().difference(front.index)]
        extremes = extremes.sort_values("samples_per_s", ascending=False, kind="stable")
        shown = pd.concat([front, extremes]).head(SCATTER_POINTS)  # the front first, then the fastest
    shown = system_ids.ensure(shown)
    points = [(r["energy_per_sample_j"], r["samples_per_s"],
               f"{r['system_shown']} ({r['scale']}): {labels.value_text(r['samples_per_s'], 'samples/s')}, "
               f"{labels.value_text(r['energy_per_sample_j'], 'J')} per sample",
               f"{root}runs/{run_slug(r['file'], r['run_id'])}.html")
              for r in shown[["system_shown", "scale", "samples_per_s", "energy_per_sample_j", "file", "run_id"]]
              .to_dict(orient="records")]
    notes = [n for n in (left_out, self_reported) if n]
    if len(shown) < len(measured):
        notes.append(f"{len(shown)} of {len(measured)} results drawn: the Pareto front and each system's fastest "
                     "and most frugal result; the CSV downloads hold them all.")
    if len(frame) > len(metered):
        unplotted = len(frame) - len(metered)
        notes.append(f"{unplotted} result{'' if unplotted == 1 else 's'} without an energy measurement "
                     f"{'is' if unplotted == 1 else 'are'} not plotted.")
    chart = charts.scatter(points, list(zip(front["energy_per_sample_j"], front["samples_per_s"])),
                           "energy per sample (J)", "samples/s",
                           "samples/s against energy per sample, full-scale results")
    return {"chart": chart, "note": " ".join(notes)}


def _version_key(version: str) -> tuple:
    """Sort key of a suite version: its numbers in order, then the text."""
    return tuple(int(n) for n in re.findall(r"\d+", version)), version


def history_charts(frame: pd.DataFrame) -> list:
    """One chart per workload of a system's throughput across suite versions (best per version and
    scale); none while the system has results of one suite version only (a chart of one dot per
    workload says nothing: the page says so in a line instead)."""
    best: dict[str, dict[str, dict[str, float]]] = {}  # workload -> scale -> version -> samples/s
    for wid, scale, version, value in zip(frame["workload"], frame["scale"], frame["suite_version"],
                                          frame["samples_per_s"]):
        if not missing(value):
            per = best.setdefault(wid, {}).setdefault(f"{scale} scale", {})
            per[version] = max(value, per.get(version, value))
    versions = sorted(set(frame["suite_version"]), key=_version_key)
    if len(versions) < 2:
        return []
    where = {v: i for i, v in enumerate(versions)}
    out = []
    for wid in sorted(best):
        series = {scale: sorted((where[v], y) for v, y in best[wid][scale].items()) for scale in sorted(best[wid])}
        out.append(charts.line_chart(series, "suite version", "samples/s",
                                     f"{wid}: best samples/s per suite version", categories=versions))
    return out


def system_pages(out: Path, entries: pd.DataFrame, built: dict, links: dict[tuple[str, str | None], set[str]],
                 summaries: dict | None = None) -> list[dict]:
    """Pages of every system in ``entries``, a system being its name and signer
    (:mod:`suite.leaderboard.systems`: two keys' files of one name are two systems, each page
    headed by the name with its signer and whose system stored first it shares or resembles the
    name of); ``links``: each system's interconnect summaries, by (name, signer); ``summaries``:
    the entries' comparison summaries, :func:`entry_summaries`, for the table of each result against
    the system's previous one. Returns each system's summary for the index (``order``: its name,
    then whether it is marked, so that of one name the system stored first is listed first)."""
    systems = []
    entries = system_ids.ensure(entries)
    for (system, signer), frame in entries.groupby(system_ids.IDENTITY, sort=True, dropna=False):
        signer = system_ids.signer_of(signer)
        link = _system_link(frame.iloc[0], "")
        sslug = system_slug(system, signer)
        # rows valid under today's rules first, as the page's note says a table that ranks nothing lists them
        ordered = _current_rules_first(frame.sort_values(["workload", "scale", "created_at"], kind="stable"))
        tables = table_pages(ordered, SYSTEM_TABLE, "t-system", "All results", out / "systems" / sslug, "../",
                             False, lambda k, s=sslug: f"{s}.html" if k == 1 else f"{s}-p{k}.html")
        history = history_charts(frame)
        changes, not_compared = latest_changes(frame, summaries or {})
        for page in tables:
            page_name = f"{sslug}.html" if page["page"] == 1 else f"{sslug}-p{page['page']}.html"
            render("system.html", out / "systems" / page_name, root="../", title=link["system"],
                   system=link["system"], system_note=link["note"],
                   accelerators=sorted({f"{accelerator_text({'accelerator': a, 'accelerator_type': t})} × {c}"
                                        for a, c, t in zip(frame["accelerator"], frame["count"], frame["accelerator_type"])}),
                   interconnects=sorted(links.get((system, signer), ())),
                   tables=[page], history=history if page["page"] == 1 else [],
                   versions=sorted(set(frame["suite_version"]), key=_version_key),
                   changes=changes if page["page"] == 1 else [],
                   not_compared=not_compared if page["page"] == 1 else [], **built)
        systems.append({"name": link["system"], "note": link["note"], "href": link["href"], "n": len(frame),
                        "order": (system, link["note"] is not None)})  # of a name, the first stored first
    return systems


COMPARE_METRICS = [(m, *labels.ENTRY_FIGURES[m][:1], better) for m, better in
                   (("score_s", "lower"), ("samples_per_s", "higher"), ("tokens_per_s", "higher"), ("mfu", "higher"),
                    ("energy_per_sample_j", "lower"), ("goodput", "higher"))]
# each compare-page metric's figure in suite/compare/engine.py
COMPARE_FIGURES = {"score_s": "tta", "samples_per_s": "samples_per_s", "tokens_per_s": "tokens_per_s",
                   "mfu": "mfu", "energy_per_sample_j": "energy_per_sample", "goodput": "goodput"}


def entry_summaries(name: str, doc: dict) -> dict[tuple[str, str, str], dict]:
    """Each entry of one document (its runs of one workload × scale), keyed by (file, workload,
    scale), summarized for comparisons by :func:`suite.compare.engine.entry_summary`."""
    from suite.figures.summary import groups

    return {(name, runs[0]["workload"]["id"], runs[0]["scale"]): compare.entry_summary(doc, runs)
            for runs in groups(doc["runs"]).values()}


def _interval(row: compare.Row | None) -> str:
    return "—" if row is None or row.low is None else f"{row.low:.3g}–{row.high:.3g}"


def latest_changes(frame: pd.DataFrame, summaries: dict) -> tuple[list[dict], list[dict]]:
    """For each workload × scale of one system with two results or more that a comparison may
    pool (:func:`comparable_entries`, as on the compare page): its latest result against the one
    before (by creation time), figure by figure, with the ratio's 95% interval and verdict from
    suite/compare/engine.py; and the results left out, each with why (measured under load, or
    valid only under the older rules it was stored with: a figure of another rules version is not
    held against today's as if the system had become faster or slower)."""
    out: list[dict] = []
    records = frame.to_dict(orient="records")
    created = {r["file"]: r["created_at"] for r in records}
    results_of = Counter(f"{r['workload']} ({_scale_division(r)})" for r in records)
    frame, left = comparable_entries(frame)
    # left out where the system has another result of that workload to hold it against
    left = [{**r, "date": str(created.get(r["file"], ""))[:16].replace("T", " ")} for r in left
            if results_of[r["workload"]] > 1]
    ordered = frame.sort_values(["workload", "scale", "created_at"], kind="stable")
    for (workload, scale), group in ordered.groupby(["workload", "scale"], sort=True):
        if len(group) < 2:
            continue
        prev, last = group.iloc[-2], group.iloc[-1]
        before = summaries.get((prev["file"], workload, scale))
        after = summaries.get((last["file"], workload, scale))
        if before is None or after is None:
            continue
        why, rows = compare.compare_summaries(before, after)
        base = {"workload": workload, "scale": scale, "previous": str(prev["created_at"])[:16].replace("T", " "),
                "latest": str(last["created_at"])[:16].replace("T", " ")}
        if why:
            out.append({**base, "figure": "—", "a": "—", "b": "—", "ratio": "—", "ci": "—",
                        "verdict": compare.NOT_COMPARABLE, "why": why})
            continue
        for fid, row in rows.items():
            if row.base is None and row.new is None:
                continue
            unit = labels.FIGURE_UNITS.get(fid, "text")
            out.append({**base, "figure": compare.BY_ID[fid].label, "a": labels.value_text(row.base, unit),
                        "b": labels.value_text(row.new, unit),
                        "ratio": "—" if row.ratio is None else f"{row.ratio:.3g}×", "ci": _interval(row),
                        "verdict": row.verdict, "why": row.reason or ""})
    return out, left


def _scale_division(row: dict) -> str:
    """"smoke", or "smoke, own" for a division other than closed: as the compare table keys it."""
    return row["scale"] if row.get("division", "closed") == "closed" else f"{row['scale']}, {row['division']}"


LOAD_UNKNOWN = (f"{LOAD_NOT_RECORDED}: whether other processes shared the machine is not known, so a ratio "
                "against it may say as much about that as about the system")


def _left_out_because(row: dict) -> str | None:
    """Why a comparison leaves ``row`` out (None: it may pool it)."""
    if isinstance(row.get("copy_status"), str):  # the same runs as another stored file's: one system twice
        return ("disputed: the same run as one stored first, not ranked" if row["copy_status"] == "disputed"
                else "a copy of a run another stored file holds, not ranked")
    if isinstance(row["stale_rules"], str):
        return row["stale_rules"]
    if isinstance(row["under_load"], str):
        return f"measured under load: {row['under_load']}"
    return LOAD_UNKNOWN if row.get("load_recorded") == False else None  # noqa: E712 - numpy bool


def comparable_entries(entries: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """The entries a comparison may pool, and those it leaves out with why: a copy of another
    stored file's runs, or disputed (the same runs would be compared with themselves), measured under load
    (self-reported: another process shared the machine, so its figures say little of the system),
    with no record of the host's load (dated before goodbench recorded it: the same 2-core
    machine compared 1.7-3x "faster" against itself), or valid only under the older rules it was
    stored with (today's rules refuse it)."""
    if entries.empty:
        return entries, []
    entries = system_ids.ensure(entries)
    why = [_left_out_because(row) for row in entries.to_dict(orient="records")]
    out = pd.Series([w is not None for w in why], index=entries.index)
    left = [{"system": r["system_shown"], "workload": f"{r['workload']} ({_scale_division(r)})", "file": r["file"], "why": w}
            for r, w in zip(entries.to_dict(orient="records"), why) if w is not None]
    return entries[~out], left


def compare_data(entries: pd.DataFrame, summaries: dict | None = None) -> dict:
    """Each system's best entry per workload, scale and division (named unless closed), as plain
    JSON-able data for the compare page; a system is its name and signer, keyed by its name as
    shown (``system_shown``: with its signer where another system's name reads as its own).

    With ``summaries`` (:func:`entry_summaries`) each entry also carries its comparison summary
    (``estimates``), and its values are the engine's (all the entry's runs pooled), so that the
    ratio, its 95% interval and the verdict (suite/compare/engine.py; the page's script repeats only
    the last step, :func:`suite.compare.stats.ratio_interval`, with the same t table) agree.
    ``texts`` holds each value as the page shows it, with its unit (:mod:`suite.site.labels`)."""
    entries, left_out = comparable_entries(entries)
    best = leaderboard.best_per_system(entries)  # per name and signer
    values: dict[str, dict] = {}
    estimates: dict[str, dict] = {}
    for r in best.to_dict(orient="records"):
        key = f"{r['workload']} ({_scale_division(r)})"
        system = r["system_shown"]  # with its signer where another system's name reads as its own
        values.setdefault(system, {})[key] = {
            m: (None if missing(r[m]) or (m == "score_s" and r["tta_valid"] is False) else float(r[m]))
            for m, _, _ in COMPARE_METRICS}
        summary = (summaries or {}).get((r["file"], r["workload"], r["scale"]))
        if summary is not None:
            estimates.setdefault(system, {})[key] = summary
            values[system][key] = {m: summary["figures"][COMPARE_FIGURES[m]][0] for m, _, _ in COMPARE_METRICS}
    keys = sorted({k for per in values.values() for k in per})
    texts = {system: {key: {m: labels.value_text(v, labels.ENTRY_FIGURES[m][1]) for m, v in figures.items()}
                      for key, figures in per.items()} for system, per in values.items()}
    return {"systems": sorted(values), "keys": keys, "texts": texts, "left_out": left_out,
            "metrics": [{"id": m, "label": label, "better": better, "figure": COMPARE_FIGURES[m]}
                        for m, label, better in COMPARE_METRICS],
            "values": values, "estimates": estimates, "t": list(compare_stats.t_table()) if estimates else [],
            "verdicts": {"faster": compare.FASTER, "slower": compare.SLOWER, "same": compare.SAME,
                         "none": compare.NO_INTERVAL, "apart": compare.NOT_COMPARABLE}}


def compare_rows(data: dict, a: str, b: str) -> list[dict]:
    """Rows of the comparison of systems ``a`` and ``b``: both values, the ratio a/b and, where
    both entries have estimates, its 95% interval and the verdict for ``a`` (suite/compare/engine.py:
    ``b`` is the base)."""
    rows = []
    for key in data["keys"]:
        va, vb = data["values"].get(a, {}).get(key), data["values"].get(b, {}).get(key)
        if not va and not vb:
            continue
        ea = data.get("estimates", {}).get(a, {}).get(key)
        eb = data.get("estimates", {}).get(b, {}).get(key)
        why, compared = compare.compare_summaries(eb, ea) if ea and eb else (None, {})
        for m in data["metrics"]:
            x, y = (va or {}).get(m["id"]), (vb or {}).get(m["id"])
            if x is None and y is None:
                continue
            ratio = x / y if x is not None and y else None
            row = compared.get(COMPARE_FIGURES[m["id"]])
            verdict = compare.NOT_COMPARABLE if why else row.verdict if row else "—"
            unit = labels.ENTRY_FIGURES[m["id"]][1]
            rows.append({"key": key, "metric": m["label"], "a": labels.value_text(x, unit), "b": labels.value_text(y, unit),
                         "ratio": "—" if ratio is None else f"{ratio:.3g}×", "better": m["better"],
                         "ci": _interval(row), "verdict": verdict, "why": why or (row.reason if row else "") or ""})
    return rows


def nothing_to_compare(data: dict) -> str:
    """Why the compare page has no row, in words that are true of ``data`` (:func:`compare_data`):
    fewer than two systems with a result a comparison may pool, and which systems' results are all
    left out (listed under the table) where that is why."""
    shown = data["systems"]
    left = sorted({r["system"] for r in data["left_out"]} - set(shown))
    if left:
        whose = ", ".join(left)
        only = f"{shown[0]} is the only system with a result a comparison may pool: " if shown else ""
        return (f"Nothing to compare: {only}every result of {whose} is left out of comparisons "
                "(listed below, with why).")
    if shown:
        return f"Nothing to compare: {shown[0]} is the only system with results; a comparison needs two."
    return "No results yet: a comparison needs two systems with results."


def compare_page(out: Path, entries: pd.DataFrame, built: dict, summaries: dict | None = None) -> None:
    """The page comparing two systems (the first two by name; its script switches), and the download of
    each system's best entries; ``summaries`` (:func:`entry_summaries`) give the intervals and verdicts."""
    data = compare_data(entries, summaries)
    a, b = (data["systems"] + ["", ""])[:2]
    best = leaderboard.best_per_system(comparable_entries(entries)[0])
    downloads(best, out / "compare")
    render("compare.html", out / "compare.html", root="", title="compare systems", data=data, a=a, b=b,
           rows=compare_rows(data, a, b) if a and b else [], empty=nothing_to_compare(data), **built)


LATEST = 5  # results files the front page names at its top, the newest stored first


def latest_results(entries: pd.DataFrame, stored: list[str]) -> list[dict]:
    """The :data:`LATEST` results files stored last (``stored``: every file's name in the order it was
    stored, the ledger's), newest first, each as the front page names it: its system as a link
    (:func:`_system_link`), its workloads by scale, each a link to the page of the run its entry
    shows (``run_id``: the first complete one), and when it was written (``created_at``, the file's
    own word, to the minute: two files of one day are told apart)."""
    rank = {name: i for i, name in enumerate(stored)}
    files = sorted(set(entries["file"]), key=lambda f: (rank.get(f, -1), f), reverse=True)[:LATEST]
    latest = []
    for file in files:
        frame = entries[entries["file"] == file]
        scales: dict[str, list[dict]] = {}
        for workload, scale, run_id in sorted(zip(frame["workload"].map(str), frame["scale"].map(str), frame["run_id"])):
            scales.setdefault(scale, []).append({"workload": workload, "href": f"runs/{run_slug(file, run_id)}.html"})
        created = str(frame["created_at"].iloc[0])
        when = f"{created[:10]} {created[11:16]} UTC" if len(created) >= 16 and created[10] == "T" else created[:10]
        latest.append({**_system_link(frame.iloc[0], ""), "created": when,
                       "scales": [{"scale": scale, "runs": runs} for scale, runs in sorted(scales.items())]})
    return latest


def index_page(out: Path, workloads: list[dict], systems: list[dict], invalid: list, built: dict,
               mlperf: list[dict] | None = None, speedrun: list[dict] | None = None,
               latest: list[dict] | None = None) -> None:
    """The front page: the latest results stored (``latest``: :func:`latest_results`), every workload
    with its leaders, every system, the files that were left out, and the imported MLPerf Training
    and NanoGPT speedrun sections (``mlperf``: suite/site/mlperf_pages.py; ``speedrun``:
    suite/site/speedrun_pages.py), apart."""
    render("index.html", out / "index.html", root="", title="leaderboard", workloads=workloads,
           systems=systems, invalid=invalid, mlperf=mlperf or [], speedrun=speedrun or [], latest=latest or [],
           **built)
