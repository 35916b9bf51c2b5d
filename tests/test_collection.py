"""Collecting the tests imports no optional framework: every pytest worker of every test group
collects every module, so a module that imports Lightning or transformers at its top makes each
of them pay for it (Lightning brings scipy and torchmetrics: 2.7 s a worker, 8.1 s instead of 5.4
on 2 cores). The tests that use a framework import it themselves (tests/test_own_callbacks.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OPTIONAL = ("lightning", "transformers", "torchmetrics", "scipy")
"""Packages no test module needs at its top: the frameworks and what importing them brings."""

PLUGIN = """import sys

def pytest_collection_finish(session):
    print("imported at collection:", sorted({name.split(".")[0] for name in sys.modules} & set(OPTIONAL)))
"""


@pytest.mark.slow  # a whole collection in a child pytest: 6 s
def test_collecting_every_test_imports_no_optional_framework(tmp_path):
    (tmp_path / "seen_at_collection.py").write_text(f"OPTIONAL = {OPTIONAL!r}\n{PLUGIN}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                           "-p", "seen_at_collection", "-m", "slow or not slow"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "imported at collection: []" in done.stdout, [line for line in done.stdout.splitlines()
                                                         if line.startswith("imported at collection")]
