"""The runner's progress events as lines on stderr (``goodbench run``, ``reproduce`` and, by
default, one's own loop under ``goodbench.Benchmark``)."""
from __future__ import annotations

import sys


def say(*parts) -> None:
    """Print a progress line on stderr, flushed."""
    print(*parts, file=sys.stderr, flush=True)


# seconds from own code's start evaluation to its first step that the first step's line says: work done
# there (a compile, a warm-up, a DataLoader built) is time to train; the library's own gap is milliseconds
NOTED_S = 0.1

# fields every event of a run carries that are not its figures (suite/run/session.py adds the repeat)
BOOKKEEPING = frozenset({"step", "repeat", "repeats"})


class ProgressPrinter:
    """Formats the runner's progress events as lines on stderr."""

    def __init__(self):
        self.label, self.max_steps = "", 0

    def __call__(self, event: str, **f) -> None:
        if event == "run_start":
            again = f" repeat {f['repeat']}/{f['repeats']}" if f.get("repeat") else ""
            self.label, self.max_steps = f"{f['workload']} seed {f['seed']}{again}", f["max_steps"]
            model = f": a {_count(f['parameters'])}-parameter model at {f['scale']} scale" if f.get("parameters") else ""
            say(f"[{self.label}] training, at most {self.max_steps} steps{model}")
            if (f.get("after_start_eval_s") or 0) >= NOTED_S:  # own code's clock started at its start evaluation
                say(f"[{self.label}] the first step comes {f['after_start_eval_s']:.3f} s after the start evaluation: "
                    "time to train (call run.evaluate_pinned(model) last before the loop)")
        elif event == "step":
            per_step = f["elapsed"] / f["step"]
            eta = per_step * (self.max_steps - f["step"])
            say(f"[{self.label}] step {f['step']}/{self.max_steps}  loss {f['loss']:.4f}  "
                f"{1 / per_step:.2f} steps/s  ETA ≤ {eta:.0f} s")
        elif event == "eval":
            quality = "  ".join(f"{k} {v:.4f}" for k, v in f.items() if k not in BOOKKEEPING)
            say(f"[{self.label}] eval at step {f['step']}: {quality}")
        elif event == "target":  # the run stops training here: a new user's loop ended at step 150 of 300 unsaid
            say(f"[{self.label}] target {f['target']} met at step {f['step']}, {f['time_s']:.1f} s from the run's "
                "start: training stops here (time to target ends at the first evaluation that meets it)")
        elif event == "ceiling":
            if f.get("stopped"):
                say(f"measuring the {f['precision']} matmul ceiling of this device once more: a run stood above the "
                    "one measured before the runs, and the file would be refused without it (Ctrl-C again skips it)")
            else:
                say(f"measuring the {f['precision']} matmul ceiling of this device"
                    + (f" again after the runs (and on, for at most {f['most_s']:g} s, only if a run stood above "
                       "both measurements)" if f.get("again") else ""))
        elif event == "ceiling_not_again":
            say(f"the {f['precision']} matmul ceiling was not measured again after the runs ({f['why']}): "
                "the file holds the one measured before them, and the runs' records")
        elif event == "size_ahead":
            say(f"warning: {f['line']}")
        elif event == "warnings":
            for warning in f["warnings"]:
                say(f"[{self.label}] warning: {warning}")
        elif event == "skip":
            say(f"[{f['workload']}] skipped: {f['reason']}")
        elif event == "download":
            say(f"[{f['workload']}] {f['line']}")
        elif event == "killed":
            why = "injected failure" if f["cause"].startswith("injected") else f["cause"]
            say(f"[{f['workload']} seed {f['seed']}] killed (SIGKILL) at step {f['step']}: "
                f"{why}; restarting the worker")
        elif event == "unstopped":
            kept = "its partial record, written before, is kept" if f["kept"] else \
                "it wrote no record (goodbench run ... --resume DIR goes on from the newest checkpoint)"
            say(f"[{f['workload']} seed {f['seed']}] the training worker had not ended {f['waited_s']:g} s after "
                f"the interrupt: killed (SIGKILL); {kept}")
        elif event == "resumed":
            label, skipped = f"[{f['workload']} seed {f['seed']}]", f.get("skipped") or []
            for passed in skipped:  # each on its own line: a corrupt checkpoint is never passed over unsaid
                say(f"{label} checkpoint {passed['file']} skipped: {passed['reason']}")
            none = f"no usable checkpoint ({len(skipped)} corrupt)" if skipped else "no checkpoint"
            say(f"{label} " + (f"resumed from the checkpoint of step {f['step']}" if f["step"]
                               else f"restarted from step 0: {none} to resume from"))
        elif event == "finished":
            say(f"[{f['workload']} seed {f['seed']}] finished before the restart "
                f"({f['status']}): its record is kept")


def _count(n: int) -> str:
    """A parameter count as people say it: 124 M, 1.24 B, 53.6 k."""
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return str(n)


RUN_UNDER_LOAD = ("this run is flagged \"measured under load\" and left out of the site's comparisons if they use half a core "
                  "or more at its start or its end, or on average over it (goodbench check says so before a run)")
"""What a run's records are checked for (:func:`suite.figures.load.under_load`): said as the test it is,
not as a certainty (a load gone by the run's start once read "will be flagged", and was not)."""


def warn_if_busy(consequence: str = RUN_UNDER_LOAD) -> None:
    """Say at a run's start when other processes use the machine (``goodbench check``'s test), and
    ``consequence``: what the load does to what this command measures (a run's: the test its own
    records are held to, :data:`RUN_UNDER_LOAD`)."""
    from suite.figures import load
    from suite.meters import host_load

    why = load.under_load({"start": host_load.snapshot()})
    if why:
        say(f"warning: {why.replace('at its start', 'now')}: {consequence}")
