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
        signals.held_interrupt()


def test_a_ctrl_c_while_a_record_is_kept_is_held_then_raised(handlers):
    with signals.sigterm_deferred():
        os.kill(os.getpid(), signal.SIGINT)  # would raise here without the hold
    held = signals.held_interrupt()
    assert type(held) is KeyboardInterrupt
    assert signals.held_interrupt() is None  # taken once


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
    assert signals.held_interrupt() is None  # taken by holding
    with signals.holding() as quiet:
        pass
    assert quiet.interrupt is None


def test_a_block_that_raises_keeps_its_error_and_leaves_the_held_signal_noted(handlers):
    """The block's own error goes on, not the held signal, which stays noted (as it did when the
    hold and :func:`signals.held_interrupt` were written out at each site) and SIGTERM is armed again."""
    with pytest.raises(ValueError, match="the record"), signals.holding(deliver=True):
        os.kill(os.getpid(), signal.SIGTERM)
        raise ValueError("the record could not be put together")
    assert type(signals.held_interrupt()) is signals.Terminated
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)  # armed again: raised at once


def test_a_second_sigterm_right_after_the_first_is_noted_not_raised(handlers, monkeypatch):
    """A group kill reaches the script and run-own, which passes it on: two SIGTERMs a moment apart.
    The second, within ECHO_S of the one raised, is the same stop: noted (held_interrupt gives it),
    never raised where the first one's runs are being kept. A later SIGTERM is raised again."""
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGTERM)  # the echo: would raise here, unwinding the first
    assert type(signals.held_interrupt()) is signals.Terminated
    monkeypatch.setattr(signals, "ECHO_S", 0.0)  # the window passed
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
    signals.restore({})  # a later session starts without the window
    monkeypatch.setattr(signals, "ECHO_S", 60.0)
    with pytest.raises(signals.Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
