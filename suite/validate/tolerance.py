"""How far a reported figure may be from what the validator recomputes or bounds it by."""
from __future__ import annotations

import datetime as dt
import math
from typing import Any

REL_TOLERANCE = 0.01       # reported vs recomputed figures: 1%
POWER_MARGIN = 1.10        # mean power may reach the board power + 10%
# Clock skew allowed for "not in the future": created_at may be at most this far after the time
# the file is validated (submitted). Stamps are to the second and NTP keeps clocks within
# milliseconds of each other; a writer's clock that runs ahead by more costs an honest submitter
# only a wait (submit again later), while more slack lets a file claim to end after it was stored
# (5 minutes before rules v7).
CLOCK_SLACK = dt.timedelta(seconds=60)


def close(reported: Any, recomputed: Any, abs_tol: float = 1e-12) -> bool:
    """Both None, or both numbers within :data:`REL_TOLERANCE` (or ``abs_tol``) of each other."""
    if reported is None or recomputed is None:
        return reported is None and recomputed is None
    if not isinstance(reported, (int, float)) or not isinstance(recomputed, (int, float)):
        return False
    return math.isclose(reported, recomputed, rel_tol=REL_TOLERANCE, abs_tol=abs_tol)


def same(got: Any, want: Any) -> bool:
    """Equal, with floats (also inside dicts and lists) within the relative tolerance."""
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(same(got[k], v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, float):
        return close(got, want)
    return got == want
