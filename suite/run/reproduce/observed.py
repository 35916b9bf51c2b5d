"""What a reproduction of own code says of the reviewer's machine, as the reviewer's goodbench sees
it outside the sandbox (docs/own-code.md, "Reproducing"). The re-run's file is written by the
reviewed script's process, so every word of it is the script's: a script once rewrote
``system.host.os`` in it, and the reviewer signed that. Before the file is stamped, compared or
signed, goodbench replaces what it measures itself:

- the header — ``schema_version``, ``rules_version``, ``suite``, ``created_at`` — as
  :func:`suite.record.results.new_document` writes it now;
- ``system``, described here (:func:`suite.run.system.describe`) for the device the re-run's runs
  name (CUDA only where goodbench sees it), named by the reviewer's ``--system-name`` (and
  ``--system-overrides``), never the script's;
- every run's ``host_load``: goodbench's snapshots of the machine (:func:`suite.meters.host_load.snapshot`)
  just before the sandbox started and just after it exited — inside, in its own process
  namespace, the script sees none of the machine's other processes, so its own snapshots
  counted none — with ``gpu_other_processes_end`` null (not measured outside the sandbox).

The runs' figures, curves and settings stay the script's word: the second clock
(:mod:`suite.run.reproduce.stamping`) and the comparison with the original are what hold them."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from suite.meters import host_load
from suite.record import results
from suite.record.errors import GoodbenchError

HEADER = ("schema_version", "rules_version", "suite", "created_at")


@dataclass(frozen=True)
class Observer:
    """The reviewer's naming of this machine (``--system-name``, ``--system-overrides``)."""

    system_name: str | None = None
    overrides: dict[str, Any] | None = field(default=None, hash=False)

    @staticmethod
    def load() -> dict[str, Any]:
        """The machine's load now, seen from outside the sandbox."""
        return host_load.snapshot()

    def described(self, raw: bytes, start: dict[str, Any], end: dict[str, Any]) -> bytes:
        """The re-run's file ``raw`` with goodbench's header, ``system`` and, on every run, the
        load snapshots ``start`` and ``end``; :class:`GoodbenchError` where it holds no runs."""
        from suite.run import system

        doc = json.loads(raw)
        if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list) \
                or not all(isinstance(run, dict) for run in doc["runs"]):
            raise GoodbenchError("the re-run's file holds no runs")
        own = results.new_document(system.describe(_device(doc["runs"]), self.system_name, self.overrides),
                                   {}, doc["runs"])  # its header and system: the rest stays the file's
        for run in doc["runs"]:
            run["host_load"] = {"start": start, "end": end, "gpu_other_processes_end": None}
        merged = {name: own[name] for name in HEADER}
        merged.update({name: value for name, value in doc.items() if name not in HEADER})
        merged["system"] = own["system"]
        return results.dumps(merged).encode()


def _device(runs: list[dict[str, Any]]) -> Any:
    """The device goodbench describes: a CUDA GPU where a run names one and torch sees one here,
    else the CPU (a run naming CUDA on a machine without it is then refused by the validator)."""
    import torch

    named = {str(run.get("device")).split(":")[0] for run in runs}
    return torch.device("cuda" if "cuda" in named and torch.cuda.is_available() else "cpu")
