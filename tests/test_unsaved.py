"""Where a results document goes when its path refuses it (suite/record/unsaved.py): goodbench's
state folder, then the temp folder, under a fresh name, and the line a writer says about it."""
from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path

from suite.record import results, unsaved

DOC = {"schema_version": 1, "runs": []}


def test_the_state_folder_comes_first_then_the_temp_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert unsaved.folders() == [tmp_path / "state" / "goodbench" / "unsaved", Path(tempfile.gettempdir())]
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # the XDG spec ignores a relative path
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert unsaved.folders()[0] == tmp_path / "home" / ".local" / "state" / "goodbench" / "unsaved"


def test_a_document_is_kept_under_a_fresh_name_in_the_first_folder_that_takes_it(tmp_path, monkeypatch):
    state, spare = tmp_path / "state", tmp_path / "spare"
    monkeypatch.setattr(unsaved, "folders", lambda: [state, spare])
    first = unsaved.keep("runs/own.json", DOC)
    second = unsaved.keep("runs/own.json", DOC)
    assert first is not None and second is not None and first != second  # never over a file
    assert first.parent == state and first.name.startswith("own.") and first.suffix == ".json"
    assert json.loads(first.read_text()) == DOC and first.read_text() == results.dumps(DOC)
    (tmp_path / "blocked").write_text("a file, not a folder")
    monkeypatch.setattr(unsaved, "folders", lambda: [tmp_path / "blocked" / "unsaved", spare])
    third = unsaved.keep("own.json", DOC)
    assert third is not None and third.parent == spare
    monkeypatch.setattr(unsaved, "folders", lambda: [tmp_path / "blocked" / "unsaved"])
    assert unsaved.keep("own.json", DOC) is None


def test_the_line_says_where_the_document_went(tmp_path, monkeypatch):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    kept = tmp_path / "own.20261130T000000Z-0a1b2c3d.json"
    assert unsaved.line("own.json", full, kept) == f"cannot write own.json: No space left on device; the results are kept in {kept}"
    monkeypatch.setattr(unsaved, "folders", lambda: [tmp_path / "a", tmp_path / "b"])
    assert unsaved.line("own.json", full, None) == (f"cannot write own.json: No space left on device; no other folder took "
                                                    f"them either ({tmp_path / 'a'}, {tmp_path / 'b'}): the document "
                                                    "follows on stdout")
