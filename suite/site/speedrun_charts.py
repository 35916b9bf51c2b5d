"""Charts of the imported NanoGPT speedrun as inline SVG drawn at build time: the record history
(claimed and measured time per record over the dates, log scale over a wide span) and a record's runs' validation
loss over training time. Every text goes through ``markupsafe.escape``."""
from __future__ import annotations

import datetime as dt

from markupsafe import Markup, escape

from suite.site.charts import BOTTOM, LEFT, RIGHT, TOP, Axis
from suite.site.mlperf_charts import _figure, _frame

CURVE_MAX_LOSS = 4.5  # validations above this (the first few hundred steps) are left out of the curves
OFF_CHART_GAP = 5.0  # a time over this many times every other one (track 2's 20,880 s llm.c baseline) is off the chart
LOG_FROM = 10.0  # the history's time axis is log where the times on the chart span more than this factor


def _day(iso: str) -> float:
    return float(dt.date.fromisoformat(iso).toordinal())


def _month_ticks(lo: float, hi: float) -> list[tuple[float, str]]:
    first, last = dt.date.fromordinal(int(lo)), dt.date.fromordinal(int(hi))
    ticks: list[tuple[float, str]] = []
    year, month = first.year, 1 if first.month <= 1 else 7 if first.month <= 7 else 13
    while True:
        if month > 12:
            year, month = year + 1, 1
        day = dt.date(year, month, 1)
        if day > last:
            return ticks
        ticks.append((float(day.toordinal()), day.strftime("%b %Y")))
        month += 6


def _mark(shape: str, x: float, y: float, cls: str, title: str) -> str:
    t = f"<title>{escape(title)}</title>"
    if shape == "square":
        return f'<rect class="{cls}" x="{x - 4}" y="{y - 4}" width="8" height="8">{t}</rect>'
    if shape == "triangle":
        return f'<path class="{cls}" d="M{x} {y - 5}L{x + 5} {y + 4}L{x - 5} {y + 4}Z">{t}</path>'
    return f'<circle class="{cls}" cx="{x}" cy="{y}" r="4">{t}</circle>'


def history(records: list[dict], title: str) -> Markup | None:
    """Claimed (hollow) and measured (filled) time of each dated record, on a log scale where the
    times span more than :data:`LOG_FROM` times; a square marks a record on another GPU than the
    H100, a triangle one on fewer than 8 GPUs. A time far above all others (:func:`chart_top`) is
    drawn above the chart's top with its time written beside it, and the caption names it."""
    dated = [r for r in records if r.get("date") and (r.get("claimed_s") or r.get("measured_s"))]
    if not dated:
        return None
    days = [_day(r["date"]) for r in dated]
    lo, hi = min(days) - 20, max(days) + 20
    times = [v for r in dated for v in (r.get("claimed_s"), r.get("measured_s")) if v]
    top = chart_top(times)
    shown = [v for v in times if v <= top]
    y = Axis(shown, BOTTOM, TOP, log=max(shown) / min(shown) > LOG_FROM)
    off: list[str] = []

    def ypx(value: float, x: float, what: str) -> float:
        """The time's height; one above the chart's top is drawn above the axis's end, its time beside it."""
        if value <= top:
            return y(value)
        off.append(f"{what} {value:,.0f} s")
        body.append(f'<text class="tick" x="{x + 7}" y="{TOP - 4}">{escape(f"{value:,.0f} s ↑ off the chart")}</text>')
        return TOP - 8

    def xpx(day: float) -> float:
        return round(LEFT + (day - lo) / (hi - lo) * (RIGHT - LEFT), 1)
    body = _frame([(xpx(d), label) for d, label in _month_ticks(lo, hi)], y, "record date",
                  "training time, s")
    for r, day in zip(dated, days):
        x = xpx(day)
        gpu = r.get("accelerator") or ""
        shape = "triangle" if (r.get("accelerators") or 8) < 8 else "square" if gpu and "H100" not in gpu else "circle"
        name = f"record {r['record']} ({r['date']})"
        if r.get("claimed_s"):
            at = ypx(r["claimed_s"], x, f"record {r['record']}'s claim,")
            body.append(_mark("circle", x, at, "sr-claimed", f"{name}: claimed {r['claimed_s']:g} s"))
        if r.get("measured_s"):
            at = ypx(r["measured_s"], x, f"record {r['record']}'s measured time,")
            body.append(_mark(shape, x, at, "sr-measured",
                              f"{name}: measured {r['measured_s']:g} s over {r['runs']} run(s)"
                              + (f" on {r['accelerators']}× {gpu}" if gpu else "")))
    caption = Markup("Hollow circle: the README's claim; filled: the mean of the record's logs. "
                     "Square: another GPU than the H100; triangle: fewer than 8 GPUs.")
    if off:
        caption += Markup(" ") + escape(f"Off the chart, drawn above its top with its time: {'; '.join(off)} "
                                        f"(over {OFF_CHART_GAP:g}× every other time: the axis spans the others).")
    return _figure(body, title, caption)


def chart_top(times: list[float]) -> float:
    """The largest of ``times`` the history's axis reaches: the times more than :data:`OFF_CHART_GAP`
    times all the others (an early baseline hours long beside records of minutes) are left above
    it, so that they do not flatten the records against the bottom of a log axis."""
    ordered = sorted(set(times))
    while len(ordered) > 1 and ordered[-1] > OFF_CHART_GAP * ordered[-2]:
        ordered.pop()
    return ordered[-1]


def curves(runs: list[dict], target: float, title: str) -> Markup | None:
    """Each run's validation loss over training time (over steps where the log holds no time),
    the target as a line; validations above :data:`CURVE_MAX_LOSS` are left out."""
    timed = all(v[2] is not None for r in runs for v in r["validations"])
    key = 2 if timed else 0
    lines = [[(v[key], v[1]) for v in r["validations"] if v[1] is not None and v[1] <= CURVE_MAX_LOSS]
             for r in runs]
    lines = [pts for pts in lines if len(pts) > 1]
    if not lines:
        return None
    x = Axis([p[0] for pts in lines for p in pts], LEFT, RIGHT, log=False)
    y = Axis([p[1] for pts in lines for p in pts] + [target], BOTTOM, TOP, log=False)
    body = _frame(x.ticks(), y, "train_time, s" if timed else "step", "validation loss")
    body.append(f'<line class="sr-target" x1="{LEFT}" x2="{RIGHT}" y1="{y(target)}" y2="{y(target)}">'
                f'<title>target {target}</title></line>')
    for pts, run in zip(lines, runs):
        d = "M" + "L".join(f"{x(a)} {y(b)}" for a, b in pts)
        body.append(f'<path class="sr-curve" d="{d}"><title>{escape(run["log"])}</title></path>')
    caption = Markup(f"One line per run; the dashed line is the target ({target}). Validations above "
                     f"{CURVE_MAX_LOSS} (the first steps) are left out.")
    return _figure(body, title, caption)
