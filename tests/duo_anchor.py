#!/usr/bin/env python3
"""duo_anchor.py: the project's DuoAttention against DuoAttention's own code.

DuoAttention (github.com/mit-han-lab/duo-attention, commit 03dca84) writes its two steps so:
  sparsify_attention_heads (duo_attn/utils.py): threshold = np.quantile(full_attention_heads,
    sparsity), 2 when sparsity >= 1 and -1 when sparsity <= 0; a head is a full-attention
    (retrieval) head when its gate is >= threshold (DuoAttentionStaticKVCache then reads
    "> 0.5" of that 0/1 pattern);
  DuoAttentionStaticKVCache.compress and compress_and_replace_streaming_kv
    (duo_attn/patch/static_kv_cache.py): a streaming head keeps key_states[:, :sink_size] and
    key_states[:, len - recent_size : len], nothing else; a full head keeps every token.
The C++ side (`h2o_model_parity duo-dump`) reads seeded random attention through
DuoAttentionPolicy token by token and writes, per case, the profile's attention rows, each KV
head's score and what each head holds at the end. This script replays:
  1. the score (the project's training-free gate, not DuoAttention's, whose gates are trained):
     per KV head the mean over the profile's rows t >= s + r of its query group's mean weight on
     the positions outside the first s and the last r, in PyTorch float64: within 1e-12;
  2. sparsify_attention_heads's lines on those scores (the C++'s own numbers, so that both sides
     rank the same values): the retrieval heads must be exactly the C++'s;
  3. the streaming cache's cut: every head must hold exactly the positions the cache keeps.
Where the two differ by design: the gates are one layer's profile scores and the quantile is
taken over one layer's heads (the code takes it over every layer's heads together); the
code's tie-breaking noise np.random.uniform(0, 1e-6) is left out (the scores here are distinct,
and the C++ puts ties on the retrieval side, as >= does). Sparsities are multiples of 1/8, so
np.quantile's index (n - 1) q is exact on both sides. Without PyTorch: prints SKIPPED, exits 0.

  python3 tests/duo_anchor.py --dump cases.txt
"""
import argparse
import sys


def sparsify_attention_heads(np, full_attention_heads, sparsity):
    """duo_attn/utils.py's sparsify_attention_heads, line for line, without the tie noise."""
    threshold = np.quantile(full_attention_heads, sparsity)
    if sparsity >= 1:
        threshold = 2  # all heads are pruned
    if sparsity <= 0:
        threshold = -1  # no heads are pruned
    return (full_attention_heads >= threshold).astype(float)


def streaming_kept(n_tokens, sink_size, recent_size):
    """compress_and_replace_streaming_kv: the first sink_size and the last recent_size tokens."""
    if n_tokens <= sink_size + recent_size:
        return list(range(n_tokens))
    return list(range(sink_size)) + list(range(n_tokens - recent_size, n_tokens))


def profile_scores(torch, rows, heads, kv_heads, sinks, recent, profile):
    """Each KV head's mean share of its query group's attention outside the sinks and window."""
    group = heads // kv_heads
    sums = torch.zeros(kv_heads, dtype=torch.float64)
    counted = 0
    for t in range(sinks + recent, profile):
        for g in range(kv_heads):
            outside = torch.zeros((), dtype=torch.float64)
            for h in range(g * group, (g + 1) * group):
                # Nine digits name each float32 weight exactly: read back as float32 first.
                row = torch.tensor(rows[(h, t)], dtype=torch.float32).to(torch.float64)
                outside += row[sinks:t + 1 - recent].sum()
            sums[g] += outside / group
        counted += 1
    return sums / counted


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", required=True, help="cases from h2o_model_parity duo-dump")
    args = parser.parse_args()
    try:
        with open(args.dump) as f:
            lines = [line.split() for line in f if line.strip()]
    except OSError as e:
        sys.exit(f"duo_anchor.py: cannot read dump file '{args.dump}': {e.strerror}")
    try:
        import numpy as np
        import torch
    except ImportError:
        print("SKIPPED: PyTorch is not installed (python3-torch); the replay needs torch and numpy")
        return 0
    failures, cases, streaming_heads, i = [], 0, 0, 0
    while i < len(lines):
        head = lines[i]
        if head[0] != "duo":
            sys.exit(f"duo_anchor.py: line {i + 1}: expected a case, got '{head[0]}'")
        kv_heads, heads, sinks, recent, profile, n_tokens = (int(v) for v in head[1:7])
        sparsity = float(head[7])
        i += 1
        rows = {}
        while lines[i][0] == "row":
            h, t = int(lines[i][1]), int(lines[i][2])
            rows[(h, t)] = [float(v) for v in lines[i][3:]]
            i += 1
        scores = [float(v) for v in lines[i][1:]]
        retrieval = [v == "1" for v in lines[i + 1][1:]]
        kept = [[int(v) for v in lines[i + 2 + g][1:]] for g in range(kv_heads)]
        i += 2 + kv_heads
        cases += 1
        where = f"case {cases} (G {kv_heads}, H {heads}, s {sinks}, r {recent}, P {profile})"
        replayed = profile_scores(torch, rows, heads, kv_heads, sinks, recent, profile)
        for g in range(kv_heads):
            if abs(replayed[g].item() - scores[g]) > 1e-12:
                failures.append(f"{where}: head {g} score {scores[g]!r}, replayed "
                                f"{replayed[g].item()!r}")
        full = sparsify_attention_heads(np, np.array([scores]), sparsity)[0] > 0.5
        if list(full) != retrieval:
            failures.append(f"{where}: retrieval heads {retrieval}, DuoAttention's {list(full)}")
        for g in range(kv_heads):
            expected = (list(range(n_tokens)) if full[g]
                        else streaming_kept(n_tokens, sinks, recent))
            streaming_heads += 0 if full[g] else 1
            if kept[g] != expected:
                failures.append(f"{where}: head {g} keeps {kept[g]}, DuoAttention's {expected}")
    for failure in failures[:20]:
        print(failure)
    if failures or cases == 0:
        print(f"FAILED: {len(failures)} differences in {cases} cases")
        return 1
    print(f"{cases} cases ({streaming_heads} streaming heads): every score within 1e-12 of the "
          "replay, the retrieval heads and every head's tokens exactly DuoAttention's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
