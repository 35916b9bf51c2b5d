"""The results document: schema round trip and atomic, non-overwriting writes."""
from __future__ import annotations

import errno
import json
import os

import jsonschema
import pytest

from suite.record import results
from suite.schema import results_schema


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(results_schema())


def test_write_atomic_replaces_whole_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "doc.json"
    results.write_atomic(target, "first")
    results.write_atomic(target, "second")
    assert target.read_text() == "second"
    assert os.listdir(target.parent) == ["doc.json"]


def test_write_atomic_without_overwrite_refuses_existing(tmp_path):
    target = tmp_path / "doc.json"
    results.write_atomic(target, "kept", overwrite=False)
    with pytest.raises(FileExistsError):
        results.write_atomic(target, "new", overwrite=False)
    assert target.read_text() == "kept"
    assert os.listdir(tmp_path) == ["doc.json"]


def test_write_atomic_keeps_old_content_when_writing_fails(tmp_path, monkeypatch):
    target = tmp_path / "doc.json"
    results.write_atomic(target, "old")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        results.write_atomic(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["doc.json"]


def test_a_write_the_disk_refuses_names_the_file_it_was_writing(tmp_path, monkeypatch):
    """Trial 14b F13: a full disk read "No space left on device" (a checkpoint's, a run's), no path."""
    from suite.record.errors import error_text

    def disk_full(fd, payload):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(results, "write_synced", disk_full)
    target = tmp_path / "ckpt" / "ckpt-000000060.pt"
    with pytest.raises(OSError) as refused:
        results.write_atomic(target, b"payload")
    assert error_text(refused.value) == f"{target}: No space left on device"
    assert str(target) in str(refused.value) and not target.exists()


def test_dumps_refuses_nan():
    with pytest.raises(ValueError):
        results.dumps({"x": float("nan")})


def test_document_round_trips_through_json_and_schema():
    doc = results.new_document({"name": "n"}, {"scale": "smoke"}, [])
    assert json.loads(results.dumps(doc)) == doc
    assert doc["schema_version"] == results.SCHEMA_VERSION
    assert doc["created_at"].endswith("Z")


def test_a_folder_flush_that_fails_after_the_rename_is_a_warning_not_a_second_copy(tmp_path, monkeypatch, capsys):
    """Review of the full-disk change, M5: a failed flush of the folder (EIO, as NFS reports a
    write-back error) after the document was renamed into place raised, so the writer kept a
    second copy in the fallback folder and said the file could not be written."""
    import errno

    from suite.record import results as results_module

    def failing(directory):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(results_module, "fsync_dir", failing)
    out = tmp_path / "r.json"
    held = results_module.Reservation.take(out)
    assert held.write({"a": 1}) == out and held.written
    assert results_module.write_atomic(tmp_path / "b.json", b"{}") == tmp_path / "b.json"
    err = capsys.readouterr().err
    assert err.count("is written, but its folder could not be flushed to disk (Input/output error)") == 2
    assert json.loads(out.read_text()) == {"a": 1}
