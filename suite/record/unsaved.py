"""Where a results document goes when the path asked for refuses it (a full disk, a read-only
folder, any OSError): goodbench's state folder, then the system's temp folder, under a fresh name,
and the one line a writer says about it (:func:`suite.run.driver.write_validated`). Nothing measured
is lost to a disk that refuses the file."""
from __future__ import annotations

import datetime as dt
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from suite.record import results


def folders() -> list[Path]:
    """Where a results document that could not be written where asked is kept instead, in order:
    goodbench's state folder (``$XDG_STATE_HOME/goodbench/unsaved``, else
    ``~/.local/state/goodbench/unsaved``), then the system's temp folder."""
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return [base / "goodbench" / "unsaved", Path(tempfile.gettempdir())]


def keep(path: str | os.PathLike, doc: results.Document | dict[str, Any]) -> Path | None:
    """Write ``doc``, which could not be written to ``path``, to the first of :func:`folders`
    that takes it (atomically, never over a file), named ``<path's stem>.<UTC time>-<8 hex>.json``;
    its path, or None when none took it."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"{Path(path).stem}.{stamp}-{secrets.token_hex(4)}.json"
    for folder in folders():
        try:
            return results.write_atomic(folder / name, results.dumps(doc), overwrite=False)
        except OSError:
            continue
    return None


def line(path: str | os.PathLike, exc: OSError, kept: Path | None) -> str:
    """What a writer says when ``path`` could not be written (``exc``) and the document was kept at
    ``kept`` (:func:`keep`; None: nowhere, and the writer prints it on stdout)."""
    why = exc.strerror or str(exc)
    where = f"the results are kept in {kept}" if kept is not None else \
        f"no other folder took them either ({', '.join(map(str, folders()))}): the document follows on stdout"
    return f"cannot write {path}: {why}; {where}"
