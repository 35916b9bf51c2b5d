"""``goodbench run-own`` of a script that fails says so first and plainly — "the script failed (exit
status 1; its error is above)" — then what was kept, where it once led with "no second clock: the
script ended with status 1 without naming a results file on its edge channel (…)"."""
from __future__ import annotations

import pytest

from suite.cli import main
from suite.run import own_failure


def test_a_script_that_raises_is_said_to_have_failed_first(tmp_path, capfd):
    script = tmp_path / "typo.py"
    script.write_text("import sys\nprint('training', file=sys.stderr)\nundefined_name + 1\n")
    assert main(["run-own", str(script)]) == 1
    err = capfd.readouterr().err  # the child's stderr too
    assert "NameError: name 'undefined_name' is not defined" in err  # the script's own traceback, above
    last = err.strip().splitlines()[-1]
    assert last == ("goodbench: error: the script failed (exit status 1; its error is above); it named no results "
                    "file, so nothing was kept")


def test_a_script_ended_by_a_signal_says_which(tmp_path, capsys):
    script = tmp_path / "killed.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    assert main(["run-own", str(script)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(
        "goodbench: error: the script was ended by signal 15")


def test_a_failed_script_whose_file_got_no_second_clock_leads_with_the_failure():
    said = own_failure.unsealed(1, "run 1a2b (seed 1): no step edge for the run's 0 steps",
                                "own.json is kept as the script wrote it: one clock, unsigned")
    assert said == ("the script failed (exit status 1; its error is above); own.json is kept as the script wrote "
                    "it: one clock, unsigned (no second clock: run 1a2b (seed 1): no step edge for the run's 0 steps)")


@pytest.mark.parametrize("kept", [None, "own.json is kept as the script wrote it: one clock, unsigned"])
def test_a_script_that_succeeded_without_a_second_clock_says_why(kept):
    said = own_failure.unsealed(0, "its edge channel was not believed (closed early)", kept)
    assert said.startswith("no second clock: its edge channel was not believed (closed early)")
    assert "failed" not in said and (kept is None or said.endswith(f"; {kept}"))
