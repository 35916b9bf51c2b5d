"""The version of the validation rules (docs/rules.md, enforced by suite/validate/), and the day
each version came into force.

Every new results file records it as ``rules_version``. Raise it by one in the change that
makes a rule refuse what it accepted before (a new rule, a tighter bound), so that a stored
file refused by the new rules says under which rules it was stored (``suite.leaderboard.rows.check_file``),
and add the day it comes into force to :data:`RULES_DATES`.
A module of its own, importing nothing, so that writing a results file (suite/record/results.py) does not
load the validator; ``suite.validate.RULES_VERSION`` is the same number.
"""
RULES_VERSION = 10  # the changelog is in docs/rules.md

RULES_DATES = {
    # The UTC day each rules version came into force: no file written under it can be older
    # (rule created-before-rules). From this repository's history, the commit that introduced
    # the version (`git log -S "RULES_VERSION = N" -- suite/record/rules_version.py suite/validate/__init__.py`;
    # the author's date, a day taken whole, since a run may start on code not yet committed):
    1: "2026-11-23",  # 651bc04, 2026-11-23T02:43:57Z: the first validator; a file naming no version is v1
    2: "2026-11-23",  # v2-v4 have no commit of their own here (the history was squashed: the number
    3: "2026-11-23",  # first appears as 5), so they lie between v1 and v5, which came the same day
    4: "2026-11-23",
    5: "2026-11-23",  # 86a4c1a, 2026-11-23T18:01:13Z: RULES_VERSION = 5
    6: "2026-11-25",  # a0d5f94, 2026-11-25T01:38:48Z: RULES_VERSION = 6
    7: "2026-11-26",  # 5fb7a1f, 2026-11-26T12:17:33Z: rules v7 opened
    8: "2026-11-28",  # rules v8: the fourth trust round (physics of evaluations, copies, own code, names)
    9: "2026-11-29",  # rules v9: a CPU no faster than its recorded cores (cpu-too-fast)
    10: "2026-12-02",  # rules v10: rates over the steady steps and their batch waits (trial V)
}
