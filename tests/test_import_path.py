"""goodbench's commands keep the working folder off their import path (suite/import_path.py): a
reviewed checkout's ``argparse.py`` ran inside ``goodbench reproduce``, with the reviewer's key
readable, before the reproduction's own check of the import path was reached (trial 13)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from suite import import_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("orig_argv", "argv", "command"), [
    (["python", "-m", "suite", "reproduce"], ["-m"], True),
    (["python", "-msuite", "show"], ["-m"], True),
    (["python3", "-X", "dev", "-B", "-m", "suite"], ["-m"], True),
    (["python3", "-Xdev", "-Bm", "suite"], ["-m"], True),
    (["python", "-W", "ignore", "-m", "suite"], ["-m"], True),
    (["/venv/bin/python3", "/venv/bin/goodbench", "reproduce"], ["/venv/bin/goodbench", "reproduce"], True),
    (["python", "-m", "suite.run.reproduce.observed"], ["-m"], False),  # a module of goodbench's, not the command
    (["python", "-m", "mytraining"], ["-m"], False),
    (["python", "-c", "import goodbench"], ["-c"], False),
    (["python", "-m", "-c"], ["-m"], False),
    (["python", "train.py"], ["train.py"], False),  # a user's script importing goodbench: its folder is its own
    (["python", "-"], ["-"], False),
    # the review of trial 13's fix
    (["python", "--check-hash-based-pycs", "default", "-m", "suite"], ["-m"], True),
    (["python", "--check-hash-based-pycs=always", "-Im", "suite"], ["-m"], True),
    (["python", "-m", "suite.__main__"], ["-m"], True),
    (["python", "goodbench.py"], ["goodbench.py"], False),  # a user's script of that name
])
def test_goodbench_is_told_from_a_users_script(orig_argv, argv, command):
    assert import_path.started_as_command(orig_argv, argv) is command


def _planted(folder: Path, marker: Path) -> None:
    """``argparse.py`` and ``shlex.py`` that note they ran, then hand over to the real modules (as a
    hostile checkout's would, so that nothing looks amiss)."""
    for name in ("argparse", "shlex"):
        (folder / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write('{name} ran\\n')\n"
            "import importlib, sys\n"
            f"del sys.modules[{name!r}]\n"
            f"sys.path = [p for p in sys.path if p not in ('', '.', {str(folder)!r})]\n"
            f"sys.modules[{name!r}] = importlib.import_module({name!r})\n")


def test_a_checkouts_modules_never_run_inside_goodbenchs_command(tmp_path):
    """``python -m suite`` from a hostile folder, and the ``goodbench`` script with ``PYTHONPATH=.``:
    goodbench's imports come from the standard library, not the folder; a user's ``python -c`` keeps
    its folder on its path."""
    checkout, marker = tmp_path / "checkout", tmp_path / "ran"
    checkout.mkdir()
    _planted(checkout, marker)
    script = tmp_path / "bin" / "goodbench"  # what pip writes for [project.scripts]
    script.parent.mkdir()
    script.write_text("import sys\nfrom suite.cli import main\nsys.exit(main())\n")
    stored = str(next((ROOT / "tests" / "fixtures").glob("*.json")))
    for argv, path in [([sys.executable, "-m", "suite", "show", stored], str(ROOT)),
                       ([sys.executable, str(script), "show", stored], os.pathsep.join([".", str(ROOT)]))]:
        done = subprocess.run(argv, cwd=checkout, env={**os.environ, "PYTHONPATH": path}, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), f"{argv[1]}: {marker.read_text()}"
    # the check can see the planted module at all: a user's own process imports it
    subprocess.run([sys.executable, "-c", "import suite, argparse"], cwd=checkout, check=True, timeout=120,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert marker.read_text() == "argparse ran\n"


def test_goodbenchs_own_checkout_stays_on_its_path(monkeypatch):
    """``python -m suite`` run from goodbench's own checkout finds goodbench there: nothing dropped."""
    monkeypatch.setattr(sys, "orig_argv", ["python", "-m", "suite"])
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    assert import_path.drop_working_folder() == [] and sys.path[0] == ""


def test_an_entry_that_is_no_text_is_left_and_breaks_nothing(tmp_path, monkeypatch):
    """A .pth file can put anything on the path; ``import suite`` then died in realpath (a review)."""
    monkeypatch.setattr(sys, "orig_argv", ["python", "-m", "suite"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [3, "", *sys.path])
    assert import_path.drop_working_folder() == [""] and sys.path[0] == 3


def test_every_entry_naming_the_working_folder_is_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "orig_argv", ["python", "-m", "suite"])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path)
    kept = list(sys.path)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), ".", str(tmp_path / "link"), *kept])
    assert import_path.drop_working_folder() == ["", str(tmp_path), ".", str(tmp_path / "link")]
    assert sys.path == kept
