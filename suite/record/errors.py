"""Errors that the CLI turns into a one-line message (no traceback), exit status 1, or 2 for a
usage error, and that one line."""
from suite.record.text import printable


class GoodbenchError(Exception):
    """An expected failure: bad input, missing data, a rule broken. The message is for the user."""


class Usage(ValueError):
    """A usage error found after the command line was parsed: the CLI says it in one line and exits
    2, as it does for the parser's own errors."""


def error_text(exc: Exception) -> str:
    """One line for an expected failure: an OSError as "FILE: reason", not "[Errno N] …"; a
    character that would act on a terminal, a line break included, is written as ``\\uXXXX``
    (:func:`~suite.record.text.printable`): it may quote a file or a script (a fake verdict on a
    line of its own)."""
    if isinstance(exc, OSError) and exc.strerror:
        files = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        return printable(f"{files}: {exc.strerror}" if files else exc.strerror)
    return printable(str(exc))
