"""A Llama-style decoder: RMSNorm, rotary position embeddings, SwiGLU MLP, grouped-query attention.

Shaped like Llama 3.2 1B (pre-norm blocks, no biases, tied input/output embedding). Attention
uses ``F.scaled_dot_product_attention``; the key/value heads are repeated to the query heads.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from workloads.llama.config import LlamaConfig


def rope_tables(cfg: LlamaConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotary angles, each (block_size, head_dim / 2)."""
    inv_freq = 1.0 / cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim)
    angles = torch.outer(torch.arange(cfg.block_size).float(), inv_freq)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (first half, second half) of the head dimension of x (b, h, t, q)."""
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.n_head, self.n_kv_head, self.head_dim = cfg.n_head, cfg.n_kv_head, cfg.head_dim
        self.wq = nn.Linear(cfg.dim, cfg.n_head * cfg.head_dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_head * cfg.head_dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_head * cfg.head_dim, bias=False)
        self.wo = nn.Linear(cfg.n_head * cfg.head_dim, cfg.dim, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, self.n_kv_head, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        groups = self.n_head // self.n_kv_head
        if groups > 1:
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.ffn_dim, bias=False)
        self.w2 = nn.Linear(cfg.ffn_dim, cfg.dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.attn_norm = nn.RMSNorm(cfg.dim, eps=cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = nn.RMSNorm(cfg.dim, eps=cfg.norm_eps)
        self.ffn = SwiGLU(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.ffn(self.ffn_norm(x))


class Llama(nn.Module):
    """Decoder-only transformer; ``forward(idx, targets)`` returns the mean cross-entropy."""

    rope_cos: torch.Tensor  # buffers (register_buffer), declared for type checkers
    rope_sin: torch.Tensor

    def __init__(self, cfg: LlamaConfig, device: torch.device | str = "cpu"):
        """The model on ``device``, each parameter initialised once, there: the layers are made
        on the meta device (shapes, no values), given memory on ``device``, then initialised
        (:meth:`init_weights`). Made on the CPU and moved, 1.24B parameters would be drawn twice
        (the layers' default init, then ours) and copied."""
        super().__init__()
        self.cfg = cfg
        with torch.device("meta"):
            self.tok = nn.Embedding(cfg.vocab_size, cfg.dim)
            self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
            self.norm = nn.RMSNorm(cfg.dim, eps=cfg.norm_eps)
            self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.to_empty(device=device)
        self.head.weight = self.tok.weight  # tied, as in Llama 3.2 1B (after to_empty, which unties)
        cos, sin = rope_tables(cfg)
        self.register_buffer("rope_cos", cos.to(device), persistent=False)
        self.register_buffer("rope_sin", sin.to(device), persistent=False)
        self.init_weights()

    @torch.no_grad()
    def init_weights(self) -> None:
        """Norm weights 1; every matrix N(0, 0.02), the residual projections' (``wo``, ``w2``)
        scaled by 1/√(2·layers), as GPT-2 does; from the default generator of the device."""
        for module in self.modules():
            if isinstance(module, nn.RMSNorm):
                module.reset_parameters()
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / (2 * self.cfg.n_layer) ** 0.5 if name.endswith(("wo.weight", "w2.weight")) \
                    else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.tok(idx)
        for block in self.blocks:
            x = block(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))


