"""The help texts of ``goodbench`` and of every command are the recorded ones
(tests/fixtures/help/, written by ``python tests/help_texts.py`` when a text changes on purpose)."""
from __future__ import annotations

import pytest
from help_texts import COMMANDS, FIXTURES, fixture_name, help_text

from suite.cli import build_parser


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "goodbench")
def test_help_text_is_the_recorded_one(command):
    recorded = (FIXTURES / fixture_name(command)).read_text(encoding="utf-8")
    assert help_text(command) == recorded


def test_every_command_has_a_recorded_help_text():
    commands = build_parser()._subparsers._group_actions[0].choices
    assert {c[0] for c in COMMANDS if c} == set(commands)
