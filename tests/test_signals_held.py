"""The signal handlers of a training process (suite/run/signals.py), in this process: a Ctrl-C held
while a run's record is kept, and a SIGTERM of ``goodbench run --nproc-per-node``'s launcher, which
reaches the workers as SIGINT, recorded as SIGTERM."""
from __future__ import annotations

import os
import signal

import pytest

from suite.run import signals
from suite.run.driver import ended_by


@pytest.fixture
def handlers():
    previous = signals.stop_on_sigterm()
    try:
        yield
    finally:
        signals.restore(previous)
        signals._held_interrupt()


def test_a_ctrl_c_while_a_record_is_kept_is_held_then_raised(handlers):
    with signals.holding() as held:
        os.kill(os.getpid(), signal.SIGINT)  # would raise here without the hold
    assert type(held.interrupt) is KeyboardInterrupt
    assert signals._held_interrupt() is None  # taken once


def test_a_sigterm_of_the_launcher_reaches_a_worker_as_sigint_and_is_recorded_as_sigterm(
        handlers, tmp_path, monkeypatch):
    note = tmp_path / "note"
    note.write_text("")
    monkeypatch.setenv(signals.STOP_NOTE_ENV, str(note))
    with pytest.raises(KeyboardInterrupt) as plain:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C: the launcher noted nothing
    assert type(plain.value) is KeyboardInterrupt
    note.write_text("SIGTERM")  # what launch.launch writes before it hands torchrun SIGINT
    with pytest.raises(signals.Stopped) as stopped:
        os.kill(os.getpid(), signal.SIGINT)
    assert ended_by(stopped.value, "after 3 of at most 40 steps") == "interrupted (SIGTERM) after 3 of at most 40 steps"


def test_holding_delivers_a_sigterm_that_came_inside_it_at_its_end(handlers):
    """``holding(deliver=True)``: the SIGTERM that came while the block ran is raised once it ends,
    not inside it, and taken (a later block finds nothing)."""
    done = []
    with pytest.raises(signals.Terminated), signals.holding(deliver=True):
        os.kill(os.getpid(), signal.SIGTERM)  # would raise here without the hold
        done.append("the block ran to its end")
    assert done == ["the block ran to its end"]
    with signals.holding(deliver=True) as held:
        pass
    assert held.interrupt is None


def test_holding_hands_back_what_came_for_the_caller_to_raise_return_or_drop(handlers):
    with signals.holding() as held:
        assert held.interrupt is None  # set once the block has ended
        os.kill(os.getpid(), signal.SIGINT)
    assert type(held.interrupt) is KeyboardInterrupt
    assert signals._held_interrupt() is None  # taken by holding
    with signals.holding() as quiet:
        pass
    assert quiet.interrupt is None


def test_a_block_that_raises_keeps_its_error_and_the_held_signal_stops_the_next_step(handlers, monkeypatch):
    """The block's own error goes on, not the held signal, which becomes the interrupt the next
    step raises (a script that catches the error and trains on is still stopped at once, not at a
    later, unrelated hold), and SIGTERM is armed again."""
    with pytest.raises(ValueError, match="the record"), signals.holding(deliver=True):
        os.kill(os.getpid(), signal.SIGTERM)
        raise ValueError("the record could not be put together")
    assert signals._held_interrupt() is None  # not left for a later hold
    with pytest.raises(signals.Terminated):
        signals.stop_if_signalled()  # the next step
    signals.caught()
    signals.stop_if_signalled()  # caught: raised once
    with pytest.raises(OSError), signals.holding():
        os.kill(os.getpid(), signal.SIGINT)
        raise OSError("disk full")
    with pytest.raises(KeyboardInterrupt):
        signals.stop_if_signalled()
    signals.caught()
    with signals.holding() as outer:  # a hold inside another: the outer one takes it
        with pytest.raises(OSError), signals.holding():
            os.kill(os.getpid(), signal.SIGTERM)
            raise OSError("disk full")
        signals.stop_if_signalled()  # not made a step's interrupt
    assert type(outer.interrupt) is signals.Terminated
    monkeypatch.setattr(signals, "ECHO_S", 0.0)  # a later stop, not the held one's echo
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)  # armed again: raised at once


def test_a_second_sigterm_right_after_the_first_is_noted_not_raised(handlers, monkeypatch):
    """A group kill reaches the script and run-own, which passes it on: two SIGTERMs a moment apart.
    The second, within ECHO_S of the one raised, is the same stop: noted (the next hold takes it),
    never raised where the first one's runs are being kept. A later SIGTERM is raised again."""
    monkeypatch.setattr(signals, "ECHO_S", 60.0)  # however slowly this machine runs the test
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGTERM)  # the echo: would raise here, unwinding the first
    assert type(signals._held_interrupt()) is signals.Terminated
    monkeypatch.setattr(signals, "ECHO_S", 0.0)  # the window passed
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
    signals.restore({})  # a later session starts without the window
    monkeypatch.setattr(signals, "ECHO_S", 60.0)
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)


def test_a_sigterm_held_then_raised_at_the_holds_end_starts_the_echo_window(handlers, monkeypatch):
    """The group's SIGTERM lands while a record is held and is raised when the hold ends; the one
    passed on (run-own, the supervisor) lands a moment later, after the hold: it is the same stop,
    noted, not raised where the first one's runs are about to be kept (a supervised worker's
    record.json, a Benchmark's file)."""
    monkeypatch.setattr(signals, "ECHO_S", 60.0)  # however slowly this machine runs the test
    with pytest.raises(signals.Terminated), signals.holding(deliver=True):
        os.kill(os.getpid(), signal.SIGTERM)
    try:
        os.kill(os.getpid(), signal.SIGTERM)  # the echo, just after the hold
    except signals.Terminated:
        pytest.fail("the echo of a SIGTERM held then raised was raised again")
    with signals.holding() as held:  # the next hold takes it
        pass
    assert type(held.interrupt) is signals.Terminated


def test_an_echo_never_taken_is_forgotten_at_a_later_hold_not_raised_there(handlers, monkeypatch):
    """A script catches the first interrupt and goes on: the echo noted after it is not a stop of
    what runs later, and a hold that begins ECHO_S or more after it came forgets it. A SIGTERM held
    while a record was kept (its block raised) is raised at the next step instead, never at a
    later hold."""
    monkeypatch.setattr(signals, "ECHO_S", 60.0)
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)  # caught by the script, which carries on
    os.kill(os.getpid(), signal.SIGTERM)  # the echo: noted
    monkeypatch.setattr(signals, "ECHO_S", 0.0)  # time has passed
    with signals.holding() as held:  # the next run's record, kept
        pass
    assert held.interrupt is None
    signals.restore({})
    with pytest.raises(ValueError), signals.holding():
        os.kill(os.getpid(), signal.SIGTERM)  # held, and the block fails
        raise ValueError("the record could not be put together")
    with pytest.raises(signals.Terminated):
        signals.stop_if_signalled()  # the next step, not a later hold
    signals.caught()
    with signals.holding() as later:
        pass
    assert later.interrupt is None


def test_a_signal_that_comes_as_the_hold_ends_is_taken_by_it_not_raised_after(handlers, monkeypatch):
    """Between taking what was held and arming the handlers again, a SIGTERM is still held: the hold
    hands it out, rather than leaving it noted or raising it past the record (run_one then raises it
    with the record)."""
    monkeypatch.setattr(signals, "ECHO_S", 0.0)
    taken = signals._held_interrupt

    def then_a_sigterm():
        got = taken()
        if got is None and not hasattr(then_a_sigterm, "sent"):
            then_a_sigterm.sent = True  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGTERM)  # right after the take, still held
        return got

    monkeypatch.setattr(signals, "_held_interrupt", then_a_sigterm)
    with signals.holding() as held:
        pass
    assert type(held.interrupt) is signals.Terminated
    assert not signals._Sigterm.pending


def test_a_benchmark_script_that_catches_a_failed_holds_error_is_stopped_at_its_next_step(tmp_path):
    """A Benchmark script keeps a file with signals held; a SIGTERM comes meanwhile, the write fails,
    and the script catches the error and trains on: the stop takes effect at the end of its next
    step (the run kept as partial, SIGTERM's), not a whole run later at an unrelated hold."""
    import json

    import torch
    from torch import nn

    import goodbench

    bench = goodbench.Benchmark("held-mlp", trains="an MLP", samples_per_step=8, max_steps=30, warmup_steps=3,
                                eval_every=10, log_every=5, device="cpu", flops_per_step=1e5, code=[__file__],
                                out=tmp_path / "held.json", sign=False, progress=lambda *a, **k: None)
    steps = []
    with pytest.raises(signals.Terminated), bench:
        for run in bench.runs():
            model = nn.Linear(4, 1)
            for step in range(1, bench.max_steps + 1):
                with run.step() as s:
                    s.loss = float(model(torch.ones(1, 4)).sum().detach())
                steps.append(step)
                if step == 5:
                    try:
                        with signals.holding():  # the script's own file, kept with signals held
                            os.kill(os.getpid(), signal.SIGTERM)
                            raise OSError("disk full")
                    except OSError:
                        pass  # the script notes it and trains on
    assert steps == [1, 2, 3, 4, 5]
    record = json.loads(bench.path.read_text())["runs"][0]
    assert record["status"] == "partial" and record["error"].startswith("interrupted (SIGTERM)"), record
    assert record["steps"] == 6
