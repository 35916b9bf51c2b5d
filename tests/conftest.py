"""Shared fixtures: the offline dataset mirror, an isolated cache, smoke-run helpers."""
from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# One intra-op thread per process (before anything imports torch; the subprocesses the tests
# start inherit it). The tests check behaviour, not speed; torch's default of one thread per
# core, in every process at once, oversubscribes a small shared machine: measured on 2 busy
# cores, tests/test_workloads.py took 615 s with the default and 144 s with one thread.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# Ctrl-C as the tests send it: a shell without job control starts a background command with SIGINT
# ignored (`cmd &` in a script, `nohup`), Python then installs no KeyboardInterrupt for it, and the
# processes the tests start inherit the ignoring: 6 signal tests failed when the README's test
# command ran so. A handler, unlike an ignored signal, is not inherited across exec: they get the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: a worker per core this process may run on, and half as many again (at most 4
    more: each worker holds torch in memory). Many tests wait on processes they start (a run, a
    reproduction's sandbox, a signal's effect), so a worker per core leaves cores idle: on 2 cores
    the fast loop took 107 s with 2 workers and 91 s with 3, the slow tests 251 s and 203 s
    (4 workers: 203 s)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + min(cores // 2, 4)


def _dataset_dir() -> Path | None:
    for candidate in (os.environ.get("GOODBENCH_DATA_DIR"), REPO.parent / "shared" / "datasets"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.hookimpl(tryfirst=True)  # before -m deselects: `-m "not slow"` leaves dist tests out too
def pytest_collection_modifyitems(items):
    """Every multi-process (``dist``), ``long`` and ``rehearsal`` test is also ``slow``: the fast
    loop (the default run) never starts one."""
    for item in items:
        if any(item.get_closest_marker(m) for m in ("dist", "long", "rehearsal")) \
                and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """A directory holding the pinned dataset files (the offline mirror); skips when absent."""
    found = _dataset_dir()
    if found is None:
        pytest.skip("no dataset mirror: set GOODBENCH_DATA_DIR")
    return found


@pytest.fixture(scope="session")
def data_dir_or_none() -> Path | None:
    """The offline mirror's directory, or None where there is none (the test picks what to run)."""
    return _dataset_dir()


@pytest.fixture(scope="session")
def checkpointed_short_run(data_dir, tmp_path_factory) -> dict:
    """The record of one whole run of the short lm-char (tests/short_lmchar.py), seed 1 on the
    CPU, checkpointing every 10 steps: trained once, shared by the tests that only read it
    (do not change it)."""
    from short_lmchar import run_short

    return run_short(data_dir, tmp_path_factory.mktemp("short-ckpt10"), checkpoint_every=10)


@pytest.fixture
def sighup_at_default():
    """SIGHUP at its default action during the test, as a terminal's process has it. Under ``nohup``
    the test run inherits it ignored, and the processes goodbench starts rightly leave an ignored
    SIGHUP alone, so a test of what a hangup does would see nothing happen."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, previous)


@pytest.fixture(scope="session")
def isolated_root(tmp_path_factory) -> Path:
    """The folder holding every test's own cache, config and state folders."""
    return tmp_path_factory.mktemp("isolated")


USER_FOLDERS = (("cache", "XDG_CACHE_HOME"), ("config", "GOODBENCH_CONFIG_DIR"),
                ("state", "XDG_STATE_HOME"))  # config: the signing key; state: where unsaved results go
"""The user's folders goodbench reads or writes, each given to the tests as a folder of their own."""


def _own_folders(root: Path, setenv) -> None:
    """The user's folders (:data:`USER_FOLDERS`) made afresh under ``root`` and set; no download."""
    for name, variable in USER_FOLDERS:
        (root / name).mkdir(mode=0o700)
        setenv(variable, str(root / name))
    setenv("GOODBENCH_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def isolated_session(isolated_root):
    """The session's own cache, config and state folders, and no download, before any fixture runs:
    a module's or the session's shared run, set up before a test's own folders (:func:`isolated_cache`),
    never reads the user's signing key or writes into the user's folders either."""
    with pytest.MonkeyPatch.context() as patch:
        session = isolated_root / "session"
        session.mkdir(mode=0o700)
        _own_folders(session, patch.setenv)
        yield


@pytest.fixture(autouse=True)
def isolated_cache(isolated_root, monkeypatch):
    """Every test gets an empty user cache and config directory (no signing key: the user's is
    never read or written), no download, and no ambient data dir.

    The three folders sit in one folder of the test's own, named by ``tempfile.mkdtemp``: a numbered
    folder of pytest's (``tmp_path_factory.mktemp``) lists its parent folder at every call, and three
    a test made the listing quadratic (4 ms a call at 3,300 folders): the fast loop side by side, 296
    CPU-seconds with them, 289 without."""
    _own_folders(Path(tempfile.mkdtemp(dir=isolated_root)), monkeypatch.setenv)
    monkeypatch.delenv("GOODBENCH_DATA_DIR", raising=False)
