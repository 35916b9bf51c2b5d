"""Temp files and folders held by their writer (suite/record/tempfiles.py): a cleaner removes only those
no live writer holds, also when it takes one in the moment before its writer locks it, and of the
folders none it could not have made (run-own's `goodbench-edges-*` in the shared temp directory);
goodbench's own scratch trees are removed however deep. A real SIGKILLed writer: tests/test_store.py."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from suite.record import edges, results, tempfiles
from suite.run import rank_channels
from suite.run.edge_reader import clock


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


# ---------------------------------------------------------------- folders it could not have made
DEEP = sys.getrecursionlimit() + 200  # folders nested deeper than shutil.rmtree recurses (Python 3.11, 3.12)


def deep_tree(top: Path, depth: int) -> None:
    """``depth`` folders ``d/d/…`` under ``top``, made through descriptors (their path would pass PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = deeper
    finally:
        os.close(fd)


def _channels_made_beside(parent: Path) -> None:
    """run-own's channel setup in ``parent``, as a launcher makes it, and its folder removed after."""
    channels = rank_channels.RankChannels(2, clock(), parent)
    try:
        assert channels.folder.is_dir()
    finally:
        channels.finish(0.0)
        channels.close()
    assert not channels.folder.exists()


def test_a_planted_folder_deeper_than_python_recurses_is_left_and_breaks_no_launch(tmp_path):
    """One `goodbench-edges-*` folder some thousand folders deep in the temp directory made every later
    `run-own --nproc-per-node N` die of a RecursionError: it is no folder a launcher leaves (it
    holds a folder), so it is left where it is, and launches go on."""
    planted = tmp_path / f"{rank_channels.FOLDER_PREFIX}deep"
    planted.mkdir(mode=0o700)
    deep_tree(planted, DEEP)
    _channels_made_beside(tmp_path)
    _channels_made_beside(tmp_path)
    assert os.listdir(planted) == ["d"]
    assert tempfiles.remove_tree(planted) is None and os.listdir(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder of another user's takes root")
def test_another_users_folder_is_left_with_what_it_holds(tmp_path):
    """Run as root, the cleanup removed other users' `goodbench-edges-*` folders, private ones
    with their contents too: it removes this user's alone."""
    theirs = tmp_path / f"{rank_channels.FOLDER_PREFIX}theirs"
    theirs.mkdir(mode=0o700)
    os.mkfifo(theirs / edges.channel(0), 0o600)
    (theirs / "notes").write_text("theirs")
    for path in (theirs, theirs / edges.channel(0), theirs / "notes"):
        os.chown(path, 65534, 65534, follow_symlinks=False)
    assert tempfiles.remove_abandoned([theirs], folders=True) == []
    _channels_made_beside(tmp_path)
    assert sorted(os.listdir(theirs)) == [edges.channel(0), "notes"] and (theirs / "notes").read_text() == "theirs"


@pytest.mark.parametrize("planted", ["folder", "link", "mode"])
def test_a_folder_holding_a_folder_or_a_link_or_not_private_is_left_alone(tmp_path, planted):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("kept")
    folder = tmp_path / f"{rank_channels.FOLDER_PREFIX}{planted}"
    folder.mkdir(mode=0o700)
    os.mkfifo(folder / edges.channel(0), 0o600)
    (folder / "file").write_text("")
    if planted == "folder":
        (folder / "sub").mkdir()
    elif planted == "link":
        (folder / "sub").symlink_to(victim)
    else:
        folder.chmod(0o755)  # a launcher's is private
    before = sorted(os.listdir(folder))
    assert tempfiles.remove_abandoned(sorted(tmp_path.glob(f"{rank_channels.FOLDER_PREFIX}*")), folders=True) == []
    assert sorted(os.listdir(folder)) == before and (victim / "precious").read_text() == "kept"


KILLED_HOLDER = """
import os, sys
from pathlib import Path
from suite.record import tempfiles
with tempfiles.held_folder(Path(sys.argv[1]), "goodbench-edges-", 0o700) as folder:
    os.mkfifo(folder / "edges-0", 0o600)
    (folder / "edges-1").write_text("")
    print(folder, flush=True)
    os.kill(os.getpid(), 9)
"""


def test_the_folder_a_killed_launcher_held_is_still_removed(tmp_path):
    done = subprocess.run([sys.executable, "-c", KILLED_HOLDER, str(tmp_path)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = Path(done.stdout.strip())
    assert sorted(os.listdir(left)) == ["edges-0", "edges-1"]
    assert tempfiles.remove_abandoned([left], folders=True) == [left]
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- goodbench's own scratch trees
def test_a_scratch_tree_deeper_than_python_recurses_is_removed_following_no_link(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("kept")
    scratch = tmp_path / "scratch"
    (scratch / "out").mkdir(parents=True)
    deep_tree(scratch / "out", DEEP)
    (scratch / "out" / "link").symlink_to(victim)
    (scratch / "locked").mkdir()
    (scratch / "locked" / "inside").write_text("")
    (scratch / "locked").chmod(0o500)  # made unwritable by the script
    assert tempfiles.remove_tree(scratch) is None
    assert not os.path.lexists(scratch) and (victim / "precious").read_text() == "kept"


def test_what_a_scratch_removal_leaves_is_said_in_one_line(tmp_path, monkeypatch):
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert tempfiles.remove_tree(link).startswith(f"{link} is left there: it could not be opened as a folder (")
    assert link.is_symlink()
    assert tempfiles.remove_tree(tmp_path / "gone") is None
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    deep_tree(stuck, 3)

    def recursing(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(tempfiles.shutil, "rmtree", recursing)
    monkeypatch.setattr(tempfiles.subprocess, "run", lambda *a, **k: None)  # coreutils that removed nothing
    assert tempfiles.remove_tree(stuck) == f"{stuck} could not be removed whole: what is left of it is there " \
                                           "(remove it by hand)"
