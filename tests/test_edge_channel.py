"""The edge channel's sockets (suite/record/edge_channel.py): each message stamped by the kernel as
it was sent, so a launcher that reads late stamps on time; a pipe's lines are stamped as read."""
from __future__ import annotations

import os
import select
import socket
import struct
import sys
import time

import pytest

from suite.api.edges import EdgePipe
from suite.record import edge_channel, edges
from suite.run.edge_reader import EdgeReader, clock

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's send stamps are Linux's")
RUN_ID = "a" * 32
PAUSE_S = 0.2


def _one_step_written_before_the_reader(read_end: int, write_end: int) -> tuple[EdgeReader, float, float]:
    """A run's start and one step of PAUSE_S written, all before the reader starts reading: a
    launcher that waited for a core that long. With the reader, the writer's own bounds on what
    it sent, on the reader's clock: the run's start sent by ``run_sent_s`` after the origin, and
    the step's edges sent at most ``step_sent_s`` apart (PAUSE_S and however long a busy machine
    kept the writer from sending)."""
    origin = clock()
    pipe = EdgePipe(write_end)
    pipe.edge(edges.RUN, 1, RUN_ID)
    run_sent_s = clock() - origin
    pipe.edge(edges.START, 0)
    before_begin = clock()
    pipe.edge(edges.BEGIN, 1)
    time.sleep(PAUSE_S)
    pipe.edge(edges.END, 1)
    step_sent_s = clock() - before_begin
    time.sleep(PAUSE_S)  # the reader comes later still
    reader = EdgeReader(read_end, origin)
    pipe.close()
    reader.finish(5.0)
    return reader, run_sent_s, step_sent_s


STAMP_SLACK_S = 0.005  # the kernel's wall-clock stamps put on the reader's clock: microseconds measured


def test_a_socket_stamps_each_edge_when_it_was_sent_however_late_it_is_read():
    """Bounded by the writer's own clock readings around its sends, not by a constant a busy
    machine's stall of the writer could pass: stamped as read, the END would come PAUSE_S after
    the writer's last reading, and the run's start PAUSE_S × 2 after its own."""
    reader, run_sent_s, step_sent_s = _one_step_written_before_the_reader(*edge_channel.pair())
    assert reader.closed and reader.broken is None and reader.sent_stamps == 4
    (step,) = reader.runs[0].entry()["step_s"]
    assert PAUSE_S <= step <= step_sent_s + STAMP_SLACK_S  # the step's own length, not the reader's lateness
    assert reader.runs[0].run_start_s <= run_sent_s + STAMP_SLACK_S  # sent at once, read PAUSE_S × 2 later


def test_a_pipe_stamps_each_line_when_it_is_read():
    """What the socket mends: the same step written to a pipe read late is stamped at no length."""
    reader, _, _ = _one_step_written_before_the_reader(*os.pipe())
    assert reader.closed and reader.broken is None and reader.sent_stamps == 0
    assert reader.runs[0].entry()["step_s"] == [0.0]


def _stamps(wall_s: float) -> list[tuple[int, int, bytes]]:
    return [(socket.SOL_SOCKET, edge_channel.SO_TIMESTAMPNS, struct.pack("@ll", int(wall_s), round(wall_s % 1 * 1e9)))]


class Clocks:
    """A reader's clock and a wall clock 1000 s ahead of it, which a test may step."""

    def __init__(self):
        self.now, self.step = 0.0, 0.0

    def clock(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.now + 1000.0 + self.step


def test_a_send_stamp_is_never_after_the_read_nor_before_the_stamp_before_it():
    clocks = Clocks()
    sends = edge_channel.SendClock(clocks.clock, 0.0, clocks.wall)
    clocks.now = 1.5
    assert sends.stamp(_stamps(1001.0), 1.5) == pytest.approx((1.0, True))  # sent at 1.0, read at 1.5
    clocks.now = 2.0
    assert sends.stamp(_stamps(1009.0), 2.0) == (2.0, False)  # "sent" after it was read: not the kernel's
    assert sends.stamp(_stamps(950.0), 2.0) == (2.0, True)  # not before the stamp before it
    assert sends.stamp([], 4.0) == (4.0, False)  # no stamp: when read


def test_a_wall_clock_stepped_during_a_run_moves_only_the_stamps_in_flight():
    """The offset between the wall clock and the reader's is read at each message: an NTP step, a
    VM's pause or a resume moves no stamp of a message sent after it."""
    clocks = Clocks()
    sends = edge_channel.SendClock(clocks.clock, 0.0, clocks.wall)
    clocks.now = 1.1
    assert sends.stamp(_stamps(1001.0), 1.1) == pytest.approx((1.0, True))
    clocks.step = -30.0  # set back half a minute
    clocks.now = 2.1
    assert sends.stamp(_stamps(1002.0 - 30.0), 2.1) == pytest.approx((2.0, True))
    clocks.step = 30.0  # and forward a minute
    clocks.now = 3.1
    assert sends.stamp(_stamps(1003.0 + 30.0), 3.1) == pytest.approx((3.0, True))


def test_an_empty_message_is_refused_and_the_writers_close_is_the_end():
    """An empty message is no edge (the library never sends one): the channel is not believed, and
    what follows it is still read to the end — the results file's line included — however soon the
    writer closed after it."""
    read_end, write_end = edge_channel.pair()
    writer = socket.socket(fileno=write_end)
    writer.send(edges.line(edges.RUN, 1, 1.0, RUN_ID))
    writer.send(b"")
    writer.send(edges.written("/tmp/some.json", False))
    writer.close()
    reader = EdgeReader(read_end, clock())
    reader.finish(5.0)
    assert reader.closed and reader.broken == "an empty message on the edge channel"
    assert reader.written == (False, "/tmp/some.json")


def test_a_writer_that_shuts_its_end_for_writing_has_ended():
    read_end, write_end = edge_channel.pair()
    reader = EdgeReader(read_end, clock())
    writer = socket.socket(fileno=write_end)
    writer.send(edges.line(edges.RUN, 1, 1.0, RUN_ID))
    writer.shutdown(socket.SHUT_WR)
    began = time.process_time()
    reader.finish(5.0)
    assert reader.closed and reader.broken is None and [r.run_id for r in reader.runs] == [RUN_ID]
    assert time.process_time() - began < 0.5  # read to its end, not spun on
    writer.close()


def test_a_rank_that_closes_with_its_ready_unread_loses_none_of_its_edges(tmp_path):
    """The kernel reports the launcher's unread READY as a reset once, before the rank's messages."""
    path = tmp_path / edges.channel(0)
    reader = EdgeReader(edge_channel.listen(path), clock())
    rank = socket.socket(socket.AF_UNIX, edge_channel.KIND)
    rank.connect(str(path))
    assert select.select([rank], [], [], 10)[0]  # accepted, READY sent and left unread
    rank.send(edges.line(edges.RUN, 1, 1.0, RUN_ID))
    rank.send(edges.written("/tmp/some.json", False))
    rank.close()
    reader.finish(5.0)
    assert reader.closed and reader.broken is None
    assert [r.run_id for r in reader.runs] == [RUN_ID] and reader.written == (False, "/tmp/some.json")


def test_a_rank_that_writes_before_its_launcher_stamps_is_not_believed(tmp_path):
    """Messages queued before the launcher turned stamping on would be stamped when read (late, at
    the writer's choosing); the library waits for READY, so only a hostile rank writes that early."""
    path = tmp_path / edges.channel(0)
    listener = edge_channel.listen(path)
    rank = socket.socket(socket.AF_UNIX, edge_channel.KIND)
    rank.connect(str(path))  # queued in the listener's backlog, not yet accepted
    rank.send(edges.line(edges.RUN, 1, 1.0, RUN_ID))
    reader = EdgeReader(listener, clock())
    time.sleep(0.3)
    rank.close()
    reader.finish(5.0)
    assert reader.broken == "the rank wrote before its launcher said it stamps"


def test_a_writers_socket_holds_many_unread_edges():
    """A launcher behind by a few hundred edges does not make the script wait (a socket's default
    buffer holds about 278 edges; the writer's is widened up to twice net.core.wmem_max)."""
    read_end, write_end = edge_channel.pair()
    writer = socket.socket(fileno=write_end)
    writer.setblocking(False)
    held = 0
    with pytest.raises(BlockingIOError):
        while held < 100_000:
            writer.send(edges.line(edges.BEGIN, held, 1.0))
            held += 1
    assert held >= 500
    writer.close()
    os.close(read_end)


def test_a_socket_is_listened_on_where_chmod_cannot_spare_links(tmp_path, monkeypatch):
    """glibc before 2.32 cannot change a mode without following links (Python raises
    NotImplementedError): the launcher's socket, just bound in its private folder, needs no such care."""
    plain = os.chmod

    def old_glibc(path, mode, *, dir_fd=None, follow_symlinks=True):
        if not follow_symlinks:
            raise NotImplementedError("chmod: follow_symlinks unavailable on this platform")
        return plain(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "chmod", old_glibc)
    os.close(edge_channel.listen(tmp_path / edges.channel(0)))
    assert oct((tmp_path / edges.channel(0)).stat().st_mode & 0o777) == "0o600"


def test_a_message_longer_than_a_read_is_not_believed():
    read_end, write_end = edge_channel.pair()
    writer = socket.socket(fileno=write_end)
    writer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    writer.send(b"b 1 1.0\n" * 10_000)  # one message of 80,000 bytes
    reader = EdgeReader(read_end, clock())
    writer.close()
    reader.finish(5.0)
    assert reader.broken == "a message of more than 65536 bytes"


def test_a_ranks_socket_is_read_from_its_first_connection_and_a_later_one_finds_nothing(tmp_path):
    path = tmp_path / edges.channel(0)
    reader = EdgeReader(edge_channel.listen(path), clock())
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    first = edge_channel.connect(path)
    assert first is not None
    # connect returned on READY, which the launcher sends after closing its listener: a later
    # writer finds nothing listening
    assert edge_channel.connect(path) is None
    pipe = EdgePipe(first)
    pipe.edge(edges.RUN, 1, RUN_ID)
    pipe.close()
    reader.finish(5.0)
    assert reader.closed and [r.run_id for r in reader.runs] == [RUN_ID] and reader.sent_stamps == 1


def test_a_socket_in_a_folder_too_deep_for_its_name_is_reached_through_the_folder(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = deep / edges.channel(0)
    assert len(os.fsencode(path)) > 108  # sun_path's room
    reader = EdgeReader(edge_channel.listen(path), clock())
    writer = edge_channel.connect(path)
    assert writer is not None
    EdgePipe(writer).close()
    reader.finish(5.0)
    assert reader.closed


def test_nothing_listening_is_no_channel(tmp_path):
    assert edge_channel.connect(tmp_path / "absent") is None
    (tmp_path / "plain").write_text("")
    assert edge_channel.connect(tmp_path / "plain") is None


def test_a_rank_writes_nothing_until_its_launcher_says_it_stamps(tmp_path):
    """An accepted connection does not take the listener's stamping: a rank waits for the launcher's
    word that it stamps, so that even its first edge is stamped as sent; a socket that listens but
    says nothing (a launcher stopped before its reader ran) is no channel."""
    path = tmp_path / edges.channel(0)
    mute = edge_channel.listen(path)
    began = time.monotonic()
    assert edge_channel.connect(path, timeout_s=0.3) is None
    assert time.monotonic() - began < 5
    os.close(mute)


def test_the_record_says_its_edges_were_stamped_as_sent():
    from suite.run import clock_record

    assert clock_record.section(1, [])["clock"] == \
        "time.perf_counter, seconds from the child's start: each edge's sending as the kernel stamped it, else its reading"


def test_where_no_such_socket_can_be_made_one_process_gets_a_pipe_and_ranks_a_one_line_error(monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(socket, "socketpair", refused)
    read_end, write_end = edge_channel.pair()
    assert not edge_channel.is_socket(read_end) and not edge_channel.is_socket(write_end)
    os.close(read_end)
    os.close(write_end)
    from suite.record.errors import GoodbenchError
    from suite.run.rank_channels import RankChannels

    monkeypatch.setattr(edge_channel, "listen", refused)
    with pytest.raises(GoodbenchError, match=r"^cannot make rank 0's edge socket in .*: Permission denied$"):
        RankChannels(2, clock())
