"""Names of the code in prose still name code: every module path (``suite/compare/engine.py``,
``record/results.py`` under ``suite/``, ``workloads/lm/job.py``), dotted name
(``suite.figures.derive``, ``workloads.training.compile_model``) and relative ``:mod:`.name```
that docs/*.md, README.md, the docstrings of suite/, workloads/ and goodbench/, and the site's
static files mention exists (a module moved without its mentions leaves them stale)."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("suite", "workloads", "goodbench")
# a path ending in .py (or a folder of the tree: suite/compare/), maybe relative to suite/
PATH = re.compile(r"(?<![\w./<-])((?:[a-z_][\w-]*/)+(?:[a-z_]\w*\.(?:py|json|toml|js|css)\b|[a-z_]\w*/))")
DOTTED = re.compile(r"(?<![\w./-])((?:suite|workloads|goodbench)(?:\.[A-Za-z_]\w*)+)")
RELATIVE = re.compile(r":(?:mod|func|class|data):`~?(\.[A-Za-z_][\w.]*)`")
ROOTS = (REPO, REPO / "suite")  # a path in prose is the repository's, or one under suite/ (its stages)
TOPS = {"suite", "workloads", "goodbench", "tests", "docs", "benchmarks", "examples"}
FIELD_DOCS = {"docs/results-format.md"}  # its dotted names are the record's fields (suite.name)


def _docstrings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    texts = [ast.get_docstring(n, clean=False) for n in nodes]
    return [t for t in texts if t]


def _texts() -> list[tuple[str, str, str | None]]:
    """(where, text, package of the module the text is in, for relative names)."""
    found = [(str(p.relative_to(REPO)), p.read_text(encoding="utf-8"), None)
             for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]]
    found += [(str(p.relative_to(REPO)), p.read_text(encoding="utf-8"), None)
              for p in sorted((REPO / "suite" / "site" / "static").iterdir()) if p.suffix in (".js", ".css")]
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            module = ".".join(path.relative_to(REPO).with_suffix("").parts)
            home = module if path.name == "__init__.py" else module.rpartition(".")[0]
            found += [(str(path.relative_to(REPO)), text, home.removesuffix(".__init__")) for text in _docstrings(path)]
    return found


def _module_file(dotted: str) -> Path | None:
    base = REPO.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _top_level_names(path: Path) -> frozenset[str]:
    """What a module defines or imports at its top (and in its ``if``/``try`` blocks there)."""
    names: set[str] = set()
    body = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                names.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant))  # lazy exports
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            body += node.body + node.orelse + getattr(node, "finalbody", [])
            body += [s for h in getattr(node, "handlers", []) for s in h.body]
    return frozenset(names)


def _resolves(dotted: str) -> bool:
    """A module, a name a module defines, or an attribute of one (``Class.method``: the class is enough)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_file(".".join(parts[:cut]))
        if path is not None:
            rest = parts[cut:]
            if not rest:
                return True
            if (path.parent / f"{rest[0]}.py").is_file() or (path.parent / rest[0] / "__init__.py").is_file() \
                    and path.name == "__init__.py":
                return True
            return rest[0] in _top_level_names(path)
    return False


def _path_exists(text: str) -> bool:
    return any((root / text).exists() for root in ROOTS)


def stale_names() -> list[str]:
    stale = []
    for where, text, package in _texts():
        for match in PATH.finditer(text):
            name = match.group(1)
            top = name.split("/")[0]
            if name.endswith("/") and top not in PACKAGES:
                continue  # a folder outside the packages (an output folder, say) is not code
            if (top in TOPS or (REPO / "suite" / top).is_dir()) and not _path_exists(name):
                stale.append(f"{where}: {name}")
        for match in DOTTED.finditer(text if where not in FIELD_DOCS else ""):
            name = match.group(1).rstrip(".")
            if not _resolves(name):
                stale.append(f"{where}: {name}")
        if package is not None:
            for match in RELATIVE.finditer(text):
                name = package + match.group(1)
                if not _resolves(name):
                    stale.append(f"{where}: {match.group(1)} ({name})")
    return stale


def test_every_module_path_and_dotted_name_in_docs_docstrings_and_static_files_exists():
    stale = stale_names()
    assert not stale, "\n".join(stale)


def test_the_finder_finds_a_moved_module_by_each_way_of_naming_it():
    assert _resolves("suite.figures.derive") and _resolves("workloads.training.compile_model")
    assert not _resolves("workloads.base.compile_model") and not _resolves("suite.compare.nothing_here")
    assert _path_exists("suite/compare/engine.py") and _path_exists("record/results.py")
    assert not _path_exists("suite/compare.py")
    assert not _resolves("suite.validate.reading") and _resolves("suite.record.reading")


def test_the_architecture_names_the_rule_modules_in_the_order_they_run():
    from suite.validate import RULE_MODULES

    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = list(dict.fromkeys(re.findall(r"`validate/(\w+_rules)\.py`", text)))
    assert named == list(RULE_MODULES)
