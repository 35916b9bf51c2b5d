"""The event log: MLPerf's line format, written per event, read back, parsed by mlperf_logging."""
from __future__ import annotations

import json

import pytest

from suite.record import mllog


@pytest.fixture
def short_run(checkpointed_short_run):
    return checkpointed_short_run  # tests/conftest.py: one run, shared


def test_lines_have_mlperf_fields_and_caller(tmp_path):
    log = mllog.EventLog(tmp_path / "events.log")
    log.start("init_start")
    log.event("seed", 3, {"extra": 1})
    log.end("run_stop", metadata={"status": "success"})
    log.close()
    lines = mllog.read_lines(tmp_path / "events.log")
    assert lines == log.lines and len(lines) == 3
    body = json.loads(lines[1][len(mllog.TOKEN):])
    assert list(body) == ["namespace", "time_ms", "event_type", "key", "value", "metadata"]
    assert body["event_type"] == "POINT_IN_TIME" and body["value"] == 3
    assert body["metadata"]["file"] == "tests/test_mllog.py" and body["metadata"]["extra"] == 1
    events = mllog.parse(lines)
    assert [e.event_type for e in events] == ["INTERVAL_START", "POINT_IN_TIME", "INTERVAL_END"]
    assert events[0].time_ms <= events[1].time_ms <= events[2].time_ms


def test_appends_across_writers_and_drops_torn_last_line(tmp_path):
    path = tmp_path / "events.log"
    first = mllog.EventLog(path)
    first.event("a")
    first.close()
    second = mllog.EventLog(path)
    second.event("b")
    second.close()
    with open(path, "a") as fh:
        fh.write(':::MLLOG {"namespace": "", "time_ms": 1')  # a writer killed mid-line
    assert [e.key for e in mllog.parse(mllog.read_lines(path))] == ["a", "b"]


def test_malformed_line_is_an_error():
    with pytest.raises(ValueError):
        mllog.parse_line(':::MLLOG {"key": "x"}')
    assert mllog.parse_line("plain output") is None


@pytest.mark.slow
def test_mlperf_logging_parses_a_run_log(tmp_path, short_run):
    """The real mlperf_logging parser reads every line of a run's log without an error."""
    mlp_parser = pytest.importorskip("mlperf_logging.compliance_checker.mlp_parser")
    path = tmp_path / "run.log"
    path.write_text("\n".join(short_run["event_log"]) + "\n")
    loglines, errors = mlp_parser.parse_file(str(path), ruleset="6.1.0")
    assert errors == []
    assert len(loglines) == len(short_run["event_log"])
    keys = [line.key for line in loglines]
    for key in ("init_start", "init_stop", "run_start", "run_stop", "seed", "global_batch_size",
                "submission_benchmark", "block_start", "block_stop", "eval_accuracy"):
        assert key in keys
    stop = next(line for line in loglines if line.key == "run_stop")
    assert stop.value["metadata"]["status"] in ("success", "aborted")


def test_a_held_log_writes_nothing_until_released_and_a_torn_last_line_is_cut(tmp_path):
    """A later process's events reach a shared run log only once it may add to it
    (suite/api/benchmark.py), and the line a killed writer left unfinished never merges with the
    next one."""
    path = tmp_path / "events.log"
    first = mllog.EventLog(path)
    first.event("seed", 1)
    first.close()
    path.write_bytes(path.read_bytes() + b':::MLLOG {"namespace": "", "ti')  # killed mid-write
    later = mllog.EventLog(path, held=True)
    later.start("init_start")
    assert len(later.all_lines()) == 2 and path.read_bytes().endswith(b'"ti')  # nothing written yet
    later.release()
    later.event("seed", 2)
    later.close()
    assert [e.key for e in mllog.parse(mllog.read_lines(path))] == ["seed", "init_start", "seed"]
    supervisor = mllog.EventLog(path)  # a log held open while a worker writes to the same file, then dies
    with open(path, "ab") as worker:
        worker.write(b':::MLLOG {"namespace": "", "ti')
    supervisor.drop_torn_tail()
    supervisor.event("failure", "SIGKILL")
    supervisor.close()
    assert [e.key for e in mllog.parse(mllog.read_lines(path))][-1] == "failure"
