"""A torchrun job under ``goodbench run-own`` killed from outside with its launcher (docs/own-code.md,
"The second clock across a kill"): SIGKILL to every process at once (a job scheduler's preemption, a
lost node) or to the launcher's process group alone (``kill -9 -PGID``: it holds the launcher
alone; torchrun leads a group of its own, which the kernel kills as the launcher dies, and gives
each worker a session of its own, so the ranks end themselves as soon as their channel has no
reader, :class:`suite.api.edges.ReaderWatch`). Either way no process of the job is left running, the journal keeps
every line written before the kill (a line torn by it is skipped), nothing left behind blocks the
same command run again, and the successor joins every rank's segments: the file is stamped whole on
both ranks, valid and ranked, each rank's RNGs restored: its curves are those of the job run whole
under plain torchrun, bit for bit. The ranks of tests/own_resume_job.py pause after step 25 of seed 2,
past its checkpoint of step 20, and are killed in that pause."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_clock_downtime import held_gaps
from waiting import until

from suite.figures import clock_cover, rank_clocks
from suite.leaderboard import pipeline, rows
from suite.record import edges
from suite.run import clock_journal
from suite.validate import check_document

REPO = Path(__file__).resolve().parent.parent
ARGS = ("own.json", "own.ckpt", "--kill-seed", "2", "--pause-after", "25")
RANKS = 2


def _command() -> list[str]:
    return [sys.executable, "-m", "suite", "run-own", "--nproc-per-node", str(RANKS),
            str(REPO / "tests" / "own_resume_job.py"), *ARGS]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> dict:
    """The job run whole under plain torchrun (never killed, one clock): the file whose curves the
    killed job run again must give bit for bit."""
    folder = tmp_path_factory.mktemp("whole")
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={RANKS}",
                           str(REPO / "tests" / "own_resume_job.py"), "whole.json", "whole.ckpt"], cwd=folder,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((folder / "whole.json").read_text())


def _processes() -> dict[int, tuple[int, int, str]]:
    """Every live process: its parent, its process group and its state (``/proc``, Linux)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, ppid, pgid = stat[stat.rindex(")") + 2:].split()[:3]
            found[int(entry.name)] = (int(ppid), int(pgid), state)
    return found


def _tree(root: int) -> dict[int, int]:
    """``root`` and every process under it: each one's process group."""
    table = _processes()
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in table:
            tree[pid] = table[pid][1]
            todo += [child for child, (parent, _, _) in table.items() if parent == pid]
    return tree


def _alive(pids) -> list[int]:
    table = _processes()
    return sorted(pid for pid in pids if pid in table and table[pid][2] != "Z")


def _journaled_through(path: Path, seed: int) -> dict[int, int]:
    """Each rank's last checkpoint of ``seed`` in the journal."""
    through: dict[int, int] = {}
    for line in clock_journal.read(path) if path.is_file() else []:
        if line["seed"] == seed:
            rank = line.get("rank", 0)
            through[rank] = max(through.get(rank, 0), line["through"])
    return through


def _edge_folder(pid: int) -> Path:
    """The folder of the ranks' sockets, as rank ``pid`` was started with it (it took it out of its
    environment, not out of ``/proc``'s)."""
    start = dict(entry.split(b"=", 1) for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in entry)
    return Path(start[edges.DIR_ENV.encode()].decode())


def _paused_and_killed(folder: Path, whole_tree: bool) -> tuple[str, Path]:
    """Run the job until both ranks pause after step 25 of seed 2 with its checkpoint of step 20
    journaled, SIGKILL it, and wait for every process of it to be gone; what it said, and the folder
    of its ranks' sockets."""
    journal = folder / "own.ckpt" / clock_journal.NAME
    said = folder / "first.out"
    with open(said, "w") as out:
        launcher = subprocess.Popen(_command(), cwd=folder, env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)  # a group of its own: the launcher's
    tree: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 240
        while not (all((folder / f"own.json.paused-{r}").is_file() for r in range(RANKS))
                   and _journaled_through(journal, 2) == {r: 20 for r in range(RANKS)}):
            assert launcher.poll() is None, said.read_text()[-3000:]
            assert time.monotonic() < deadline, "the ranks did not pause after step 25 of seed 2"
            time.sleep(0.05)
        tree = _tree(launcher.pid)
        ranks = {int((folder / f"own.json.paused-{r}").read_text()) for r in range(RANKS)}
        assert ranks <= tree.keys() and len(tree) >= RANKS + 2  # run-own, torchrun and the ranks
        assert {tree[pid] for pid in ranks}.isdisjoint({launcher.pid})  # torchrun's workers: groups of their own
        assert [pid for pid, group in tree.items() if group == launcher.pid] == [launcher.pid]  # torchrun's too
        sockets = _edge_folder(min(ranks))
        # every group stopped before any is killed, as if killed at once: killed one after another, the
        # ones still running see the others die in between, on a loaded machine long enough to act on it
        # (torchrun's group, the lowest pid, went first: the launcher, seeing torchrun and the ranks gone,
        # removed the sockets' folder and exited 1 with "nothing was kept" before its own SIGKILL came,
        # reproduced with 0.1 s between the kills; a rank, seeing its launcher gone, said it was orphaned)
        groups = [*sorted(set(tree.values()) - {launcher.pid}), launcher.pid] if whole_tree else [launcher.pid]
        for sig in (signal.SIGSTOP, signal.SIGKILL) if whole_tree else (signal.SIGKILL,):
            for group in groups:
                os.killpg(group, sig)
        assert launcher.wait(30) == -signal.SIGKILL
        # each rank's watch on its channel finds the launcher gone, paused as it is
        assert until(lambda: not _alive(tree), 60, 0.1), f"left running after the kill: {_alive(tree)}"
    finally:
        for pid in _alive(tree) if tree else ():
            os.kill(pid, signal.SIGKILL)
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
    return said.read_text(), sockets


@pytest.mark.slow  # a 2-rank job under torchrun, killed and run again: ~45 s each (90 s on a loaded machine)
@pytest.mark.dist
@pytest.mark.parametrize("whole_tree", [True, False], ids=["every-group", "launcher-group"])
def test_a_torchrun_job_killed_with_its_launcher_is_run_again_and_stamped_whole(tmp_path, whole_tree, whole):
    first, sockets = _paused_and_killed(tmp_path, whole_tree)
    try:  # the killed launcher's sockets are left, in a folder of its own: the same command run again makes
        assert sorted(p.name for p in sockets.iterdir()) == [edges.channel(r) for r in range(RANKS)]
        _run_again(tmp_path, whole_tree, first, whole)
        assert not sockets.exists()  # another, and removes the killed one's
    finally:
        shutil.rmtree(sockets, ignore_errors=True)


def _run_again(tmp_path: Path, whole_tree: bool, first: str, unbroken: dict) -> None:
    saved = sorted(int(p.stem.split("-")[1]) for p in (tmp_path / "own.ckpt" / "seed2").glob("ckpt-*.json"))
    assert saved and max(saved) == 20, first[-3000:]  # no rank trained on past its pause after the kill
    orphaned = [f"goodbench: rank {r}: its launcher (goodbench run-own) or torchrun is gone" for r in range(RANKS)]
    assert all((said in first) != whole_tree for said in orphaned), first[-3000:]  # said by a rank left alive alone
    path = tmp_path / "own.ckpt" / clock_journal.NAME
    kept = clock_journal.read(path)
    assert {(line.get("rank", 0), line["seed"], line["through"]) for line in kept if line["seed"] == 2} == \
        {(r, 2, t) for r in range(RANKS) for t in (0, 10, 20)}  # no rank went on past step 25 unstamped
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines()[-1][:60])  # a line torn by the kill
    assert clock_journal.read(path) == kept
    out = tmp_path / "own.json"
    assert not out.exists() or out.stat().st_size == 0  # no file of the killed job (at most a reservation's placeholder)
    again = subprocess.run(_command(), cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300,
                           start_new_session=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "second clock added (2 runs on 2 ranks in 6 process segments, the clocks agree), unsigned, valid" \
        in again.stderr, again.stderr[-3000:]
    assert [line for line in again.stderr.splitlines() if line.startswith("goodbench run-own: ")
            and "second clock added" not in line] == []  # no note: no rank's chain broke
    doc = json.loads((tmp_path / "own.json").read_text())
    assert check_document(doc) == []
    for run, whole_run in zip(doc["runs"], unbroken["runs"], strict=True):  # each rank's RNGs restored
        assert [p["val_mse"] for p in run["curve"]] == [p["val_mse"] for p in whole_run["curve"]]
        assert run["distributed"]["world_size"] == RANKS
    assert (doc["runs"][1]["goodput"]["restarts"], doc["runs"][1]["goodput"]["lost_steps"]) == (1, 5)
    entries = doc["second_clock"]["runs"]
    for rank in range(RANKS):  # seed 1 finished, seed 2 killed after step 25, gone on from its checkpoint of step 20
        assert [(e["seed"], e["first_step"], len(e["step_s"])) for e in entries if rank_clocks.rank_of(e) == rank] == \
            [(1, 1, 40), (2, 1, 20), (2, 21, 20)]
    assert all(clock_cover.stamped(doc, run["run_id"]) for run in doc["runs"])
    [entry] = pipeline.table([("own.json", doc)]).to_dict(orient="records")
    assert entry["second_clock"] is True and not set(rows.ONE_CLOCK_REASONS) & set(rows.unranked_reasons(entry))
    assert clock_journal.read(path)[:len(kept)] == kept and path.read_bytes().count(b"\n") == \
        len(clock_journal.read(path)) + 1  # the torn line ended by the successor, and skipped
    for rank in range(RANKS):
        e, f = max(((e, f) for e in entries if rank_clocks.rank_of(e) == rank for f in e["agreement"]["figures"]),
                   key=lambda ef: abs(ef[1]["own_s"] - ef[1]["launcher_s"]))
        print(f"rank {rank}, worst: {f['what']} of seed {e['seed']} from step {e['first_step']} "
              f"({len(e['step_s'])} steps): {abs(f['own_s'] - f['launcher_s']):.4f} s of {f['launcher_s']:.4f} s")
    assert len(held_gaps(doc, "2 ranks")) == (2 * RANKS if clock_journal.boot_id() else 0)  # each rank's: child's, launcher's
