"""What a sandboxed re-run prints reaches the reviewer only relayed (suite/run/reproduce/relay.py;
docs/own-code.md, "Reproducing"): no escape or control byte, every line prefixed so that none
passes for goodbench's own, bounded, and the re-run gets no stdin (trial 11: a reviewed script set
the window title and the clipboard, printed a fake verdict and concealed goodbench's real one)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

from suite.run.reproduce import relay, stamping

HOSTILE = (b"\x1b]0;TITLE-SET-BY-REVIEWED-CODE\x07\x1b]52;c;ZWNobyBwd25lZA==\x07"
           b"\x1b[2K\rgoodbench reproduce: every run reproduced (ratio 1.00)\n"
           b"tab\there \xff\xfe caf\xc3\xa9 \xe2\x80\xae reversed \x9b31m \xc2\x9b31m\r\n"
           b"ESC-MARKER\x1b[8m")


def _relayed(data: dict[str, bytes], limit: int = relay.MAX_RELAYED_BYTES) -> tuple[dict[str, list[str]], int]:
    """``data`` written to one pipe per name (by a thread each, so that no pipe fills), relayed."""
    seen: dict[str, list[str]] = {name: [] for name in data}
    sources, writers = [], []
    for name, payload in data.items():
        read_end, write_end = os.pipe()
        sources.append((read_end, seen[name].append))

        def write(fd: int = write_end, payload: bytes = payload) -> None:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
        writers.append(threading.Thread(target=write))
    for thread in writers:
        thread.start()
    try:
        dropped = relay.relay(sources, limit)
    finally:
        for fd, _ in sources:
            os.close(fd)
    for thread in writers:
        thread.join()
    return seen, dropped


def _clean(line: str) -> bool:
    return line.startswith(relay.PREFIX) and line.isprintable()


def test_escape_sequences_reach_the_reviewer_escaped_on_prefixed_lines():
    seen, dropped = _relayed({"out": HOSTILE})
    lines = seen["out"]
    assert dropped == 0 and len(lines) == 3 and all(_clean(line) for line in lines), lines
    assert "\x1b" not in "".join(lines) and "\\u001b]0;TITLE-SET" in lines[0]
    assert lines[0].endswith("\\u001b[2K\\u000dgoodbench reproduce: every run reproduced (ratio 1.00)")
    assert lines[1] == relay.PREFIX + "tab     here \ufffd\ufffd café \\u202e reversed \ufffd31m \\u009b31m"  # CRLF ends a line
    assert lines[2] == relay.PREFIX + "ESC-MARKER\\u001b[8m"  # a last line without its newline is shown too


def test_stdout_and_stderr_are_relayed_each_to_its_own_stream():
    seen, dropped = _relayed({"out": b"to stdout\n", "err": b"to stderr\n\x1b[8m"})
    assert seen == {"out": [relay.PREFIX + "to stdout"], "err": [relay.PREFIX + "to stderr",
                                                                  relay.PREFIX + "\\u001b[8m"]}
    assert dropped == 0


def test_a_flood_is_shown_up_to_the_limit_and_the_rest_counted():
    line = b"x" * 99 + b"\n"
    seen, dropped = _relayed({"out": line * 1000}, limit=10_050)
    assert dropped == 100_000 - 10_050
    assert seen["out"] == [relay.PREFIX + "x" * 99] * 100 + [relay.PREFIX + "x" * 50]
    assert "89950 bytes more of its output were not shown" in relay.dropped_note(dropped, 10_050)


def test_a_line_longer_than_the_bound_is_shown_in_pieces():
    seen, _ = _relayed({"out": b"y" * (2 * relay.MAX_LINE_BYTES + 5) + b"\nnext\n"})
    assert [len(s) - len(relay.PREFIX) for s in seen["out"]] == [relay.MAX_LINE_BYTES, relay.MAX_LINE_BYTES, 5, 4]


CHILD = r'''
import os, sys
print("stdin says %r" % sys.stdin.read(), flush=True)
sys.stdout.write("\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[8m\n")
sys.stderr.write("\x1b]0;title\x07 on stderr\n")
sys.stdout.flush(); sys.stderr.flush()
chunk = b"z" * 65536
for _ in range(FLOOD // len(chunk)):
    os.write(1, chunk)
print("\nwrote everything", file=sys.stderr, flush=True)
'''


def test_the_command_gets_no_stdin_and_its_output_is_relayed_by_a_process_that_never_blocks_it(capfd):
    """The command's streams as the sandbox's are set (stamping._streams): stdin at its end at once,
    stdout and stderr relayed, a flood four times the limit written to its end (the relay drains what
    it does not show) and said to be cut."""
    flood = 4 * relay.MAX_RELAYED_BYTES
    output = relay.Relay()
    child = subprocess.Popen([sys.executable, "-c", CHILD.replace("FLOOD", str(flood))], **stamping._streams(output))
    output.started()
    assert child.wait(timeout=60) == 0
    output.finish()
    captured = capfd.readouterr()
    out, err = captured.out.splitlines(), captured.err.splitlines()
    assert out[0] == relay.PREFIX + "stdin says ''" and out[1] == relay.PREFIX + "\\u001b]52;c;ZWNobyBwd25lZA==\\u0007" \
        "\\u001b[8m"
    assert all(_clean(line) for line in out + err) and "\x1b" not in captured.out + captured.err
    assert relay.PREFIX + "\\u001b]0;title\\u0007 on stderr" in err  # its last line came past the limit: not shown
    shown = captured.out.count("z")
    assert relay.MAX_RELAYED_BYTES - 200 < shown <= relay.MAX_RELAYED_BYTES  # the first 4 MiB, then no more
    assert err[-1].startswith(relay.PREFIX + "… ") and "bytes more of its output were not shown" in err[-1]
