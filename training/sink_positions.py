#!/usr/bin/env python3
"""Where should the attention sinks sit? StreamingLLM's cache (the first few tokens + a recent
window) read token by token, with its keys at their ORIGINAL positions (as every C++ program of
this project caches them) against StreamingLLM's `pos_shift`, where every kept key is rotated by
its position IN THE CACHE (PyTorch, fp32).

Why a script and not a C++ option: the C++ cache stores each key rotated once, by its original
position; pos_shift would have to re-rotate every cached key at every step. Here both variants
are one masked forward pass per story, because a token's keys and values depend only on its own
step: row t attends to the cache as it stands at step t.

The cache, as the C++ `sinks` policy keeps it (include/h2o/policy/sink_window_policy.hpp): at
step t the model attends to the tokens kept after step t-1 (the sinks 0..s-1 and the last
`recent` tokens) plus token t itself, then the oldest token that is not a sink leaves. So row t
sees {0..s-1} and {t-recent..t}. A budget of P% of a story of n tokens is tokens_for_percent:
max(2, round(n * P / 100)) tokens, s = min(sinks, budget // 2), recent = budget - s (the split of
`compare_policies --policies sinks`).

pos_shift: while there is a gap between the sinks and the window (t - recent > s) the cache holds
the s sinks at positions 0..s-1 and the window at s..s+recent, with token t last, at s+recent.
The window keeps its distances to the query; a sink j is seen at distance s+recent-j instead of
t-j. So only the query-sink scores change: the query is rotated by s+recent for them.

Prints, per budget, the perplexity of all predicted tokens with original positions, with
pos_shift and with the full cache, and the pos_shift change with a 95% bootstrap interval over
the stories (over blocks of 32 predictions when fewer than 8 stories are given, as the C++
programs' verdicts).

Usage:
  /usr/bin/python3 training/sink_positions.py [--model data/model.bin]
      [--tokenizer data/tokenizer.bin] [--stories data/heldout_stories.txt] [--budgets 2,5,10]
      [--sinks 4]
"""

import math
import sys

from common import Parser, UsageError, repo_path, require_finite, run_main
from story_model import load_model_for_stories, read_model_and_stories

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 1
# The units of the bootstrap, as include/h2o/measure/verdict.hpp chooses them: from this many
# stories on, each story; with fewer, blocks of BOOTSTRAP_BLOCK consecutive predictions (single
# positions are not independent: an evicted token hurts the next few predictions together).
MIN_STORIES_TO_RESAMPLE = 8
BOOTSTRAP_BLOCK = 32


def budget_tokens(n, percent):
    """tokens_for_percent of include/h2o/cache/budget.hpp: round(n * P / 100), at least 2."""
    return max(2, (n * percent + 50) // 100)


def sink_split(budget, sinks):
    """(s, recent): the sinks come out of the heavy half of the budget, as compare_policies."""
    s = min(sinks, budget // 2)
    return s, budget - s


def token_losses(model, tokens, s=None, recent=None, shift=False):
    """Next-token losses (fp32) of one story read through a sinks cache of s + recent tokens
    (None: the full cache), keys at original positions or, with shift, at cache positions."""
    import torch
    import torch.nn.functional as F
    from model import apply_rope
    c = model.cfg
    t_len = len(tokens)
    x_ids = torch.tensor([tokens])
    i = torch.arange(t_len)[:, None]
    j = torch.arange(t_len)[None, :]
    allowed = j <= i
    if s is not None:
        allowed &= (j < s) | (j >= i - recent)
    mask = torch.zeros(t_len, t_len).masked_fill(~allowed, float("-inf"))
    # Rows with a gap, and their sink columns: the only scores pos_shift changes.
    shifted = torch.zeros(t_len, t_len, dtype=torch.bool)
    if s is not None and shift:
        shifted = (i - recent > s) & (j < s)
    cos, sin = model.freqs_cos[:t_len], model.freqs_sin[:t_len]
    # The query of a gap row, for the sink scores: at cache position s + recent (< t_len there).
    at = min(s + recent, t_len - 1) if (s is not None and shift) else 0
    cos_at = model.freqs_cos[at:at + 1].expand(t_len, -1)
    sin_at = model.freqs_sin[at:at + 1].expand(t_len, -1)
    rep = c.n_heads // c.n_kv_heads
    scale = 1.0 / math.sqrt(c.head_size)
    with torch.no_grad():
        x = model.tok_embeddings(x_ids)
        for layer in model.layers:
            a = layer.attention
            h = layer.attention_norm(x)
            q = a.wq(h).view(1, t_len, c.n_heads, c.head_size)
            k = a.wk(h).view(1, t_len, c.n_kv_heads, c.head_size)
            v = a.wv(h).view(1, t_len, c.n_kv_heads, c.head_size)
            q_orig, k_orig = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            q_at = apply_rope(q, cos_at, sin_at)
            k_orig = k_orig.repeat_interleave(rep, dim=2).transpose(1, 2)  # (1, heads, t, hs)
            v = v.repeat_interleave(rep, dim=2).transpose(1, 2)
            scores = (q_orig.transpose(1, 2) * scale) @ k_orig.transpose(2, 3)
            if shifted.any():
                at_scores = (q_at.transpose(1, 2) * scale) @ k_orig.transpose(2, 3)
                scores = torch.where(shifted, at_scores, scores)
            att = F.softmax(scores + mask, dim=-1)
            out = (att @ v).transpose(1, 2).reshape(1, t_len, c.dim)
            x = x + a.wo(out)
            x = x + layer.feed_forward(layer.ffn_norm(x))
        logits = model.norm(x)[0] @ model.tok_embeddings.weight.t()
    return F.cross_entropy(logits[:-1], x_ids[0, 1:], reduction="none")


def interval(per_unit_base, per_unit_other, rng):
    """Perplexity change other/base - 1 over pooled units (sums of losses, counts), with a 95%
    bootstrap interval over the units."""
    import numpy as np
    base = np.array(per_unit_base)  # (units, 2): loss sum, token count
    other = np.array(per_unit_other)
    n = len(base)

    def change(idx):
        tokens = base[idx, 1].sum()
        return math.exp((other[idx, 0].sum() - base[idx, 0].sum()) / tokens) - 1

    point = change(np.arange(n))
    draws = sorted(change(rng.integers(0, n, size=n)) for _ in range(BOOTSTRAP_SAMPLES))
    return point, draws[int(0.025 * BOOTSTRAP_SAMPLES)], draws[int(0.975 * BOOTSTRAP_SAMPLES) - 1]


def verdict(low, high):
    if low > 0:
        return "worse"
    if high < 0:
        return "better"
    return "no difference within noise"


def parse_percents(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--budgets must be comma-separated whole percents, got '{text}'")
    if not values or min(values) < 1 or max(values) > 100:
        raise UsageError(f"--budgets must be percents 1..100, got '{text}'")
    return values


def main(argv):
    ap = Parser(description="StreamingLLM's sinks cache with keys at their original positions "
                            "against pos_shift (positions in the cache).")
    ap.add_argument("--model", default=repo_path("data", "model.bin"),
                    help="llama2.c legacy checkpoint (default: data/model.bin)")
    ap.add_argument("--tokenizer", default=repo_path("data", "tokenizer.bin"),
                    help="llama2.c tokenizer file (default: data/tokenizer.bin)")
    ap.add_argument("--stories", default=repo_path("data", "heldout_stories.txt"),
                    help="story file (default: data/heldout_stories.txt)")
    ap.add_argument("--budgets", default="2,5,10",
                    help="cache budgets, percent of each story (default: 2,5,10)")
    ap.add_argument("--sinks", type=int, default=4,
                    help="attention sinks, at most half of a budget (default: 4)")
    args = ap.parse_args(argv)
    percents = parse_percents(args.budgets)
    if not 1 <= args.sinks <= 1024:
        raise UsageError(f"--sinks must be 1..1024, got {args.sinks}")
    _, _, stories = read_model_and_stories(args.model, args.tokenizer, args.stories)
    model = load_model_for_stories(args.model, stories)
    if model is None:
        print("SKIPPED: python3-torch is not installed")
        return 0
    import numpy as np  # python3-torch depends on it
    one = len(stories) == 1
    by_story = len(stories) >= MIN_STORIES_TO_RESAMPLE
    print(f"{len(stories)} {'story' if one else 'stories'}, {sum(map(len, stories))} tokens "
          f"(BOS included), read token by token through StreamingLLM's cache:")
    print(f"{args.sinks} attention sinks + a recent window, keys at their original positions (as "
          "this")
    print("project caches them) or at their positions in the cache (StreamingLLM's pos_shift)")
    print(f"95% interval: bootstrap over the "
          f"{'stories' if by_story else f'blocks of {BOOTSTRAP_BLOCK} predictions'}, "
          f"{BOOTSTRAP_SAMPLES} draws, seed {BOOTSTRAP_SEED}")

    def units(losses_of_story):
        # (loss sum, predictions) per story, or per block of a story when there are few stories.
        out = []
        for losses in losses_of_story:
            step = len(losses) if by_story else BOOTSTRAP_BLOCK
            for at in range(0, len(losses), step):
                block = losses[at:at + step]
                out.append((float(block.sum()), float(len(block))))
        return out

    def perplexity(u):
        return math.exp(sum(a for a, _ in u) / sum(b for _, b in u))

    full = units([token_losses(model, s) for s in stories])
    full_ppl = require_finite(perplexity(full), "the full-cache perplexity")
    print()
    print(f"{'budget':>6}  {'sinks + recent':>14}  {'original':>8}  {'pos_shift':>9}  "
          f"{'full':>7}  pos_shift against original (95% interval)")
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    for p in percents:
        splits = [sink_split(budget_tokens(len(s), p), args.sinks) for s in stories]
        orig = units([token_losses(model, s, a, r) for s, (a, r) in zip(stories, splits)])
        shift = units([token_losses(model, s, a, r, shift=True)
                       for s, (a, r) in zip(stories, splits)])
        o_ppl = require_finite(perplexity(orig), "a perplexity")
        s_ppl = require_finite(perplexity(shift), "a perplexity")
        point, low, high = interval(orig, shift, rng)
        # Stories differ in length, so their splits too: the table shows the mean.
        mean_s = sum(a for a, _ in splits) / len(splits)
        mean_r = sum(r for _, r in splits) / len(splits)
        split = f"{mean_s:.1f} + {mean_r:.1f}" if not one else f"{splits[0][0]} + {splits[0][1]}"
        print(f"{p:>5}%  {split:>14}  {o_ppl:8.3f}  {s_ppl:9.3f}  {full_ppl:7.3f}  "
              f"{100 * point:+.1f}% [{100 * low:+.1f}, {100 * high:+.1f}]: "
              f"{verdict(low, high)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main("sink_positions", main, sys.argv[1:]))
