"""What the commands share: messages on stderr, a folder that cannot be written said by its
option, and argparse types of bounded numbers."""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from suite.record.errors import GoodbenchError
from suite.record.text import printable_lines


def say(*parts) -> None:
    """Print a message on stderr, flushed; a character that would act on the terminal (an escape
    sequence, a carriage return, a bidirectional override) is written as ``\\uXXXX``: a message may
    quote a results file or a reviewed script (:func:`~suite.record.text.printable_lines`)."""
    print(*(printable_lines(str(part)) for part in parts), file=sys.stderr, flush=True)


@contextlib.contextmanager
def writing(option: str, given: str | os.PathLike) -> Iterator[None]:
    """Say an ``OSError`` met on the folder ``option`` names (``given``: as the user gave it) as
    "cannot write to OPTION GIVEN (why)": the path the error names may be one the user never gave
    (a build's hidden ``.NAME.new-*`` sibling, a temp file inside the store, a missing parent).
    An error on any other path is left as it is."""
    folder = Path(os.path.abspath(given))
    try:
        yield
    except OSError as exc:
        if not any(_touches(name, folder) for name in (exc.filename, exc.filename2)):
            raise
        raise GoodbenchError(f"cannot write to {option} {given} ({exc.strerror or exc})") from exc


def _touches(name: object, folder: Path) -> bool:
    """Whether the path ``name`` is ``folder``, inside it, one of its parents or a hidden sibling
    named after it (``.NAME.…``)."""
    if not isinstance(name, (str, bytes, os.PathLike)):
        return False
    path = Path(os.path.abspath(os.fsdecode(name)))
    return (path == folder or folder in path.parents or path in folder.parents
            or (path.parent == folder.parent and path.name.startswith(f".{folder.name}.")))


def number_type(kind, *, allow_zero: bool = False):
    """An argparse type: a finite number of ``kind`` above 0 (or at least 0)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"{text!r} must be {'0 or more' if allow_zero else 'above 0'}")
        return value
    return parse


POSITIVE_INT, POSITIVE_FLOAT = number_type(int), number_type(float)


def output_path(text: str) -> str:
    """An argparse type: a file or folder to write, never the empty name (an unset ``$OUT`` in
    ``-o "$OUT"`` fell back to the default name without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name (is the variable that should hold it unset?)")
    return text


def plain_number(value) -> str:
    """1000000 → "1,000,000", 0.001 → "0.001"."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def range_type(kind, low, high=None):
    """An argparse type: a number of ``kind`` from ``low`` to ``high`` (both included; no upper
    bound when ``high`` is None)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if not (math.isfinite(value) and low <= value and (high is None or value <= high)):
            span = f"{plain_number(low)} or more" if high is None \
                else f"from {plain_number(low)} to {plain_number(high)}"
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: {span}")
        return value
    return parse


def add_price_arguments(parser: argparse.ArgumentParser) -> None:
    """``--price CLASS=USD`` (repeatable) and ``--price-file FILE``: the prices a cost is computed
    with (:func:`suite.cost.prices.from_arguments`)."""
    parser.add_argument("--price", action="append", metavar="CLASS=USD",
                        help='an on-demand price per accelerator-hour for one class of the price table, '
                             'named by the class or an accelerator in it ("NVIDIA H100=2.49"); repeatable')
    parser.add_argument("--price-file", metavar="FILE",
                        help="a price table in the format of suite/cost/prices.toml, used in place of "
                             "goodbench's own")
