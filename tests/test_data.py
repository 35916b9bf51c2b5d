"""Dataset lookup: search order, checksum verification, clear errors."""
from __future__ import annotations

import argparse
import hashlib

import pytest

from workloads import data, registry
from workloads.lm_char.spec import TINY_SHAKESPEARE


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
    assert pinned.sha256 in message and pinned.url in message
    # trial 14b F13: a copy with the wrong bytes is said plainly, not "not found"
    assert f"{pinned.name} (sha256 {pinned.sha256[:12]}…) has 1 copy with a wrong sha256 (run refuses " \
        "it) and none with the pinned one; looked in: " in message and " not found" not in message
    assert f"(wrong sha256 {hashlib.sha256(b'tampered!!!!').hexdigest()[:12]}…, not the pinned " \
        f"{pinned.sha256[:12]}…: run refuses it)" in message
    assert err.value.short.startswith(f"{pinned.name}: 1 copy with a wrong sha256 in ")
    # both digests in full, and the pin itself named as a suspect (a dataset being added)
    assert (f"the last copy's sha256 is {hashlib.sha256(b'tampered!!!!').hexdigest()}, the pinned one "
            f"{pinned.sha256}: if you are adding this dataset, the pin may be wrong") in message


def test_missing_file_names_every_place_looked(tmp_path):
    with pytest.raises(data.DataNotFound) as err:
        data.locate(TINY_SHAKESPEARE, tmp_path)
    message = str(err.value)
    assert str(tmp_path / TINY_SHAKESPEARE.name) in message
    assert "GOODBENCH_OFFLINE=1" in message and TINY_SHAKESPEARE.url in message
    assert message.endswith("; put the file under --data-dir or $GOODBENCH_DATA_DIR")
    # what `goodbench run -w ID` says, which adds "; `goodbench data fetch -w ID` gets it (…; or give --data-dir
    # DIR, or set GOODBENCH_DATA_DIR)" itself: the same, without the advice twice (a new user's review)
    assert message == f"{err.value.looked}; put the file under --data-dir or $GOODBENCH_DATA_DIR"
    assert "--data-dir" not in err.value.looked and message.count(TINY_SHAKESPEARE.url) == 1


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
    # both targets: a CPU run is held to the smoke one (workloads/lm/spec.py)
    assert "val_loss <= 1.55" in row and "val_loss <= 2.4" in row and "smoke (a CPU run)" in out.splitlines()[0]
    assert f"{copy}: size or sha256 differs from the pinned {TINY_SHAKESPEARE.sha256[:12]}…" in out
    with pytest.raises(data.DataNotFound, match="wrong sha256"):
        data.locate(TINY_SHAKESPEARE, tmp_path)
    assert main(["list", "--data-dir", str(data_dir)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    present = {r[0]: r[-1] for r in rows if r and r[0] in ("lm-char", "fashion-cnn", "gpt2-124m")}
    assert present == {"lm-char": "yes", "fashion-cnn": "yes", "gpt2-124m": "—"}  # gpt2: synthetic


# ---------------------------------------------------------------- goodbench data
def test_data_fetch_from_a_mirror_fills_the_cache_with_checked_copies(data_dir, tmp_path, capsys):
    """The offline mirror stands in for the canonical URLs: every pinned file is copied into the
    user cache with its sha256 checked; a second fetch finds them there; run finds them too."""
    from suite.cli import main
    from workloads.lm_char.spec import LmChar

    assert main(["data", "fetch", "-w", "lm-char"]) == 1  # offline, no mirror: says so per file
    assert "not fetched: GOODBENCH_OFFLINE=1 (give --mirror DIR)" in capsys.readouterr().out
    assert main(["data", "fetch", "--mirror", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert out.count("sha256") == 5 and "fetched into " + str(data.cache_dir()) in out
    fetching = f"fetching {TINY_SHAKESPEARE.name} ({TINY_SHAKESPEARE.size:,} bytes) from {data_dir.resolve().as_uri()}/"
    lines = out.splitlines()  # each file said before it is copied, the line after says it came
    assert lines[lines.index(fetching + TINY_SHAKESPEARE.name) + 1].startswith(f"{TINY_SHAKESPEARE.name}: fetched into ")
    assert main(["data", "fetch"]) == 0
    assert capsys.readouterr().out.count(": here (") == 5
    assert data.locate(TINY_SHAKESPEARE) == data.cache_dir() / TINY_SHAKESPEARE.name
    assert LmChar().data_files == (TINY_SHAKESPEARE,)


def test_data_fetch_without_a_network_says_to_copy_from_a_folder(tmp_path, monkeypatch, capsys):
    import urllib.error
    import urllib.request

    from suite.cli import main

    def no_network(*_a, **_k):
        raise urllib.error.URLError("[Errno -2] Name or service not known")
    monkeypatch.delenv("GOODBENCH_OFFLINE", raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    assert main(["data", "fetch", "-w", "lm-char", "--to", str(tmp_path / "to")]) == 1
    said, line = capsys.readouterr().out.strip().splitlines()
    assert said == f"fetching {TINY_SHAKESPEARE.name} ({TINY_SHAKESPEARE.size:,} bytes) from {TINY_SHAKESPEARE.url}"
    assert line.startswith("tinyshakespeare/input.txt: not fetched: <urlopen error [Errno -2] Name or service")
    assert line.endswith("without a network, copy the files from a folder that holds them: "
                         "goodbench data fetch --mirror DIR")


def test_data_fetch_refuses_a_copy_with_another_sha256_and_leaves_nothing(data_dir, tmp_path, capsys):
    from suite.cli import main

    mirror = tmp_path / "mirror"
    (mirror / "tinyshakespeare").mkdir(parents=True)
    body = bytearray((data_dir / TINY_SHAKESPEARE.name).read_bytes())
    body[7] ^= 1
    (mirror / TINY_SHAKESPEARE.name).write_bytes(bytes(body))
    assert main(["data", "fetch", "-w", "lm-char", "--mirror", str(mirror), "--to", str(tmp_path / "to")]) == 1
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("tinyshakespeare/input.txt: not fetched: file://") and "does not match" in line
    assert not (tmp_path / "to").exists()  # nor the folders made for it (a new user's review)
    (tmp_path / "to" / "tinyshakespeare").mkdir(parents=True)  # folders there before stay
    assert main(["data", "fetch", "-w", "lm-char", "--mirror", str(mirror), "--to", str(tmp_path / "to")]) == 1
    assert [p.name for p in (tmp_path / "to").rglob("*")] == ["tinyshakespeare"]


@pytest.mark.parametrize("made", [None, "file"])
def test_data_fetch_says_a_mirror_folder_that_is_not_there_once_and_makes_nothing(made, tmp_path, capsys):
    """A new user's typo in --mirror read as each file's raw "urlopen error … No such file or
    directory" and left an empty folder in --to: a usage error now, said once, before anything."""
    from suite.cli import main

    mirror = tmp_path / "nope"
    if made == "file":
        mirror.write_text("")
    with pytest.raises(SystemExit) as ended:
        main(["data", "fetch", "-w", "lm-char", "--mirror", str(mirror), "--to", str(tmp_path / "to")])
    assert ended.value.code == 2
    said = capsys.readouterr().err.strip()
    why = "a file, not a folder" if made else "no such folder (a typo?)"
    assert said == (f"goodbench data: error: --mirror {mirror}: {why}; give the folder (or URL) that holds the "
                    "dataset files under their names")
    assert not (tmp_path / "to").exists()


def test_data_verify_says_ok_missing_or_wrong_for_each_file(data_dir, tmp_path, capsys):
    from suite.cli import main

    assert main(["data", "verify", str(data_dir)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{data_dir}: 5 ok, 0 missing, 0 wrong"
    (tmp_path / "tinyshakespeare").mkdir()
    (tmp_path / TINY_SHAKESPEARE.name).write_bytes(b"not shakespeare")
    assert main(["data", "verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "tinyshakespeare/input.txt: WRONG sha256" in out and out.splitlines()[-1].endswith("0 ok, 4 missing, 1 wrong")


def test_data_verify_fails_on_missing_files_and_on_a_folder_that_is_not_there(data_dir, tmp_path, capsys):
    """"Is every pinned file in DATA?" — an empty or mistyped folder said 5 missing and exited 0."""
    from suite.cli import main

    assert main(["data", "verify", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == f"{tmp_path}: 0 ok, 5 missing, 0 wrong"
    with pytest.raises(SystemExit) as ended:  # a usage error, said as --mirror's is (a new user's find: exit 1, no "error:")
        main(["data", "verify", str(tmp_path / "nope")])
    captured = capsys.readouterr()
    assert ended.value.code == 2 and captured.out == ""
    assert captured.err == (f"goodbench data: error: {tmp_path / 'nope'}: no such folder (a typo?); give the folder "
                            "that holds the dataset files under their names\n")
    for command in (["fetch", "--to", str(tmp_path / "to")], ["verify", str(data_dir)]):  # as `run -w lm-chr` says it
        with pytest.raises(SystemExit) as ended:
            main(["data", *command, "-w", "lm-chr"])
        assert ended.value.code == 2 and capsys.readouterr().err.startswith(
            "goodbench data: error: unknown workload lm-chr; known: ")
    assert not (tmp_path / "to").exists()
    # `data fetch -w lm-char --to D && data verify -w lm-char D`: one workload's files only
    (tmp_path / "tinyshakespeare").mkdir()
    (tmp_path / TINY_SHAKESPEARE.name).write_bytes((data_dir / TINY_SHAKESPEARE.name).read_bytes())
    assert main(["data", "verify", "-w", "lm-char", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{tmp_path}: 1 ok, 0 missing, 0 wrong"


def test_data_where_and_list_name_the_folders_and_every_file(data_dir, capsys):
    from suite.cli import main

    assert main(["data", "where"]) == 0
    out = capsys.readouterr().out
    assert str(data.cache_dir()) in out and "not now: GOODBENCH_OFFLINE=1" in out
    assert main(["data", "list", "--data-dir", str(data_dir)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("tiny", "fashion"))]
    assert len(rows) == 5 and all(" yes (" in row for row in rows)
    # a file not here: the legend says how to get it or point at a copy
    assert main(["data", "list"]) == 0
    legend = capsys.readouterr().out.splitlines()[-1]
    assert "goodbench data fetch" in legend and "--data-dir DIR" in legend and "GOODBENCH_DATA_DIR" in legend
    assert main(["list"]) == 0
    legend = capsys.readouterr().out.splitlines()[-1]
    assert "no: `goodbench data fetch`" in legend and "--data-dir DIR" in legend
    with pytest.raises(SystemExit) as ended:  # one line, no traceback: a usage error
        main(["data", "fetch", "-w", "no-such"])
    assert ended.value.code == 2 and capsys.readouterr().err.count("\n") == 1


def test_a_skipped_workload_says_why_in_one_line_with_the_command_that_fixes_it(tmp_path):
    """No path in it (it is published with the file): the file, the folders count, the fix."""
    import torch

    from suite.run import session
    from suite.run.runner import RunOptions

    said: list = []
    reasons = session._missing_data([registry.get("lm-char")], RunOptions(device=torch.device("cpu"), data_dir=str(tmp_path)),
                                    lambda event, **f: said.append(event))
    assert said == []  # nothing fetched, nothing said of fetching
    assert reasons == {"lm-char": "tinyshakespeare/input.txt not found in 2 folders, not downloaded: "
                                  "GOODBENCH_OFFLINE=1; `goodbench data fetch -w lm-char` gets it (offline: "
                                  "`goodbench data fetch -w lm-char --mirror DIR` copies it from a folder holding "
                                  "it; or give --data-dir DIR, or set GOODBENCH_DATA_DIR)"}


def test_a_download_that_found_no_network_says_so(tmp_path, monkeypatch):
    """A new user offline read "the download failed" and had to try again to learn why."""
    import socket
    import urllib.error

    monkeypatch.delenv("GOODBENCH_OFFLINE", raising=False)
    monkeypatch.setattr(data, "fetch", lambda f: (_ for _ in ()).throw(
        urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))))
    with pytest.raises(data.DataNotFound) as offline:
        data.locate(TINY_SHAKESPEARE, tmp_path)
    assert offline.value.short.endswith("the download failed (no network)")
    # the places looked in say it in words too, not as urllib's "<urlopen error [Errno -2] …>" (a new user's review)
    assert f"{TINY_SHAKESPEARE.url} (download failed: no network)" in str(offline.value)
    assert "urlopen" not in str(offline.value) and "Errno" not in str(offline.value)
    monkeypatch.setattr(data, "fetch", lambda f: (_ for _ in ()).throw(ValueError("sha256 mismatch")))
    with pytest.raises(data.DataNotFound) as corrupt:
        data.locate(TINY_SHAKESPEARE, tmp_path)
    assert corrupt.value.short.endswith("the download failed")
    assert f"{TINY_SHAKESPEARE.url} (download failed: sha256 mismatch)" in str(corrupt.value)


@pytest.mark.parametrize("argv", [["list"], ["data", "list"], ["data", "fetch", "-w", "gpt2-124m"]])
def test_list_and_fetch_name_a_data_folder_that_does_not_exist(argv, tmp_path, capsys):
    """Walkthrough 4, L1: a --data-dir with a typo read as every file "no" there; the folder is named."""
    from suite.cli import main

    typo = tmp_path / "datsets"
    assert main([*argv, "--data-dir", str(typo)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"note: --data-dir {typo}: no such folder (a typo?); give the folder that holds the dataset files"
    assert main([*argv, "--data-dir", str(tmp_path)]) == 0
    assert "no such folder" not in capsys.readouterr().err


def test_a_data_dir_that_is_a_file_is_said_to_be_one(tmp_path):
    """Trial 14b F13: ``--data-dir /etc/hostname`` (a file) read as a folder the file was absent from."""
    pinned = make_file(tmp_path, b"pinned bytes")
    given = tmp_path / "hostname"
    given.write_text("not a folder")
    with pytest.raises(data.DataNotFound) as err:
        data.locate(pinned, given)
    assert f"looked in: {given} (not a folder); " in str(err.value)


def _network_serving(monkeypatch, served: dict) -> list[str]:
    """A network, stood in for: each URL of ``served`` (URL → a file's path) is answered with that
    file's bytes; the URLs opened, in order."""
    import urllib.request

    opened: list[str] = []

    def urlopen(url, timeout):
        opened.append(url)
        return open(served[url], "rb")  # fetch closes it
    monkeypatch.delenv("GOODBENCH_OFFLINE", raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return opened


def test_a_download_is_said_before_it_begins_and_a_copy_at_hand_is_not(tmp_path, monkeypatch):
    """A run with a network fetched a missing dataset unsaid: tens of megabytes, and nothing on the
    screen after its first line. ``locate`` says each download first; a file found says nothing."""
    content = b"pinned bytes"
    (tmp_path / "file.bin").write_bytes(content)
    pinned = make_file(tmp_path, content)
    opened = _network_serving(monkeypatch, {pinned.url: tmp_path / "file.bin"})
    said: list[str] = []
    assert data.locate(pinned, announce=said.append) == data.cache_dir() / pinned.name
    assert said == [f"fetching set/file.bin (12 bytes) from {pinned.url} into {data.cache_dir()}"]
    assert opened == [pinned.url] and (data.cache_dir() / pinned.name).read_bytes() == content
    assert data.locate(pinned, announce=said.append) == data.cache_dir() / pinned.name and len(said) == 1


def test_run_says_each_download_of_a_named_or_planned_workload_first(data_dir, monkeypatch, capsys):
    """``goodbench run -w lm-char`` looks for its data before the run's first line
    (suite/run/arguments.py) and says the download there; a run of every workload says it under the
    workload's name (suite/run/session.py), before that workload's lines."""
    import torch

    from suite.run import session
    from suite.run.arguments import check_named_data
    from suite.run.progress import ProgressPrinter
    from suite.run.runner import RunOptions

    opened = _network_serving(monkeypatch, {TINY_SHAKESPEARE.url: data_dir / TINY_SHAKESPEARE.name})
    check_named_data(argparse.Namespace(workload=["lm-char"], data_dir=None))
    line = f"fetching {TINY_SHAKESPEARE.name} ({TINY_SHAKESPEARE.size:,} bytes) from {TINY_SHAKESPEARE.url}"
    assert capsys.readouterr().err == f"{line} into {data.cache_dir()}\n" and opened == [TINY_SHAKESPEARE.url]
    (data.cache_dir() / TINY_SHAKESPEARE.name).unlink()
    options = RunOptions(device=torch.device("cpu"))
    assert session._missing_data([registry.get("lm-char")], options, ProgressPrinter()) == {}
    assert capsys.readouterr().err == f"[lm-char] {line} into {data.cache_dir()}\n"
