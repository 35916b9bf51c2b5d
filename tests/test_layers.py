"""The architecture's three rules, held by package (docs/architecture.md, "Stages"):

1. **Imports flow one way.** ``suite/``'s packages are stages in the order of :data:`STAGES`; a
   module imports (at the top or inside a function) only from its own package, from earlier
   stages and from ``suite`` itself (``__version__``), never from a later stage or the entry
   points.
2. **Formulas in ``figures/``, instruments in ``meters/``.** ``figures/`` (every formula: MFU and
   the peak table, throughput windows, TTA scoring) stands below ``meters/``, which only reads
   devices, clocks and the host: a meter may use a formula, a formula never a meter.
3. **Torch only where training happens.** No module outside ``run/``, ``meters/`` and ``api/`` imports
   torch, and importing every one of them — with ``workloads/``'s specs, configs, registry and
   data — loads no torch: validating, storing, rendering and comparing results need none.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "suite"
# lowest first: the record every stage reads, ..., the commands and the entry points on top
STAGES = ["record", "schema", "figures", "meters", "cost", "trust", "validate", "store", "leaderboard", "compare",
          "mlperf", "speedrun", "site", "run", "api", "commands"]
ENTRY_POINTS = {"suite.cli", "suite.__main__", "suite.import_path"}  # the last: run before any import
TORCH_PACKAGES = {"run", "meters", "api"}


def _modules(top: Path) -> dict[str, Path]:
    return {".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p
            for p in sorted(top.rglob("*.py")) if "__pycache__" not in p.parts}


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module ``path`` imports, anywhere in it (lazy imports too), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(f"{node.module}.{a.name}" if node.module == "suite" else node.module, node.lineno)
                      for a in node.names]
    return found


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (SUITE / parts[1]).is_dir() else None


def test_every_package_of_suite_is_a_stage_and_only_the_entry_points_are_at_its_root():
    packages = {p.name for p in SUITE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(STAGES)
    root = {p.stem for p in SUITE.glob("*.py")} - {"__init__"}
    assert {f"suite.{m}" for m in root} == ENTRY_POINTS


def test_imports_flow_from_later_stages_to_earlier_ones_only():
    wrong = []
    for module, path in _modules(SUITE).items():
        own = _stage(module)
        if own is None:
            continue
        for target, line in _imports(path):
            if not target.startswith("suite.") and target != "suite":
                continue
            if target in ENTRY_POINTS:
                wrong.append(f"{module}:{line} imports the entry point {target}")
            theirs = _stage(target)
            if theirs is not None and theirs != own and STAGES.index(theirs) > STAGES.index(own):
                wrong.append(f"{module}:{line} ({own}) imports {target} ({theirs}, a later stage)")
    assert not wrong, "\n".join(wrong)


def test_formulas_are_figures_and_meters_only_read_devices_and_clocks():
    """Where a formula lives has one answer: the MFU formula, the peak table and its lookups,
    throughput windows and TTA scoring are modules of ``figures/``, and no module of ``meters/``
    is free of every device, clock and host reading."""
    figures = {p.stem for p in (SUITE / "figures").glob("*.py")}
    assert {"mfu", "throughput", "tta", "derive"} <= figures
    meters = {p.stem for p in (SUITE / "meters").glob("*.py")} - {"__init__"}
    # what a reading imports: torch, the clock, the OS and /proc or /sys, NVML (loaded by name), another meter
    readings = ("torch", "time", "os", "pathlib", "subprocess", "importlib", "suite.meters")
    pure = [m for m in meters
            if not any(t == r or t.startswith(f"{r}.") for t, _ in _imports(SUITE / "meters" / f"{m}.py")
                       for r in readings)]
    assert not pure, f"meters/ modules that read nothing (formulas belong in figures/): {pure}"
    assert STAGES.index("figures") < STAGES.index("meters")
    # what reads results (validate, store, leaderboard, compare, the site, ...) needs no instrument
    readers = [m for m in _modules(SUITE) if _stage(m) not in {"meters", "run", "api", "commands"} | TORCH_PACKAGES]
    wrong = [f"{m}:{line}" for m in readers for t, line in _imports(_modules(SUITE)[m])
             if t == "suite.meters" or t.startswith("suite.meters.")]
    assert not wrong, wrong


def test_torch_is_imported_only_under_run_and_meters():
    wrong = [f"{module}:{line}" for module, path in _modules(SUITE).items()
             if _stage(module) not in TORCH_PACKAGES
             for target, line in _imports(path) if target.split(".")[0] == "torch"]
    assert not wrong, wrong


def test_no_module_outside_run_and_meters_loads_torch_when_imported():
    """Importing them all in one fresh process (lazy imports stay lazy) leaves torch unloaded:
    a module-level import of run/ or of a workload's job would load it."""
    readers = [m for m in _modules(SUITE) if _stage(m) not in TORCH_PACKAGES and m != "suite.__main__"]
    readers += [m for m in _modules(REPO / "workloads")
                if m.endswith((".spec", ".config", "gpt_config")) or m in (
                    "workloads", "workloads.registry", "workloads.base", "workloads.data", "workloads.pinned",
                    "workloads.placement", "workloads.own")]
    readers += ["suite.meters.host_load", "suite.run.launch", "suite.run.own_launch",
                "suite.run.edge_reader"]  # torch-free modules of those packages
    code = (f"import sys\nfor m in {readers!r}: __import__(m)\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    assert len(readers) > 80
