"""``goodbench info``: the system description a run would record, and what this Python lacks."""
from __future__ import annotations

import argparse
import json

from suite.record import dependencies


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench info`` and its arguments."""
    p = commands.add_parser("info", help="print the system description a run would record")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="the device described, as `run` takes it (default auto: the GPU when torch sees one)")
    p.add_argument("--system-name", help="the system's name, as `run --system-name` gives it")
    p.add_argument("--system-overrides", metavar="FILE",
                   help="a JSON object of description fields to set, as `run --system-overrides`")
    p.add_argument("--json", action="store_true", help="print the system description as JSON, alone")
    return p


def run(args) -> int:
    """Print the system description (``--json``: as JSON, alone), then Python, numpy and each
    optional package: present, or what its absence turns off; 0. Without torch, the packages alone,
    then the error naming the install (1)."""
    if not dependencies.findable("torch"):
        if not args.json:  # what this Python lacks needs no torch, and is what its user came for
            _packages()
        raise ModuleNotFoundError("No module named 'torch'", name="torch")  # the CLI's one line: how to install it
    if not args.json:  # a first line at once: reading the device below loads torch
        print("# the system description a run records", flush=True)
    from suite.run.overrides import load_overrides
    from suite.run.system import describe, resolve_device

    info = describe(resolve_device(args.device), args.system_name,
                    load_overrides(args.system_overrides))
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for section, values in info.items():
        if isinstance(values, dict):
            for key, value in values.items():
                print(f"{section}.{key}: {_shown(value)}")
        else:
            print(f"{section}: {_shown(values)}")
    _packages()
    return 0


def _packages() -> None:
    """Python, numpy and each optional package: present, or what its absence turns off."""
    print("# this Python and the packages goodbench can run without (suite/record/dependencies.py)", flush=True)
    for line in dependencies.report():
        print(line)


def _shown(value) -> str:
    """A system-description value as ``info`` prints it: unknown/none as "—", booleans as
    yes/no, lists and objects as compact JSON."""
    if value is None or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
