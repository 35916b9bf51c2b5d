"""The ``--help`` texts of ``goodbench`` and each of its commands, as the command line prints
them at a fixed width; ``python tests/help_texts.py`` writes them into tests/fixtures/help/,
which tests/test_cli_help.py compares the current texts with."""
from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "help"
WIDTH = "100"  # argparse wraps at $COLUMNS - 2
COMMANDS = (
    (), ("list",), ("data",), ("data", "list"), ("data", "fetch"), ("data", "verify"), ("data", "where"),
    ("run",), ("run-own",), ("show",), ("keygen",), ("sign",), ("validate",), ("submit",), ("site",), ("check",), ("peaks",), ("prices",),
    ("project",), ("reproduce",), ("compare",), ("import",), ("import", "mlperf"), ("export",),
    ("export", "mlperf"), ("info",),
)


def fixture_name(command: tuple[str, ...]) -> str:
    """``goodbench.txt``, ``run.txt``, ``import-mlperf.txt``."""
    return "-".join(command or ("goodbench",)) + ".txt"


def help_text(command: tuple[str, ...]) -> str:
    """What ``goodbench COMMAND --help`` prints at :data:`WIDTH` columns (stdout; exit 0)."""
    from suite.cli import main

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            try:
                main([*command, "--help"])
            except SystemExit as exc:
                assert exc.code == 0, (command, exc.code)
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return out.getvalue()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for command in COMMANDS:
        (FIXTURES / fixture_name(command)).write_text(help_text(command), encoding="utf-8")
        print(FIXTURES / fixture_name(command))
