"""Average ranks in numpy (torch-free, and without scipy, whose ``scipy.stats`` import took 1.3 s
of a dlrm-small run's start on 2 server cores)."""
from __future__ import annotations

import numpy as np


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given their average rank: ``scipy.stats.rankdata``'s default, value for
    value (integers and halves, exact in float64). Not for NaN: rankdata ranks none of them."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    return (last - (counts - 1) / 2.0)[inverse]
