"""``goodbench reproduce FILE``: train a results file's runs again on this machine, with the
settings they recorded, and say for each run whether it reproduced.

No self-reported file can prove that it is not made up: a forger who rewrites every record of a
run consistently passes every rule of the validator (docs/rules.md). Training the run again can
catch that, and this is the command that does it (docs/rules.md, "Reproducing a result"), one
module per step:

1. :mod:`~suite.run.reproduce.inputs`: read the original as bytes (within the validator's limits)
   and hash them: the reproduction names the original by the sha256 of its bytes, which is also
   its name in the results store; validate it first (a file the validator refuses is refused on
   one line: what validation cannot catch is what this command is for); the runs chosen, and
   what this machine offers;
2. :mod:`~suite.run.reproduce.planning`: plan each chosen run — the same workload version and spec
   hash (an open-division run's declared change applied), seed, scale, precision, compile mode
   and parallel layout — or give the one-line reason this machine cannot (``CannotReproduce``),
   with the curve tolerance each run is held to (:mod:`~suite.figures.reproducibility`);
3. :mod:`~suite.run.reproduce.training`: train them (in this process, or under torchrun like
   ``goodbench run --nproc-per-node`` when the original ran several processes), and compare
   each re-run with its original (:mod:`~suite.run.reproduce.comparison`): the eval curve point by
   point, the steady-state throughput as a ratio with its 95% interval, the time to target; a
   run whose throughput's interval is not within the tolerance is trained once more before that
   is called a difference or inconclusive;
4. write a results file of the re-runs whose ``settings.reproduces`` holds the original's
   sha256 and each run's comparison and verdict (``reproduced``, ``differs: <why>`` or
   ``inconclusive: <why>``: the throughput's part follows from its interval, and a slower one
   under the re-run's own load is inconclusive), and
   report it (:mod:`~suite.run.reproduce.reporting`).

The command itself is suite/commands/reproduce.py. Torch-free at import (the command line
imports it); training imports torch.
"""
