"""The packages goodbench can run without, and what each one's absence turns off.

A machine may lack some of goodbench's packages: the GPU image it is measured on has no
jsonschema, fastjsonschema or cryptography, and cannot install any (docs/measurement.md, "The GPU
machine as it is"). Every use of these packages imports them on first use and says, in one line,
what it cannot do without them; ``goodbench info`` lists them here. Torch-free.
"""
from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import platform
from dataclasses import dataclass
from pathlib import Path

MIN_PYTHON = (3, 11)
MIN_NUMPY = 2


@functools.cache
def installed(module: str) -> bool:
    """Whether ``module`` (a dotted name) imports here; a blocked or broken one does not."""
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def findable(module: str) -> bool:
    """Whether this Python can import the top-level ``module``, without importing it (torch takes
    seconds): what decides whether a command says a first line before loading it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a module left half-imported
        return False


@dataclass(frozen=True)
class OptionalPackage:
    """A package goodbench runs without: its import name, its distribution and what its absence turns off."""

    module: str
    distribution: str
    without: str


OPTIONAL: tuple[OptionalPackage, ...] = (
    OptionalPackage("torch", "torch", "training (run, check, reproduce) and the device's description: "
                    "install the train extra (goodbench info names the command)"),
    OptionalPackage("jsonschema", "jsonschema",
             "validate reports the first JSON Schema error only (from fastjsonschema), not every error; "
             "with fastjsonschema missing too, the schema is not checked (schema-unchecked)"),
    OptionalPackage("fastjsonschema", "fastjsonschema",
             "the fast schema check: every file goes through jsonschema (slower); with jsonschema missing "
             "too, the schema is not checked (schema-unchecked)"),
    OptionalPackage("cryptography.hazmat.primitives.asymmetric.ed25519", "cryptography",
             "signing (keygen; run and reproduce with a key stop unless --no-sign) and checking "
             "signatures (a signed file gets signature-unchecked; submit and site stop)"),
    OptionalPackage("pynvml", "nvidia-ml-py", "GPU telemetry and NVML energy (energy: not measured)"),
    OptionalPackage("mlperf_logging", "mlperf-logging", "export mlperf --check (MLCommons' compliance checker)"),
)


CPU_TORCH = "torch==2.13.0"
"""The torch the README installs before goodbench's train and test extras (a CPU build here): the
extra alone lets pip pick its own torch, a CUDA build of gigabytes on a CPU machine."""
TORCH_EXTRAS = ("train", "test")


def install_hint(extra: str | None = None, package: str | None = None) -> str:
    """The command that installs goodbench's ``extra`` (or one ``package``) the way goodbench was
    installed here: ``pip install -e "/path/to/checkout[train]"`` from a clone (an editable
    install), else ``pip install 'goodbench[train]'``; for an extra that brings torch where torch
    is missing, torch first, as the README's commands install it (:data:`CPU_TORCH`)."""
    if package is not None:
        return f"pip install {package}"
    checkout = _editable_checkout()
    if checkout is not None:
        command = f'pip install -e "{checkout}[{extra}]"' if extra else f'pip install -e "{checkout}"'
    else:
        command = f"pip install 'goodbench[{extra}]'" if extra else "pip install goodbench"
    if extra in TORCH_EXTRAS and not installed("torch"):
        return f"pip install {CPU_TORCH} && {command} (on a GPU machine, your CUDA build of torch instead of {CPU_TORCH})"
    return command


@functools.cache
def _editable_checkout() -> str | None:
    """The clone goodbench runs from (an editable install, or the checkout on ``sys.path``): the
    folder holding its pyproject.toml beside suite/, or None for an installed package."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    try:
        return str(root) if 'name = "goodbench"' in pyproject.read_text() else None
    except OSError:
        return None


def version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def report() -> list[str]:
    """``goodbench info``'s lines on this Python and its packages: Python and numpy against
    their floors, one line each, then each optional package, present or what it disables."""
    py = tuple(int(x) for x in platform.python_version_tuple()[:2])
    lines = [f"python {platform.python_version()}: "
             + ("ok" if py >= MIN_PYTHON else "TOO OLD") + f" (goodbench needs ≥ {'.'.join(map(str, MIN_PYTHON))})"]
    numpy = version("numpy")
    major = int(numpy.split(".")[0]) if numpy and numpy.split(".")[0].isdigit() else None
    lines.append(f"numpy {numpy or 'not installed'}: "
                 + ("ok" if major is not None and major >= MIN_NUMPY else "TOO OLD or missing")
                 + f" (goodbench needs ≥ {MIN_NUMPY})")
    for package in OPTIONAL:
        if installed(package.module):
            lines.append(f"{package.distribution} {version(package.distribution) or ''}: ok".replace(" :", ":"))
        else:
            lines.append(f"{package.distribution}: MISSING — {package.without}")
    return lines


def missing() -> list[str]:
    """The distributions of the optional packages that do not import here."""
    return [p.distribution for p in OPTIONAL if not installed(p.module)]
