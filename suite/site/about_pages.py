"""The site's two pages about itself: how it measures and checks (``methodology.html``) and how
to join it (``submitting.html``). The tables of what is checked come from the validator's own
registry (:mod:`suite.validate.registry`) and field provenance (:mod:`suite.validate.provenance`),
so the page says what the code does. Torch-free."""
from __future__ import annotations

from pathlib import Path

from suite.leaderboard import trust
from suite.site import labels
from suite.site.columns import PEAK_TEXT
from suite.site.render import render
from suite.trust.labels import OWN_RERUN_TEXT
from suite.validate import RULES_VERSION, registry
from suite.validate.provenance import CHECKED, SELF_REPORTED

SCOPES = ((registry.DOCUMENT, "the whole file"), (registry.FRAME, "each run, first"),
          (registry.RUN, "each run"))


def rule_rows() -> list[dict]:
    """One row per registered rule, in the order they run: what it checks and its codes with
    their meanings."""
    return [{"scope": words, "rule": rule.description.replace("``", ""),
             "codes": [(c, registry.CODES[c], registry.SINCE[c]) for c in rule.codes]}
            for scope, words in SCOPES for rule in registry.rules(scope)]


def field_rows() -> list[dict]:
    """The descriptive fields a rule holds to a second record: the field, the record, the code."""
    return [{"field": f, "record": record, "code": c} for f, (c, record) in CHECKED.items()]


def write(out: Path, built: dict) -> None:
    """Render ``methodology.html`` and ``submitting.html`` into ``out``."""
    render("methodology.html", out / "methodology.html", root="", title="methodology",
           rules=rule_rows(), fields=field_rows(), self_reported=SELF_REPORTED, own_timing=labels.OWN_TIMING, two_clocks=labels.TWO_CLOCKS, levels=trust.TEXT, own_rerun=OWN_RERUN_TEXT,
           peak_badge=PEAK_TEXT, rules_version=RULES_VERSION, **built)
    render("submitting.html", out / "submitting.html", root="", title="how to submit", **built)
