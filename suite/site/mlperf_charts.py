"""Charts of the imported MLPerf Training history, as inline SVG drawn at build time: the best
score per round and size class (a line per class, the accelerator named at every point), and
score against accelerator count (scaling).

Every text reaching a chart goes through ``markupsafe.escape``; coordinates are numbers this
module formats. Each function returns ``Markup`` or None when there is nothing to draw.
"""
from __future__ import annotations

from markupsafe import Markup, escape

from suite.site.charts import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, Axis
from suite.site.formatting import num
from suite.site.mlperf_model import CPU_ONLY, SIZE_UNKNOWN, Row

MAX_SERIES = 6  # classes s0…s5 of the site's palette
GUTTER = 76      # the history chart's right margin, where each line's size class is written
LABEL_GAP = 12   # the least vertical distance between two of those labels (11 px text)
SHORT = {CPU_ONLY: "CPU only", SIZE_UNKNOWN: "size not given"}  # the margin's labels of the classes without a count


def _frame(x_ticks: list[tuple[float, str]], y: Axis, x_label: str, y_label: str, right: float = RIGHT) -> list[str]:
    parts = [f'<line class="axis" x1="{LEFT}" y1="{BOTTOM}" x2="{right}" y2="{BOTTOM}"/>'
             f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{BOTTOM}"/>']
    for px, label in x_ticks:
        parts.append(f'<text class="tick" x="{px}" y="{BOTTOM + 16}" text-anchor="middle">{escape(label)}</text>')
    for px, label in y.ticks():
        parts.append(f'<text class="tick" x="{LEFT - 6}" y="{px + 4}" text-anchor="end">{escape(label)}</text>'
                     f'<line class="grid" x1="{LEFT}" y1="{px}" x2="{right}" y2="{px}"/>')
    mid = (TOP + BOTTOM) / 2
    y_text = y_label + (" (log)" if y.log else "")
    parts.append(f'<text class="label" x="{(LEFT + right) / 2}" y="{HEIGHT - 6}" text-anchor="middle">{escape(x_label)}</text>'
                 f'<text class="label" x="12" y="{mid}" text-anchor="middle" transform="rotate(-90 12 {mid})">'
                 f'{escape(y_text)}</text>')
    return parts


def _figure(body: list[str], title: str, caption: Markup | str) -> Markup:
    return Markup(f'<figure><svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">'
                  f'{"".join(body)}</svg><figcaption>{caption}</figcaption></figure>')


def _label(row: Row) -> str:
    return f"{row.family} × {row.count if row.count is not None else '?'}"


def _spread(wanted: list[float], low: float, high: float, gap: float) -> list[float]:
    """Label heights as near ``wanted`` (ascending) as they can be while ``gap`` apart and within
    [low, high]: pushed down past each other, then back up from ``high`` where that overflowed
    (a label that collides with nothing stays where it is wanted)."""
    placed: list[float] = []
    for w in wanted:
        placed.append(max(w, low, placed[-1] + gap if placed else low))
    for i in range(len(placed) - 1, -1, -1):
        placed[i] = min(placed[i], high if i == len(placed) - 1 else placed[i + 1] - gap)
    return placed


def history_chart(rounds: list[str], sizes: list[str], best: dict[tuple[str, str], Row], title: str,
                  benchmark: str, breaks: set[str] | None = None) -> Markup | None:
    """The best score per round (x, oldest first) for each size class (a line each, log
    minutes up); every point names its accelerator, count and submitter in its tooltip. Each
    line is labelled with its size class in the right margin, level with its last point, the
    labels kept apart so none sits on another or on a line. A point of a row under another
    benchmark name (an earlier name of ``benchmark``) says so. A round in ``breaks`` (the
    quality target changed) starts the lines anew."""
    shown = sizes[:MAX_SERIES]
    values = [best[(r, s)].minutes for r in rounds for s in shown if (r, s) in best]
    if not values:
        return None
    right = RIGHT + 28 - GUTTER  # the plot ends where the labels' margin begins
    step = (right - LEFT) / max(1, len(rounds))
    x = {r: round(LEFT + step * (i + 0.5), 1) for i, r in enumerate(rounds)}
    y = Axis(values, BOTTOM, TOP, log=True)
    body = _frame([(x[r], r) for r in rounds], y, "MLPerf Training round", "best official score (minutes)", right)
    keys, ends = [], []
    for i, size in enumerate(shown):
        css = f"s{i}"
        segments: list[list[tuple[float, float, Row, str]]] = [[]]
        for r in rounds:
            if breaks and r in breaks and segments[-1]:
                segments.append([])
            if (r, size) in best:
                row = best[(r, size)]
                segments[-1].append((x[r], y(row.minutes), row, r))  # type: ignore[arg-type]
        for seg in segments:
            if len(seg) > 1:
                body.append(f'<polyline class="series {css}" points="{" ".join(f"{px},{py}" for px, py, _, _ in seg)}"/>')
            for px, py, row, r in seg:
                tip = (f"{r} · {size}{' accelerators' if size[0].isdigit() or size.startswith('over') else ''}: "
                       f"{num(row.minutes)} min — {_label(row)} ({row.submitter}, {row.system}"
                       f"{', as ' + row.benchmark if row.benchmark != benchmark else ''}; {row.category})")
                body.append(f'<circle class="dot {css}{" other" if row.preview_or_research else ""}" cx="{px}" cy="{py}" r="4">'
                            f'<title>{escape(tip)}</title></circle>')
        last = [p for seg in segments for p in seg]
        if last:
            ends.append((last[-1][1], last[-1][0], css, size))
        keys.append(f'<span class="key {css}">■</span> {escape(size)}')
    ends.sort()
    for (py, px, css, size), ly in zip(ends, _spread([e[0] for e in ends], TOP + 4, BOTTOM, LABEL_GAP)):
        body.append(f'<line class="leader {css}" x1="{px + 5}" y1="{py}" x2="{right + 4}" y2="{ly}"/>'
                    f'<text class="point-label {css}" x="{right + 7}" y="{ly + 4}">{escape(SHORT.get(size, size))}</text>')
    caption = Markup(f"{escape(title)}. Lines: accelerators per system, labelled at the right — {' '.join(keys)}. "
                     "A hollow point is a preview or research system's. "
                     "Hover a point for its accelerator, submitter and category; the table below names each.")
    return _figure(body, title, caption)


def scaling_chart(rows: list[Row], title: str) -> Markup | None:
    """Official score against accelerator count (both log), one series per round (newest six);
    a point's tooltip names the submitter and system."""
    scored = [r for r in rows if r.minutes is not None and r.count]
    if len({r.count for r in scored}) < 2:
        return None
    rounds = sorted({r.round for r in scored}, key=lambda n: tuple(int(p) for p in n.lstrip("v").split(".")))[-MAX_SERIES:]
    scored = [r for r in scored if r.round in rounds]
    x = Axis([r.count for r in scored], LEFT, RIGHT, log=True)
    y = Axis([r.minutes for r in scored], BOTTOM, TOP, log=True)
    body = _frame(x.ticks(), y, "accelerators (log)", "official score (minutes)")
    keys = []
    for i, rnd in enumerate(rounds):
        css = f"s{i}"
        mine = sorted((r for r in scored if r.round == rnd), key=lambda r: (r.count, r.minutes))
        for r in mine:
            tip = f"{rnd} · {r.count} × {r.accelerator}: {num(r.minutes)} min ({r.submitter}, {r.system})"
            body.append(f'<circle class="dot {css}" cx="{x(r.count or 1)}" cy="{y(r.minutes or 0.0)}" r="3.5">'
                        f'<title>{escape(tip)}</title></circle>')
        keys.append(f'<span class="key {css}">■</span> {escape(rnd)}')
    caption = Markup(f"{escape(title)} — {' '.join(keys)}. Down and to the right: more accelerators, less time.")
    return _figure(body, title, caption)
