#!/usr/bin/env python3
"""kvpress_anchor.py: the project's PyramidKV and Ada-KV against kvpress's own code.

kvpress (github.com/NVIDIA/kvpress, commit 8bb29b9) writes them so:
  PyramidKVPress.get_layer_budget (presses/pyramidkv_press.py): with q_len tokens, a window W and
    compression_ratio c, max_capacity_prompt = W + q_len (1 - c); min_num = (that - W) / beta,
    max_num = (that - W) * 2 - min_num; if max_num >= q_len - W the top is capped there and the
    bottom raised (min_num = (that - W) * 2 - max_num); unless q_len >= max_num >= min_num >= W it
    falls back to one budget for all layers; else layer l keeps round(max_num - l * steps),
    steps = (max_num - min_num) / (layers - 1).
  AdaKVPress.compress (presses/adakv_press.py): n_kept = int(k_len (1 - c)) tokens a head on
    average, n_safe = int(n_kept * alpha_safeguard) (0.20): each head's n_safe best scores are set
    to the largest float, then the n_pruned = heads (k_len - n_kept) lowest scores over all heads
    together are masked out. It wraps any scorer press; KnormPress.score (presses/knorm_press.py)
    is -keys.norm(dim=-1).
The C++ side (`h2o_model_parity kvpress-dump`) writes seeded cases; this script replays kvpress's
lines above, in PyTorch where kvpress uses it, and compares. Where the two differ by design:
  - the project spreads only the heavy hitters along the line and keeps each layer's window apart
    (kvpress's budget includes its window, whose SnapKV votes are always the highest), so the
    replay's mean is the heavy part: W = 0 and q_len (1 - c) = HEAVY, q_len - W = MOST;
  - kvpress rounds each layer on its own (its total may miss layers x mean by up to layers / 2);
    the project rounds the running sum, so its total is exact: every layer within 1 of kvpress's;
  - kvpress falls back to one budget when the line's bottom is below its window (64 by default:
    on a 4-layer model, unless the mean is 1,280 tokens or more); the project always draws the line;
  - Ada-KV's floor and its joint ranking are applied to the tokens outside each head's recent
    window (the window kept apart, as H2O keeps it): the replay runs AdaKVPress's lines on those
    tokens with n_kept = HEAVY, so n_safe = int(0.2 HEAVY) is the project's floor.
  - Ada-KV over key norm ("adakv-knorm" cases): the scores are KnormPress.score's on the C++'s
    keys, not the C++'s own, and AdaKVPress runs on them as above (with RECENT 0, exactly
    AdaKVPress(KnormPress()) on the whole cache).
Passes when every layer budget is within 1 of kvpress's and sums to layers x HEAVY, and every
Ada-KV cut (over H2O's scores or over key norm) keeps exactly the positions kvpress's keeps. Without PyTorch: prints SKIPPED, exits 0.

  python3 tests/kvpress_anchor.py --dump cases.txt
"""
import argparse
import sys


def kvpress_layer_budget(q_len, window_size, compression_ratio, beta, layers, layer_idx):
    """PyramidKVPress.get_layer_budget, line for line."""
    assert beta >= 1, "Beta should >= 1"
    max_capacity_prompt = window_size + q_len * (1 - compression_ratio)
    min_num = (max_capacity_prompt - window_size) / beta
    max_num = (max_capacity_prompt - window_size) * 2 - min_num
    if max_num >= q_len - window_size:
        max_num = q_len - window_size
        min_num = (max_capacity_prompt - window_size) * 2 - max_num
    if not (q_len >= max_num >= min_num >= window_size):
        return round(q_len * (1 - compression_ratio))
    steps = (max_num - min_num) / (layers - 1)
    return round(max_num - layer_idx * steps)


def adakv_kept(torch, scores, n_kept, alpha_safeguard=0.20):
    """AdaKVPress.compress's selection, line for line: scores (1, heads, k_len) -> kept mask."""
    scores = scores.clone()
    bsz, num_key_value_heads, k_len = scores.shape
    n_safe = int(n_kept * alpha_safeguard)
    top_indices = torch.topk(scores, n_safe, dim=-1).indices
    scores.scatter_(-1, top_indices, torch.finfo(scores.dtype).max)
    n_pruned = num_key_value_heads * (k_len - n_kept)
    indices = torch.topk(-scores.reshape(bsz, -1), n_pruned, dim=1).indices.flatten()
    kept = torch.ones(num_key_value_heads * k_len, dtype=torch.bool)
    kept[indices] = False
    return kept.reshape(num_key_value_heads, k_len)


def knorm_score(keys):
    """KnormPress.score: keys (1, heads, k_len, D) -> scores (1, heads, k_len)."""
    return -keys.norm(dim=-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", required=True, help="cases from h2o_model_parity kvpress-dump")
    args = parser.parse_args()
    try:
        with open(args.dump) as f:
            lines = [line.split() for line in f if line.strip()]
    except OSError as e:
        sys.exit(f"kvpress_anchor.py: cannot read dump file '{args.dump}': {e.strerror}")
    try:
        import torch
    except ImportError:
        print("SKIPPED: PyTorch is not installed (python3-torch); the replay needs torch.topk")
        return 0
    failures, pyramid_cases, adakv_cases, knorm_cases, i = [], 0, 0, 0, 0
    while i < len(lines):
        words = lines[i]
        if words[0] == "pyramid":
            heavy, layers, beta, most = int(words[1]), int(words[2]), float(words[3]), int(words[4])
            ours = [int(w) for w in words[5:]]
            theirs = [kvpress_layer_budget(most, 0, 1 - heavy / most, beta, layers, l)
                      for l in range(layers)]
            if len(ours) != layers or sum(ours) != layers * heavy or any(
                    abs(a - b) > 1 for a, b in zip(ours, theirs)):
                failures.append(f"pyramid heavy {heavy}, {layers} layers, beta {beta}, most "
                                f"{most}: ours {ours}, kvpress {theirs}")
            pyramid_cases += 1
            i += 1
        elif words[0] == "adakv":
            G, n, recent, heavy = (int(w) for w in words[1:5])
            scores = [[float(w) for w in lines[i + 1 + g][1:]] for g in range(G)]
            ours = [[int(w) for w in lines[i + 1 + G + g][1:]] for g in range(G)]
            outside = n - recent  # positions 0..n-recent-1: the tokens outside every window
            mask = adakv_kept(torch, torch.tensor([[row[:outside] for row in scores]],
                                                  dtype=torch.float32), heavy)
            theirs = [[p for p in range(outside) if mask[g, p]] + list(range(outside, n))
                      for g in range(G)]
            if ours != theirs:
                failures.append(f"adakv {G} heads, {n} tokens, recent {recent}, heavy {heavy}: "
                                f"ours {ours}, kvpress {theirs}")
            adakv_cases += 1
            i += 1 + 2 * G
        elif words[0] == "adakv-knorm":
            G, n, recent, heavy, D = (int(w) for w in words[1:6])
            keys = torch.tensor([[[float(w) for w in lines[i + 1 + g][1:]] for g in range(G)]],
                                dtype=torch.float32).reshape(1, G, n, D)
            ours = [[int(w) for w in lines[i + 1 + G + g][1:]] for g in range(G)]
            outside = n - recent
            mask = adakv_kept(torch, knorm_score(keys[:, :, :outside, :]), heavy)
            theirs = [[p for p in range(outside) if mask[g, p]] + list(range(outside, n))
                      for g in range(G)]
            if ours != theirs:
                failures.append(f"adakv over key norm {G} heads, {n} tokens, recent {recent}, "
                                f"heavy {heavy}: ours {ours}, kvpress {theirs}")
            knorm_cases += 1
            i += 1 + 2 * G
        else:
            sys.exit(f"kvpress_anchor.py: unknown line '{words[0]}' in '{args.dump}'")
    for failure in failures[:5]:
        print("DIFFERENT: " + failure)
    cases = pyramid_cases + adakv_cases + knorm_cases
    print(f"{pyramid_cases} PyramidKV budgets, {adakv_cases} Ada-KV cuts and {knorm_cases} "
          f"Ada-KV cuts over key norm replayed against kvpress: {cases - len(failures)} agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
