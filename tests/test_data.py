"""Dataset lookup: search order, checksum verification, clear errors."""
from __future__ import annotations

import hashlib

import pytest

from workloads import data
from workloads.lm_char import TINY_SHAKESPEARE


def make_file(tmp_path, content: bytes) -> data.DataFile:
    return data.DataFile(name="set/file.bin", url="https://example.invalid/file.bin",
                         sha256=hashlib.sha256(content).hexdigest(), size=len(content))


def test_found_in_data_dir_then_env_then_cache(tmp_path, monkeypatch):
    content = b"pinned bytes"
    pinned = make_file(tmp_path, content)
    for name in ("explicit", "env", "cache/goodbench"):
        (tmp_path / name / "set").mkdir(parents=True)
        (tmp_path / name / "set" / "file.bin").write_bytes(content)
    monkeypatch.setenv("GOODBENCH_DATA_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert data.locate(pinned, tmp_path / "explicit") == tmp_path / "explicit" / "set" / "file.bin"
    assert data.locate(pinned) == tmp_path / "env" / "set" / "file.bin"
    monkeypatch.delenv("GOODBENCH_DATA_DIR")
    assert data.locate(pinned) == tmp_path / "cache" / "goodbench" / "set" / "file.bin"


def test_wrong_checksum_is_skipped_and_reported(tmp_path):
    pinned = make_file(tmp_path, b"pinned bytes")
    (tmp_path / "d" / "set").mkdir(parents=True)
    (tmp_path / "d" / "set" / "file.bin").write_bytes(b"tampered!!!!")
    with pytest.raises(data.DataNotFound) as err:
        data.locate(pinned, tmp_path / "d")
    message = str(err.value)
    assert "does not match" in message and pinned.sha256 in message and pinned.url in message


def test_missing_file_names_every_place_looked(tmp_path):
    with pytest.raises(data.DataNotFound) as err:
        data.locate(TINY_SHAKESPEARE, tmp_path)
    message = str(err.value)
    assert str(tmp_path / TINY_SHAKESPEARE.name) in message
    assert "GOODBENCH_OFFLINE=1" in message and TINY_SHAKESPEARE.url in message


def test_real_mirror_file_verifies(data_dir):
    assert data.locate(TINY_SHAKESPEARE, data_dir).stat().st_size == TINY_SHAKESPEARE.size
    assert data.is_present(TINY_SHAKESPEARE, data_dir)
