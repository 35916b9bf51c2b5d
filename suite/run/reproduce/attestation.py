"""A reviewer's attestation that they read own code before running it again (``goodbench reproduce
FILE --run-recorded-command --attest-code-read COMMIT``; docs/own-code.md, "Reproducing").

Re-running own code reproduces whatever the code does: a script that sleeps at each step,
reports losses it stored, and loads weights it stored at each evaluation gives the same curve
and throughput again, bit for bit, and no record tells the work between its step edges from
training. Only a reviewer who read the code can say it trains. The attestation is their word,
recorded in the reproduction as ``settings.reproduces.code_read`` (``{"commit": …}``, the
original's recorded commit in full) and signed with the rest; the site counts an own-code
reproduction as ``reproduced`` only with it (:mod:`suite.leaderboard.trust`), and the validator
refuses it anywhere else [``reproduces-code-read``]."""
from __future__ import annotations

import re

from suite.record.errors import Usage
from suite.run.reproduce.inputs import as_dict

OPTION = "--attest-code-read"
MIN_DIGITS = 12  # a commit named by fewer hex digits than the site shows of it names nothing in particular
_HEX = re.compile(r"[0-9a-f]+")


def code_read(settings: dict, given: str, *, run_recorded_command: bool, sign: bool) -> dict:
    """The ``code_read`` section of a reproduction of the own-code file whose ``settings`` are
    given, when the reviewer named its recorded commit (``given``: at least :data:`MIN_DIGITS` of
    its leading hex digits). :class:`Usage` for a file of goodbench's reference workloads (their
    reproduction runs goodbench's own code), without ``--run-recorded-command`` (nothing of the
    code is run), unsigned (the attestation is the reviewer's signed word) or for another commit."""
    if settings.get("division") != "own":
        raise Usage(f"{OPTION} is for own code: a reproduction of goodbench's reference workloads runs "
                    "goodbench's own code, which its reviewer does not attest to")
    if not run_recorded_command:
        raise Usage(f"{OPTION} attests the code a reproduction runs: pass --run-recorded-command too")
    if not sign:
        raise Usage(f"{OPTION} is the reviewer's signed word: it cannot be written with --no-sign")
    commit = as_dict(as_dict(settings.get("implementation")).get("code")).get("git_commit")
    if not isinstance(commit, str):
        raise Usage(f"{OPTION}: the file records no commit of its code, so no reading of it can be attested")
    named = given.strip().lower()
    if len(named) < MIN_DIGITS or not _HEX.fullmatch(named) or not commit.lower().startswith(named):
        raise Usage(f"{OPTION} {given[:60]!r} does not name the recorded commit {commit[:12]}… (at least "
                    f"{MIN_DIGITS} of its hex digits): attest reading the code at the commit that is run again")
    return {"commit": commit}
