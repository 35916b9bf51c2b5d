"""Training FLOPs per token counted from a log's embedded source, without running it, and the MFU
estimate they give with the peak of the log's GPU.

Counted only where the source states its model shape in the form of 2024's records —
``model = GPT(GPTConfig(vocab_size=…, n_layer=L, n_head=…, n_embd=d))`` with
``sequence_length : int = T`` — and the model is the plain GPT-2 block those records train:
four d×d attention projections, a 4·d MLP, dense causal attention over the whole sequence
(``scaled_dot_product_attention(…, is_causal=True)``, no FlexAttention window). Then, as PaLM's
appendix B counts (and goodbench's own gpt2 workload): 6·N + 12·L·d·T, with N the matmul weights,
12·L·d² + d·V (the lm_head; an embedding lookup is no matmul). The later forms (a sliding window
of a schedule, layers without attention or MLP, value embeddings) change the count in ways the
shape alone does not give: "not in the log".
"""
from __future__ import annotations

import re

from suite.figures import mfu

NOT_IN_LOG = "not in the log"
PRECISION = "bf16"  # the records train under bf16 autocast; the dense bf16 peak is the bound
_MODEL = re.compile(r"^model = GPT\(GPTConfig\(vocab_size=(\w{1,100}), (?:n_layer|num_layers)=(\d{1,12}), "
                    r"(?:n_head|num_heads)=(\d{1,12}), (?:n_embd|model_dim)=(\d{1,12})\)\)", re.MULTILINE)
_SEQUENCE = re.compile(r"^[ \t]*sequence_length[ \t]*:[ \t]*int[ \t]*=[ \t]*(\d{1,12})[ \t]*#", re.MULTILINE)
_SQUARE = r"[\w.]+\(self\.n_embd, self\.n_embd, bias=False\)"
_PLAIN_BLOCK = tuple(re.compile(p, re.MULTILINE) for p in (  # each must be in the source
    rf"self\.c_attn = [\w.]+\(self\.n_embd, 3 \* self\.n_embd, bias=False\)|self\.c_q = {_SQUARE}(?s:.{{0,200}})"
    rf"self\.c_k = {_SQUARE}(?s:.{{0,200}})self\.c_v = {_SQUARE}",  # Q, K, V: 3·d² (fused or not)
    rf"self\.c_proj = {_SQUARE}",  # the attention's output: d²
    r"self\.c_fc[ \t]*= [\w.]+\(config\.n_embd, 4 \* config\.n_embd, bias=False\)",  # the MLP: 8·d²
    r"self\.c_proj[ \t]*= [\w.]+\(4 \* config\.n_embd, config\.n_embd, bias=False\)",
    r"scaled_dot_product_attention\([^\n]{0,300}?is_causal=True"))  # dense causal attention, on one line
LIMIT = 10 ** 6  # a width, depth, vocabulary or length beyond this is no model of the history


def _vocab(name: str, source: str) -> int | None:
    if name.isdigit():
        return int(name) if len(name) <= 12 else None
    m = re.search(rf"^{re.escape(name)} = (\d{{1,12}})[ \t]*$", source, re.MULTILINE)
    return int(m.group(1)) if m else None


def per_token(source: str) -> tuple[float | None, str]:
    """(training FLOPs per token, how they were counted) from the embedded source; (None, "not in
    the log") where its model is not of the form counted here."""
    m = _MODEL.search(source) if "model = GPT(GPTConfig(" in source else None
    seq = _SEQUENCE.search(source) if m else None
    if m is None or seq is None or "flex_attention" in source \
            or not all(p.search(source) for p in _PLAIN_BLOCK):
        return None, NOT_IN_LOG
    vocab, layers, width, length = _vocab(m.group(1), source), int(m.group(2)), int(m.group(4)), int(seq.group(1))
    if vocab is None or not all(0 < v <= LIMIT for v in (vocab, layers, width, length)):
        return None, NOT_IN_LOG
    weights = 12 * layers * width ** 2 + width * vocab
    flops = 6 * weights + 12 * layers * width * length
    return float(flops), (f"6·(12·L·d² + d·V) + 12·L·d·T with L={layers}, d={width}, V={vocab}, T={length} "
                          "(PaLM, appendix B): an estimate")


def estimate(flops_per_token: float | None, tokens_per_s_per_gpu: float | None,
             gpu: str | None) -> tuple[float | None, str | None]:
    """(MFU, the peak it is over) — an estimate: counted FLOPs × tokens/s per GPU over the record
    clock ÷ the dense bf16 peak of the log's GPU; (None, why) where any of them is missing."""
    if flops_per_token is None:
        return None, None
    if not tokens_per_s_per_gpu:
        return None, "no tokens/s in the log"
    peak = mfu.find_peak(gpu) if gpu else None
    if peak is None or PRECISION not in peak.tflops:
        return None, f"no peak known for {gpu or 'an unnamed GPU'}"
    share = flops_per_token * tokens_per_s_per_gpu / (peak.tflops[PRECISION] * 1e12)
    return round(share, 4), f"{peak.name} dense {PRECISION} {peak.tflops[PRECISION]:g} TFLOP/s"
