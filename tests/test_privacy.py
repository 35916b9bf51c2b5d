"""What a results file publishes of the user's disk (suite/record/privacy.py)."""
from __future__ import annotations

import os
import tempfile

from suite.record.privacy import public_command, public_path, shown_command


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
    assert shown == "goodbench run --device cpu -o <tmp>/ref.json --data-dir <data-dir>"
    assert "<home>, <tmp>" in label and "<data-dir>" in label


def test_a_shown_command_names_no_data_folder_wherever_it_lies():
    """The data folder is the submitter's machine's: a page shows ``--data-dir``'s value as
    <data-dir> in both spellings, outside home and the temporary folders too (a shared disk), and
    inside them; other arguments, and the stored list, stay as they were."""
    home = os.path.expanduser("~")
    recorded = ["goodbench", "run", "--data-dir", "/work/shared/datasets", "-w", "lm-char",
                f"--data-dir={os.path.join(home, 'corpora')}", "--data-dir=/srv/data", "runs/a.json"]
    kept = list(recorded)
    assert shown_command(recorded) == ["goodbench", "run", "--data-dir", "<data-dir>", "-w", "lm-char",
                                       "--data-dir=<data-dir>", "--data-dir=<data-dir>", "runs/a.json"]
    assert recorded == kept
    assert shown_command(["goodbench", "run", "--data-dir"]) == ["goodbench", "run", "--data-dir"]  # no value
    # only the option itself: a value that merely looks like one is kept
    assert shown_command(["goodbench", "run", "--data-dirs", "/x", "-o", "/work/shared/datasets/a.json"]) == \
        ["goodbench", "run", "--data-dirs", "/x", "-o", "/work/shared/datasets/a.json"]



def test_an_own_runs_declared_block_shows_its_command_without_the_data_folder():
    """An own run's page prints its declaration (what the spec hash covers) as JSON beside the
    settings table; its command there, as in the table, names no data, home or temporary folder."""
    from suite.site import run_page

    implementation = {
        "kind": "own", "name": "mlp", "trains": "an MLP", "against": "lm-char",
        "code": {"git_commit": None, "git_dirty": False, "files": {"mlp.py": "ab" * 32}, "workdir": "."},
        "command": ["python", "mlp.py", "--data-dir", "/work/shared/datasets", "--out", "/tmp/gbt/own.json"],
        "spec": {"samples_per_step": 32, "tokens_per_step": None, "flops_per_step": 1e9,
                 "flops_source": "counted", "warmup_steps": 1, "max_steps": 10, "eval_every": 5,
                 "log_every": 1, "precision": "fp32"}}
    doc = {"settings": {"division": "own", "implementation": implementation}}
    text, _, name = run_page._spec_of(doc, {"scale": "smoke", "workload": {"id": "lm-char"}})
    assert name == "mlp"
    assert "/work/shared" not in text and "/tmp/gbt" not in text
    assert "&lt;data-dir&gt;" in text and "&lt;tmp&gt;/own.json" in text
    assert implementation["command"][3] == "/work/shared/datasets"  # the document itself is unchanged
