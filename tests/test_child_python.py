"""goodbench's own child processes keep the working folder off their import path
(suite/run/child_python.py): ``goodbench reproduce`` runs from the reviewed checkout, and its relay,
started as ``python -m``, imported that checkout's ``selectors.py`` and ``suite/`` outside the
sandbox, the reviewer's key in reach (the review of trial 13's fix)."""
from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from suite.run import child_python
from suite.run.reproduce.relay import Relay

SUITE = Path(__file__).resolve().parents[1] / "suite"


def _plant(folder: Path, marker: Path) -> None:
    """A checkout holding a ``selectors.py`` (which subprocess imports) and a ``suite/`` package,
    each noting that it ran."""
    (folder / "selectors.py").write_text(f"open({str(marker)!r}, 'a').write('selectors ran\\n')\n"
                                         "raise ImportError('planted')\n")
    (folder / "suite").mkdir()
    (folder / "suite" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('suite ran\\n')\n")


def test_the_relay_started_in_a_hostile_checkout_imports_nothing_of_it(tmp_path, monkeypatch):
    checkout, marker = tmp_path / "checkout", tmp_path / "ran"
    checkout.mkdir()
    _plant(checkout, marker)
    monkeypatch.chdir(checkout)
    relay = Relay()
    os.write(relay.stdout, b"a line of the re-run\n")
    relay.started()
    relay.finish()
    assert relay.process.returncode == 0
    assert not marker.exists(), marker.read_text()


def test_a_childs_environment_names_goodbench_first_and_never_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = child_python.environment({"PYTHONPATH": os.pathsep.join([".", str(tmp_path), "/opt/libs", ""])},
                                   path=[str(tmp_path), "/opt/libs", "/usr/lib/x"])
    assert env["PYTHONPATH"].split(os.pathsep) == [str(child_python.GOODBENCH_ROOT), "/opt/libs", "/usr/lib/x"]
    assert env["PYTHONSAFEPATH"] == "1" and child_python.command("-m", "x")[:3] == [sys.executable, "-P", "-m"]
    monkeypatch.chdir(child_python.GOODBENCH_ROOT)  # goodbench's own folder stays: it is where goodbench is
    assert child_python.environment({"PYTHONPATH": "."})["PYTHONPATH"].split(os.pathsep)[0] == \
        str(child_python.GOODBENCH_ROOT)


def test_every_python_goodbench_starts_of_its_own_goes_through_child_python():
    """A ``[sys.executable, "-m", …]`` written anywhere in suite/ would start a Python with the
    working folder first on its path; only the user's own script (run-own's torchrun) may."""
    allowed = {SUITE / "run" / "own_launch.py"}  # the submitter's code, in the submitter's folder
    found = []
    for path in SUITE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.List) and len(node.elts) >= 2 and ast.unparse(node.elts[0]) == "sys.executable" \
                    and isinstance(node.elts[1], ast.Constant) and node.elts[1].value == "-m" and path not in allowed:
                found.append(f"{path.relative_to(SUITE.parent)}:{node.lineno}")
    assert found == []
