"""Errors that the CLI turns into a one-line message and exit status 1 (no traceback), and that
one line."""
from suite.record.text import printable_lines


class GoodbenchError(Exception):
    """An expected failure: bad input, missing data, a rule broken. The message is for the user."""


def error_text(exc: Exception) -> str:
    """One line for an expected failure: an OSError as "FILE: reason", not "[Errno N] …"; what it
    quotes from a file or a script is escaped (:func:`~suite.record.text.printable_lines`)."""
    if isinstance(exc, OSError) and exc.strerror:
        files = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        return printable_lines(f"{files}: {exc.strerror}" if files else exc.strerror)
    return printable_lines(str(exc))
