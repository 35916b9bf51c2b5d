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


def test_every_argument_of_every_command_has_help_text():
    import argparse

    from suite.cli import build_parser

    def silent(parser, name):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    yield from silent(subparser, f"{name} {sub}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                yield f"{name}: {'/'.join(action.option_strings) or action.dest}"

    assert list(silent(build_parser(), "goodbench")) == []


@pytest.mark.parametrize("command", [c for c in COMMANDS if c], ids=lambda c: " ".join(c))
def test_every_commands_help_opens_with_what_it_does(command):
    """A new user's review: `goodbench list --help` and ten others began with their usage alone."""
    paragraphs = help_text(command).split("\n\n")
    assert not paragraphs[1].startswith(("options:", "positional arguments:")), paragraphs[:2]
