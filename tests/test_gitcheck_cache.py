"""The cache of checked git configurations (suite/record/gitcheck.py, ``_refuse_promisor``): a
verdict is kept only for a state of the files that git's read saw and that a later write cannot
leave looking the same (racy git)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from suite.record import gitcheck

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def gitdir(tmp_path: Path) -> Path:
    repo = tmp_path / "checkout"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    gitcheck.forget()
    yield repo / ".git"
    gitcheck.forget()


def _later(monkeypatch, seconds: float) -> None:
    """The clock ``seconds`` after the real one."""
    now = gitcheck._now_ns
    monkeypatch.setattr(gitcheck, "_now_ns", lambda: now() + int(seconds * 1e9))


def test_a_configuration_changed_within_racy_s_is_not_cached(gitdir, monkeypatch):
    gitcheck._refuse_promisor(gitdir)  # the config git init wrote just now
    assert gitcheck._CHECKED == {}
    _later(monkeypatch, gitcheck.RACY_S + 1)
    gitcheck._refuse_promisor(gitdir)
    assert list(gitcheck._CHECKED.values()) == [None]


def test_a_write_racing_gits_read_is_not_cached(gitdir, monkeypatch):
    """A partial-clone setting written while git reads the configuration: the verdict git gave
    (from the state before) is not kept under either state's key, so the next check reads again
    and refuses."""
    _later(monkeypatch, gitcheck.RACY_S + 1)
    real = gitcheck._run

    def racing(dirname: Path, *args: str, given: bytes | None = None):
        done = real(dirname, *args, given=given)
        if args[:1] == ("config",):  # written after git read it, before the key is taken again
            with open(dirname / "config", "a") as handle:
                handle.write('[remote "origin"]\n\tpromisor = true\n')
        return done

    monkeypatch.setattr(gitcheck, "_run", racing)
    gitcheck._refuse_promisor(gitdir)  # git saw the file before the write: it passes
    assert gitcheck._CHECKED == {}
    monkeypatch.setattr(gitcheck, "_run", real)
    with pytest.raises(gitcheck.GitRefused, match="partial clone"):
        gitcheck._refuse_promisor(gitdir)
    assert list(gitcheck._CHECKED.values()) == [gitcheck.PARTIAL_CLONE]
