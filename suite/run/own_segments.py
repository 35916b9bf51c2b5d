"""The ``second_clock`` record of a session killed and run again under ``goodbench run-own``
(docs/own-code.md, "A killed run goes on"): this process's stamps, and before them each run's
stamps from the processes before it, read from the launcher's journal
(:mod:`suite.run.clock_journal`) — one entry per run per process, a segment
(:mod:`suite.figures.clock_segments`). Torch-free.

A run going on from a checkpoint of step N gets the segment an earlier process journaled when it
wrote that checkpoint, and so back to the process that started the run's clock; a seed an earlier
process finished gets that process's segment journaled when its record was kept (its run id the
file's), and those before it. A run whose chain breaks (a process under plain ``python``, a line
lost with its launcher) gets nothing from the journal: it is stamped by this process alone, as
before, and is not ranked. A journal entry of another session, script or arguments refuses the
whole journal."""
from __future__ import annotations

from typing import Any

from suite.figures import clock_segments, clocks
from suite.record.errors import GoodbenchError
from suite.run import clock_record
from suite.run.clock_journal import Journal, Refused
from suite.run.edge_reader import RunEdges

RESUMED = ("checkpoint", "start")  # the lines a run going on from a checkpoint (or from its start) joins


def record(journal: Journal, doc: dict[str, Any], runs: list[RunEdges], pid: int,
           renamed: dict[str, str]) -> dict[str, Any]:
    """The ``second_clock`` record for ``doc``: :func:`suite.run.clock_record.record`'s, each entry
    naming its process, with the segments the journal holds for each run before this process's."""
    by_id = {run["run_id"]: run for run in doc["runs"] if isinstance(run, dict)}
    # a run this process went on with from a checkpoint of its last step stamped nothing of its own
    here = [seen for seen in runs if len(seen.ends) or seen.run_start_s is not None]
    if any(seen.run_id in by_id or len(seen.ends) for seen in here):
        section = clock_record.record(doc, here, pid)
    else:  # every run was finished by an earlier process
        section = clock_record.section(pid, [])
    mine = {entry["run_id"]: entry for entry in section["runs"]}
    for entry in section["runs"]:
        entry.update(pid=journal.process["pid"], started_at_s=journal.process["started_at_s"])
    chains = _chains(journal, doc, mine, renamed, {seen.run_id for seen in runs})
    spec = ((doc.get("settings") or {}).get("implementation") or {}).get("spec") or {}
    cpu = (doc.get("system") or {}).get("accelerator", {}).get("type") == "cpu"
    entries = []
    for run in doc["runs"]:
        own = mine.get(run["run_id"])
        segments = chains.get(run["run_id"], []) + ([own] if own is not None else [])
        if run["run_id"] in chains:
            flaw = clock_segments.flaw(run, segments)
            if flaw is not None:
                segments = [own] if own is not None else []
                stamped = f"stamped from step {own['first_step']} on only" if own and own["step_s"] else "not stamped"
                journal.notes.append(f"the journal's segments of the run of seed {run['seed']} do not join ({flaw}): "
                                     f"it is {stamped}, and the entry is not ranked")
            else:
                found = clock_segments.comparisons(run, segments, int(spec.get("warmup_steps") or 0), cpu)
                for segment, compared in zip(segments, found, strict=True):
                    segment["agreement"] = clocks.summary(compared)
        entries.extend(segments)
    if not entries:
        raise GoodbenchError("no run of the file was stamped by this process or the processes before it")
    section["runs"] = entries
    return section


def _chains(journal: Journal, doc: dict[str, Any], mine: dict[str, dict[str, Any]], renamed: dict[str, str],
            began: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Each run's segments from the journal, before this process's (none where the chain breaks);
    nothing, said in a note, from a journal refused. ``began``: the runs this process began."""
    try:
        lines = journal.earlier((doc.get("settings") or {}).get("session", {}).get("id"))
        found = {}
        for run in doc["runs"]:
            own = mine.get(run["run_id"])
            chain = _chain(run, own, lines, renamed, run["run_id"] in began)
            if chain is None:
                stamped = f"stamped from step {own['first_step']} on only" if own and own["step_s"] else "not stamped"
                journal.notes.append(f"the run of seed {run['seed']} has no stamps of the processes before this one "
                                     "in the journal (one ran under plain python, or its launcher was killed before "
                                     f"journaling its checkpoint or record): it is {stamped}, and the entry is not "
                                     "ranked")
            elif chain:
                found[run["run_id"]] = chain
        return found
    except Refused as exc:
        journal.notes.append(f"the journal is refused: {exc}; the earlier processes' stamps are not added")
        return {}


def _chain(run: dict[str, Any], own: dict[str, Any] | None, lines: list[dict[str, Any]],
           renamed: dict[str, str], began_here: bool = False) -> list[dict[str, Any]] | None:
    """The ``run``'s segments from the journal ``lines`` before this process's entry ``own`` ([]:
    none needed; None: the chain breaks). ``began_here``: this process went on with the run, from
    a checkpoint of its last step (it stamped no step: ``own`` is None)."""
    if own is not None and own["run_start_s"] is not None:
        return []
    need = own["first_step"] - 1 if own is not None and own["step_s"] else len(run["step_times_s"])
    kinds: tuple[str, ...] = RESUMED if own is not None or began_here else ("finished",)
    chain: list[dict[str, Any]] = []
    before = len(lines)
    while True:
        at = next((i for i in range(before - 1, -1, -1) if lines[i]["seed"] == run["seed"]
                   and lines[i]["through"] == need and lines[i]["kind"] in kinds), None)
        if at is None:
            return None
        line = lines[at]
        if kinds != RESUMED and renamed.get(line["run_id"], line["run_id"]) != run["run_id"]:
            raise Refused(f"its finished run of seed {run['seed']} is {line['run_id'][:64]}, not the file's "
                          f"{run['run_id']}")
        group = [i for i in range(at + 1) if lines[i]["process"] == line["process"] and lines[i]["seed"] == run["seed"]
                 and lines[i]["run_id"] == line["run_id"]]
        segment = _segment(run, [lines[i] for i in group])
        if segment["step_s"] or segment["run_start_s"] is not None:
            chain.insert(0, segment)
        if segment["run_start_s"] is not None:
            return chain
        need = segment["first_step"] - 1 if segment["step_s"] else need
        kinds, before = RESUMED, group[0]


def _segment(run: dict[str, Any], lines: list[dict[str, Any]]) -> dict[str, Any]:
    """One process's segment of the ``run`` from its journal ``lines`` up to the last of them."""
    last = lines[-1]
    steps = [s for line in lines for s in line["step_s"]]
    if steps and last["first_step"] + len(steps) - 1 != last["through"]:
        raise Refused(f"its entries of seed {run['seed']} do not add up to step {last['through']}")
    return {"run_id": run["run_id"], "seed": run["seed"],
            "run_start_s": next((line["run_start_s"] for line in lines if line["run_start_s"] is not None), None),
            "first_step": last["first_step"] if steps else 0, "step_s": steps, "span_s": last["span_s"],
            "evaluations": [e for line in lines for e in line["evaluations"]],
            "child_clock_s": last["child_clock_s"], "stamps_s": last["stamps_s"], "agreement": None,
            "pid": last["pid"], "started_at_s": last["started_at_s"]}
