"""When a file may have been written (docs/rules.md, "Plausibility"): not before the rules version
it names came into force (:data:`suite.record.rules_version.RULES_DATES`), and under a version that
exists. Not after it was submitted is ``future-timestamp`` (:mod:`.document_rules`); one suite
run in one file is the store's ``duplicate-session`` (:mod:`suite.trust.ownership`)."""
from __future__ import annotations

import datetime as dt

from suite.record.rules_version import RULES_DATES, RULES_VERSION
from suite.validate.registry import Problem, code, document_rule
from suite.validate.shared import V7, came_into_force, parse_timestamp

code("created-before-rules", "created_at before the rules version the file names came into force, or a rules "
                             "version this suite does not have", since=V7)


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
