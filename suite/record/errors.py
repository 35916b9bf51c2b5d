"""Errors that the CLI turns into a one-line message and exit status 1 (no traceback)."""


class GoodbenchError(Exception):
    """An expected failure: bad input, missing data, a rule broken. The message is for the user."""
