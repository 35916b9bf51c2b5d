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


def test_presence_verifies_the_sha256_and_names_a_corrupt_copy(tmp_path, monkeypatch):
    content = b"pinned bytes"
    pinned = make_file(tmp_path, content)
    for name, body in (("flipped", b"pinned bytez"), ("short", b"pinned"), ("good", content)):
        (tmp_path / name / "set").mkdir(parents=True)
        (tmp_path / name / "set" / "file.bin").write_bytes(body)
    assert data.presence(pinned, tmp_path / "good") == data.Presence("yes", tmp_path / "good" / "set" / "file.bin")
    assert data.presence(pinned, tmp_path / "flipped").status == "corrupt"
    assert data.presence(pinned, tmp_path / "short") == data.Presence("corrupt", tmp_path / "short" / "set" / "file.bin")
    assert data.presence(pinned, tmp_path / "none") == data.Presence("no")
    # a good copy further along the search order is what `run` uses: present
    monkeypatch.setenv("GOODBENCH_DATA_DIR", str(tmp_path / "good"))
    assert data.presence(pinned, tmp_path / "flipped").status == "yes"
    monkeypatch.delenv("GOODBENCH_DATA_DIR")
    # above the hashing limit only the size is checked, and it says so
    assert data.presence(pinned, tmp_path / "flipped", hash_limit=4).status == "unverified"
    assert data.presence(pinned, tmp_path / "short", hash_limit=4).status == "corrupt"


def test_list_says_corrupt_for_a_flipped_byte_that_run_would_refuse(data_dir, tmp_path, capsys):
    from suite.cli import main

    copy = tmp_path / TINY_SHAKESPEARE.name
    copy.parent.mkdir(parents=True)
    body = bytearray((data_dir / TINY_SHAKESPEARE.name).read_bytes())
    body[100] ^= 1
    copy.write_bytes(bytes(body))
    assert main(["list", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("lm-char "))
    assert row.split()[-1] == "corrupt"
    assert f"{copy}: size or sha256 differs from the pinned {TINY_SHAKESPEARE.sha256[:12]}…" in out
    with pytest.raises(data.DataNotFound, match="does not match"):
        data.locate(TINY_SHAKESPEARE, tmp_path)
    assert main(["list", "--data-dir", str(data_dir)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    present = {r[0]: r[-1] for r in rows if r and r[0] in ("lm-char", "fashion-cnn", "gpt2-124m")}
    assert present == {"lm-char": "yes", "fashion-cnn": "yes", "gpt2-124m": "—"}  # gpt2: synthetic
