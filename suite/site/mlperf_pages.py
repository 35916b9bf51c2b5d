"""The "MLPerf Training (imported)" page: documents of ``goodbench import mlperf`` by round ×
benchmark, ranked only among themselves.

Every section says that its figures are derived from published MLPerf Training results and are
not MLPerf results. The official score is MLCommons' (recomputed as result_summarizer computes
it); the time splits and goodput bars are goodbench's reading of the submitters' event logs.
Imported documents never enter goodbench's workload leaderboards, and goodbench results never
enter these tables.
"""
from __future__ import annotations

import statistics
from pathlib import Path

from markupsafe import Markup, escape

from suite.mlperf import documents, importer, ingest
from suite.site.formatting import num, pct
from suite.site.render import render

PAGE = "mlperf.html"
# bar segments in order, with the site's palette classes (suite/site/static/style.css)
SEGMENTS = (("init", "p1"), ("eval", "p4"), ("train", "p3"), ("other", "p5"))
BAR_W, BAR_H, GAP = 160, 9, 3


def _buckets(run: dict) -> dict[str, float | None]:
    return ingest.goodput(run)["buckets"]


def goodput_bars(runs: list[dict]) -> Markup:
    """One stacked bar per run (init / eval / train / other, each run's own wall time as the
    full width), as inline SVG; an unmeasured bucket is left out of the bar and said so in the
    bar's title, never drawn as zero."""
    shown = [(r, g) for r in runs if (g := ingest.goodput(r))["wall_s"]]
    if not shown:
        return Markup('<span class="empty">not measured</span>')
    height = len(shown) * (BAR_H + GAP)
    body = []
    for i, (run, good) in enumerate(shown):
        wall = good["wall_s"]
        y, x = i * (BAR_H + GAP), 0.0
        parts = _buckets(run)
        words = []
        for name, css in SEGMENTS:
            value = parts[name]
            if value is None:
                words.append(f"{name} not measured")
                continue
            w = BAR_W * max(0.0, value) / wall
            body.append(f'<rect class="seg {css}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{BAR_H}"/>')
            words.append(f"{name} {num(value)} s ({pct(value / wall)})")
            x += w
        state = "counted" if run.get("counted") else f"not counted: {run.get('why') or run.get('status')}"
        title = f"{run['file']}: {'; '.join(words)}; goodput {pct(good['goodput'])} ({state})"
        body.append(f'<rect class="hit" x="0" y="{y}" width="{BAR_W}" height="{BAR_H}"><title>{escape(title)}</title></rect>')
        if not run.get("counted"):
            body.append(f'<line class="dropped" x1="0" y1="{y + BAR_H / 2}" x2="{BAR_W}" y2="{y + BAR_H / 2}"/>')
    return Markup(f'<svg class="gp-bars" viewBox="0 0 {BAR_W} {height}" width="{BAR_W}" height="{height}" '
                  f'role="img" aria-label="goodput per run">{"".join(body)}</svg>')


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _row(doc: dict) -> dict:
    system, score, runs = doc["system"], doc["score"], doc["runs"]
    counted = [r for r in runs if r.get("counted")]
    good = [g for g in (ingest.goodput(r)["goodput"] for r in counted) if g is not None]
    init = [r["init_s"] for r in counted if r.get("init_s") is not None]
    ev = [r["eval_s"] for r in counted if r.get("eval_s") is not None]
    code = (counted[0].get("unmeasured") or {}).get("eval_s") if counted else None
    eval_note = None if ev or not counted else ingest.UNMEASURED.get(code or "", "not measured")
    accelerators = system.get("accelerators")
    return {
        "minutes": score.get("minutes"), "score_status": score.get("status"),
        "rcp": score.get("rcp_scaling_factor"), "division": doc.get("division") or "—",
        "submitter": doc["submitter"], "system": system["name"],
        "accelerator": system.get("accelerator") or "—",
        "count": accelerators if accelerators is not None else "—",
        "nodes": system.get("nodes") if system.get("nodes") is not None else "—",
        "framework": system.get("framework") or "—",
        "runs": f"{score.get('runs_counted')}/{len(runs)}",
        "required": score.get("required_runs"),
        "init_s": _median(init), "eval_s": _median(ev), "eval_note": eval_note,
        "goodput": _median(good), "bars": goodput_bars(runs),
        "source": importer.source_url(doc), "system_url": importer.system_url(doc),
    }


def sections(docs: list[dict]) -> list[dict]:
    """One section per round × benchmark (newest round first), rows ranked by official score
    within each division; rows without a score come last, unranked."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for doc in docs:
        groups.setdefault((doc["source"]["round"], doc["benchmark"]), []).append(doc)
    out = []
    key = lambda rnd: tuple(int(p) for p in rnd.lstrip("v").split("."))
    for (rnd, bench) in sorted(groups, key=lambda k: (tuple(-x for x in key(k[0])), k[1])):
        rows = [_row(d) for d in groups[(rnd, bench)]]
        rows.sort(key=lambda r: (r["division"], r["minutes"] is None, r["minutes"] or 0.0, r["submitter"], r["system"]))
        rank: dict[str, int] = {}
        for r in rows:
            if r["minutes"] is None:
                r["rank"] = "—"
            else:
                rank[r["division"]] = rank.get(r["division"], 0) + 1
                r["rank"] = rank[r["division"]]
        best = min((r["minutes"] for r in rows if r["minutes"] is not None), default=None)
        out.append({"round": rnd, "benchmark": bench, "anchor": f"{rnd}-{bench}".replace(".", "_"),
                    "rows": rows, "n": len(rows), "best": best})
    return out


def write(out: Path, results_dir: str | Path, built: dict) -> list[dict]:
    """Write ``mlperf.html`` when ``<results_dir>/mlperf/`` holds imported documents; returns
    the index page's list (round, benchmark, systems, best score, link), empty when none."""
    docs, bad = documents.load_all(results_dir)
    if not docs and not bad:
        return []
    found = sections(docs)
    render("mlperf.html", out / PAGE, root="", title="MLPerf Training (imported)", sections=found,
           label=documents.LABEL, not_shown=bad, segments=[name for name, _ in SEGMENTS],
           classes=dict(SEGMENTS), **built)
    return [{"round": s["round"], "benchmark": s["benchmark"], "n": s["n"], "best": num(s["best"]),
             "href": f"{PAGE}#{s['anchor']}"} for s in found]
