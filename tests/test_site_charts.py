"""The site's inline SVG charts (suite/site/charts.py): escaping, and long lines."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from suite.site import charts

PAYLOAD = "<script>alert(1)</script>\"'><img src=x onerror=alert(1)>"


def test_charts_escape_every_label():
    chart = str(charts.line_chart({PAYLOAD: [(1, 2.0), (2, 3.0)]}, PAYLOAD, PAYLOAD, PAYLOAD,
                                  hline=(PAYLOAD, 2.5), categories=[PAYLOAD, PAYLOAD, PAYLOAD]))
    chart += str(charts.stacked_bar({PAYLOAD: 1.0, "x": 2.0}, PAYLOAD, lambda v: PAYLOAD))
    chart += str(charts.scatter([(1.0, 2.0, PAYLOAD, PAYLOAD)], [(1.0, 2.0)], PAYLOAD, PAYLOAD, PAYLOAD, PAYLOAD))
    chart += str(charts.histogram([1.0, 2.0, 2.5], PAYLOAD, PAYLOAD))
    assert PAYLOAD not in chart and "<script" not in chart and "<img" not in chart
    assert chart.count("&lt;script&gt;") > 10


def test_long_lines_drop_their_markers_but_keep_the_line():
    chart = str(charts.line_chart({"loss": [(i, 1.0 / (i + 1)) for i in range(charts.MAX_DOTS + 1)]}, "x", "y", "t"))
    assert "<polyline" in chart and "<circle" not in chart


def _ticks(svg: str, anchor: str) -> list[str]:
    """The tick labels of one axis: x ticks are centred, y ticks end at the axis."""
    return re.findall(rf'<text class="tick" x="[^"]*" y="[^"]*" text-anchor="{anchor}">([^<]*)</text>', svg)


def _value(label: str) -> float:
    return float(label.replace(",", ""))


@pytest.mark.parametrize("values", [[0.0375, 0.3], [45, 128], [0, 69], [0.239, 2.41], [4304, 22521],
                                    [1.58e-4, 9.7e-4], [3, 3], [0.04, 0.06], [-3.2, 5.5]])
def test_linear_ticks_are_multiples_of_a_1_2_5_step_and_cover_the_data(values):
    ticks = [_value(label) for _, label in charts.Axis(values, 0, 100, log=False).ticks()]
    assert 3 <= len(ticks) <= 7
    assert ticks[0] <= min(values) and ticks[-1] >= max(values)
    if min(values) >= 0:
        assert ticks[0] >= 0  # non-negative data: never a negative axis
    step = ticks[1] - ticks[0]
    assert round(step / 10 ** math.floor(math.log10(step) + 1e-9), 6) in (1, 2, 5)
    assert all(math.isclose(b - a, step, rel_tol=1e-6) for a, b in zip(ticks, ticks[1:]))
    assert all(math.isclose(t / step, round(t / step), abs_tol=1e-6) for t in ticks)  # 0, 50, 100 — not 45, 72.5


def test_histogram_axes_start_at_zero_with_nice_ticks():
    times = [0.0401, 0.0412, 0.0415, 0.0433, 0.0451, 0.0489, 0.061]  # seconds: an axis once began at -0.0375
    chart = str(charts.histogram(times, "step time (s)", "t", bins=4))
    x, y = _ticks(chart, "middle"), _ticks(chart, "end")
    assert x == ["0.040", "0.045", "0.050", "0.055", "0.060", "0.065"]  # a tight spread keeps its detail
    assert y == ["0", "1", "2", "3", "4", "5"]  # counts: whole numbers from 0 (no -3.45 steps)
    spread = _ticks(str(charts.histogram([0.00016, 0.0002, 0.00021, 0.00097], "s", "t")), "middle")
    assert spread == ["0", "0.0002", "0.0004", "0.0006", "0.0008", "0.0010"]  # from 0 when the minimum is small
    assert "-" not in "".join(x + y)


def test_log_ticks_are_powers_of_ten_and_large_values_are_short():
    assert [label for _, label in charts.Axis([3, 2e5], 0, 100).ticks()] == \
        ["1", "10", "100", "1,000", "10,000", "100,000", "1M"]
    assert [label for _, label in charts.Axis([3, 2e8], 0, 100).ticks()] == ["1", "100", "10,000", "1M", "100M", "10G"]
    assert [label for _, label in charts.Axis([0, 2.6e8], 0, 100).ticks()] == \
        ["0", "50M", "100M", "150M", "200M", "250M", "300M"]


def test_a_time_category_keeps_its_colour_on_every_bar_of_a_run_page():
    """The phases bar and the goodput bar colour training, data waiting, evaluation… the same,
    whichever parts a run has (a colour by position would repaint them bar by bar)."""
    from suite.site.run_page import TIME_COLOURS, _parts

    phases = str(charts.stacked_bar(_parts({"init": 1.0, "train": 5.0, "eval": 1.0}), "phases", colours=TIME_COLOURS))
    badput = str(charts.stacked_bar(_parts({"productive": 4.0, "data_wait": 1.0, "eval": 1.0}), "goodput",
                                    colours=TIME_COLOURS))

    def colour(svg: str, name: str) -> str:
        return re.search(rf'class="seg (p\d)"[^>]*><title>{re.escape(name)} ', svg).group(1)

    assert colour(phases, "training") == colour(badput, "productive")
    assert colour(phases, "evaluation") == colour(badput, "evaluation")
    assert len({colour(badput, "productive"), colour(badput, "waiting for data (in training)"), colour(badput, "evaluation")}) == 3
    assert len(set(TIME_COLOURS.values())) == len(TIME_COLOURS) - 1  # one colour each; train = productive
    css = Path(charts.__file__).with_name("static").joinpath("style.css").read_text()
    assert all(f".p{i} " in css for i in set(TIME_COLOURS.values()))
