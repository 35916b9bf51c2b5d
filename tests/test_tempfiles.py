"""Temp files and folders held by their writer (suite/record/tempfiles.py): a cleaner removes only those
no live writer holds, also when it takes one in the moment before its writer locks it. A real
SIGKILLed writer: tests/test_store.py."""
from __future__ import annotations

import os

from suite.record import results, tempfiles


def _cleaner_first(monkeypatch, create: str, **options) -> list:
    """Make the first temp ``create`` makes be removed by a cleaner before its writer locks it."""
    real, made = getattr(tempfiles, create), []

    def raced(*args):
        fd, path = real(*args)
        made.append(path)
        if len(made) == 1:
            assert tempfiles.remove_abandoned([path], **options) == [path]  # not locked yet: removable
        return fd, path

    monkeypatch.setattr(tempfiles, create, raced)
    return made


def test_a_writer_whose_new_temp_file_a_cleaner_took_makes_another(tmp_path, monkeypatch):
    made = _cleaner_first(monkeypatch, "_new_file")
    target = tmp_path / "doc.json"
    results.write_atomic(target, "whole")
    assert target.read_text() == "whole" and len(made) == 2 and not made[0].exists()
    assert os.listdir(tmp_path) == ["doc.json"]


def test_a_site_build_whose_new_folder_a_cleaner_took_makes_another(tmp_path, monkeypatch):
    made = _cleaner_first(monkeypatch, "_new_folder", folders=True)
    with tempfiles.held_folder(tmp_path, ".site.new-") as fresh:
        assert fresh == made[1] and fresh.is_dir() and not made[0].exists()
        (fresh / "index.html").write_text("built")
        assert tempfiles.remove_abandoned([fresh], folders=True) == []  # held: a build under way
    assert os.listdir(tmp_path) == []


def test_a_held_temp_file_is_never_removed_and_an_abandoned_one_is(tmp_path):
    abandoned = tmp_path / tempfiles.temp_name("doc.json")
    abandoned.write_bytes(b"left by a killed writer")  # nobody holds it: what SIGKILL leaves
    with tempfiles.held_file(tmp_path, "doc.json") as (fd, held):
        os.write(fd, b"being written")
        assert tempfiles.temp_files(tmp_path) == sorted([abandoned, held])
        assert tempfiles.remove_abandoned(tempfiles.temp_files(tmp_path)) == [abandoned]
        assert held.read_bytes() == b"being written"
    assert os.listdir(tmp_path) == []  # the writer removes its own temp when it did not rename it


def test_a_reservation_removes_the_abandoned_temp_files_of_its_name_only(tmp_path):
    mine = tmp_path / tempfiles.temp_name("out.json")
    other = tmp_path / tempfiles.temp_name("other.json")
    for path in (mine, other):
        path.write_bytes(b"left by a killed run")
    reservation = results.Reservation.take(tmp_path / "out.json")
    try:
        assert not mine.exists() and other.read_bytes() == b"left by a killed run"
        reservation.write({"runs": []})
    finally:
        reservation.release()
    assert sorted(os.listdir(tmp_path)) == sorted([other.name, "out.json"])
