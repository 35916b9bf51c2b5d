"""The copy rules find runs of one curve among many at once (suite/trust/fingerprint.py:
``same_curve_pairs``, all pairs in one array pass); each pair they find, and none more, is one that
the definition a pair at a time (``same_curve``) calls one run's."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.trust import fingerprint

STEPS = ((10, 20, 30, 40), (10, 20, 30, 50))
NAMES = ("val_loss", "train_loss", "accuracy")
BASE = {"val_loss": (4.1, 3.2, 2.5, 2.1), "train_loss": (4.0, 3.0, 2.4, 2.0), "accuracy": (0.9, 0.9, 0.9, 0.9)}
# none, far within SAME_CURVE_REL (1e-3), just within, just beyond, an honest other seed's distance
SHIFTS = (0.0, 1e-6, 9e-4, 1.1e-3, 0.03)
WHOLE = (0.0, 0.0, 1e-6, 9e-4, 1.1e-3, 0.03)  # a run's own shift: copies drawn twice as often


@st.composite
def runs(draw) -> list[dict]:
    """2 to 6 runs whose curves are near copies of one curve: each value shifted by one of
    ``SHIFTS`` (one shift per run, or per value), some values null or missing, some runs on
    other evaluation steps or without a metric, a few with no curve at all."""
    out = []
    for _ in range(draw(st.integers(2, 6))):
        if draw(st.integers(0, 9)) == 0:
            out.append({"curve": []})
            continue
        steps = STEPS[draw(st.integers(0, 9)) == 0]
        names = [n for n in NAMES if draw(st.integers(0, 4)) > 0] or ["val_loss"]
        whole = draw(st.sampled_from(WHOLE))
        points = []
        for k, step in enumerate(steps):
            point: dict = {"step": step}
            for name in names:
                hole = draw(st.integers(0, 7))
                if hole == 0:
                    continue  # no key
                shift = whole if draw(st.booleans()) else draw(st.sampled_from(SHIFTS))
                point[name] = None if hole == 1 else BASE[name][k] * (1 + shift * draw(st.sampled_from((1, -1))))
            points.append(point)
        out.append({"curve": points})
    return out


@pytest.mark.slow  # 300 generated examples: 4 s (the fast loop stays under 3 minutes)
@settings(max_examples=300, deadline=None)
@given(runs(), st.data())
def test_the_pairs_found_at_once_are_the_pairs_found_one_at_a_time(found_runs, data):
    curves = [fingerprint.curve_of(r) for r in found_runs]
    n = len(curves)
    one_by_one = [(i, j) for i in range(n) for j in range(i + 1, n) if fingerprint.same_curve(curves[i], curves[j])]
    assert sorted(fingerprint.same_curve_pairs(curves)) == one_by_one  # each pair once
    asked = data.draw(st.sets(st.integers(0, n - 1), min_size=1))
    assert sorted(fingerprint.same_curve_pairs(curves, asked)) == sorted(
        (i, j) for i in asked for j in range(n) if j != i and fingerprint.same_curve(curves[i], curves[j]))
