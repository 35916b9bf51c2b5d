"""What a results file publishes of the user's disk (suite/record/privacy.py)."""
from __future__ import annotations

import os
import tempfile

from suite.record.privacy import public_command, public_path


def test_home_and_temporary_paths_keep_only_their_own_name():
    home = os.path.expanduser("~")
    temp = tempfile.gettempdir()
    argv = ["goodbench", "run", "-o", os.path.join(temp, "pytest-1", "out.json"),
            f"--data-dir={os.path.join(home, 'secret-project', 'data')}", "--seeds", "2", "~/x.json"]
    shown, removed = public_command(argv)
    assert shown == ["goodbench", "run", "-o", "<tmp>/out.json", "--data-dir=<home>/data", "--seeds", "2",
                     "<home>/x.json"]
    assert removed == 3
    assert not any(home in a or "secret-project" in a or "pytest-1" in a for a in shown)


def test_other_arguments_and_paths_are_kept_as_written():
    argv = ["goodbench", "run", "-w", "lm-char", "--device", "cpu", "runs/a.json", "/opt/datasets", "--flag"]
    assert public_command(argv) == (argv, 0)
    assert public_path("/tmp") == "<tmp>" and public_path("/var/tmp/a/b") == "<tmp>/b"


def test_a_command_recorded_before_the_rule_is_shown_without_temporary_folders():
    from suite.site import labels

    recorded = ["goodbench", "run", "--device", "cpu", "-o", "/tmp/gbt/ref.json", "--data-dir", "/opt/datasets"]
    label, shown = labels.show("settings.command", recorded)
    assert shown == "goodbench run --device cpu -o <tmp>/ref.json --data-dir /opt/datasets"
    assert "<home>, <tmp>" in label
