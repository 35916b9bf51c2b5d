"""The second clock of a torchrun job's ranks (``goodbench run-own --nproc-per-node N``): each rank
writes its edges to its own socket, the launcher stamps them all on its one clock, and the record has
an entry per run per rank; the validator holds rank 0 to the run's record and every other rank to
the file's ``distributed`` section, refusing a rank whose clocks disagree or that is missing. Fast:
the two ranks are made from one process's stamps; tests/test_own_rank_clock_dist.py runs torchrun."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from quick_ceiling import quick_ceiling
from torch import nn
from waiting import until

import goodbench
from suite import validate as v
from suite.api.edges import EdgePipe
from suite.figures import clock_cover, clocks, derive, rank_clocks
from suite.record import edge_channel, edges
from suite.record.errors import GoodbenchError
from suite.run import own_launch, rank_channels, rank_record, signals
from suite.run.edge_reader import EdgeReader, clock
from suite.run.rank_channels import RankChannels

REPO = Path(__file__).resolve().parent.parent
STEP_S = 0.02  # each step sleeps this long: halved, its time lies beyond the tolerance
WARMUP = 2


def _job(out: Path) -> goodbench.Benchmark:
    bench = goodbench.Benchmark("rank-mlp", trains="an MLP", samples_per_step=8, max_steps=12, warmup_steps=WARMUP,
                                eval_every=6, log_every=6, device="cpu", flops_per_step=1e5, code=[__file__],
                                out=out, sign=False, progress=lambda *a, **k: None)
    with bench:
        for run in bench.runs():
            model = nn.Linear(4, 1)
            for _ in range(bench.max_steps):
                with run.step() as s:
                    time.sleep(STEP_S)
                    s.loss = 0.5
                if run.due_for_evaluation():
                    run.evaluate(lambda model=model: {"val_mse": float(model.weight.detach().abs().sum())})
    return bench


@pytest.fixture(scope="module")
def stamped(tmp_path_factory) -> SimpleNamespace:
    """One process's job stamped as rank 0 would be: its file's bytes and the reader of its pipe."""
    folder = tmp_path_factory.mktemp("rank")
    read_end, write_end = os.pipe()
    reader = EdgeReader(read_end, clock())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(edges.ENV, str(write_end))
        quick_ceiling(patch)
        bench = _job(folder / "own.json")
    reader.finish(0.5)
    return SimpleNamespace(path=bench.path, written=bench.path.read_bytes(), reader=reader)


def _two_ranks(doc: dict) -> dict:
    """``doc`` as a two-rank job would have written it: a ``distributed`` section whose ranks both hold
    its run's steady steps."""
    doc = copy.deepcopy(doc)
    run = doc["runs"][0]
    steady = derive.rank_step_times(run["step_times_s"][WARMUP:])
    share = run["metrics"]["samples_per_step"] // 2
    run["distributed"] = {"world_size": 2, "nnodes": 1, "local_world_size": 2, "backend": "gloo", "parallel": "ddp",
                          "global_batch": 2 * share, "per_rank_batch": share, "micro_batch": share,
                          "grad_accumulation_steps": 1, "straggler_spread": 1.0,
                          "ranks": [{"rank": r, "node_rank": 0, "device": "cpu", "step_time_s": dict(steady)}
                                    for r in (0, 1)]}
    return doc


def _rank_zero(reader: EdgeReader) -> SimpleNamespace:
    """A copy of rank 0's reader, as the launcher has it once the job ended."""
    return SimpleNamespace(runs=copy.deepcopy(reader.runs), written=reader.written, broken=None)


def _rank_one(reader: EdgeReader) -> SimpleNamespace:
    """Rank 1's reader: rank 0's edges under the run id rank 1 minted for itself."""
    runs = copy.deepcopy(reader.runs)
    for seen in runs:
        seen.run_id = "f" * 32
    return SimpleNamespace(runs=runs, written=None, broken=None)


@pytest.fixture(scope="module")
def sealed(stamped, tmp_path_factory) -> dict:
    """The two-rank file with the launcher's record of both ranks."""
    path = tmp_path_factory.mktemp("sealed") / "two.json"
    path.write_text(json.dumps(_two_ranks(json.loads(stamped.written))))
    return own_launch.seal(path, _rank_zero(stamped.reader), os.getpid(), [_rank_one(stamped.reader)])


def _refusals(doc: dict) -> list[str]:
    return [p.line("two.json") for p in v.check_document(doc) if p.code == "second-clock"]


def test_the_launcher_records_each_rank_and_names_the_files_run(sealed):
    first, second = sealed["second_clock"]["runs"]
    assert "rank" not in first and second["rank"] == 1  # rank 0's entry as in one process
    assert second["run_id"] == first["run_id"] == sealed["runs"][0]["run_id"]
    assert second["agreement"]["agree"] is True
    assert [f["what"] for f in second["agreement"]["figures"]] == [
        "clock span", "steady step time p50", "steady window (sum of step times)"]
    assert _refusals(sealed) == []
    assert clock_cover.stamped(sealed, sealed["runs"][0]["run_id"])


def test_a_second_clock_without_a_rank_that_trained_is_refused_and_not_counted_stamped(sealed):
    lacking = copy.deepcopy(sealed)
    lacking["second_clock"]["runs"].pop()
    [said] = _refusals(lacking)
    assert "has no entry of rank 1 for run" in said
    assert not clock_cover.stamped(lacking, lacking["runs"][0]["run_id"])


@pytest.mark.parametrize("edit", ["record", "stamps"])
def test_a_rank_whose_step_times_were_edited_is_refused_naming_it(sealed, edit):
    edited = copy.deepcopy(sealed)
    if edit == "record":  # the file's word for rank 1: twice as fast
        times = edited["runs"][0]["distributed"]["ranks"][1]["step_time_s"]
        times.update(mean=times["mean"] / 2, p50=times["p50"] / 2)
    else:  # the launcher's stamps of rank 1's steps: twice as long
        entry = edited["second_clock"]["runs"][1]
        entry["step_s"] = [t * 2 for t in entry["step_s"]]
    said, *also = _refusals(edited)
    assert "rank 1: the clocks disagree: steady step time p50" in said
    # steps twice as long no longer fit between the span's edges and the evaluations (trial 9: readings_flaw)
    assert all("rank 1: run " in line and "as its span and step times place them" in line for line in also)
    assert len(also) == (edit == "stamps")


def test_a_rank_the_run_did_not_have_or_stamped_twice_is_refused(sealed):
    stranger = copy.deepcopy(sealed)
    stranger["second_clock"]["runs"][1]["rank"] = 2
    assert any("names rank 2, which did not train run" in said for said in _refusals(stranger))
    twice = copy.deepcopy(sealed)
    twice["second_clock"]["runs"].append(copy.deepcopy(twice["second_clock"]["runs"][1]))
    [said] = _refusals(twice)  # a rank's entries of one run are its segments across processes: these do not join
    assert "rank 1: run " in said and "segments across processes: segment 0 has no started_at_s" in said


def _split(sealed: dict, at: int) -> dict:
    """``sealed`` with rank 1's entry cut after step ``at`` into two processes' segments, as the
    record of a job killed after its checkpoint of that step and run again has it."""
    doc = copy.deepcopy(sealed)
    whole = doc["second_clock"]["runs"].pop()
    cut = next(e["stop_s"] for e in whole["evaluations"] if e["step"] == at)
    ended = next(e["start_s"] for e in whole["evaluations"] if e["step"] == at)  # step ``at`` ended before it
    (c0, c1), (s0, s1) = whole["child_clock_s"], whole["stamps_s"]
    first = {**whole, "step_s": whole["step_s"][:at], "evaluations": [e for e in whole["evaluations"] if e["step"] <= at],
             "child_clock_s": [c0, c0 + cut - s0], "stamps_s": [s0, cut], "pid": 4242, "started_at_s": 1.8e9,
             "span_s": [whole["span_s"][0], ended]}
    later = {**whole, "run_start_s": None, "first_step": at + 1, "step_s": whole["step_s"][at:],
             "evaluations": [e for e in whole["evaluations"] if e["step"] > at], "child_clock_s": [c1 - s1 + cut, c1],
             "stamps_s": [cut, s1], "pid": 4343, "started_at_s": 1.8e9 + 1000, "span_s": [cut, whole["span_s"][1]]}
    for segment in (first, later):
        segment["agreement"] = clocks.summary(rank_clocks.span(segment))
    doc["second_clock"]["runs"] += [first, later]
    doc["second_clock"]["runs"][0].update(pid=4242, started_at_s=1.8e9)  # rank 0's: one launcher stamps every rank
    return doc


def test_a_rank_stamped_in_segments_across_processes_is_joined_and_a_gap_or_overlap_refused(sealed):
    split = _split(sealed, 6)
    run_id = split["runs"][0]["run_id"]
    assert _refusals(split) == [] and clock_cover.stamped(split, run_id)
    for edit, why in (("gap", "steps 7-7 have no stamps (a gap before segment 1)"),
                      ("overlap", "steps 6-6 are stamped twice (segment 1 overlaps the one before)")):
        edited = copy.deepcopy(split)
        later = edited["second_clock"]["runs"][-1]
        if edit == "gap":
            later.update(first_step=8, step_s=later["step_s"][1:])
        else:
            later.update(first_step=6, step_s=[later["step_s"][0], *later["step_s"]])
        [said] = _refusals(edited)
        assert f"rank 1: run {run_id}'s segments across processes: {why}" in said
        assert not clock_cover.stamped(edited, run_id)


def test_a_rank_report_relabelled_outside_the_world_is_refused(sealed):
    """The sixth trial's R12: rank 1's report made twice as fast and relabelled rank 5 in a world
    of 2 left its second-clock entry comparing nothing but its span."""
    relabelled = copy.deepcopy(sealed)
    report = relabelled["runs"][0]["distributed"]["ranks"][1]
    report["rank"] = 5
    report["step_time_s"].update(mean=report["step_time_s"]["mean"] / 2, p50=report["step_time_s"]["p50"] / 2)
    found = {(p.code, p.reason) for p in v.check_document(relabelled)}
    assert ("distributed-batch", "rank reports numbered [0, 5]: a world of 2 has ranks 0 to 1, each reported once") in found
    assert any(code == "second-clock" and "holds no report of rank 1" in why for code, why in found)
    twice = copy.deepcopy(sealed)
    twice["runs"][0]["distributed"]["ranks"][1]["rank"] = 0
    assert "distributed-batch" in {p.code for p in v.check_document(twice)}


def test_a_rank_with_fewer_stamped_steps_than_its_record_is_refused(sealed):
    short = copy.deepcopy(sealed)
    short["runs"][0]["distributed"]["ranks"][1]["step_time_s"]["steps"] += 1
    [said] = _refusals(short)
    assert "rank 1 misses edges: its record holds" in said


def test_a_one_process_record_stays_valid_and_stamped(stamped, tmp_path):
    path = tmp_path / "one.json"
    path.write_bytes(stamped.written)
    doc = own_launch.seal(path, _rank_zero(stamped.reader), os.getpid())
    assert v.check_document(doc) == []
    assert ["rank" in e for e in doc["second_clock"]["runs"]] == [False]
    assert clock_cover.stamped(doc, doc["runs"][0]["run_id"])
    assert rank_clocks.lacking(doc["runs"][0], doc["second_clock"]["runs"]) == []


def test_the_launcher_adds_nothing_when_a_rank_sent_no_edges(stamped, tmp_path):
    path = tmp_path / "two.json"
    path.write_text(json.dumps(_two_ranks(json.loads(stamped.written))))
    before = path.read_bytes()
    with pytest.raises(GoodbenchError, match="rank 1 sent no edges for run"):
        own_launch.seal(path, _rank_zero(stamped.reader), os.getpid(), [SimpleNamespace(runs=[])])
    assert path.read_bytes() == before


def test_a_rank_whose_edges_stop_early_adds_nothing_and_is_named(stamped, tmp_path):
    """A rank that closed its channel before its last step: the launcher keeps the child's file as it was."""
    path = tmp_path / "two.json"
    path.write_text(json.dumps(_two_ranks(json.loads(stamped.written))))
    closed = _rank_one(stamped.reader)
    closed.runs[0].begins.pop()
    closed.runs[0].ends.pop()
    with pytest.raises(GoodbenchError, match=r"^rank 1, run \w+ \(seed 1\): its edges end at step"):
        own_launch.seal(path, _rank_zero(stamped.reader), os.getpid(), [closed])


# ---------------------------------------------------------------- the ranks' channels
def _read_to_its_end(reader: EdgeReader) -> None:
    """Wait (up to 10 s) until ``reader`` has read its channel to the end or refused it: the
    channels' shared grace, which rank 0's silence spends whole, is no wait for rank 1's reader."""
    until(lambda: reader.closed or reader.broken is not None, 10, 0.01)


def test_each_rank_writes_to_its_own_socket_read_on_one_clock(monkeypatch):
    channels = RankChannels(2, clock())
    try:
        assert oct(channels.folder.stat().st_mode & 0o777) == "0o700"
        monkeypatch.setenv(edges.DIR_ENV, str(channels.folder))
        monkeypatch.setenv("LOCAL_RANK", "1")
        monkeypatch.setenv("RANK", "1")
        pipe = EdgePipe.for_process()
        assert pipe.open and edges.DIR_ENV not in os.environ  # taken: processes the code starts do not write
        pipe.edge(edges.RUN, 1, "a" * 32)
        pipe.edge(edges.START, 0)
        pipe.close()
        _read_to_its_end(channels.readers[1])
        channels.finish(0.2)  # rank 0 never connected to its channel: nothing waits for it
    finally:
        channels.close()
    silent, rank_one = channels.readers
    assert silent.runs == [] and silent.broken is None
    assert [r.run_id for r in rank_one.runs] == ["a" * 32] and rank_one.runs[0].run_start_s is not None
    assert not channels.folder.exists()


def test_a_killed_launchers_folder_is_removed_by_the_next_and_a_live_ones_kept(tmp_path):
    """A launcher killed with ``kill -9`` leaves its folder of sockets; the next launcher to make one
    beside it removes it, and never the folder of a launcher still alive."""
    killed = tmp_path / f"{rank_channels.FOLDER_PREFIX}killed"
    killed.mkdir(mode=0o700)
    os.close(edge_channel.listen(killed / edges.channel(0)))  # its socket, no longer listened to
    alive = RankChannels(1, clock(), tmp_path)
    try:
        assert not killed.exists()
        later = RankChannels(1, clock(), tmp_path)
        later.finish(0.0)
        later.close()
        assert alive.folder.is_dir() and not later.folder.exists()
    finally:
        alive.finish(0.0)
        alive.close()
    assert not alive.folder.exists()


def test_a_rank_without_a_channel_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv(edges.DIR_ENV, str(tmp_path))  # no socket there
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert not EdgePipe.for_process().open
    (tmp_path / edges.channel(0)).write_text("")  # a plain file is no channel
    monkeypatch.setenv(edges.DIR_ENV, str(tmp_path))
    assert not EdgePipe.for_process().open


ORPHAN = """
import sys
from suite.api import edges as edges_api
from suite.api.edges import EdgePipe
pipe = EdgePipe.for_process()
print(pipe.open, flush=True)
sys.stdin.readline()  # the launcher goes meanwhile
pipe.edge("b", 26)
print("trained on", flush=True)
"""


def test_a_rank_whose_launcher_is_gone_ends_at_its_next_edge_saying_why(tmp_path):
    """torchrun gives each worker a session of its own, so a kill of the launcher's process group
    leaves the ranks running (tests/test_own_group_kill.py): the first edge that finds no reader on
    the channel ends the rank at once, as the kill would have."""
    launcher = EdgeReader(edge_channel.listen(tmp_path / edges.channel(0)), clock())  # its reader, which goes
    env = {**os.environ, edges.DIR_ENV: str(tmp_path), "LOCAL_RANK": "0", "RANK": "3",
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    rank = subprocess.Popen([sys.executable, "-c", ORPHAN], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert rank.stdout.readline() == "True\n"
    launcher.finish(0.0)
    out, err = rank.communicate("\n", timeout=60)
    assert (rank.returncode, out) == (signals.ORPHANED_STATUS, "")
    assert err.startswith("goodbench: rank 3: its launcher (goodbench run-own) or torchrun is gone: the rank ends "
                          "here, unstamped, as if killed with them; it kept no checkpoints (no checkpoint_dir): run "
                          "the same command again to start over") and err.count("\n") == 1  # it named no journal


BLOCKED = """
import sys, time
from suite.api.edges import EdgePipe
pipe = EdgePipe.for_process()
print(pipe.open, flush=True)
if sys.argv[1] == "close":
    pipe.close()  # the library's last act on its channel: the watch ends with it
    print("closed", flush=True)
time.sleep(30)  # an evaluation, or a collective, that writes no edge while the launcher goes
print("trained on", flush=True)
"""


def _blocked_rank(tmp_path: Path, how: str) -> tuple[subprocess.Popen, EdgeReader]:
    launcher = EdgeReader(edge_channel.listen(tmp_path / edges.channel(0)), clock())  # its reader, which goes
    env = {**os.environ, edges.DIR_ENV: str(tmp_path), "LOCAL_RANK": "0", "RANK": "2",
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    rank = subprocess.Popen([sys.executable, "-c", BLOCKED, how], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert rank.stdout.readline() == "True\n"
    return rank, launcher


def test_a_rank_blocked_where_it_writes_no_edge_ends_as_soon_as_its_launcher_is_gone(tmp_path):
    """The watch on the channel ends a rank that would not reach its next edge for long (a long
    evaluation, a hung collective) within moments of its launcher's end, not at that edge."""
    rank, launcher = _blocked_rank(tmp_path, "block")
    time.sleep(0.3)
    assert rank.poll() is None  # the launcher still reads: the rank goes on
    launcher.finish(0.0)
    began = time.monotonic()
    out, err = rank.communicate(timeout=20)
    assert time.monotonic() - began < 5  # not the 30 s of its blocked call
    assert (rank.returncode, out) == (signals.ORPHANED_STATUS, "")
    assert err.startswith("goodbench: rank 2: its launcher (goodbench run-own) or torchrun is gone") \
        and err.count("\n") == 1


def test_a_rank_that_closed_its_channel_is_no_longer_watched(tmp_path):
    rank, launcher = _blocked_rank(tmp_path, "close")
    assert rank.stdout.readline() == "closed\n"
    launcher.finish(0.0)  # the launcher reads to the channel's end, then goes: nothing of the rank's
    time.sleep(0.5)
    assert rank.poll() is None
    rank.kill()
    rank.communicate(timeout=20)


def test_one_process_whose_launcher_is_gone_ends_at_its_next_edge():
    """run-own's single process, its launcher killed alone (SIGKILL of its pid): it trained on
    unstamped and wrote a file of one clock; now it ends as a rank does (the watch, or the edge that
    finds no reader: whichever comes first), saying so."""
    script = ("import os, sys\n"
              "from suite.api.edges import EdgePipe\n"
              "r, w = os.pipe()\n"
              "pipe = EdgePipe(w)  # $GOODBENCH_EDGE_FD's\n"
              "os.close(r)\n"
              "pipe.edge('b', 1)\n"
              "print('trained on', flush=True)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (signals.ORPHANED_STATUS, "")
    assert done.stderr.startswith("goodbench: its launcher (goodbench run-own) is gone: the script ends here")


def test_a_garbled_rank_channel_is_not_believed_and_says_which_rank():
    channels = RankChannels(2, clock())
    try:
        fd = edge_channel.connect(channels.folder / edges.channel(1))
        os.write(fd, b"b 1 nan\n")
        os.close(fd)
        _read_to_its_end(channels.readers[1])
        channels.finish(0.2)
    finally:
        channels.close()
    assert rank_record.why_not(channels.readers[1:]).startswith("rank 1's edge channel was not believed")


def test_nproc_per_node_without_torch_is_refused_in_one_line(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(GoodbenchError, match=r"^--nproc-per-node needs torch \(torch.distributed.run\)"):
        own_launch.torchrun_command("x.py", [], 2)
    assert own_launch.torchrun_command.__module__ == "suite.run.own_launch"


def test_run_own_stays_torch_free_for_a_plain_script():
    code = ("import sys; from suite.commands import run_own; from suite.run import own_launch, rank_record, "
            "rank_channels; from suite.validate import clock_rules; print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.strip() == "False", done.stderr


def test_a_torchrun_job_is_stamped_on_linux_only(monkeypatch, tmp_path, capsys):
    """Elsewhere the kernel stamps no message as it is sent (suite/record/edge_channel.py):
    run-own --nproc-per-node and the re-run of a recorded torchrun command refuse in one line,
    before anything runs."""
    from suite.cli import main
    from suite.run.reproduce import own

    monkeypatch.setattr(sys, "platform", "darwin")
    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('it never runs')\n")
    assert main(["run-own", "--nproc-per-node", "2", str(script)]) == 1
    said = [line for line in capsys.readouterr().err.splitlines() if line]
    assert said == ["goodbench: error: goodbench stamps a torchrun job's ranks on its second clock on Linux only "
                    "(Linux's kernel stamps their edges as they are sent), not on darwin"]
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", "train.py"]
    monkeypatch.setattr(own, "copy_code", lambda settings, where, dest: dest.mkdir())
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: (torchrun, where))
    monkeypatch.setattr(own.sandbox, "check", lambda writable, where: None)
    monkeypatch.setattr(own.stamping, "run_ranks", lambda *a: pytest.fail("the re-run ran"))
    with pytest.raises(GoodbenchError, match=r"on Linux only .*, not on darwin$"):
        own._rerun({}, tmp_path, None, tmp_path / "repro.json", own.BARE)
