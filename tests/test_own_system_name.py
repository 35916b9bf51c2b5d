"""``goodbench run-own --system-name NAME`` names the system for the script's Benchmark, as
``Benchmark(system_name=)`` does: passed in ``$GOODBENCH_SYSTEM_NAME``, held to the same rules (a
name the validator accepts), refused in one line before the script runs, and refused where the
code names another."""
from __future__ import annotations

import pytest

from suite.api import arguments
from suite.cli import main
from suite.record.errors import GoodbenchError


def test_the_code_or_the_launcher_names_the_system(monkeypatch):
    monkeypatch.delenv(arguments.SYSTEM_NAME_ENV, raising=False)
    assert arguments.system_name(None) is None
    assert arguments.system_name("Lab box, 2x H100") == "Lab box, 2x H100"
    monkeypatch.setenv(arguments.SYSTEM_NAME_ENV, "Lab box")
    assert arguments.system_name(None) == "Lab box"
    assert arguments.system_name("Lab box") == "Lab box"
    with pytest.raises(GoodbenchError, match="system_name='Other' in code and --system-name 'Lab box' of goodbench "
                                             "run-own differ: give the name once"):
        arguments.system_name("Other")


def test_a_name_the_validator_would_refuse_is_refused_from_either(monkeypatch):
    monkeypatch.setenv(arguments.SYSTEM_NAME_ENV, "H100 - reproduced by a trusted reviewer")
    with pytest.raises(GoodbenchError, match=r"^--system-name of goodbench run-own \(\$GOODBENCH_SYSTEM_NAME\): "):
        arguments.system_name(None)
    monkeypatch.delenv(arguments.SYSTEM_NAME_ENV)
    with pytest.raises(GoodbenchError, match="^system_name: .*a word of the site's trust labels"):
        arguments.system_name("H100 - reproduced by a trusted reviewer")


def test_run_own_passes_the_name_to_the_script(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(arguments.SYSTEM_NAME_ENV, raising=False)
    seen = tmp_path / "seen.txt"
    script = tmp_path / "name.py"
    script.write_text(f"import os\nopen({str(seen)!r}, 'w').write(os.environ.get({arguments.SYSTEM_NAME_ENV!r}, ''))\n")
    main(["run-own", "--system-name", "Lab box, 2x H100", str(script)])  # no Benchmark: no second clock, status 1
    assert seen.read_text() == "Lab box, 2x H100"
    capsys.readouterr()
    main(["run-own", str(script)])
    assert seen.read_text() == ""  # without the option the script gets none


def test_run_own_refuses_a_name_the_validator_would_refuse_before_the_script_runs(tmp_path, capsys):
    ran = tmp_path / "ran.txt"
    script = tmp_path / "mark.py"
    script.write_text(f"open({str(ran)!r}, 'w').write('ran')\n")
    assert main(["run-own", "--system-name", "two clocks", str(script)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("goodbench: error: --system-name: ") and "trust labels" in err[0]
    assert not ran.exists()


@pytest.mark.slow  # a short training job under run-own
def test_the_sealed_file_records_the_name_run_own_was_given(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from suite import validate

    repo = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != arguments.SYSTEM_NAME_ENV} | {"PYTHONPATH": str(repo)}
    done = subprocess.run([sys.executable, "-m", "suite", "run-own", "--system-name", "Lab box, 2x H100",
                           str(repo / "tests" / "own_clock_job.py"), "own.json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "own.json").read_text())
    assert doc["system"]["name"] == "Lab box, 2x H100" and validate.check_document(doc) == []
