"""The working folder kept off goodbench's import path when goodbench runs as a command.

``python -m suite`` puts the folder it is run from first on the import path, ahead of the standard
library: an ``argparse.py`` there would run inside goodbench, with the user's signing key in reach,
as soon as goodbench imports argparse — and ``goodbench reproduce`` is run from the very checkout
it re-runs; ``PYTHONPATH=.`` does the same to the ``goodbench`` command. goodbench needs nothing
of that folder (unless it is goodbench's own), so its commands drop it before they import anything,
as ``python -P`` does.

Beyond this: what was imported before goodbench's first line (the interpreter's start-up, runpy,
the ``goodbench`` script's own imports) and a folder holding a ``suite/`` of its own, which
``python -m suite`` runs instead of goodbench. The safe ways to start goodbench are the installed
``goodbench`` command with ``PYTHONPATH`` unset, or ``python -P -m suite``.

Only ``os`` and ``sys`` are used here: both are loaded at start-up, before any folder could
shadow them.
"""
import os
import sys

COMMAND = "goodbench"  # the console script (pyproject.toml's [project.scripts])
MODULES = ("suite", "suite.__main__")  # python -m suite
VALUED = ("--check-hash-based-pycs",)  # the interpreter's long options that take a value


def started_as_command(orig_argv: list[str], argv: list[str]) -> bool:
    """True for a process started as goodbench's command: ``python [options] -m suite …`` (read from
    the interpreter's own arguments, ``orig_argv``) or the ``goodbench`` script (``argv[0]``). A user's
    script or ``python -c`` that imports goodbench is not: its own folder is its business."""
    args = iter(orig_argv[1:])
    for arg in args:
        if arg in VALUED:
            next(args, None)
            continue
        if arg.startswith("--") and arg != "--":
            continue  # --check-hash-based-pycs=VALUE, --help-env, …: none names a module
        if not arg.startswith("-") or arg in ("-", "--"):
            break  # a script's path, stdin, or the end of the options
        flags = arg[1:]
        for i, flag in enumerate(flags):
            if flag in "XW":  # an option's value follows: the rest of this argument, or the next one
                if i == len(flags) - 1:
                    next(args, None)
                break
            if flag == "c":
                return False
            if flag == "m":
                return (flags[i + 1:] or next(args, "")) in MODULES
    name = os.path.basename(argv[0]) if argv and isinstance(argv[0], str) else ""
    return name in (COMMAND, COMMAND + ".exe")  # the script pip writes; a user's goodbench.py is theirs


def drop_working_folder() -> list[str]:
    """In goodbench's command (:func:`started_as_command`), remove every import-path entry naming the
    working folder (``""`` and ``"."`` included) unless that folder is goodbench's own; returns the
    entries removed."""
    if not started_as_command(list(getattr(sys, "orig_argv", [])), sys.argv):
        return []
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:  # the working folder was removed: no entry can name it
        return []
    own = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    if here == own:
        return []
    dropped = [entry for entry in sys.path if isinstance(entry, str) and os.path.realpath(entry or os.curdir) == here]
    sys.path[:] = [entry for entry in sys.path if entry not in dropped]
    return dropped
