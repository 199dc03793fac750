"""The Llama-style decoder of llama2.c, in PyTorch, with its legacy checkpoint format.

Not a program: train.py, reference_logits.py, export_check.py and selftest.py import it.

Architecture (as llama2.c's model.py, written anew here):
  token embedding -> n_layers x [ x += Attention(RMSNorm(x)); x += SwiGLU(RMSNorm(x)) ]
  -> RMSNorm -> logits = x @ embedding^T (the classifier shares the embedding).
RMSNorm has a weight and eps 1e-5. Rotary position embedding rotates ADJACENT pairs
(x[2i], x[2i+1]) of each head by angle pos * 10000^(-2i/head_size), on queries and keys.
Grouped-query attention: n_kv_heads key/value heads, query head h reads KV head
h // (n_heads / n_kv_heads). Causal attention scaled by 1/sqrt(head_size).
SwiGLU: w2(silu(w1 x) * w3 x). Linear layers have no bias; weights are [out][in].

Legacy checkpoint (llama2.c export.py legacy_export, version 0): 7 int32
(dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; vocab_size is positive
because the classifier is shared), then float32 arrays: token embedding (V, dim);
rms_att (L, dim); wq (L, dim, dim); wk (L, kv_dim, dim); wv (L, kv_dim, dim);
wo (L, dim, dim); rms_ffn (L, dim); w1 (L, hidden, dim); w2 (L, dim, hidden);
w3 (L, hidden, dim); rms_final (dim); freq_cis_real and freq_cis_imag (seq_len, head_size/2).
"""

import math
import struct
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from common import UsageError, read_input, write_output

HEADER = struct.Struct("<7i")


@dataclass
class Config:
    dim: int = 128
    hidden_dim: int = 384
    n_layers: int = 4
    n_heads: int = 8
    n_kv_heads: int = 4
    vocab_size: int = 2048
    seq_len: int = 1024

    @property
    def head_size(self):
        return self.dim // self.n_heads

    @property
    def kv_dim(self):
        return self.n_kv_heads * self.head_size

    def check(self):
        if self.dim % self.n_heads or self.head_size % 2:
            raise ValueError("dim must split into heads of even size")
        if self.n_heads % self.n_kv_heads:
            raise ValueError("n_heads must be a multiple of n_kv_heads")
        if min(self.dim, self.hidden_dim, self.n_layers, self.n_kv_heads, self.vocab_size,
               self.seq_len) < 1:
            raise ValueError("every size must be positive")


def rope_tables(head_size, seq_len, positions=None):
    """cos and sin of pos * freq_i, shape (seq_len, head_size / 2), in float32, for the
    positions 0 .. seq_len - 1, or for `positions` (seq_len numbers, not necessarily whole).

    Computed in float64 and rounded once, so the exported tables are exact to float32."""
    i = np.arange(0, head_size, 2, dtype=np.float64)
    freq = 1.0 / (10000.0 ** (i / head_size))
    pos = (np.arange(seq_len, dtype=np.float64) if positions is None
           else np.asarray(positions, dtype=np.float64))
    angle = np.outer(pos, freq)
    return (torch.from_numpy(np.cos(angle).astype(np.float32)),
            torch.from_numpy(np.sin(angle).astype(np.float32)))


def apply_rope(x, cos, sin):
    """Rotates the adjacent pairs of x (batch, time, heads, head_size)."""
    xr = x.float().reshape(*x.shape[:-1], -1, 2)
    re, im = xr[..., 0], xr[..., 1]
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    out = torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1)
    return out.flatten(-2).type_as(x)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return xf.type_as(x) * self.weight


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.wq = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.kv_dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.kv_dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        c = self.cfg
        q = self.wq(x).view(b, t, c.n_heads, c.head_size)
        k = self.wk(x).view(b, t, c.n_kv_heads, c.head_size)
        v = self.wv(x).view(b, t, c.n_kv_heads, c.head_size)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # Each KV head serves n_heads / n_kv_heads consecutive query heads.
        rep = c.n_heads // c.n_kv_heads
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))  # (b, heads, t, head_size)
        # Scaling q (t x head_size) is cheaper than scaling the t x t scores, and the softmax
        # stays in the working precision: at t = 1024 these t x t passes dominate a step.
        scores = (q * (1.0 / math.sqrt(c.head_size))) @ k.transpose(2, 3)
        scores = scores + mask[:t, :t].to(scores.dtype)
        att = F.softmax(scores, dim=-1)
        out = (att @ v).transpose(1, 2).reshape(b, t, c.dim)
        return self.wo(out)


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.hidden_dim, bias=False)
        self.w2 = nn.Linear(cfg.hidden_dim, cfg.dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention_norm = RMSNorm(cfg.dim)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


def attention_mask(seq_len, window=None):
    """Additive mask: 0 where position i may attend j (j <= i, and i - j < window), else -inf."""
    i = torch.arange(seq_len)[:, None]
    j = torch.arange(seq_len)[None, :]
    allowed = j <= i
    if window is not None:
        allowed &= (i - j) < window
    return torch.zeros(seq_len, seq_len).masked_fill(~allowed, float("-inf"))


class Transformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        cfg.check()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.dim)
        cos, sin = rope_tables(cfg.head_size, cfg.seq_len)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)
        self.register_buffer("mask", attention_mask(cfg.seq_len), persistent=False)
        self._init_weights()

    def _init_weights(self):
        # As llama2.c: N(0, 0.02), and the layers that write into the residual stream scaled
        # down by sqrt(2 * n_layers) so that the stream does not grow with depth.
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("wo.weight") or name.endswith("w3.weight"):
                    std = 0.02 / math.sqrt(2 * self.cfg.n_layers)
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, tokens, window=None, positions=None):
        """Logits (batch, time, vocab) for tokens (batch, time); window limits attention to
        the last `window` positions (a sliding window), None = full causal attention.
        positions: the position RoPE gives each token (time numbers, not necessarily whole),
        None = 0, 1, 2, ...: an experiment's way to change the distance RoPE sees between
        tokens without changing the tokens in between (copy_probe.py --rotary-gap)."""
        t = tokens.shape[1]
        if t > self.cfg.seq_len:
            raise ValueError(f"{t} tokens exceed seq_len {self.cfg.seq_len}")
        mask = self.mask if window is None else attention_mask(t, window)
        x = self.tok_embeddings(tokens)
        if positions is None:
            cos, sin = self.freqs_cos[:t], self.freqs_sin[:t]
        else:
            cos, sin = rope_tables(self.cfg.head_size, t, positions)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        x = self.norm(x)
        return x @ self.tok_embeddings.weight.t().to(x.dtype)

    def n_params(self):
        return sum(p.numel() for p in self.parameters())


# ---------------------------------------------------------------------------------------------
# llama2.c legacy checkpoint


def checkpoint_tensors(model):
    """Every float array of the legacy format, in file order."""
    layers = model.layers
    out = [model.tok_embeddings.weight]
    out += [l.attention_norm.weight for l in layers]
    out += [l.attention.wq.weight for l in layers]
    out += [l.attention.wk.weight for l in layers]
    out += [l.attention.wv.weight for l in layers]
    out += [l.attention.wo.weight for l in layers]
    out += [l.ffn_norm.weight for l in layers]
    out += [l.feed_forward.w1.weight for l in layers]
    out += [l.feed_forward.w2.weight for l in layers]
    out += [l.feed_forward.w3.weight for l in layers]
    out += [model.norm.weight, model.freqs_cos, model.freqs_sin]
    return out


def export_legacy(model, path):
    """Writes model as a llama2.c version-0 checkpoint, whole or not at all
    (common.write_output); returns the floats written (numpy). A weight that is NaN or
    infinite (a diverged run) is refused: no program could use such a model."""
    c = model.cfg
    floats = np.concatenate([t.detach().float().cpu().numpy().astype("<f4").ravel()
                             for t in checkpoint_tensors(model)])
    bad = int(np.count_nonzero(~np.isfinite(floats)))
    if bad:
        raise UsageError(f"the model has {bad} weights that are NaN or infinite (training "
                         f"diverged); '{path}' was not written")
    write_output(path, HEADER.pack(c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
                                   c.vocab_size, c.seq_len) + floats.tobytes())
    return floats


def load_legacy(path):
    """Reads a llama2.c version-0 checkpoint with a shared classifier into a Transformer."""
    blob = read_input(path, "model", binary=True)
    if len(blob) < HEADER.size:
        raise ValueError(f"'{path}' is too short for a llama2.c header")
    dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = HEADER.unpack_from(blob, 0)
    if vocab <= 0:
        raise ValueError(f"'{path}' has its own classifier (negative vocab_size): not supported")
    cfg = Config(dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len)
    try:
        cfg.check()
    except ValueError as e:
        raise ValueError(f"'{path}': bad header {HEADER.unpack_from(blob, 0)}: {e}")
    # Check the size from the header alone before allocating anything it asks for.
    need = 4 * (vocab * dim + n_layers * (2 * dim + 2 * dim * dim + 2 * cfg.kv_dim * dim +
                                          3 * hidden * dim) + dim + seq_len * cfg.head_size)
    if len(blob) - HEADER.size != need:
        raise ValueError(f"'{path}' holds {len(blob) - HEADER.size} bytes of weights, "
                         f"the header asks for {need}")
    model = Transformer(cfg)
    tensors = checkpoint_tensors(model)
    data = np.frombuffer(blob, dtype="<f4", offset=HEADER.size)
    at = 0
    with torch.no_grad():
        for t in tensors:
            n = t.numel()
            t.copy_(torch.from_numpy(data[at:at + n].astype(np.float32).reshape(t.shape)))
            at += n
    return model


def regroup_heads(model, n_heads, n_kv_heads):
    """A copy of model whose attention is regrouped into fewer, larger heads: every m = old
    n_heads / n_heads query heads merge into one (and the KV heads likewise), the weights kept.

    Why: RoPE turns pair i of a head of size hs by pos * 10000^(-2i/hs); a larger head has more
    pairs that barely turn over 1,000 positions, where a match by content can live at any
    distance. The regrouped model is not the same function (m softmaxes become one), but close:
    each merged head's score is the sum of its m old heads' scores against their own KV heads,
    with the first old head's pairs at their old frequencies (pair j -> pair j*m) and the others
    in between; q is scaled so that 1/sqrt(head_size) leaves the scores as they were."""
    old = model.cfg
    if n_heads < 1 or n_kv_heads < 1 or old.n_heads % n_heads or old.n_kv_heads % n_kv_heads:
        raise ValueError(f"{old.n_heads} heads ({old.n_kv_heads} KV) cannot merge into "
                         f"{n_heads} ({n_kv_heads} KV)")
    m = old.n_heads // n_heads
    if old.n_kv_heads // n_kv_heads != m:
        raise ValueError(f"query and KV heads must merge alike: {old.n_heads}->{n_heads}, "
                         f"{old.n_kv_heads}->{n_kv_heads}")
    cfg = Config(old.dim, old.hidden_dim, old.n_layers, n_heads, n_kv_heads, old.vocab_size,
                 old.seq_len)
    new = Transformer(cfg)
    hs, r = old.head_size, old.n_heads // old.n_kv_heads  # r query heads share a KV head
    # rope_order[p] = the old dim that lands in a merged head's dim p: old head t's pair j
    # goes to pair j*m + t (its two numbers stay adjacent).
    rope_order = [t * hs + 2 * j + e for j in range(hs // 2) for t in range(m) for e in (0, 1)]
    block_order = list(range(m * hs))
    q_rows, o_cols, k_rows, v_rows = [], [], [], []
    for c in range(n_kv_heads):
        olds_kv = [m * c + t for t in range(m)]
        k_rows += [olds_kv[d // hs] * hs + d % hs for d in rope_order]
        v_rows += [olds_kv[d // hs] * hs + d % hs for d in block_order]
        for u in range(r):  # the merged query heads of KV head c: old heads (m*c + t)*r + u
            olds_q = [kv * r + u for kv in olds_kv]
            q_rows += [olds_q[d // hs] * hs + d % hs for d in rope_order]
            o_cols += [olds_q[d // hs] * hs + d % hs for d in block_order]
    with torch.no_grad():
        old_params = dict(model.named_parameters())
        for name, p in new.named_parameters():
            p.copy_(old_params[name])
        scale = math.sqrt(cfg.head_size / hs)
        for a, b in zip(new.layers, model.layers):
            a.attention.wq.weight.copy_(b.attention.wq.weight[q_rows] * scale)
            a.attention.wk.weight.copy_(b.attention.wk.weight[k_rows])
            a.attention.wv.weight.copy_(b.attention.wv.weight[v_rows])
            a.attention.wo.weight.copy_(b.attention.wo.weight[:, o_cols])
    return new
