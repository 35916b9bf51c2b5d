"""The ``goodbench`` command line: assembles the commands of suite/commands/ (one module each,
with its arguments and its ``run``) and turns their failures into exit statuses.

Exit status: 0 ok, 1 input or rules failed, 2 usage error, 130 interrupted (SIGINT), 143
stopped by SIGTERM. Expected failures print one line and no traceback (a usage error too:
:class:`Parser`); ``--debug`` shows the
traceback. Torch is an extra (``goodbench[train]``): a command that trains or measures a device
without it says so in one line; validate, submit, site, compare and the MLPerf import need none.
"""
from __future__ import annotations

import argparse
import sys
import traceback
from typing import NoReturn

from suite import __version__
from suite.commands import (
    check,
    compare,
    data,
    export_mlperf,
    import_mlperf,
    info,
    keygen,
    list_workloads,
    peaks,
    prices,
    project,
    reproduce,
    run,
    run_own,
    show,
    sign,
    site,
    submit,
    validate,
)
from suite.commands.common import say
from suite.record.errors import GoodbenchError, Usage, error_text
from suite.record.text import printable

# the packages of the train extra (pyproject.toml): a command that needs one names the extra
TRAIN_EXTRA = ("torch",)

# in the order of `goodbench --help`
COMMANDS = (list_workloads, data, run, run_own, show, keygen, sign, validate, submit, site, check, peaks, prices, project, reproduce, compare,
            import_mlperf, export_mlperf, info)


class Parser(argparse.ArgumentParser):
    """goodbench's parsers (each command's too: subparsers take their parent's class): a usage error
    is one line, saying what was wrong and where the usage is, where argparse prints the whole
    usage first."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {printable(message)}; see {self.prog} --help\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``goodbench`` and every command; a parsed command's ``func`` is its ``run``
    and its ``command_parser`` its own parser (whose name a usage error found later is said under, in one line)."""
    parser = Parser(prog="goodbench", description=
                                     "A standardized GPU training benchmark suite with a leaderboard.")
    parser.add_argument("--version", action="version", version=f"goodbench {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of failures")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command_parser = command.add_parser(sub)
        command_parser.set_defaults(func=command.run, command_parser=command_parser)
    _describe(sub)
    return parser


def _describe(sub: argparse._SubParsersAction) -> None:
    """Each command's ``--help`` (and its subcommands') opens with the line ``goodbench --help``
    lists it by, where it has no description of its own (``goodbench list --help`` began with its
    usage alone)."""
    for listed in sub._choices_actions:
        command_parser = sub.choices[listed.dest]
        if not command_parser.description and listed.help:
            command_parser.description = listed.help
        for action in command_parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _describe(action)


def main(argv: list[str] | None = None) -> int:
    """Run ``goodbench ARGV`` (the process's own arguments when None) and return its exit status.
    A process stopped by a signal (130, 143) has written what it keeps by then, and ends at once
    (:func:`_end_now`); a call with ``argv`` given (in-process, as tests make it) returns."""
    status = _dispatch(argv)
    if argv is None and status in (130, 143):
        _end_now(status)
    return status


def _end_now(status: int) -> None:
    """End this process with ``status`` now, its output flushed, skipping the interpreter's
    teardown: after a cut run has written its results file (renamed into place whole), torch's
    finalizers and inductor's worker pool took 1.8 s on a quiet CPU and over 10 s on a busy one,
    and a time-boxed caller (``timeout -k``, a GPU slot's budget) answers that with SIGKILL."""
    import contextlib
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(status)


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, unknown: list[str]) -> None:
    """Exit with argparse's usage error for ``unknown`` arguments (status 2), in the command's
    name where there is one. Where the command
    takes no abbreviated options (``goodbench run``) and one of them starts an option's name, the
    command's own error names that option (``--wait``: ``--wait-quiet``)."""
    command: argparse.ArgumentParser | None = getattr(args, "command_parser", None)
    said = f"unrecognized arguments: {' '.join(unknown)}"
    if command is not None and not command.allow_abbrev:
        names = [name for action in command._actions for name in action.option_strings if name.startswith("--")]
        for arg in unknown:
            given = arg.split("=", 1)[0]
            meant = [name for name in names if given.startswith("--") and len(given) > 2 and name.startswith(given)]
            if meant:
                command.error(f"{said} (goodbench {args.command} takes its options in full, not abbreviated: "
                              f"{given} for {' or '.join(meant)}?)")
    (command or parser).error(said)  # the command's, whose --help has its options


def _dispatch(argv: list[str] | None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):  # `goodbench` alone: its commands, not an error line
        parser.print_help(sys.stderr)
        return 2
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # as parse_args says it, but naming the option an abbreviation stands for
        _unrecognized(parser, args, unknown)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.func(args)
    except Usage as exc:  # one line, as the parser's own errors are (Parser): the message names what to give
        usage: argparse.ArgumentParser = getattr(args, "command_parser", parser)
        usage.exit(2, f"{usage.prog}: error: {printable(str(exc))}\n")
    except BrokenPipeError:  # output piped into a reader that closed early (e.g. head)
        return 0
    except (GoodbenchError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        say(f"goodbench: error: {error_text(exc)}")
        return 1
    except ModuleNotFoundError as exc:
        package = (exc.name or "").split(".")[0]
        if package not in TRAIN_EXTRA or args.debug:
            raise
        from suite.record.dependencies import install_hint

        say(f"goodbench: error: goodbench {args.command} needs {package}, which is not installed here: "
            f"{install_hint('train')} (validate, submit, site and compare need no torch; the MLPerf import "
            "needs none either, but MLCommons' mlperf-logging)")
        return 1
    except KeyboardInterrupt as exc:
        signals = sys.modules.get("suite.run.signals")  # loaded where SIGTERM is turned into this
        terminated = signals is not None and signals.sigterm_received()
        where = f" {exc}" if str(exc) else ""  # where it was, when it says (suite/run/quiet.py)
        hung_up = signals is not None and signals.hangup_received()  # the terminal closed: taken as SIGTERM
        say(("goodbench: stopped by SIGHUP, as by SIGTERM" if hung_up else "goodbench: stopped by SIGTERM")
            if terminated else f"goodbench: interrupted{where}")
        return 143 if terminated else 130
