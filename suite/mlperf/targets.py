"""What each MLPerf Training benchmark's quality target measures, as the training rules name it.

The imported documents hold the target as MLCommons' compliance checker writes it: a Python
expression over the logged ``eval_accuracy`` value (``"(v['value'] <= 2.69) and v['value'] >
2.6"``). Every benchmark logs its metric under that one key, whatever it is — a loss, a log
perplexity, a word error rate — so the key's name says nothing: the metric's name comes from the
rules' table of benchmarks and quality targets, and the direction from the expression.

Sources (mlcommons/training_policies, training_rules.adoc): the closed-division table and
"Deprecated benchmarks models and quality targets" of the rules dated Dec 9, 2025 (commit
d73e20f179151ce1b40dc300374f576a391f91ea), and the benchmark table of the v0.7 rules (commit
79ec0277c84145424c22c8d051e0b33641db1fd5) for the benchmarks retired before the first.
"""
from __future__ import annotations

import re

RULES_NOW = ("https://github.com/mlcommons/training_policies/blob/"
             "d73e20f179151ce1b40dc300374f576a391f91ea/training_rules.adoc")
RULES_V07 = ("https://github.com/mlcommons/training_policies/blob/"
             "79ec0277c84145424c22c8d051e0b33641db1fd5/training_rules.adoc")

# benchmark (as the result folders name it) -> (the metric, as the rules' table names it; its source)
METRICS: dict[str, tuple[str, str]] = {
    "flux1": ("eval loss", RULES_NOW),
    "llama31_8b": ("log perplexity", RULES_NOW),
    "llama31_405b": ("log perplexity", RULES_NOW),
    "llama2_70b_lora": ("eval loss", RULES_NOW),
    "dlrm_dcnv2": ("AUC", RULES_NOW),
    "gpt3": ("log perplexity", RULES_NOW),
    "bert": ("Mask-LM accuracy", RULES_NOW),
    "resnet": ("top-1 classification accuracy", RULES_NOW),
    "unet3d": ("mean DICE score", RULES_NOW),
    "maskrcnn": ("box and mask min AP", RULES_NOW),
    "ssd": ("mAP", RULES_NOW),
    "retinanet": ("mAP", RULES_NOW),
    "rnnt": ("word error rate", RULES_NOW),
    "rgat": ("classification accuracy", RULES_NOW),
    "gnn": ("classification accuracy", RULES_NOW),
    "stable_diffusion": ("FID and CLIP score", RULES_NOW),
    "dlrm": ("AUC", RULES_V07),
    "transformer": ("BLEU", RULES_V07),
    "gnmt": ("Sacre BLEU", RULES_V07),
    "minigo": ("win rate vs. a checkpoint", RULES_V07),
}

# a target the compliance checker does not write as one expression: the rules' own words
RULES_TEXT = {"stable_diffusion": "FID ≤ 90 and CLIP score ≥ 0.15"}

_SIGN = {">=": "≥", "<=": "≤", ">": ">", "<": "<"}
_CLAUSE = re.compile(r"v\['value'\](?:\['(\w+)'\])?\s*(>=|<=)\s*([0-9.]+)")
_PART = {"BBOX": "box min AP", "SEGM": "mask min AP"}


def metric(benchmark: str) -> str | None:
    """The metric ``benchmark``'s quality target is set on, as the rules name it; None if unknown."""
    entry = METRICS.get(benchmark)
    return entry[0] if entry else None


def target_text(rule: str | None, benchmark: str | None = None) -> str | None:
    """A compliance checker's target expression as the rules state it: the metric, the direction
    and the threshold — "log perplexity ≤ 2.69", "box min AP ≥ 0.377 and mask min AP ≥ 0.339",
    "Mask-LM accuracy ≥ 0.712 (≥ 0.706 at a global batch of 8192 or more)". The expression's
    other bound (``< 1.0``, ``> 0.0``: a sanity range) is left out. Without an expression, the
    rules' own words where they have them; else None."""
    name = metric(benchmark or "")
    if not rule:
        return RULES_TEXT.get(benchmark or "")
    clauses = _CLAUSE.findall(rule)
    if not clauses:
        return rule[:60]
    if all(part for part, _, _ in clauses):  # one clause per named part (Mask R-CNN's BBOX, SEGM)
        return " and ".join(f"{_PART.get(p, p)} {_SIGN[s]} {v}" for p, s, v in clauses)
    (_, sign, value), *others = clauses
    text = f"{name + ' ' if name else ''}{_SIGN[sign]} {value}"
    batch = re.search(r"global_batch_size'\]\s*<\s*(\d+)", rule)
    if batch and others:  # bert v1.0: the target depends on the batch
        text += f" ({_SIGN[others[0][1]]} {others[0][2]} at a global batch of {batch.group(1)} or more)"
    return text
