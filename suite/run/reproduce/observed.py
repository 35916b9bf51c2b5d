"""What a reproduction of own code says of the reviewer's machine, as the reviewer's goodbench sees
it outside the sandbox (docs/own-code.md, "Reproducing"). The re-run's file is written by the
reviewed script's process, so every word of it is the script's: a script once rewrote
``system.host.os`` in it, and the reviewer signed that. Before the file is stamped, compared or
signed, goodbench replaces what it measures itself:

- the header — ``schema_version``, ``rules_version``, ``suite``, ``created_at`` — as
  :func:`suite.record.results.new_document` writes it now;
- ``system``, described by goodbench (:func:`suite.run.system.describe`) for the device the
  re-run's runs name (CUDA only where goodbench sees it), named by the reviewer's
  ``--system-name`` (and ``--system-overrides``), never the script's. It is described in a short
  child process of goodbench's own (``python -m suite.run.reproduce.observed``), so that the
  reproducing process never touches CUDA: a CUDA context it held would sit on the GPU through the
  next re-run, taking its memory and counted there as another process on the GPU;
- every run's ``host_load``: goodbench's snapshots of the machine (:func:`suite.meters.host_load.snapshot`)
  just before the sandbox started and just after it exited — once its processes are gone
  (:mod:`suite.run.reproduce.lingering`: bwrap freeing a full private /tmp outlived it), any
  still there after the wait left out — and what the other processes used
  over the re-run (``during``: a :class:`suite.meters.host_load.Watch` outside the sandbox, told
  that the sandbox and every process under it are the re-run's own, so that a process the script
  starts is never "another process" to excuse a slower re-run) — inside, in its own process
  namespace, the script sees none of the machine's other processes, so its own snapshots
  counted none — with ``gpu_other_processes_end`` null (not measured outside the sandbox).

The runs' figures, curves and settings stay the script's word: the second clock
(:mod:`suite.run.reproduce.stamping`) and the comparison with the original are what hold them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.meters import host_load
from suite.record import results
from suite.record.errors import GoodbenchError
from suite.trust.labels import names_withheld

HEADER = ("schema_version", "rules_version", "suite", "created_at")


@dataclass(frozen=True)
class Observer:
    """The reviewer's naming of this machine (``--system-name``, ``--system-overrides``)."""

    system_name: str | None = None
    overrides: dict[str, Any] | None = field(default=None, hash=False)

    @staticmethod
    def load(left_out: Collection[int] = ()) -> dict[str, Any]:
        """The machine's load now, seen from outside the sandbox; ``left_out``: the sandbox's
        processes still tearing it down (:mod:`suite.run.reproduce.lingering`), and theirs."""
        return host_load.snapshot(roots=left_out)

    @staticmethod
    def watch() -> host_load.Watch:
        """A started watch of the other processes' load over a re-run, from outside the sandbox
        (the sandbox's pid given to its :meth:`~suite.meters.host_load.Watch.own` once started)."""
        return host_load.Watch().start()

    def described(self, raw: bytes, start: dict[str, Any], end: dict[str, Any],
                  during: dict[str, Any] | None = None) -> bytes:
        """The re-run's file ``raw`` with goodbench's header, ``system`` and, on every run, the
        load snapshots ``start`` and ``end`` and the watch's ``during`` (None: not watched);
        :class:`GoodbenchError` where it holds no runs."""
        doc = json.loads(raw)
        if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) \
                or not all(isinstance(run, dict) for run in doc["runs"]):
            raise GoodbenchError("the re-run's file holds no runs")
        named = sorted({str(run.get("device")).split(":")[0] for run in doc["runs"]})
        own = results.new_document(self.system(named), {}, doc["runs"])  # its header and system: the rest stays the file's
        for run in doc["runs"]:
            run["host_load"] = {"start": names_withheld(start), "during": names_withheld(during),
                                "end": names_withheld(end), "gpu_other_processes_end": None}
        merged = {name: own[name] for name in HEADER}
        merged.update({name: value for name, value in doc.items() if name not in HEADER})
        merged["system"] = own["system"]
        return results.dumps(merged).encode()

    def system(self, devices: list[str]) -> dict[str, Any]:
        """This machine's ``system`` description for runs on ``devices`` (their device types),
        made in a child process (:func:`describe`) that holds CUDA only while it lives."""
        asked = json.dumps({"devices": devices, "system_name": self.system_name, "overrides": self.overrides})
        try:  # -P and goodbench's own folder: the reviewed checkout (the working folder) is not on its path
            done = subprocess.run([sys.executable, "-P", "-m", __name__], input=asked, capture_output=True, text=True,
                                  timeout=CHILD_TIMEOUT_S, cwd=GOODBENCH_ROOT,
                                  env={**os.environ, "PYTHONPATH": str(GOODBENCH_ROOT)})
        except subprocess.TimeoutExpired:
            raise GoodbenchError(f"describing this machine took over {CHILD_TIMEOUT_S} s") from None
        if done.returncode != 0:
            raise GoodbenchError(f"describing this machine failed (exit status {done.returncode}): "
                                 f"{done.stderr.strip()[-500:]}")
        try:
            described = json.loads(done.stdout)
        except ValueError:
            described = None
        if not isinstance(described, dict):
            raise GoodbenchError(f"describing this machine gave no description: {done.stdout.strip()[-200:]!r}")
        return described


CHILD_TIMEOUT_S = 300  # importing torch and reading NVML on a loaded machine: seconds, not minutes
GOODBENCH_ROOT = Path(__file__).resolve().parents[3]
"""The folder holding goodbench's ``suite`` package: the child's working folder and only path entry
beside its environment's packages, so that a reproduction run from the reviewed checkout (as it
must be) never imports a ``torch.py`` or ``suite/`` of that checkout outside the sandbox."""


def describe(devices: list[str], system_name: str | None = None,
             overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`suite.run.system.describe` for a CUDA GPU where a run names one and torch sees one
    here, else the CPU (a run naming CUDA on a machine without it is then refused by the validator)."""
    import torch

    from suite.run import system

    device = torch.device("cuda" if "cuda" in devices and torch.cuda.is_available() else "cpu")
    return system.describe(device, system_name, overrides)


if __name__ == "__main__":  # the child of Observer.system: the request on stdin, the description on stdout
    request = json.loads(sys.stdin.read())
    sys.stdout.write(results.dumps(describe(request["devices"], request["system_name"], request["overrides"])))
