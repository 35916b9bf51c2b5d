"""The site's charts as inline SVG, drawn at build time in Python.

Every text that reaches a chart (titles, series names, tick and point labels) goes through
``markupsafe.escape``; coordinates are numbers this module formats itself. Each chart function
returns ``Markup`` (inserted as is by the autoescaping templates) or None when there is nothing
to draw.
"""
from __future__ import annotations

import math

import numpy as np
from markupsafe import Markup, escape

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 84, WIDTH - 16, 16, HEIGHT - 44
MAX_DOTS = 60  # a line with more points is drawn without per-point markers


def missing(value) -> bool:
    """True for None and NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def num(value, digits: int = 3) -> str:
    """A figure as text: ``digits`` significant digits, thousands separated from 1,000 on; "—" when missing."""
    if missing(value):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e3 else f"{value:,.0f}"
    return str(value)


def pct(value) -> str:
    """A share as a percentage with one decimal; "—" when missing."""
    return "—" if missing(value) else f"{100 * value:.1f}%"


class Axis:
    """A linear or log10 mapping from data values to pixels, with a handful of tick labels.

    ``log`` None picks log10 when all values are positive and span more than a factor of 50.
    """

    def __init__(self, values, lo_px: float, hi_px: float, log: bool | None = None):
        vals = [float(v) for v in values if v is not None and math.isfinite(v)]
        positive = [v for v in vals if v > 0]
        self.log = bool(log if log is not None else len(positive) == len(vals) and len(positive) > 1
                        and max(positive) / min(positive) > 50)
        data = [math.log10(v) for v in positive] if self.log else vals
        lo, hi = (min(data), max(data)) if data else (0.0, 1.0)
        if hi == lo:
            lo, hi = lo - (abs(lo) * 0.1 or 1.0), hi + (abs(hi) * 0.1 or 1.0)
        pad = (hi - lo) * 0.05
        self.lo, self.hi, self.lo_px, self.hi_px = lo - pad, hi + pad, lo_px, hi_px
        self.per_unit = (hi_px - lo_px) / (self.hi - self.lo)

    def __call__(self, value: float) -> float:
        v = math.log10(value) if self.log else float(value)
        return round(self.lo_px + (v - self.lo) * self.per_unit, 1)

    def ticks(self, n: int = 5) -> list[tuple[float, str]]:
        """(pixel, label) of ``n`` evenly spaced ticks across the axis."""
        out = []
        for k in range(n):
            v = self.lo + (self.hi - self.lo) * k / (n - 1)
            value = 10 ** v if self.log else v
            out.append((self(value), f"{value:,.0f}" if abs(value) >= 1e3 else f"{value:.3g}"))
        return out


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


def line_chart(series: dict[str, list[tuple[float, float | None]]], x_label: str, y_label: str, title: str,
               hline: tuple[str, float] | None = None, categories: list[str] | None = None) -> Markup | None:
    """Polylines, one per named series of (x, y) points; an optional labelled horizontal line.

    With ``categories`` the x values are indices into it and the x ticks are its names (used for
    suite versions). Lines of more than MAX_DOTS points get no per-point markers.
    """
    series = {name: [(a, b) for a, b in pts if b is not None and math.isfinite(b)] for name, pts in series.items()}
    series = {name: pts for name, pts in series.items() if pts}
    if not series:
        return None
    xs = [a for pts in series.values() for a, _ in pts]
    ys = [b for pts in series.values() for _, b in pts] + ([hline[1]] if hline else [])
    if categories is not None:
        xs = [-0.5, len(categories) - 0.5]
    x, y = Axis(xs, LEFT, RIGHT, log=False), Axis(ys, BOTTOM, TOP)
    ticks = [(x(i), name) for i, name in enumerate(categories)] if categories is not None else None
    body = [_axes(x, y, x_label, y_label, ticks)]
    if hline:
        hy = y(hline[1])
        body.append(f'<line class="target" x1="{LEFT}" y1="{hy}" x2="{RIGHT}" y2="{hy}"/>'
                    f'<text class="tick" x="{RIGHT - 4}" y="{hy - 4}" text-anchor="end">{escape(hline[0])}</text>')
    keys = []
    for i, (name, pts) in enumerate(series.items()):
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


def histogram(values: list[float], x_label: str, title: str, bins: int = 24) -> Markup | None:
    """Bars of a histogram of ``values``."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return None
    counts, edges = np.histogram(data, bins=min(bins, max(1, data.size)))
    x, y = Axis(edges.tolist(), LEFT, RIGHT, log=False), Axis([0, int(counts.max())], BOTTOM, TOP, log=False)
    left = (x.lo_px + (edges - x.lo) * x.per_unit).tolist()
    top = (y.lo_px + (counts - y.lo) * y.per_unit).tolist()
    y0 = y(0)
    body = [_axes(x, y, x_label, "steps")]
    body += [f'<rect class="bar" x="{x0:.1f}" y="{yc:.1f}" width="{max(0.5, x1 - x0 - 1):.1f}" height="{y0 - yc:.1f}">'
             f'<title>{lo:.4g}–{hi:.4g}: {c}</title></rect>'
             for x0, x1, yc, lo, hi, c in zip(left, left[1:], top, edges.tolist(), edges[1:].tolist(), counts.tolist())]
    return _figure("".join(body), title, str(escape(title)))


def stacked_bar(parts: dict[str, float | None], title: str, unit: str = "s") -> Markup | None:
    """One horizontal bar split into named parts, with values and shares in the caption."""
    parts = {k: float(v) for k, v in parts.items()
             if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0}
    total = sum(parts.values())
    if total <= 0:
        return None
    width, left, body, keys = WIDTH - 2, 1.0, [], []
    for i, (name, value) in enumerate(parts.items()):
        w = width * value / total
        text = f"{escape(name)} {num(value)} {escape(unit)} ({pct(value / total)})"
        body.append(f'<rect class="seg p{i % 8}" x="{round(left, 1)}" y="2" width="{round(w, 1)}" height="24">'
                    f'<title>{text}</title></rect>')
        keys.append(f'<span class="key p{i % 8}">■</span> {text}')
        left += w
    caption = f"{escape(title)} (total {num(total)} {escape(unit)}): {' '.join(keys)}"
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
