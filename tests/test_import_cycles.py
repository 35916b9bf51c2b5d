"""No import circles in suite/ and workloads/: the graph of every import statement in their
modules — at module level, under ``if TYPE_CHECKING`` and inside functions alike — has no
strongly connected component of more than one module. A workload's spec names its job by a
dotted path (``Workload.job``) instead of importing it, so the job can import its spec."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("suite", "workloads")


def modules() -> dict[str, Path]:
    """Every module of the packages by dotted name (a package by its ``__init__.py``)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(tree: ast.AST, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that the statements of ``tree`` (module ``name``) import: for
    ``from X import Y`` the module ``X.Y`` where there is one, else ``X``."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package upwards
                anchor = name.split(".")[:len(name.split(".")) - node.level + is_package]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # a submodule where there is one, else the module itself
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return out & known


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    found = modules()
    for name, path in found.items():
        graph.add_node(name)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for target in imported(tree, name, path.name == "__init__.py", set(found)):
            if target != name:
                graph.add_edge(name, target)
    return graph


def circles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_no_import_circles_in_suite_and_workloads():
    graph = import_graph()
    assert graph.number_of_edges() > 100  # the walk found the imports
    assert ("workloads.dlrm_small.job", "workloads.dlrm_small.spec") in graph.edges  # the job imports its spec
    found = circles(graph)
    assert not found, "import circles: " + "; ".join(" ↔ ".join(c) for c in found)


def test_the_check_sees_a_circle_made_by_a_lazy_import():
    graph = nx.DiGraph([("workloads.spec", "workloads.base"), ("workloads.job", "workloads.spec")])
    assert circles(graph) == []
    lazy = ast.parse("def build():\n    from workloads.job import Job\n")
    graph.add_edges_from(("workloads.spec", t) for t in
                         imported(lazy, "workloads.spec", False, {"workloads.job", "workloads.base"}))
    assert circles(graph) == [["workloads.job", "workloads.spec"]]
