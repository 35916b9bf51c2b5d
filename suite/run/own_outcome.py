"""What ``goodbench run-own`` says a sealed file will be shown as: where its clocks agree but the
board still reads its times as one clock (self-timed), why — in the board's own terms, from the
same decision (:mod:`suite.figures.clock_cover`). Torch-free."""
from __future__ import annotations

import statistics
from typing import Any

from suite.figures import clock_cover, clocks
from suite.record import results


def _ms(seconds: float) -> str:
    """A step time in milliseconds, two significant figures at least ("0.83 ms", "2.0 ms", "12 ms")."""
    ms = 1000 * seconds
    return f"{ms:.2f} ms" if ms < 1 else f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"


def _median(run: dict[str, Any]) -> float:
    """The run's median step as the clock's rule reads it (:func:`suite.figures.clock_cover.steps_held`):
    its window's p50, else the median of its step times (a run that failed has no window)."""
    p50 = results.step_time_s(run, "p50") if results.throughput(run) else None
    return p50 if isinstance(p50, (int, float)) else statistics.median(run["step_times_s"])


def _label(run: dict[str, Any]) -> str:
    """A run by its seed (and repeat, where repeated)."""
    repeat = f" repeat {run['repeat']}" if run.get("repeat") else ""
    return f"seed {run.get('seed')}{repeat}"


def one_clock_why(doc: dict[str, Any]) -> str | None:
    """Why the board will show the own-code document ``doc`` as timed by one clock (self-timed),
    never ranked, in words that follow "the clocks agree, but …" (None: every run is two clocks,
    :func:`suite.figures.clock_cover.stamped`)."""
    runs = [r for r in doc.get("runs") or [] if isinstance(r, dict)]
    if all(clock_cover.stamped(doc, r.get("run_id")) for r in runs):
        return None
    lines = []
    unheld = [r for r in runs if not clock_cover.steps_held(doc, r)]
    idle = [r for r in unheld if not r.get("step_times_s")]  # a run that failed before its first step
    if idle:
        lines.append(f"{', '.join(map(_label, idle))} timed no step for the second clock to hold")
    short = [r for r in unheld if r.get("step_times_s") and clock_cover.claimed_p50(r) < clocks.PER_STEP_S]
    if short:
        medians = [_median(r) for r in short]
        one = len(short) == 1
        which = "its median step" if len(runs) == 1 else \
            f"the median step{'' if one else 's'} of {', '.join(map(_label, short))}"
        figure = f" ({', '.join(map(_ms, medians))})"
        lines.append(f"{which}{figure} {'is' if one else 'are'} under the {1000 * clocks.PER_STEP_S:g} ms the second "
                     "clock holds on a CPU")
    summed = [(r, flaw) for r in unheld if r not in short and (flaw := clock_cover.window_flaw(doc, r)) is not None]
    if summed:
        run, flaw = summed[0]
        which = "its steady steps" if len(runs) == 1 else f"the steady steps of {', '.join(_label(r) for r, _ in summed)}"
        lines.append(f"{which} add up to {flaw.own:.4g} s on its clock{'' if len(summed) == 1 else ' (' + _label(run) + ')'} "
                     f"and {flaw.launcher:.4g} s on the launcher's, further apart than the "
                     f"{clocks.RELATIVE:.0%} + {1000 * clocks.WINDOW_S:g} ms the second clock holds a run's steps to")
    gaps = [r for r in runs if not clock_cover.edges_whole(doc, r.get("run_id"))]
    if gaps:
        lines.append(f"{', '.join(map(_label, gaps))} {'was' if len(gaps) == 1 else 'were'} not stamped whole "
                     "(from the start, in every process and on every rank)")
    return " and ".join(lines) + ", so the board counts it as one clock (self-timed), never ranked: its times are its own process's word"
