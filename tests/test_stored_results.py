"""Every results file in the store still validates under today's code and peak table (fast: about a
second). A change that would refuse a stored file (a new peak-table entry for its device, new
figures, a FLOP model) fails here naming the file and why; docs/measurement.md, "Adding a device",
says what to do then."""
from __future__ import annotations

import json
from pathlib import Path

from suite.figures import mfu
from suite.validate import check_stored

REPO = Path(__file__).resolve().parent.parent


def refused(folder: Path) -> dict[str, list[str]]:
    """Each stored file (``*.json`` directly in ``folder``) today's rules refuse, with its problems
    (those of codes newer than the file's rules version are waived, as the site does)."""
    found = {}
    for path in sorted(folder.glob("*.json")):
        problems, _waived = check_stored(json.loads(path.read_bytes()))
        if problems:
            found[path.name] = [f"{p.field}: {p.reason} [{p.code}]" for p in problems]
    return found


def test_every_stored_file_still_validates():
    assert sorted((REPO / "results").glob("*.json")), "no stored results file"
    assert refused(REPO / "results") == {}, (
        "stored results files today's code or peak table refuses (docs/measurement.md, 'Adding a device': "
        "a table change that refuses stored files is not merged as it is)")


def test_a_new_entry_for_a_stored_files_device_is_caught(monkeypatch):
    """What a peak-table entry does to files stored for its device before it existed: they
    recorded no peak, and the entry's peak is now the only one allowed [peak-source]. The device is
    one of a stored file with no entry yet; where every stored device has one, the entries of the
    first file's device are taken out of the table first, so that the test's entry is its only one."""
    names = [json.loads(p.read_bytes())["system"]["accelerator"]["name"]
             for p in sorted((REPO / "results").glob("*.json"))]
    accelerator = next((n for n in names if not mfu.candidates(n)), names[0])
    entry = mfu.Peak(tuple(mfu.words(accelerator) or ()), "Test entry", {"fp32": 1.0, "bf16": 2.0}, 100,
                     "a test's entry, dense")
    said = set(mfu.words(accelerator) or ())
    others = tuple(p for p in mfu.PEAKS if not (set(p.match) <= said and not said & set(p.exclude)))
    monkeypatch.setattr(mfu, "PEAKS", (*others, entry))
    assert mfu.find_peak(accelerator) == entry
    found = refused(REPO / "results")
    assert found and any("[peak-source]" in p for problems in found.values() for p in problems), found

