"""Distributed runs on the CPU with gloo, in real torchrun processes (suite/run/distributed.py)."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from factories import bucket_sum
from short_lmchar import run_short
from waiting import lines_until

from suite.record import mllog
from suite.run import distributed, launch
from workloads import registry
from workloads.parallel import Parallel

HERE = Path(__file__).resolve().parent
# 2 ranks sum the same per-row gradients in another order than 1 process (two half-batch means,
# averaged by the all-reduce): fp32 rounding, amplified a little by 40 AdamW steps.
RTOL = 1e-4


def train_losses(record: dict) -> np.ndarray:
    return np.array([e.value for e in mllog.parse(record["event_log"]) if e.key == "train_loss"])


def torchrun(out_dir: Path, data_dir: Path, *scenarios: str, ok: bool = True) -> dict[str, dict]:
    """The scenarios' runs in one 2-rank torchrun job (tests/dist_worker.py): rank 0's record of
    each, by scenario."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
           str(HERE / "dist_worker.py"), str(data_dir), str(out_dir), *scenarios]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=480)
    assert (proc.returncode == 0) == ok, proc.stderr[-3000:]
    return {scenario: json.loads((out_dir / f"{scenario}.json").read_text()) for scenario in scenarios}


def failing(tmp_path: Path, data_dir: Path, scenario: str) -> dict:
    """A scenario that ends its job (exit status not 0), in a job of its own: rank 0's record."""
    return torchrun(tmp_path, data_dir, scenario, ok=False)[scenario]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def single(data_dir) -> dict:
    return run_short(data_dir)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, data_dir) -> dict[str, dict]:
    """Five 2-rank runs, one after another in one torchrun job (a job's start-up, ~16 CPU-seconds
    here, paid once): ddp, ddp in micro-batches of 2 rows, ddp with rank 1's batches late, FSDP2,
    and last ddp with rank 1 out of memory, which ends the job (exit status not 0)."""
    return torchrun(tmp_path_factory.mktemp("two-ranks"), data_dir, "ddp", "ddp:2", "ddp-stall", "fsdp", "ddp-oom",
                    ok=False)


def test_rows_and_micro_batches_split_the_global_batch():
    assert [Parallel(rank=r, world_size=4).rows(32) for r in range(4)] == [
        slice(0, 8), slice(8, 16), slice(16, 24), slice(24, 32)]
    assert Parallel(world_size=2, micro_batch=4).micro_batches(32) == 4
    with pytest.raises(ValueError, match="does not divide"):
        Parallel(world_size=2, micro_batch=3).micro_batches(32)
    with pytest.raises(ValueError, match="does not split"):
        Parallel(world_size=3).rows(32)


def test_worker_argv_drops_launch_options_and_pins_the_output():
    argv = ["run", "-w", "lm-char", "--nproc-per-node", "2", "--nnodes=2", "--rdzv-endpoint",
            "h:1", "-o", "a.json", "--parallel", "fsdp"]
    assert launch.worker_argv(argv, "b.json") == [
        "run", "-w", "lm-char", "--parallel", "fsdp", "-o", "b.json"]
    cmd = launch.torchrun_command(["run"], 2, nnodes=2, rdzv_endpoint="127.0.0.1:29500")
    assert "--rdzv-backend=c10d" in cmd and cmd[-4:] == ["-m", "suite", "--", "run"]
    with pytest.raises(ValueError, match="rdzv-endpoint"):
        launch.torchrun_command(["run"], 1, nnodes=2)


def test_torchrun_takes_none_of_the_workers_arguments():
    """torchrun parses its options with argparse, which also takes an unambiguous prefix of one
    and refuses an ambiguous one (``--run``: ``--run-path``); the worker's arguments reach the
    worker as they are, whatever they are named."""
    from torch.distributed.run import get_args_parser

    parser = get_args_parser()
    names = sorted({name for action in parser._actions for name in action.option_strings})
    prefixes = sorted({name[:n] for name in names if name.startswith("--") for n in range(3, len(name) + 1)})
    for argv in (["reproduce", "orig.json", "--run", "0", "--run", "1", "-o", "rep.json"],
                 ["run", "-w", "lm-char", "--log", "x", "--nproc", "2", "--rdzv", "h:1", "-o", "out.json"],
                 ["run", *names, *prefixes, "-o", "out.json"]):
        for cmd in (launch.torchrun_command(argv, 2),
                    launch.torchrun_command(argv, 2, nnodes=2, node_rank=1, rdzv_endpoint="127.0.0.1:29500")):
            assert cmd[:6] == [sys.executable, "-P", "-m", "suite.run.death_once", "-m", "torch.distributed.run"]
            args = parser.parse_args(cmd[6:])
            assert args.module and args.training_script == "suite" and not args.run_path
            assert launch.script_argv(args.training_script_args) == argv  # what the worker's main reads


def test_the_worker_drops_the_separator_only_once():
    assert launch.script_argv(["--", "run", "-o", "a.json"]) == ["run", "-o", "a.json"]
    assert launch.script_argv(["--", "--", "x"]) == ["--", "x"]
    assert launch.script_argv(["run", "--", "x"]) == ["run", "--", "x"]
    assert launch.script_argv([]) == []


@pytest.mark.dist
def test_two_ranks_ddp_follow_the_one_process_loss_curve(two_ranks, single):
    two = two_ranks["ddp"]
    np.testing.assert_allclose(train_losses(two), train_losses(single), rtol=RTOL)
    assert two["distributed"]["world_size"] == 2 and two["distributed"]["per_rank_batch"] == 4
    assert [r["rank"] for r in two["distributed"]["ranks"]] == [0, 1]
    spread = two["distributed"]["straggler_spread"]
    means = [r["step_time_s"]["mean"] for r in two["distributed"]["ranks"]]
    assert spread == pytest.approx(max(means) / np.median(means))
    assert two["metrics"]["samples_per_step"] == single["metrics"]["samples_per_step"]
    assert two["metrics"]["energy_to_train_j"] is None  # ranks share the CPU package
    comm = two["distributed"]["communication"]
    assert comm["status"] == "ok" and 0 <= comm["exposed_share"] < 1
    assert comm["exposed_share"] == pytest.approx(
        max(0.0, 1 - comm["step_s_without_sync"] / comm["step_s_with_sync"]))


@pytest.mark.dist
def test_gradient_accumulation_keeps_the_curve(two_ranks, single):
    accumulated = two_ranks["ddp:2"]  # 4 rows per rank in 2 micro-batches
    assert accumulated["distributed"]["grad_accumulation_steps"] == 2
    np.testing.assert_allclose(train_losses(accumulated), train_losses(single), rtol=RTOL)


@pytest.mark.dist
def test_goodput_counts_the_slowest_ranks_data_stalls(two_ranks):
    """Rank 1's batches come 20 ms late: rank 0 waits for it inside every step's all-reduce,
    and the job's goodput books that wait as data stall, not as productive step time."""
    from dist_worker import STALL_S

    run = two_ranks["ddp-stall"]
    blocks = [e for e in mllog.parse(run["event_log"]) if e.key in ("warmup_stop", "block_stop")]
    per_rank = np.sum([b.metadata["data_wait_ranks_s"] for b in blocks], axis=0)
    steps = sum(b.metadata["step_count"] for b in blocks)
    assert per_rank[1] >= steps * STALL_S > 10 * per_rank[0]
    g = run["goodput"]
    assert g["badput_s"]["data_wait"] >= steps * STALL_S
    assert g["productive_s"] < sum(run["step_times_s"]) - 0.8 * steps * STALL_S
    assert bucket_sum(g) == pytest.approx(g["wall_s"], rel=0.01)
    assert all(r["phases_s"]["init"] > 0 for r in run["distributed"]["ranks"])


@pytest.mark.dist
def test_a_rank_out_of_memory_ends_the_job_and_rank_0_keeps_its_record(two_ranks):
    """Rank 1 runs out of memory alone: it leaves, the job cannot go on, and rank 0 (whose
    collective fails, or whom torchrun stops) writes its record instead of hanging."""
    from dist_worker import OOM_AT_STEP

    run = two_ranks["ddp-oom"]
    assert run["status"] in ("failed", "partial") and run["error"].startswith(
        ("rank 0 stopped: ", "interrupted (SIGTERM)"))
    assert run["steps"] == OOM_AT_STEP - 1 == len(run["step_times_s"])
    assert [r["rank"] for r in run["distributed"]["ranks"]] == [0]
    assert run["metrics"]["energy_to_train_j"] is None


@pytest.mark.dist
def test_a_probe_failing_on_one_rank_ends_the_job_and_keeps_the_trained_run(tmp_path, data_dir):
    """Rank 1 runs out of memory in the communication probe, after training: its peer is left
    in the probe's all-reduce, so the job ends (it does not hang) and rank 0 keeps the complete
    run, its communication share not measured, saying why."""
    run = failing(tmp_path, data_dir, "ddp-probe-oom")
    assert run["status"] == "complete" and run["steps"] == 40
    comm = run["distributed"]["communication"]
    assert comm["exposed_share"] is None and comm["status"].startswith(
        "not measured: the probe failed on rank 0")


@pytest.mark.dist
def test_a_peer_gone_before_the_reports_are_gathered_leaves_rank_0_its_record(tmp_path, data_dir):
    """Rank 1 exits after training, before the ranks gather their reports (as torchrun's
    SIGTERM can stop it then): rank 0's gather fails, and it keeps the trained run with its
    own report, instead of losing the record."""
    run = failing(tmp_path, data_dir, "ddp-gone-at-finish")
    assert run["status"] == "complete" and run["steps"] == 40
    assert [r["rank"] for r in run["distributed"]["ranks"]] == [0]
    assert run["metrics"]["energy_to_train_j"] is None


@pytest.mark.dist
def test_fsdp2_on_cpu_follows_the_one_process_loss_curve(two_ranks, single):
    sharded = two_ranks["fsdp"]
    assert sharded["distributed"]["parallel"] == "fsdp"
    assert sharded["distributed"]["communication"]["exposed_share"] is None
    np.testing.assert_allclose(train_losses(sharded), train_losses(single), rtol=RTOL)


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory, data_dir) -> Path:
    """A gpt2-124m smoke run of two one-rank "nodes" on loopback; the directory it ran in."""
    where = tmp_path_factory.mktemp("two-nodes")
    endpoint = f"127.0.0.1:{free_port()}"
    cmd = [sys.executable, "-m", "suite", "run", "-w", "gpt2-124m", "--scale", "smoke", "--device",
           "cpu", "--data-dir", str(data_dir), "--nproc-per-node", "1", "--nnodes", "2",
           "--rdzv-endpoint", endpoint, "-o", "two-nodes.json"]
    nodes = [subprocess.Popen(cmd, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outputs = [node.communicate(timeout=240) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], outputs[0][1][-2000:] + outputs[1][1][-2000:]
    return where


@pytest.mark.dist
def test_two_nodes_on_loopback_write_one_valid_results_file(two_nodes):
    out = two_nodes / "two-nodes.json"
    assert sorted(p.name for p in two_nodes.iterdir() if p.suffix == ".json") == ["two-nodes.json"]
    run = json.loads(out.read_text())["runs"][0]
    assert run["distributed"]["nnodes"] == 2 and run["distributed"]["world_size"] == 2
    assert sorted(r["node_rank"] for r in run["distributed"]["ranks"]) == [0, 1]
    check = subprocess.run([sys.executable, "-m", "suite", "validate", str(out)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


def _killed_once_and_resumed(tmp_path: Path, data_dir: Path, two_nodes: Path, *, every: int, at: int,
                             options: tuple[str, ...] = ()) -> dict:
    """gpt2-124m smoke on 2 ranks, a checkpoint every ``every`` steps, rank 1 SIGKILLed at step ``at``
    and torchrun restarting both once: the run completes with that one failure on the record, resumed
    from the last checkpoint before it, one step time per kept step, the unbroken run's loss curve,
    and a file that validates. Returns the run."""
    resumed_from = (at - 1) // every * every  # the kill comes before step ``at``'s checkpoint
    out = tmp_path / "killed.json"
    cmd = [sys.executable, "-m", "suite", "run", "-w", "gpt2-124m", "--scale", "smoke",
           "--device", "cpu", "--data-dir", str(data_dir), "--nproc-per-node", "2", *options,
           "--checkpoint-every", str(every), "--inject-failure", str(at), "--max-restarts", "1", "-o", str(out)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads(out.read_text())["runs"][0]
    assert run["status"] == "complete" and run["faults"]["kills"] == 1
    g = run["goodput"]
    assert (g["failures"], g["restarts"], g["lost_steps"]) == (1, 1, at - resumed_from)
    assert g["badput_s"]["restart_recovery"] > 0 and g["badput_s"]["lost_work"] > 0
    events = mllog.parse(run["event_log"])
    failure = next(e for e in events if e.key == "failure")
    assert failure.metadata["rank"] == 1 and failure.metadata["step"] == at
    assert [e.metadata["step"] for e in events if e.key == "checkpoint_load_stop"] == [resumed_from]
    assert len(run["step_times_s"]) == run["steps"]  # one time per kept step
    unbroken = json.loads((two_nodes / "two-nodes.json").read_text())["runs"][0]
    # the unbroken run is two one-rank nodes, DDP: its reductions round differently
    np.testing.assert_allclose(train_losses(run), train_losses(unbroken), rtol=RTOL)
    check = subprocess.run([sys.executable, "-m", "suite", "validate", str(out)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    return run


@pytest.mark.dist
def test_killing_one_rank_restarts_the_job_from_its_last_checkpoint(tmp_path, data_dir, two_nodes):
    """--inject-failure under torchrun, FSDP: the last rank SIGKILLs itself at step 30, torchrun
    restarts both ranks, they resume from the step-20 checkpoint (the full state, gathered to
    rank 0, read there alone and sharded again on load), the lost work shows, and training goes
    on as if nothing had happened: the loss curve is the unbroken run's. (DDP: the warm-up kill
    below.)"""
    _killed_once_and_resumed(tmp_path, data_dir, two_nodes, every=20, at=30, options=("--parallel", "fsdp"))


@pytest.mark.dist
def test_two_ranks_killed_inside_the_warm_up_resume_and_validate(tmp_path, data_dir, two_nodes):
    """--inject-failure under torchrun, DDP: the last rank SIGKILLs itself at step 4 (inside the
    first warm-up), torchrun restarts both ranks, they resume from the step-2 checkpoint, the lost
    work shows, and the loss curve is the unbroken run's; the restarted workers warm up again, so
    the window begins after their warm-up (step 2 + the pinned warm-up + 1), and the file
    validates (issue 32's honest run, with ranks)."""
    run = _killed_once_and_resumed(tmp_path, data_dir, two_nodes, every=2, at=4)
    warmup = registry.get("gpt2-124m").spec("smoke").warmup_steps
    assert run["metrics"]["throughput"]["window"]["first_step"] == 2 + warmup + 1


@pytest.mark.slow
@pytest.mark.long  # supervised worker processes, restarted
def test_injected_failures_need_enough_restarts(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "suite", "run", "-w", "gpt2-124m", "--scale",
                           "smoke", "--device", "cpu", "--nproc-per-node", "2",
                           "--inject-failure", "30", "--inject-failure", "50",
                           "-o", str(tmp_path / "x.json")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "--max-restarts 2" in proc.stderr


@pytest.mark.parametrize("args, says", [
    (["-w", "lm-char", "--parallel", "fsdp"], "--parallel fsdp is for"),
    (["-w", "gpt2-124m", "--micro-batch", "3"], "does not divide"),
    (["-w", "gpt2-124m", "--failure-rate", "2"], "--failure-rate supervises one process")])
def test_the_launcher_refuses_what_the_workers_would(tmp_path, args, says):
    """Usage errors of a distributed run come from the launcher, before torchrun starts; the
    launcher of a CPU run trains nothing and imports no torch (seconds of CPU in every launcher),
    so each answers at once (0.14 s, in the fast loop)."""
    code = ("import sys\nfrom suite.cli import main\ntry:\n"
            f"    main({['run', '--scale', 'smoke', '--device', 'cpu', '--nproc-per-node', '2', *args, '-o', 'x.json']!r})\n"
            "except SystemExit as stop:\n"
            "    print(stop.code, 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["2", "False"], proc.stdout + proc.stderr
    assert says in proc.stderr and "launching" not in proc.stderr


@pytest.mark.dist
def test_ctrl_c_under_torchrun_keeps_the_runs_so_far(tmp_path, data_dir):
    """Ctrl-C (SIGINT to the whole process group) during a 2-rank run: the launcher waits for
    rank 0, which writes the interrupted run as partial; the file validates; exit status 130."""
    import os
    import signal

    out = tmp_path / "interrupted.json"
    proc = subprocess.Popen([sys.executable, "-m", "suite", "run", "-w", "lm-char", "--scale",
                             "smoke", "--device", "cpu", "--data-dir", str(data_dir),
                             "--nproc-per-node", "2", "-o", str(out)],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stderr is not None
    lines_until(proc, proc.stderr, "step 20/", 600)  # training is under way
    os.killpg(proc.pid, signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    doc = json.loads(out.read_text())
    assert doc["settings"]["interrupted"] and doc["runs"][0]["status"] == "partial"
    assert doc["runs"][0]["steps"] >= 20
    check = subprocess.run([sys.executable, "-m", "suite", "validate", str(out)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


@pytest.mark.slow
def test_open_division_may_change_the_global_batch_and_says_so(tmp_path, data_dir):
    """--global-batch trains another global batch than the pinned one: the file is open
    division, declares the change, carries the changed spec's hash, and validates."""
    from workloads import registry

    out = tmp_path / "open.json"
    proc = subprocess.run([sys.executable, "-m", "suite", "run", "-w", "dlrm-small", "--scale",
                           "smoke", "--device", "cpu", "--global-batch", "128", "-o", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    run = doc["runs"][0]
    assert doc["settings"]["division"] == "open"
    assert doc["settings"]["open_changes"] == [
        "dlrm-small: global batch 128 (pinned 256); every other value as pinned"]
    assert run["metrics"]["samples_per_step"] == 128
    assert run["workload"]["spec_hash"] != registry.get("dlrm-small").spec_hash("smoke")
    check = subprocess.run([sys.executable, "-m", "suite", "validate", str(out)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


def test_an_injected_kill_fires_once_even_when_the_suite_is_resumed(monkeypatch):
    """The hook reads how many kills the run's log already holds (``done``): the next injected
    step fires, in the last rank, after rank 0 logged it; none is due once all have fired."""
    waited, logged, killed = [], [], []
    monkeypatch.setattr(distributed, "barrier", lambda parallel: waited.append(parallel.rank))
    monkeypatch.setattr(distributed.os, "kill", lambda pid, sig: killed.append(sig))
    hooks = [distributed.rank_failure_hook(Parallel(rank=r, world_size=2), (50, 30), done=1,
                                           attempt=3, log_failure=logged.append) for r in (0, 1)]
    for step in (31, 49, 50, 51):
        for hook in hooks:
            hook(step)
    assert [(m["step"], m["attempt"], m["rank"]) for m in logged] == [(50, 3, 1)]
    assert waited == [0, 1] and len(killed) == 1
    assert distributed.rank_failure_hook(Parallel(rank=0, world_size=2), (50, 30), done=2,
                                         attempt=3, log_failure=logged.append) is None
