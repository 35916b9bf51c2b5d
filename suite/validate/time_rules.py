"""When a file may have been written (docs/rules.md, "Plausibility"): not before the rules version
it names came into force (:data:`suite.record.rules_version.RULES_DATES`), under a version that
exists, and naming no version older than its date allows (rules v9). Not after it was submitted is ``future-timestamp`` (:mod:`.document_rules`); one suite
run in one file is the store's ``duplicate-session`` (:mod:`suite.trust.ownership`)."""
from __future__ import annotations

import datetime as dt

from suite.record.rules_version import RULES_DATES, RULES_VERSION
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V7, V8, V9, came_into_force, newer_record, parse_timestamp, version_due

code("created-before-rules", "created_at before the rules version the file names came into force, or a rules "
                             "version this suite does not have", since=V7)
code("rules-version-behind", "a rules version older than the one in force a whole day before created_at, which no "
                             "goodbench writing then names", since=V9)


@document_rule("created-before-rules")
def _check_rules_date(doc: dict, runs: list[tuple[int, dict]], now: dt.datetime) -> list[Problem]:
    """created_at is not before the rules version the file names (none named: v1) came into force."""
    version = doc.get("rules_version", 1)
    since = came_into_force(version)
    if since is None:
        return [Problem("created-before-rules", "rules_version",
                        f"rules v{version} do not exist: this suite's are v1 to v{RULES_VERSION}")]
    created = parse_timestamp(doc["created_at"])
    if created is not None and created < since:
        return [Problem("created-before-rules", "created_at",
                        f"{doc['created_at']} is before rules v{version} came into force ({RULES_DATES[version]})")]
    return []


@document_rule("rules-version-behind")
def _check_rules_version_due(doc: dict, runs: list[tuple[int, dict]], now: dt.datetime) -> list[Problem]:
    """The rules version a file names (none named: v1) is not older than the one that came into force
    a whole day before its created_at, which every goodbench writing then names, nor older than v8
    in a file holding a record only v8 or later writes (a second clock, a ceiling measured after the runs)."""
    version = doc.get("rules_version", 1)
    created = parse_timestamp(doc["created_at"])
    if type(version) is not int:
        return []
    due = version_due(created) if created is not None else 1
    if version < due:
        return [Problem("rules-version-behind", "rules_version",
                        f"v{version}, but the file is dated {doc['created_at']}, after rules v{due} came into force "
                        f"({RULES_DATES[due]}): it is held to v{due}")]
    newer = newer_record(doc)
    if newer is not None and version < V8:
        return [Problem("rules-version-behind", "rules_version",
                        f"v{version}, but the file holds {newer}, which only goodbench writing v{V8} or later writes: "
                        f"it is held to v{V8}")]
    return []
