"""Shared fixtures: the offline dataset mirror, an isolated cache, smoke-run helpers."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _dataset_dir() -> Path | None:
    for candidate in (os.environ.get("GOODBENCH_DATA_DIR"), REPO.parent / "shared" / "datasets"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """A directory holding the pinned dataset files (the offline mirror); skips when absent."""
    found = _dataset_dir()
    if found is None:
        pytest.skip("no dataset mirror: set GOODBENCH_DATA_DIR")
    return found


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets an empty user cache, no download, and no ambient data dir."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("GOODBENCH_OFFLINE", "1")
    monkeypatch.delenv("GOODBENCH_DATA_DIR", raising=False)
