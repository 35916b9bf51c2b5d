"""The version of the validation rules (docs/rules.md, enforced by suite/validate/).

Every new results file records it as ``rules_version``. Raise it by one in the change that
makes a rule refuse what it accepted before (a new rule, a tighter bound), so that a stored
file refused by the new rules says under which rules it was stored (``suite.leaderboard.check_file``).
A module of its own, importing nothing, so that writing a results file (suite/results.py) does not
load the validator; ``suite.validate.RULES_VERSION`` is the same number.
"""
RULES_VERSION = 7  # the changelog is in docs/rules.md
