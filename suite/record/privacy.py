"""What a results file publishes of the machine it was made on: its command line without the
user's home or temporary folders. A path under either is shown as ``<home>/NAME`` or
``<tmp>/NAME`` (the file or folder's own name kept, the folders above it removed), so a
published page names neither the user nor the layout of their disk, and says that it left
something out. Where a recorded command is shown (:func:`shown_command`), the value of
``--data-dir`` is shown as ``<data-dir>`` too, wherever it lies: the data folder is the
submitter's machine's, as private as its home; the stored file keeps it as recorded."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

HOME, TMP, DATA_DIR = "<home>", "<tmp>", "<data-dir>"
DATA_DIR_OPTION = "--data-dir"


def _roots() -> list[tuple[str, str]]:
    """(folder, placeholder) pairs, the longest folder first: the temporary folders (this
    machine's, and /tmp and /var/tmp), then the home folder."""
    found: dict[str, str] = {}
    for folder in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        found.setdefault(os.path.realpath(folder), TMP)
        found.setdefault(os.path.abspath(folder), TMP)
    home = os.path.expanduser("~")
    if home not in ("/", "~", ""):
        found.setdefault(os.path.realpath(home), HOME)
        found.setdefault(os.path.abspath(home), HOME)
    return sorted(found.items(), key=lambda pair: -len(pair[0]))


def public_path(text: str) -> str:
    """``text`` with the folders of a home or temporary path replaced by its placeholder (other
    text unchanged): ``/home/ann/runs/a.json`` → ``<home>/a.json``; ``~/x`` too."""
    if text.startswith("~"):
        text = os.path.expanduser(text)
    if not text.startswith("/"):
        return text
    for folder, placeholder in _roots():
        if text == folder or text.startswith(folder.rstrip("/") + "/"):
            name = Path(text).name if text != folder else ""
            return f"{placeholder}/{name}" if name else placeholder
    return text


def public_command(argv: list[str]) -> tuple[list[str], int]:
    """The command line as published, and how many of its paths were shortened: each argument
    (or the value of an ``--option=VALUE``) that is a home or temporary path goes through
    :func:`public_path`."""
    out, removed = [], 0
    for arg in argv:
        option, eq, value = arg.partition("=")
        if not (arg.startswith("--") and eq):
            option, eq, value = "", "", arg
        shown = public_path(value)
        removed += shown != value
        out.append(f"{option}{eq}{shown}")
    return out, removed


def shown_command(argv: list[str]) -> list[str]:
    """A recorded command line as a page or a report shows it: :func:`public_command`'s, with the
    value of ``--data-dir`` (``--data-dir DIR`` or ``--data-dir=DIR``) shown as ``<data-dir>``
    wherever the folder lies (a command recorded before that rule, or a data folder outside home
    and the temporary folders, named the submitter's disk)."""
    shown = public_command([str(a) for a in argv])[0]
    out: list[str] = []
    for i, arg in enumerate(shown):
        if arg.startswith(DATA_DIR_OPTION + "="):
            arg = f"{DATA_DIR_OPTION}={DATA_DIR}"
        elif i > 0 and shown[i - 1] == DATA_DIR_OPTION:
            arg = DATA_DIR
        out.append(arg)
    return out
