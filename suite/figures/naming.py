"""What a run's workload is called wherever goodbench names it (the command line's tables and
warnings, ``reproduce``, ``compare``, the site): its workload's id, or for own code "own: NAME"
and the goodbench workload it is held to."""
from __future__ import annotations

from suite.record.text import cut_words, printable
from workloads import own

OWN_NAME_CHARS = 40  # of an own implementation's name in the workload column; longer ends in "…"


def workload_label(run: dict, implementation: str | None = None) -> str:
    """What the workload column says of ``run``: :func:`workload_text` of its workload's id."""
    return workload_text(run["workload"]["id"], implementation)


def workload_text(wid: str, implementation: str | None = None) -> str:
    """What a workload column says of a run of workload ``wid`` (the site's system pages too): the
    id; for own code (``implementation``: the name its file records,
    :func:`workloads.own.implementation_name`) "own: NAME" (:func:`own_name`), and "held to ID"
    where it is held to a goodbench workload's target."""
    if implementation is None:
        return wid
    name = own_name(implementation)
    return f"own: {name}" if wid == own.FREE_JOB else f"own: {name} (held to {printable(str(wid))})"


def own_name(implementation: str) -> str:
    """An own implementation's name as a row shows it: the submitter's text, written printable
    and cut after a whole word within :data:`OWN_NAME_CHARS` (:func:`suite.record.text.cut_words`:
    a cut never spells a label's word the name does not hold)."""
    return cut_words(implementation, OWN_NAME_CHARS)
