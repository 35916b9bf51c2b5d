"""What a run's recorded host load says (:mod:`suite.meters.host_load` reads it): measured under
load or not. Self-reported, like the readings: nothing in a results file can check them."""
from __future__ import annotations

from suite.figures import naming
from suite.record import results
from suite.record.text import cut

UNDER_LOAD_CORES = 0.5  # other processes using this many cores between them: measured under load
NAMED = 5  # busy processes named, as many as a snapshot keeps (suite/meters/host_load.py LISTED)
NAME_CHARS = 40  # of a process's name as shown; a snapshot keeps its short command name (15)
LOADED_FLOOR = 0.15
"""A re-run slower than this share of the recorded throughput differs, whatever its load, unless
the machine was full (:data:`SATURATED_LEFT`) — a judgement, not a bound: what other processes
take from threads or ranks in lockstep has none. benchmarks/load_slowdown.py on an otherwise quiet
2-core machine: one busy process took a 2-thread loop to 0.25–0.36× of its quiet throughput
(median 0.26×, 5 repeats; a 1-thread loop to 0.99×); with the machine busy with other work
besides, as low as 0.12× (docs/rules.md, "Reproducing a result"). The floor sits under the quiet
machine's figures with a margin, and a tenfold slowdown still differs where the load left the run
more than :data:`SATURATED_LEFT` of its cores."""
SATURATED_LEFT = 0.1
"""A lockstep run left no more than this share of its cores by the other processes (on average over
it) was run on a full machine: its load explains any slowdown (:func:`loaded_bound`). On an
otherwise quiet 2-core machine two busy processes took a 2-thread loop to a median 0.24× of its
quiet throughput, and one repeat of five to 0.024× (benchmarks/load_slowdown.py, 5 repeats): below
any floor that still catches a tenfold slowdown."""
FLOOR_BEFORE = 0.5  # the floor goodbench judged by before (the validator still takes what it wrote)


WHEN = {"start": "at its start", "during": "on average over it", "end": "at its end"}
"""A run's host-load records (``host_load``'s keys), in words: a snapshot at its start and end, and
what the processes used over the whole run (``during``, :class:`suite.meters.host_load.Watch`;
files written before it have none)."""


def under_load(host_load: dict | None, restarts: int = 0) -> str | None:
    """Why a run's ``host_load`` says it was measured under load (other processes using at least
    :data:`UNDER_LOAD_CORES` cores at its start, on average over it, or at its end), or None: not
    under load, or not recorded (files written before it was). ``restarts``: the run's
    (:func:`restarts_of`), which say what its average was taken over (:func:`watched_span`)."""
    if not isinstance(host_load, dict):
        return None
    reasons = []
    for when, words in WHEN.items():
        snap = found if isinstance(found := host_load.get(when), dict) else {}
        other = snap.get("other_cores")
        if isinstance(other, (int, float)) and other >= UNDER_LOAD_CORES:
            if when == "during":
                words = f"on average over {watched_span(snap, restarts)[1]}"
            reasons.append(f"other processes used {other_load(snap, when=words)}")
    return "; ".join(reasons) or None


def run_under_load(run: dict) -> str | None:
    """:func:`under_load` of a run record (its ``host_load``, over what its restarts say)."""
    return under_load(run.get("host_load"), restarts_of(run))


def restarts_of(run: dict) -> int:
    """The times a run was resumed, as its goodput record counts them (0 where it says none)."""
    goodput = found if isinstance(found := run.get("goodput"), dict) else {}
    return results.count(goodput.get("restarts")) or 0


def watched_span(during: dict, restarts: int) -> tuple[int, str]:
    """The attempts a run's ``host_load.during`` adds up and what that is, in words ("it", "its 3
    attempts", "2 of its 3 attempts", "its last attempt", or where goodbench run's supervisor
    watched it whole, "the whole run, its 3 attempts and the restarts between them"), by its
    ``watched`` and ``attempts`` — a whole number (2.0 is the schema's 2), never taken above the
    run's ``restarts`` + 1, which a file could claim (the validator refuses more than its event
    log's processes) — and the run's ``restarts``."""
    claimed = results.as_number(during.get("attempts"))  # None for an integer too large for a float too
    attempts = min(int(claimed), restarts + 1) if claimed is not None and claimed.is_integer() and claimed > 1 else 1
    if restarts <= 0:
        return 1, "it"
    if during.get("watched") == "supervisor":  # from before its first process to after its last
        return restarts + 1, (f"the whole run, its {restarts + 1} attempts and the "
                              f"restart{'' if restarts == 1 else 's'} between them")
    if attempts > 1:
        return attempts, f"its {attempts} attempts" if attempts >= restarts + 1 else f"{attempts} of its {restarts + 1} attempts"
    return 1, "its last attempt"


def other_load(snap: dict, when: str = "") -> str:
    """The other processes' load in a host-load snapshot (its ``other_cores`` measured), in words:
    "1.4 of 2 cores (make, cc1)", or "1.4 cores (make)" where the snapshot lacks the machine's
    core count; ``when`` ("at its start") goes before the names. A snapshot taken with pids (what
    ``check`` says now) names them: "(python pid 4242, make pid 17)". Bounded, whatever a file holds:
    the first :data:`NAMED` names, each cut at :data:`NAME_CHARS` characters, and how many more."""
    cores = snap.get("cores")
    of = f" of {cores}" if isinstance(cores, int) and not isinstance(cores, bool) else ""
    names = busy_names(snap)
    return (f"{snap['other_cores']:g}{of} cores" + (f" {when}" if when else "")
            + (f" ({names})" if names else ""))


def busy_names(snap: dict) -> str:
    """The busy processes a host-load record lists, in words ("make, cc1"; "" where none), bounded
    as :func:`other_load` says."""
    busy = [b for b in snap.get("busy") or [] if isinstance(b, dict) and isinstance(b.get("name"), str)]
    names = ", ".join(cut(b["name"], NAME_CHARS) + (f" pid {b['pid']}" if type(b.get("pid")) is int else "")
                      for b in busy[:NAMED])
    if len(busy) > NAMED:
        names += f" and {len(busy) - NAMED} more"
    return names


def runs_under_load(runs: list[dict], implementation: str | None = None,
                    source: str = "self-reported") -> str | None:
    """One line for runs some of which were measured under load ("2 of 5 runs measured under
    load …", naming the first and why), or None when none was (or none recorded it). The run is
    named as every command names it (:func:`suite.figures.naming.workload_label`): its workload's
    id, or own code's "own: NAME (held to ID)" (``implementation``: the name its file records);
    ``source``: who measured the load ("self-reported": the file's word)."""
    loaded = [(run, why) for run in runs if isinstance(run, dict) and (why := run_under_load(run))]
    if not loaded:
        return None
    run, why = loaded[0]
    workload = w if isinstance(w := run.get("workload"), dict) else {}
    named = naming.workload_text(wid, implementation) if isinstance(wid := workload.get("id"), str) else wid
    return (f"{len(loaded)} of {len(runs)} runs measured under load ({source}); first "
            f"{named} seed {run.get('seed')}: {why}")


def share_left(host_load: dict | None, most_loaded: bool = False) -> float | None:
    """The share of the cores the run may use that the other processes left it,
    ``1 − other_cores / cores`` (at least 0): on average over the run (``during``) where that was
    recorded, else at its more loaded snapshot (start, end) — or, ``most_loaded``, at its most
    loaded reading of all three (what goodbench judged by before: a busy second at its start
    excused a whole run). None where no reading has both figures."""
    if not isinstance(host_load, dict):
        return None
    shares = {}
    for when in WHEN:
        snap = found if isinstance(found := host_load.get(when), dict) else {}
        other, cores = snap.get("other_cores"), snap.get("cores")
        if isinstance(other, (int, float)) and not isinstance(cores, bool) and isinstance(cores, int) and cores > 0:
            shares[when] = max(0.0, 1.0 - float(other) / cores)
    if "during" in shares and not most_loaded:
        return shares["during"]
    return min(shares.values()) if shares else None


def lockstep(device_type: object, world_size: object, cpu_threads: object) -> bool:
    """Whether a run's compute waits on CPU work spread over threads or ranks, each step as slow as
    the slowest of them: more than one rank, or on the CPU more than one torch thread (or a count
    not recorded). One busy process on one of 2 cores took three quarters of a 2-thread CPU
    loop's throughput, where it took a single thread's nothing (:data:`LOADED_FLOOR`). A one-rank
    GPU run's CPU work is one thread feeding the device."""
    ranks = world_size if isinstance(world_size, int) and not isinstance(world_size, bool) else 1
    if ranks > 1:
        return True
    return device_type == "cpu" and cpu_threads != 1


def loaded_bound(host_loads: list, tolerance: float, *, lockstep: bool, most_loaded: bool = False) -> float | None:
    """The lowest throughput ratio the re-runs' load can explain (docs/rules.md, "Reproducing a
    result"): for a run of one thread (not :func:`lockstep`), the band's lower edge scaled by the
    share of the cores the load left (:func:`share_left`), ``(1 − tolerance) × share_left``,
    never below :data:`LOADED_FLOOR`; for a lockstep run, the floor alone: what the load takes
    from it is not bounded by the cores it used — and none where the load left it at most
    :data:`SATURATED_LEFT` of its cores on average over it (``during``; a snapshot never says so):
    then any slowdown is explained. Over several re-runs, the least loaded one's (the
    highest bound). None where a re-run was not measured under load or its share left is not
    recorded: then the load explains nothing. ``most_loaded``: as goodbench judged before
    (:data:`FLOOR_BEFORE`, the most loaded reading, threads and ranks alike)."""
    bounds = []
    for host_load in host_loads:
        left = share_left(host_load, most_loaded)
        if under_load(host_load) is None or left is None:
            return None
        if most_loaded:
            bounds.append(max(FLOOR_BEFORE, (1 - tolerance) * left))
        else:
            during = share_left({"during": host_load.get("during")})  # an average, never one snapshot
            floor = 0.0 if lockstep and during is not None and during <= SATURATED_LEFT else LOADED_FLOOR
            bounds.append(floor if lockstep else max(floor, (1 - tolerance) * left))
    return max(bounds) if bounds else None


def load_explains(host_loads: list, ratio: float | None, tolerance: float, *, lockstep: bool,
                  most_loaded: bool = False) -> str | None:
    """Why the re-runs' load explains a throughput ``ratio`` below the band (the first loaded
    re-run's :func:`under_load` reason), or None: the ratio is not below 1, a re-run was measured
    quietly, or the ratio lies below what the load could cost (:func:`loaded_bound`)."""
    bound = loaded_bound(host_loads, tolerance, lockstep=lockstep, most_loaded=most_loaded)
    if ratio is None or ratio >= 1 or bound is None or ratio < bound:
        return None
    return _within(host_loads, "the ratio", bound)


def _within(host_loads: list, what: str, bound: float) -> str:
    """Why the re-runs' load explains ``what`` (the first loaded re-run's :func:`under_load` reason),
    down to ``bound`` (:func:`loaded_bound`), in words."""
    many = f"each of the {len(host_loads)} re-runs; first: " if len(host_loads) > 1 else ""
    return f"{many}{under_load(host_loads[0])}; {what} is within what that load could cost (≥ {bound:.3f}×)"


def tta_load_explains(host_loads: list, original_s: float | None, rerun_s: float | None, tolerance: float, *,
                      lockstep: bool) -> str | None:
    """Why the re-runs' load explains a time to target slower than
    :func:`~suite.figures.reproducibility.tta_differs` allows, or None: the re-run reached it later,
    and its speed ratio (``original_s / rerun_s``) is no lower than what the load could cost the
    throughput (:func:`loaded_bound`): a lockstep re-run the load slowed to 0.26× reaches its
    target as much later, beyond the time to target's own band (0.4× at ±20%)."""
    if original_s is None or rerun_s is None or original_s <= 0 or rerun_s <= original_s:
        return None
    bound = loaded_bound(host_loads, tolerance, lockstep=lockstep)
    if bound is None or original_s / rerun_s < bound:
        return None
    return _within(host_loads, "the time to target", bound)
