"""The tests never touch the user's folders (tests/conftest.py): a module's shared run, set up
before any test's own folders exist, starts with the session's own cache, config (no signing key)
and state folders and no download; each test then gets folders of its own."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

VARIABLES = ("XDG_CACHE_HOME", "GOODBENCH_CONFIG_DIR", "XDG_STATE_HOME")  # tests/conftest.py's USER_FOLDERS


@pytest.fixture(scope="module")
def module_environment() -> dict[str, str | None]:
    """The environment as a module-scoped fixture (a shared run's subprocess) sees it."""
    return {name: os.environ.get(name) for name in [*VARIABLES, "GOODBENCH_OFFLINE"]}


def test_a_modules_shared_run_sees_the_sessions_own_folders_and_no_download(module_environment, isolated_root):
    for variable in VARIABLES:
        folder = Path(module_environment[variable] or "")
        assert folder.is_relative_to(isolated_root / "session") and folder.is_dir(), (variable, folder)
        assert not any(folder.iterdir()), (variable, folder)  # no key, nothing cached: never the user's
    assert module_environment["GOODBENCH_OFFLINE"] == "1"


def test_each_test_has_folders_of_its_own(module_environment, isolated_root):
    for variable in VARIABLES:
        own = Path(os.environ[variable])
        assert own.is_relative_to(isolated_root) and own != Path(module_environment[variable] or "")
        assert os.stat(own).st_mode & 0o777 == 0o700
