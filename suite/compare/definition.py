"""What two sides of a comparison must share, and what may differ and is shown: the workload's
definition (docs/compare.md#own-code-two-versions-of-ones-code).

A reference workload's definition is its spec hash: a file records the hash alone (with the
workload's id and version), so a side whose hash differs is told against this goodbench's pinned
spec, or its open-division change, where it can be.

An own implementation's spec hash covers its declaration and its code's identity and command
(:meth:`workloads.own.OwnWorkload.pinned`). Comparing two versions of one's code is what the
comparison is for, so a side of own code is held to its declaration only — the workload it is
held to (``against``) and every declared figure of one step (:data:`workloads.own.SPEC_FIELDS`) —
and a difference in code, command or the labels the submitter wrote (``name``, ``trains``) is
shown, never refused. Torch-free.
"""
from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from typing import Any

from workloads import own, registry

Doc = dict[str, Any]
MIXED = "mixed across the side's files"  # a value the files of one side (--vs) do not share
LABELS = ("name", "trains")  # the submitter's words for the code: shown, never compared
SHOWN = ("code", "command", *LABELS)  # what may differ between two versions of own code
OWN_DECLARATION = "own code, held to its declaration"  # a side of own code, against one held to a spec hash


def implementation(doc: Doc) -> dict[str, Any] | None:
    """A document's ``settings.implementation`` when it describes own code (kind "own"), else None."""
    found = (doc.get("settings") or {}).get("implementation")
    return found if isinstance(found, dict) and found.get("kind") == own.DIVISION else None


def declared(impl: dict[str, Any]) -> dict[str, Any]:
    """What a side of own code is held to, by name: ``against`` and each declared field of one
    step (``declared samples_per_step``, …), as the file writes them."""
    spec = impl.get("spec")
    fields = {"declared against": impl.get("against")}
    for name in own.SPEC_FIELDS:
        fields[f"declared {name}"] = spec.get(name) if isinstance(spec, dict) else spec
    return fields


def merged_implementation(docs: Sequence[Doc]) -> dict[str, Any] | None:
    """The own-code section of a side of several files (:func:`suite.compare.engine.merge_side`):
    the first file's, each value the files do not share replaced by :data:`MIXED` (a declared
    field so marked makes the side comparable with nothing; code so marked is shown as such).
    None when the first file is not own code."""
    impls = [implementation(d) for d in docs]
    first = impls[0]
    if first is None:
        return None
    out = dict(first)
    for key in ("against", *SHOWN):
        if any(i is None or i.get(key) != first.get(key) for i in impls[1:]):
            out[key] = MIXED
    found = first.get("spec")
    spec: dict[str, Any] = found if isinstance(found, dict) else {}
    out["spec"] = {name: value if all(i is not None and isinstance(i.get("spec"), dict)
                                      and i["spec"].get(name) == value for i in impls[1:]) else MIXED
                   for name, value in spec.items()}
    return out


# ---------------------------------------------------------------- own code: what differs
def identity(impl: dict[str, Any]) -> dict[str, Any]:
    """The code's identity as a report shows it: name, what it trains, commit, uncommitted
    changes, each named file's sha256 and the command."""
    code = impl.get("code")
    if not isinstance(code, dict):
        return {"name": impl.get("name"), "trains": impl.get("trains"), "code": code, "command": impl.get("command")}
    return {"name": impl.get("name"), "trains": impl.get("trains"), "git_commit": code.get("git_commit"),
            "git_dirty": code.get("git_dirty"), "files": code.get("files"), "command": impl.get("command")}


def code_differences(base: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """One line for each of the code, the command, the name and what it trains that differs
    between two sides of own code (nothing when they are the same)."""
    lines = []
    bc, nc = base.get("code"), new.get("code")
    if bc != nc:
        paths = _differing_files(bc, nc)
        lines.append(f"own code differs: BASE {_code_text(bc, paths)}, NEW {_code_text(nc, paths)}")
    if base.get("command") != new.get("command"):
        lines.append(f"command differs: BASE {_command_text(base.get('command'))}, "
                     f"NEW {_command_text(new.get('command'))}")
    for key in LABELS:
        if base.get(key) != new.get(key):
            lines.append(f"{key} differs: BASE {base.get(key)!r}, NEW {new.get(key)!r}")
    return lines


def _files(code: Any) -> dict[str, Any]:
    files = code.get("files") if isinstance(code, dict) else None
    return files if isinstance(files, dict) else {}


def _differing_files(bc: Any, nc: Any) -> list[str]:
    """The files whose digest differs or that one side names alone; every file when none does."""
    bf, nf = _files(bc), _files(nc)
    every = sorted(set(bf) | set(nf))
    return [p for p in every if bf.get(p) != nf.get(p)] or every


def _code_text(code: Any, paths: Iterable[str]) -> str:
    if not isinstance(code, dict):
        return str(code)
    files = _files(code)
    shown = ", ".join(f"{p} {str(files[p])[:12]}…" if p in files else f"{p} absent" for p in paths) or "no files"
    commit = code.get("git_commit")
    where = f"commit {str(commit)[:12]}" if commit else "no git commit"
    if code.get("git_dirty"):
        where += ", uncommitted changes"
    workdir = code.get("workdir")
    if workdir not in (None, "."):
        where += f", in {workdir}"
    return f"{shown} ({where})"


def _command_text(command: Any) -> str:
    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        return f"`{shlex.join(command)}`"
    return str(command)


# ---------------------------------------------------------------- reference workloads: the spec hash
def short_hash(recorded: Any) -> str:
    """A spec hash as a line shows it: "spec hash 6407264f9a02…" (a "mixed …" marker as it is)."""
    text = str(recorded)
    return text if text.startswith("mixed") else f"spec hash {text[:12]}…"


def spec_hash_origin(doc: Doc, runs: Sequence[dict]) -> str:
    """One side's spec hash and what it is, where this goodbench can tell: its pinned spec of the
    workload, the spec of the side's open-division change, or neither (the file records only the
    hash: said so, with the goodbench that wrote it). Own code: the hash alone."""
    if len({r["workload"]["spec_hash"] for r in runs}) > 1:
        return "mixed spec hashes"
    run = runs[0]
    recorded, wid, version, scale = (run["workload"]["spec_hash"], run["workload"]["id"],
                                     run["workload"]["version"], run["scale"])
    short = short_hash(recorded)
    if implementation(doc) is not None:
        return short
    try:
        workload = registry.get(wid)
    except registry.UnknownWorkload:
        return f"{short}, of a workload this goodbench does not have"
    if workload.version == version and scale in workload.variants and workload.spec_hash(scale) == recorded:
        return f"{short}, this goodbench's pinned {wid} v{version} {scale} spec"
    changes = [str(c) for c in (doc.get("settings") or {}).get("open_changes") or [] if str(c).startswith(f"{wid}:")]
    if changes:
        return f"{short}, with its open-division change ({'; '.join(changes)})"
    written = ((doc.get("system") or {}).get("software") or {}).get("goodbench")
    by = f", written by goodbench {written}" if written else ""
    return (f"{short}, not this goodbench's pinned {wid} v{workload.version} {scale} spec (the file records "
            f"only the hash{by})")
