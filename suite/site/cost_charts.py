"""The MLPerf cost charts as inline SVG drawn at build time: a benchmark's cost to train across
rounds (every priced result of a round a faint point, the round's cheapest joined by a line: does
training get cheaper?) and one round's cost against time with the Pareto front of the two (the
cheapest-to-target view). Costs are list prices (suite/cost/prices.toml), never what was paid.

Every text reaching a chart goes through ``markupsafe.escape``; each function returns ``Markup``
or None when there is nothing to draw.
"""
from __future__ import annotations

from typing import cast

from markupsafe import Markup, escape

from suite.site.charts import BOTTOM, LEFT, RIGHT, TOP, Axis
from suite.site.formatting import num, usd
from suite.site.mlperf_charts import _figure, _frame
from suite.site.mlperf_model import Row

WORDS = "Costs are accelerator-hours × the on-demand list price of each accelerator's class, not what a submitter paid"
ORDER = ("Costs, and so which result is cheapest, are the score's time only (MLPerf's score excludes init): the "
         "cost with init, an estimate under each cost in the tables, can be many times it on the largest systems "
         "and can order them differently")


def _who(r: Row) -> str:
    return f"{r.family} × {r.count if r.count is not None else '?'} ({r.submitter}, {r.system})"


def _usd(r: Row) -> float:
    """A priced row's cost (the charts draw priced rows only)."""
    return cast(float, r.cost_usd)


def _minutes(r: Row) -> float:
    """A shown row's official score in minutes (the chart draws scored rows only)."""
    return cast(float, r.minutes)


def _tip(r: Row) -> str:
    with_init = "" if r.cost_with_init_usd is None else f"; ≈{usd(r.cost_with_init_usd)} with init"
    return f"{r.round}: {usd(r.cost_usd)} in {num(r.minutes)} min — {_who(r)} (score time only{with_init})"


def history(rounds: list[str], priced: dict[str, list[Row]], title: str,
            breaks: set[str] | None = None) -> Markup | None:
    """Cost to train per round (x, oldest first; log USD up): each priced result of a round a
    faint point, the round's cheapest a filled one, the cheapest joined across rounds; a round in
    ``breaks`` (the quality target changed) starts the line anew."""
    shown = [r for r in rounds if priced.get(r)]
    if not shown:
        return None
    step = (RIGHT - LEFT) / max(1, len(rounds))
    x = {r: round(LEFT + step * (i + 0.5), 1) for i, r in enumerate(rounds)}
    y = Axis([_usd(p) for r in shown for p in priced[r]], BOTTOM, TOP, log=True)
    body = _frame([(x[r], r) for r in rounds], y, "MLPerf Training round", "cost to train (USD)")
    cheapest = []
    for rnd in shown:
        for p in priced[rnd]:
            body.append(f'<circle class="dot faint" cx="{x[rnd]}" cy="{y(_usd(p))}" r="2.5">'
                        f'<title>{escape(_tip(p))}</title></circle>')
        cheapest.append(min(priced[rnd], key=_usd))
    segments: list[list[Row]] = [[]]
    for p in cheapest:
        if breaks and p.round in breaks and segments[-1]:
            segments.append([])
        segments[-1].append(p)
    for seg in (s for s in segments if len(s) > 1):
        points = " ".join(f"{x[p.round]},{y(_usd(p))}" for p in seg)
        body.append(f'<polyline class="series s0" points="{points}"/>')
    for p in cheapest:
        body.append(f'<circle class="dot s0" cx="{x[p.round]}" cy="{y(_usd(p))}" r="4">'
                    f'<title>{escape("cheapest of " + _tip(p))}</title></circle>')
    caption = Markup(f"{escape(title)}. The line joins each round's cheapest priced result (anew where the quality "
                     f"target changed); faint points are the "
                     f"round's other priced results. {escape(WORDS)}; hover a point for its system. "
                     f"{escape(ORDER)}.")
    return _figure(body, title, caption)


def pareto(rows: list[Row], front: list[Row], title: str) -> Markup | None:
    """Cost (log USD) against time (log minutes) of one round × benchmark's priced results, the
    Pareto front (no result both faster and cheaper) drawn as a staircase through its points."""
    shown = [r for r in rows if r.cost_usd is not None and r.minutes]
    if not front or not shown:
        return None
    x = Axis([_minutes(r) for r in shown], LEFT, RIGHT)
    y = Axis([_usd(r) for r in shown], BOTTOM, TOP)  # log where the costs span over 50×
    body = _frame(x.ticks(), y, "official score (minutes" + (", log)" if x.log else ")"), "cost to train (USD)")
    on_front = {id(r) for r in front}
    for r in shown:
        if id(r) not in on_front:
            body.append(f'<circle class="dot faint" cx="{x(_minutes(r))}" cy="{y(_usd(r))}" r="3">'
                        f'<title>{escape(_tip(r))}</title></circle>')
    stairs = []
    for a, b in zip(front, front[1:]):
        stairs += [f"{x(_minutes(a))},{y(_usd(a))}", f"{x(_minutes(b))},{y(_usd(a))}"]
    stairs.append(f"{x(_minutes(front[-1]))},{y(_usd(front[-1]))}")
    if len(front) > 1:
        body.append(f'<polyline class="series s1" points="{" ".join(stairs)}"/>')
    for r in front:
        body.append(f'<circle class="dot s1" cx="{x(_minutes(r))}" cy="{y(_usd(r))}" r="4.5">'
                    f'<title>{escape("on the front: " + _tip(r))}</title></circle>')
    caption = Markup(f"{escape(title)}. Filled points: the Pareto front (no other result is both faster and "
                     f"cheaper), the staircase through them; faint points: the other priced results. "
                     f"Down and to the left is cheaper and faster. {escape(WORDS)}. {escape(ORDER)}.")
    return _figure(body, title, caption)
