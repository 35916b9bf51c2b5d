"""The site's charts as inline SVG, drawn at build time in Python.

Every text that reaches a chart (titles, series names, tick and point labels) goes through
``markupsafe.escape``; coordinates are numbers this module formats itself. Each chart function
returns ``Markup`` (inserted as is by the autoescaping templates) or None when there is nothing
to draw.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from markupsafe import Markup, escape

from suite.site.formatting import pct, seconds

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 84, WIDTH - 28, 16, HEIGHT - 44  # room for the last x tick label
MAX_DOTS = 60  # a line with more points is drawn without per-point markers


class Axis:
    """A linear or log10 mapping from data values to pixels, with "nice" tick labels.

    ``log`` None picks log10 when all values are positive and span more than a factor of 50.
    A linear axis runs between multiples of a 1-2-5 step (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …) with
    at most ``n_ticks`` ticks; data that are all non-negative never get a negative axis, and start
    at 0 when their minimum is under half their maximum (or always, with ``zero``).
    ``integer`` keeps the step at 1 or more (counts). A log axis has its ticks at powers of ten.
    ``nice`` False keeps the data's range with a 5% margin instead (category axes).
    """

    def __init__(self, values, lo_px: float, hi_px: float, log: bool | None = None, *, zero: bool = False,
                 integer: bool = False, nice: bool = True, n_ticks: int = 7):
        vals = [float(v) for v in values if v is not None and math.isfinite(v)]
        positive = [v for v in vals if v > 0]
        self.log = bool(log if log is not None else len(positive) == len(vals) and len(positive) > 1
                        and max(positive) / min(positive) > 50)
        data = [math.log10(v) for v in positive] if self.log else vals
        lo, hi = (min(data), max(data)) if data else (0.0, 1.0)
        self.step: float | None = None
        if self.log:
            lo, hi = math.floor(lo), math.ceil(hi)
            if hi == lo:
                hi = lo + 1
            self.step = float(max(1, math.ceil((hi - lo) / (n_ticks - 1))))
            hi = lo + math.ceil((hi - lo) / self.step) * self.step
        elif nice:
            if lo >= 0 and (zero or lo <= hi / 2):
                lo = 0.0
            if hi == lo:
                lo, hi = (lo - abs(lo) * 0.1, hi + abs(hi) * 0.1) if lo else (0.0, 1.0)
                lo = 0.0 if lo < 0 <= min(data or [0]) else lo
            self.step = nice_step((hi - lo) / (n_ticks - 1), integer)
            lo, hi = math.floor(lo / self.step + 1e-9) * self.step, math.ceil(hi / self.step - 1e-9) * self.step
            if hi <= lo:
                hi = lo + self.step
        else:
            if hi == lo:
                lo, hi = lo - (abs(lo) * 0.1 or 1.0), hi + (abs(hi) * 0.1 or 1.0)
            pad = (hi - lo) * 0.05
            lo, hi = lo - pad, hi + pad
        self.lo, self.hi, self.lo_px, self.hi_px = lo, hi, lo_px, hi_px
        self.per_unit = (hi_px - lo_px) / (self.hi - self.lo)
        self.n_ticks = n_ticks

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else float(value)
        return round(self.lo_px + (v - self.lo) * self.per_unit, 1)

    def ticks(self) -> list[tuple[float, str]]:
        """(pixel, label) of the ticks: multiples of the step (powers of ten on a log axis)."""
        if self.step is None:  # not a nice axis: evenly spaced
            values = [self.lo + (self.hi - self.lo) * k / (self.n_ticks - 1) for k in range(self.n_ticks)]
            return [(self(v), tick_label(v)) for v in values]
        first, count = round(self.lo / self.step), round((self.hi - self.lo) / self.step)
        values = [(first + k) * self.step for k in range(count + 1)]
        if self.log:
            return [(self(10 ** v), tick_label(10 ** v)) for v in values]
        decimals = max(0, -math.floor(math.log10(self.step) + 1e-9))
        return [(self(v), tick_label(v, decimals)) for v in values]


def nice_step(raw: float, integer: bool = False) -> float:
    """The smallest 1-2-5 step (…, 0.5, 1, 2, 5, 10, …) of at least ``raw``; at least 1 with ``integer``."""
    if not raw > 0 or not math.isfinite(raw):
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    return max(step, 1.0) if integer else step


def tick_label(value: float, decimals: int | None = None) -> str:
    """A tick value as text: 250M, 1.5G from a million on, thousands separated from 1,000 on,
    ``decimals`` places below that (or 3 significant digits), never "-0"."""
    if abs(value) < 1e-12:
        return "0"
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    if abs(value) >= 1e3:
        return f"{value:,.0f}"
    if decimals is None:
        return f"{value:.3g}"
    return f"{value:.{decimals}f}" if abs(value) >= 1e-3 or decimals <= 6 else f"{value:.2g}"


def _figure(svg_body: str, title: str, caption: str, css: str = "chart", height: int = HEIGHT) -> Markup:
    return Markup(f'<figure><svg class="{css}" viewBox="0 0 {WIDTH} {height}" role="img" '
                  f'aria-label="{escape(title)}">{svg_body}</svg><figcaption>{caption}</figcaption></figure>')


def _axes(x: Axis, y: Axis, x_label: str, y_label: str, x_ticks: list[tuple[float, str]] | None = None) -> str:
    parts = [f'<line class="axis" x1="{LEFT}" y1="{BOTTOM}" x2="{RIGHT}" y2="{BOTTOM}"/>'
             f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{BOTTOM}"/>']
    for px, label in x_ticks if x_ticks is not None else x.ticks():
        parts.append(f'<text class="tick" x="{px}" y="{BOTTOM + 16}" text-anchor="middle">{escape(label)}</text>')
    for px, label in y.ticks():
        parts.append(f'<text class="tick" x="{LEFT - 6}" y="{px + 4}" text-anchor="end">{escape(label)}</text>'
                     f'<line class="grid" x1="{LEFT}" y1="{px}" x2="{RIGHT}" y2="{px}"/>')
    mid_y = (TOP + BOTTOM) / 2
    x_text = x_label + (" (log)" if x.log else "")
    y_text = y_label + (" (log)" if y.log else "")
    parts.append(f'<text class="label" x="{(LEFT + RIGHT) / 2}" y="{HEIGHT - 6}" text-anchor="middle">'
                 f'{escape(x_text)}</text><text class="label" x="12" y="{mid_y}" text-anchor="middle" '
                 f'transform="rotate(-90 12 {mid_y})">{escape(y_text)}</text>')
    return "".join(parts)


def line_chart(series: Mapping[str, Sequence[tuple[float, float | None]]], x_label: str, y_label: str, title: str,
               hline: tuple[str, float] | None = None, categories: list[str] | None = None) -> Markup | None:
    """Polylines, one per named series of (x, y) points; an optional labelled horizontal line.

    With ``categories`` the x values are indices into it and the x ticks are its names (used for
    suite versions). Lines of more than MAX_DOTS points get no per-point markers.
    """
    finite: dict[str, list[tuple[float, float]]] = {}
    for name, pts in series.items():
        kept = [(a, b) for a, b in pts if b is not None and math.isfinite(b)]
        if kept:
            finite[name] = kept
    if not finite:
        return None
    xs = [a for pts in finite.values() for a, _ in pts]
    ys = [b for pts in finite.values() for _, b in pts] + ([hline[1]] if hline else [])
    if categories is not None:
        xs = [-0.5, len(categories) - 0.5]
    x, y = Axis(xs, LEFT, RIGHT, log=False, nice=categories is None), Axis(ys, BOTTOM, TOP)
    ticks = [(x(i), name) for i, name in enumerate(categories)] if categories is not None else None
    body = [_axes(x, y, x_label, y_label, ticks)]
    if hline:
        hy = y(hline[1])
        body.append(f'<line class="target" x1="{LEFT}" y1="{hy}" x2="{RIGHT}" y2="{hy}"/>'
                    # at the left: curves meet their target at the right, where the label hid them
                    f'<text class="tick" x="{LEFT + 4}" y="{hy - 4}" text-anchor="start">{escape(hline[0])}</text>')
    keys = []
    for i, (name, pts) in enumerate(finite.items()):
        css = f"s{i % 6}"
        coords = [(x(a), y(b)) for a, b in pts]
        body.append(f'<polyline class="series {css}" points="{" ".join(f"{px},{py}" for px, py in coords)}"/>')
        if len(pts) <= MAX_DOTS:
            name_text = escape(name)
            for (px, py), (a, b) in zip(coords, pts):
                at = escape(categories[int(a)]) if categories is not None else f"{a:g}"
                body.append(f'<circle class="dot {css}" cx="{px}" cy="{py}" r="3">'
                            f'<title>{name_text} at {at}: {b:.4g}</title></circle>')
        keys.append(f'<span class="key {css}">■</span> {escape(name)}')
    return _figure("".join(body), title, f"{escape(title)}: {' '.join(keys)}")


def histogram(values: list[float], x_label: str, title: str, bins: int = 24, unit: str = "") -> Markup | None:
    """Bars of a histogram of ``values`` (in ``unit``, named in each bar's tooltip)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    counts, edges = np.histogram(data, bins=min(bins, max(1, data.size)))
    x = Axis(edges.tolist(), LEFT, RIGHT, log=False)
    y = Axis([0, int(counts.max())], BOTTOM, TOP, log=False, zero=True, integer=True)
    left = (x.lo_px + (edges - x.lo) * x.per_unit).tolist()
    top = (y.lo_px + (counts - y.lo) * y.per_unit).tolist()
    y0 = y(0)
    body = [_axes(x, y, x_label, "steps")]
    body += [f'<rect class="bar" x="{x0:.1f}" y="{yc:.1f}" width="{max(0.5, x1 - x0 - 1):.1f}" height="{y0 - yc:.1f}">'
             f'<title>{lo:.4g}–{hi:.4g}{" " + escape(unit) if unit else ""}: {c} step{"" if c == 1 else "s"}</title></rect>'
             for x0, x1, yc, lo, hi, c in zip(left, left[1:], top, edges.tolist(), edges[1:].tolist(), counts.tolist())]
    return _figure("".join(body), title, str(escape(title)))


def stacked_bar(parts: Mapping[str, float | None], title: str, text: Callable[[float], str] = seconds,
                colours: Mapping[str, int] | None = None) -> Markup | None:
    """One horizontal bar split into named parts, with values (as ``text`` writes them, with
    their unit: durations by default) and shares in the caption, which is its legend.
    ``colours`` gives a part's palette colour (``p0``–``p9``) by its name, so that a category
    keeps its colour from bar to bar; other parts take the colours in order."""
    shown = {k: float(v) for k, v in parts.items()
             if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0}
    total = sum(shown.values())
    if total <= 0:
        return None
    width, left, body, keys = WIDTH - 2, 1.0, [], []
    for i, (name, value) in enumerate(shown.items()):
        w = width * value / total
        words = f"{escape(name)} {escape(text(value))} ({pct(value / total)})"
        colour = (colours or {}).get(name, i % 8)
        body.append(f'<rect class="seg p{colour}" x="{round(left, 1)}" y="2" width="{round(w, 1)}" height="24">'
                    f'<title>{words}</title></rect>')
        keys.append(f'<span class="key p{colour}">■</span> {words}')
        left += w
    caption = f"{escape(title)} (total {escape(text(total))}): {' '.join(keys)}"
    return _figure("".join(body), title, caption, css="chart bar-chart", height=28)


def scatter(points: list[tuple[float, float, str, str]], front: list[tuple[float, float]], x_label: str,
            y_label: str, title: str, note: str = "") -> Markup | None:
    """Points (x, y, label, href) each linking to its page, and the Pareto front as a line."""
    if not points:
        return None
    x, y = Axis([p[0] for p in points], LEFT, RIGHT), Axis([p[1] for p in points], BOTTOM, TOP)
    body = [_axes(x, y, x_label, y_label)]
    if front:
        body.append(f'<polyline class="front" points="{" ".join(f"{x(a)},{y(b)}" for a, b in front)}"/>')
    for a, b, label, href in points:
        body.append(f'<a href="{escape(href)}"><circle class="dot s0" cx="{x(a)}" cy="{y(b)}" r="4">'
                    f'<title>{escape(label)}</title></circle></a>')
    caption = (f"{escape(title)}; the line joins the Pareto front (no other point is both faster and more "
               f"frugal). Up and to the left is better.{' ' + str(escape(note)) if note else ''}")
    return _figure("".join(body), title, caption)
