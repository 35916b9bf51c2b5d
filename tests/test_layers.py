"""The architecture's two rules, held by package (docs/architecture.md, "Stages"):

1. **Imports flow one way.** ``suite/``'s packages are stages in the order of :data:`STAGES`; a
   module imports (at the top or inside a function) only from its own package, from earlier
   stages and from ``suite`` itself (``__version__``), never from a later stage or the entry
   points.
2. **Torch only where training happens.** No module outside ``run/``, ``meters/`` and ``api/`` imports
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
STAGES = ["record", "schema", "meters", "figures", "cost", "trust", "validate", "store", "leaderboard", "compare",
          "mlperf", "speedrun", "site", "run", "api", "commands"]
ENTRY_POINTS = {"suite.cli", "suite.__main__"}
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
