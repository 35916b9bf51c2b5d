"""A Python shaped like the GPU machine's image: the packages it lacks cannot be imported.

``benchmarks/gpu_session.sh --rehearsal`` puts this folder on ``PYTHONPATH`` (Python imports
``sitecustomize`` at start-up), so that the rehearsal meets what the GPU session will: no
jsonschema, fastjsonschema or cryptography (docs/measurement.md's GPU figures), unless they were carried as wheels
and installed into ``$GOODBENCH_CARRIED`` (``.whl/``, installed with ``pip --target``), which stays
importable, as on the GPU machine. ``GOODBENCH_BLOCKED`` names the blocked packages (space-separated;
default those three).
"""
import importlib.machinery
import os
import sys

BLOCKED = frozenset(os.environ.get("GOODBENCH_BLOCKED", "jsonschema fastjsonschema cryptography").split())
CARRIED = [p for p in os.environ.get("GOODBENCH_CARRIED", "").split(os.pathsep) if p]


class _Blocked:
    """A meta path finder that finds a blocked top-level package only among the carried ones."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if "." in name or name not in BLOCKED:
            return None  # not blocked, or a submodule of a package already found (carried)
        spec = importlib.machinery.PathFinder.find_spec(name, CARRIED) if CARRIED else None
        if spec is None:
            raise ModuleNotFoundError(f"No module named {name!r} (the GPU image lacks it: "
                                      "benchmarks/gpu_image/sitecustomize.py)", name=name)
        return spec


sys.meta_path.insert(0, _Blocked())
