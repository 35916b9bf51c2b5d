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
whole journal.

Under torchrun every rank's runs are joined so, each from its own lines of the journal (``rank``):
a rank's run ids are its own, never the file's, so its runs are found by seed and named by the
file's run of that seed (:mod:`suite.run.rank_record`). A seed an earlier process finished is
joined, on rank 1, 2, …, from a finished line of a launcher that journaled rank 0's finished run
of the file (its ``process``): the line of another launcher with the same session, script,
arguments and seed — but another rank 0's run — is passed over. A run one rank of which has no
stamps at all (its chain broken, none of its own) is left unstamped on every rank, said in the
rank's note."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from suite.figures import clock_segments, clocks, rank_clocks
from suite.record.errors import GoodbenchError
from suite.run import clock_record, rank_record
from suite.run.clock_journal import Journal, Refused
from suite.run.edge_reader import EdgeReader, RunEdges

RESUMED = ("checkpoint", "start")  # the lines a run going on from a checkpoint (or from its start) joins
MACHINE = ("launcher_clock_s", "boot_id")  # a segment's place on the machine's monotonic clock (clock_segments.flaw)
Owned = tuple[int, dict[str, dict[str, Any]], set[int]]  # a rank, its entries by run id, the seeds it began


def record(journal: Journal, doc: dict[str, Any], runs: list[RunEdges], pid: int,
           renamed: dict[str, str], ranks: Sequence[EdgeReader] = ()) -> dict[str, Any]:
    """The ``second_clock`` record for ``doc``: :func:`suite.run.clock_record.record`'s, each entry
    naming its process, with the segments the journal holds for each run before this process's;
    ``ranks``: the readers of ranks 1, 2, … of a torchrun job, whose runs are joined the same way."""
    by_id = {run["run_id"]: run for run in doc["runs"] if isinstance(run, dict)}
    here = _stamped(runs)
    if any(seen.run_id in by_id or len(seen.ends) for seen in here):
        section = clock_record.record(doc, here, pid)
    else:  # every run was finished by an earlier process
        section = clock_record.section(pid, [])
    owned: list[Owned] = [(0, {entry["run_id"]: entry for entry in section["runs"]}, {seen.seed for seen in runs})]
    owned += [(rank, {entry["run_id"]: entry for entry in rank_record.of_rank(doc, rank, _stamped(reader.runs))},
               {seen.seed for seen in reader.runs}) for rank, reader in enumerate(ranks, 1)]
    for _, mine, _ in owned:
        for entry in mine.values():
            entry.update(pid=journal.process["pid"], started_at_s=journal.process["started_at_s"],
                         **{k: journal.process.get(k) for k in MACHINE})
    entries: list[dict[str, Any]] = []
    unstamped: set[str] = set()  # runs a rank of which has no segment
    for (rank, mine, _), chains in zip(owned, _all_chains(journal, doc, owned, renamed), strict=True):
        joined = _joined(journal, doc, rank, mine, chains)
        entries += joined
        unstamped |= {run["run_id"] for run in doc["runs"]} - {entry["run_id"] for entry in joined}
    entries = [entry for entry in entries if entry["run_id"] not in unstamped]
    if not entries:
        raise GoodbenchError("no run of the file was stamped by this process or the processes before it")
    section["runs"] = entries
    return section


def _stamped(runs: list[RunEdges]) -> list[RunEdges]:
    """The runs this process stamped (one it went on with from a checkpoint of its last step stamped nothing)."""
    return [seen for seen in runs if len(seen.ends) or seen.run_start_s is not None]


def _who(run: dict[str, Any], rank: int) -> str:
    return f"the run of seed {run['seed']}" if not rank else f"rank {rank}'s run of seed {run['seed']}"


def _joined(journal: Journal, doc: dict[str, Any], rank: int, mine: dict[str, dict[str, Any]],
            chains: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The ``rank``'s entries of each run of ``doc``: its ``chains`` from the journal and this process's
    entry (``mine``), each segment compared; this process's alone, said in a note, where they do not join."""
    warmup, cpu = clocks.compared_as(doc)
    entries = []
    for run in doc["runs"]:
        own = mine.get(run["run_id"])
        segments = chains.get(run["run_id"], []) + ([own] if own is not None else [])
        if run["run_id"] in chains:
            flaw = clock_segments.flaw(run, segments) or (
                rank_clocks.missing(run, segments[0], warmup) if rank and len(segments) == 1 else None)
            if flaw is not None:
                segments = [own] if own is not None else []
                journal.notes.append(f"the journal's segments of {_who(run, rank)} do not join ({flaw}): it is "
                                     f"{_stamped_from(own)}, and the entry is not ranked")
            else:
                found = clock_segments.compared(run, segments, warmup, cpu, rank)
                for segment, compared in zip(segments, found, strict=True):
                    segment["agreement"] = clocks.summary(compared)
        entries.extend(segments)
    return entries


def _stamped_from(own: dict[str, Any] | None) -> str:
    return f"stamped from step {own['first_step']} on only" if own and own["step_s"] else "not stamped"


def _all_chains(journal: Journal, doc: dict[str, Any], owned: list[Owned],
                renamed: dict[str, str]) -> list[dict[str, list[dict[str, Any]]]]:
    """Each rank's chains (:func:`_chains`), in the order of ``owned``; none for any rank, said in
    a note, from a journal refused."""
    said = len(journal.notes)
    try:
        lines = journal.earlier((doc.get("settings") or {}).get("session", {}).get("id"))
        kept = _kept_by(doc, [line for line in lines if rank_clocks.rank_of(line) == 0], renamed)
        return [_chains(journal, doc, rank, mine, [line for line in lines if rank_clocks.rank_of(line) == rank],
                        renamed if not rank else None, began, kept if rank else None) for rank, mine, began in owned]
    except Refused as exc:
        del journal.notes[said:]  # what was said of its chains before it was refused
        journal.notes.append(f"the journal is refused: {exc}; the earlier processes' stamps are not added")
        return [{} for _ in owned]


def _kept_by(doc: dict[str, Any], lines: list[dict[str, Any]], renamed: dict[str, str]) -> dict[str, set[str]]:
    """The launcher processes that journaled rank 0's finished run of each run id of ``doc``, from
    rank 0's journal ``lines``."""
    ids = {run["run_id"] for run in doc["runs"]}
    kept: dict[str, set[str]] = {}
    for line in lines:
        if line["kind"] == "finished" and renamed.get(line["run_id"], line["run_id"]) in ids:
            kept.setdefault(renamed.get(line["run_id"], line["run_id"]), set()).add(line["process"])
    return kept


def _chains(journal: Journal, doc: dict[str, Any], rank: int, mine: dict[str, dict[str, Any]],
            lines: list[dict[str, Any]], renamed: dict[str, str] | None,
            began: set[int], kept: dict[str, set[str]] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Each run's segments of ``rank`` from its journal ``lines``, before this process's (none where
    the chain breaks, said in a note). ``began``: the seeds this process began on that rank;
    ``kept``: on rank 1, 2, …, the launchers that journaled rank 0's finished run of each run id."""
    found = {}
    for run in doc["runs"]:
        own = mine.get(run["run_id"])
        chain = _chain(run, own, lines, renamed, run["seed"] in began,
                       None if kept is None else kept.get(run["run_id"], set()))
        if chain is None:
            other = ", or it was journaled with another run than rank 0's" if rank else ""
            journal.notes.append(f"{_who(run, rank)} has no stamps of the processes before this one in the journal "
                                 "(one ran under plain python, or its launcher was killed before journaling its "
                                 f"checkpoint or record{other}): it is {_stamped_from(own)}, and the entry is not "
                                 "ranked")
        elif chain:
            found[run["run_id"]] = chain
    return found


def _chain(run: dict[str, Any], own: dict[str, Any] | None, lines: list[dict[str, Any]],
           renamed: dict[str, str] | None, began_here: bool = False,
           kept_by: set[str] | None = None) -> list[dict[str, Any]] | None:
    """The ``run``'s segments from the journal ``lines`` before this process's entry ``own`` ([]:
    none needed; None: the chain breaks). ``began_here``: this process went on with the run, from
    a checkpoint of its last step (it stamped no step: ``own`` is None). ``renamed``: the run ids
    the file's signing changed; None where the lines' run ids are a rank's own (not the file's),
    whose finished line is then one of the launchers ``kept_by`` (that journaled rank 0's run)."""
    if own is not None and own["run_start_s"] is not None:
        return []
    need = own["first_step"] - 1 if own is not None and own["step_s"] else len(run["step_times_s"])
    kinds: tuple[str, ...] = RESUMED if own is not None or began_here else ("finished",)
    chain: list[dict[str, Any]] = []
    before = len(lines)
    while True:
        at = next((i for i in range(before - 1, -1, -1) if lines[i]["seed"] == run["seed"]
                   and lines[i]["through"] == need and lines[i]["kind"] in kinds
                   and (kinds == RESUMED or kept_by is None or lines[i]["process"] in kept_by)), None)
        if at is None:
            return None
        line = lines[at]
        if kinds != RESUMED and renamed is not None and renamed.get(line["run_id"], line["run_id"]) != run["run_id"]:
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
    last, rank = lines[-1], rank_clocks.rank_of(lines[-1])
    steps = [s for line in lines for s in line["step_s"]]
    if steps and last["first_step"] + len(steps) - 1 != last["through"]:
        of = f"seed {run['seed']}" if not rank else f"rank {rank}'s seed {run['seed']}"
        raise Refused(f"its entries of {of} do not add up to step {last['through']}")
    return {"run_id": run["run_id"], "seed": run["seed"], **({"rank": rank} if rank else {}),
            "run_start_s": next((line["run_start_s"] for line in lines if line["run_start_s"] is not None), None),
            **next(({"start_eval_s": line["start_eval_s"]} for line in lines if "start_eval_s" in line), {}),
            "first_step": last["first_step"] if steps else 0, "step_s": steps, "span_s": last["span_s"],
            "evaluations": [e for line in lines for e in line["evaluations"]],
            "child_clock_s": last["child_clock_s"], "stamps_s": last["stamps_s"], "agreement": None,
            "pid": last["pid"], "started_at_s": last["started_at_s"],
            **{k: last[k] for k in MACHINE if k in last}}  # a journal of an older goodbench has none
