"""Which of a results file's descriptive fields have a second record the validator checks them
against, and which are self-reported (docs/rules.md, "Claims against their second record").

The figures of a run are recomputed from its raw records (:mod:`.run_rules`) and its records
cross-checked (:mod:`.stream_rules`, :mod:`.claim_rules`). The description of the system and the
settings are mostly what the submitter's machine said of itself: where a rule holds a field to
another record, :data:`CHECKED` names the record and the rule's code; everything else is
self-reported, and the site says so (it never implies that a self-reported field was checked).
"""
from __future__ import annotations

CHECKED: dict[str, tuple[str, str]] = {
    "system.name": ("log-system", "each run's event log (submission_platform)"),
    "system.accelerator.type": ("device-mismatch", "each run's device and event log"),
    "system.accelerator.name": ("log-system", "each run's event log (goodbench_accelerator); never overridden"),
    "system.accelerator.count": ("log-system", "each run's event log (goodbench_accelerator_count) and ranks per node"),
    "settings.scale": ("log-scale", "each run's scale, step budget and event log"),
    "settings.division": ("log-spec", "each run's event log (submission_division)"),
    "settings.open_changes": ("division", "the division"),
    "settings.compile": ("log-compile", "each run's event log (goodbench_compile)"),
    "settings.session": ("log-session", "each run's event log (goodbench_session) and time span"),
    "settings.distributed.world_size": ("log-ranks", "each run's event log (goodbench_world_size) and ranks"),
    "settings.peak_tflops_override": ("peak-source", "the MFU status; MFU against it is never ranked"),
    "settings.reproduces": ("reproduces", "the reproduction's own runs"),
}
"""Field (dotted, as the site flattens it; a prefix covers its sub-fields) → (the code of the rule
that checks it, the record it is checked against)."""

SELF_REPORTED = "self-reported"


def provenance(field: str) -> str:
    """"checked against <record> [code]" for a field a rule holds to a second record, else
    :data:`SELF_REPORTED`."""
    for key, (code, record) in CHECKED.items():
        if field == key or field.startswith(key + ".") or field.startswith(key + "["):
            return f"checked against {record} [{code}]"
    return SELF_REPORTED
